"""The committed CPU reference (results/reference/cpu/) is what a fresh run computes: its losses within the
tolerance docs/results.md states."""

import json
from dataclasses import fields
from pathlib import Path

from zerognn.records.spec import RunSpec
from zerognn.train import run

REFERENCE = Path(__file__).resolve().parents[2] / "results" / "reference" / "cpu" / "runs"
TOLERANCE = 1e-6  # relative, at every step: docs/results.md


def test_a_fresh_run_of_the_tiny_reference_loses_the_same_within_the_stated_tolerance(tiny_dataset_dir, tmp_path):
    recorded = json.loads((REFERENCE / "tiny__sage__torch-eager__b256__f15-10-5__g1.json").read_text())
    config = recorded["config"]
    spec = RunSpec(**{f.name: config[f.name] for f in fields(RunSpec) if f.name in config})
    fresh = run(spec, tiny_dataset_dir, tmp_path / "r.json", progress=lambda m: None)
    assert len(fresh["losses"]) == len(recorded["losses"])
    worst = max(abs(a - b) / abs(b) for a, b in zip(fresh["losses"], recorded["losses"]))
    assert worst <= TOLERANCE, worst
    assert recorded["environment"]["git_source"] == "git" and recorded["environment"]["git_dirty"] is False
