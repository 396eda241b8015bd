"""scripts/gemm_rows_sweep.py: its summary reads the time at the capacity, the fastest row count at or above it
within 15 % and the time at the live rows; without a GPU it stops with one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import gemm_rows_sweep  # noqa: E402 - a script beside gemm_probe, which it imports by name


def _row(rows, us, kernel="k"):
    return {"layer": 1, "gemm": "forward", "rows": rows, "capacity": 1000, "live": 800, "us": us, "kernel": kernel}


def test_the_summary_finds_the_fastest_row_count_at_or_above_the_capacity_within_15_percent():
    rows = [_row(700, 5.0), _row(800, 40.0, "live"), _row(1000, 60.0, "cap"), _row(1100, 45.0, "up"),
            _row(1200, 1.0, "too far")]
    (line,) = gemm_rows_sweep.summary(rows)
    assert "capacity   1000 rows    60.0 us [cap]" in line
    assert "best at or above:   1100 rows    45.0 us [up]" in line
    assert line.endswith("live    800 rows    40.0 us")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this host has a GPU")
def test_without_a_gpu_it_says_so_in_one_line():
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "gemm_rows_sweep.py"), "--record", "x.json"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and done.stderr.strip() == "gemm_rows_sweep: needs a CUDA GPU"
