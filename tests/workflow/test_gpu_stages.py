"""scripts/gpu_stages.sh's study stage, on the CPU with a config of its own: it records the study in whole rounds
into the study's workspace, stages/<config name>/, apart from any other study's records of the same ids in the
shared results directory, summarises it there, and packs that workspace into $OUT/<stage>.tgz, from which
scripts/commit_study.py reads the records."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from .base_config import write_config
from .test_workflow import REPO, workflow_copy

sys.path.insert(0, str(REPO / "scripts"))
from commit_study import read_records  # noqa: E402

sys.path.remove(str(REPO / "scripts"))

STUDY = dict(datasets={"tiny": {"scale": 1.0}}, variants=["torch-eager"], batch_sizes=[128], fanouts=[5, 5],
             hidden=16, warmup_steps=1, measure_steps=2, profile_steps=0, eval_nodes=64, trials=2, target="cpu")


def test_a_study_stage_records_into_its_workspace_and_packs_it(tmp_path):
    (tmp_path / "tree").mkdir()
    cwd = workflow_copy(tmp_path / "tree")
    shutil.copytree(REPO / "scripts", cwd / "scripts")
    write_config(cwd / "workflow/config/look.yaml", **STUDY)
    # another study's record of a run of the same id, in the shared results directory: left alone
    other = cwd / "results/runs/tiny__sage__torch-eager__b128__f5-5__g1.json"
    other.parent.mkdir(parents=True)
    other.write_text("another study's record\n")
    out = tmp_path / "out"
    env = dict(os.environ, STAGE="trials", CONFIG="workflow/config/look.yaml", OUT=str(out), ALLOW_DIRTY="1",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("ZEROGNN_GIT_COMMIT", None)
    done = subprocess.run(["bash", "scripts/gpu_stages.sh"], cwd=cwd, env=env, text=True, capture_output=True,
                          timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "round 1 of 2: snakemake rc=0 in " in output and "round 2 of 2: snakemake rc=0 in " in output, output
    runs = cwd / "stages/look/results/runs"
    assert sorted(p.name for p in runs.glob("*.json")) == ["tiny__sage__torch-eager__b128__f5-5__g1.json",
                                                          "tiny__sage__torch-eager__b128__f5-5__g1__t2.json"]
    assert (cwd / "stages/look/results/summary.csv").is_file()
    assert [p.read_text() for p in (cwd / "results/runs").iterdir()] == ["another study's record\n"]

    with tarfile.open(out / "trials.tgz") as archive:
        assert all(name.startswith("stages/look") for name in archive.getnames())
    records, _ = read_records(out / "trials.tgz", tmp_path / "unpacked")
    assert records == {p.name: p.read_bytes() for p in runs.glob("*.json")}
