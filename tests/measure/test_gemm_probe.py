"""scripts/gemm_probe.py: the GEMM shapes it times are the SAGE model's layers at the envelope of the record it
reads, and without a GPU it stops with one line."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from zerognn.models.sage import SAGE

REPO = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("gemm_probe", REPO / "scripts" / "gemm_probe.py")
probe = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(probe)


def test_the_shapes_are_the_models_layers_at_the_records_envelope():
    record = json.loads((REPO / probe.DEFAULT_RECORD).read_text())
    shapes = probe.layer_shapes(record)
    data, hops = record["dataset"], record["variant_info"]["envelope"]["hops"]
    model = SAGE(data["num_features"], record["config"]["hidden"], data["num_classes"], num_layers=len(hops))
    assert [(s["N"], s["K"]) for s in shapes] == [tuple(lin.weight.shape) for lin in model.lins]
    # layer i's destinations are the frontier before the last i hops: the seeds for the last layer
    destinations = [h["provisioned"] for h in hops[-2::-1]] + [record["config"]["batch_size"]]
    assert [s["capacity"] for s in shapes] == destinations
    assert all(s["live"] <= s["capacity"] for s in shapes)
    assert [s["relu"] for s in shapes] == [True, True, False]
    assert [s["input_grad"] for s in shapes] == [False, True, True]  # the features take no gradient


@pytest.mark.skipif(torch.cuda.is_available(), reason="this host has a GPU")
def test_without_a_gpu_it_says_so_in_one_line():
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "gemm_probe.py")], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0 and done.stderr.strip() == "gemm_probe: needs a CUDA GPU"
