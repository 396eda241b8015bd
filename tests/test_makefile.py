"""The Makefile's first step: an interpreter too old for the pipeline stops it at once, in one line."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_an_old_python_stops_make_in_one_line_naming_the_fix(tmp_path):
    old = tmp_path / "python3.10"
    old.write_text('#!/bin/sh\nif [ "$1" = --version ]; then echo "Python 3.10.12"; exit 0; fi\nexit 1\n')
    old.chmod(0o755)
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    # As a user types it, not as a sub-make of `make test` (whose flags and level would leak into this one).
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    result = subprocess.run(["make", "reproduce", f"PYTHON={old}"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=5, env=env)
    assert result.returncode != 0 and not (tmp_path / ".venv").exists()
    lines = [line for line in result.stderr.splitlines() if not re.match(r"make(\[\d+\])?: \*\*\*", line)]
    assert lines == [f"zerognn needs Python >= 3.11 (the pipeline's snakemake does); '{old}' is Python 3.10.12. "
                     f"Name one: PYTHON=python3.12 make reproduce"]
