"""scripts/whole_rounds.py: a study recorded in whole rounds, which re-makes another study's record of the same id
and stops rather than re-make an earlier round's records (what a fresh machine, with its dataset rebuilt after
the records were made, would otherwise do), unless told the records were carried from another machine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .base_config import write_config
from .test_workflow import REPO, workflow_copy

STUDY = dict(datasets={"tiny": {"scale": 1.0}}, variants=["torch-eager"], batch_sizes=[128, 256], fanouts=[5, 5],
             hidden=16, warmup_steps=1, measure_steps=2, profile_steps=0, eval_nodes=64, trials=2, target="cpu")


def whole_rounds(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run([sys.executable, str(REPO / "scripts/whole_rounds.py"), "study.yaml", "--log", "sm.log",
                           *args], cwd=cwd, env=env, text=True, capture_output=True, timeout=600)


def records(cwd: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((cwd / "results/runs").glob("*.json"))}


def test_whole_rounds_within_the_budget_other_studies_records_and_a_rebuilt_dataset(tmp_path):
    cwd = workflow_copy(tmp_path)
    write_config(cwd / "study.yaml", **STUDY)

    first = whole_rounds(cwd, "--rounds", "1")
    assert first.returncode == 0, first.stdout + first.stderr + (cwd / "sm.log").read_text()
    assert first.stdout.splitlines() == [first.stdout.splitlines()[0]]
    assert first.stdout.startswith("round 1 of 1: snakemake rc=0 in ")
    made = records(cwd)
    assert sorted(made) == ["tiny__sage__torch-eager__b128__f5-5__g1.json",
                            "tiny__sage__torch-eager__b256__f5-5__g1.json"]

    # the budget: a round starts only if the longest so far would end within it (here none can: it is 0 s)
    later = whole_rounds(cwd, "--budget", "0")
    assert later.returncode == 0, later.stdout + later.stderr
    assert later.stdout.splitlines() == [
        "round 1 of 2: recorded already",
        "stopped before round 2 of 2: the longest round so far (0 s) would not end within 0 s of the start; "
        "run the same command again"]
    assert records(cwd) == made

    # another study's record under the same run id (the time-to-target study's seed 0 is the trials study's
    # first trial): made again in its round, not counted as the round's
    write_config(cwd / "study.yaml", **(STUDY | {"measure_steps": 3}))
    again = whole_rounds(cwd, "--rounds", "1")
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.startswith("round 1 of 1: snakemake rc=0 in ")
    made = records(cwd)
    assert {json.loads(b)["config"]["measure_steps"] for b in made.values()} == {3}

    # a fresh machine: no Snakemake metadata, and the dataset built again, after the records
    shutil.rmtree(cwd / ".snakemake")
    shutil.rmtree(cwd / "data/tiny")
    second = whole_rounds(cwd)
    lines = second.stdout.splitlines()
    assert second.returncode == 1, second.stdout + second.stderr
    assert len(lines) == 1 and lines[0].startswith(
        "stopped before the first round: Snakemake would re-make 2 records already made (")
    assert "Updated input files: data/tiny" in lines[0]
    assert records(cwd) == made  # neither re-made nor a second round begun
    assert (cwd / "data/tiny").is_dir()  # built by the first invocation, outside every round

    # --carried: the records came from another machine, and the study goes on from them here
    carried = whole_rounds(cwd, "--carried")
    assert carried.returncode == 0, carried.stdout + carried.stderr + (cwd / "sm.log").read_text()
    lines = carried.stdout.splitlines()
    assert lines[:2] == ["2 records carried from another machine, dated after this machine's build",
                         "round 1 of 2: recorded already"]
    assert lines[2].startswith("round 2 of 2: snakemake rc=0 in ") and len(lines) == 3
    after = records(cwd)
    assert {name: after[name] for name in made} == made and len(after) == 4
