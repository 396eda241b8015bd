"""The Snakemake workflow: lint, a dry run of the full study, and a real CPU run of the default."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]


def workflow_copy(tmp_path: Path) -> Path:
    """The workflow files as a fresh clone has them, in a scratch directory."""
    for name in ("Snakefile", "environment.yml"):
        shutil.copy(REPO / name, tmp_path / name)
    for name in ("workflow", "profiles", "kernels"):
        shutil.copytree(REPO / name, tmp_path / name)
    return tmp_path


def snakemake(cwd: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=timeout)


def test_lint_is_clean(tmp_path):
    result = snakemake(workflow_copy(tmp_path), "--lint")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Congratulations, your workflow is in a good condition!" in output, output
    assert "Lints for" not in output, output


def test_paper_config_plans_the_full_study(tmp_path):
    from zerognn.variants import all_variants, runnable_here

    result = snakemake(workflow_copy(tmp_path), "-n", "--configfile", "workflow/config/paper.yaml")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    variants = [v for v, cls in all_variants().items() if runnable_here(cls)]
    expected_runs = 3 * 3 * 3 * len(variants)  # datasets x models x batch sizes x variants
    counts = dict(re.findall(r"^(\w+)\s+(\d+)\s*$", output, flags=re.M))
    assert int(counts["run"]) == expected_runs, output
    assert int(counts["dataset"]) == 3, output
    for name in ("summary", "render_figures"):
        assert int(counts[name]) == 1, output


def test_bad_config_is_rejected_by_the_schema(tmp_path):
    result = snakemake(workflow_copy(tmp_path), "-n", "--config", "batch_sizes=[0]")
    assert result.returncode != 0
    assert "batch_sizes" in result.stdout + result.stderr


@pytest.mark.slow
def test_default_pipeline_runs_end_to_end_on_the_cpu(tmp_path):
    cwd = workflow_copy(tmp_path)
    # the default config, trimmed to its smallest graph so the test stays quick
    config = yaml.safe_load((REPO / "workflow/config/default.yaml").read_text())
    config.update(datasets={"tiny": {"scale": 1.0}}, measure_steps=4)
    (cwd / "small.yaml").write_text(yaml.safe_dump(config))
    result = snakemake(cwd, "--cores", "2", "--configfile", "small.yaml")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    summary = pd.read_csv(cwd / "results" / "summary.csv")
    assert set(summary["batch_size"]) == {256, 1024}
    assert set(summary["variant"]) >= {"torch-eager"}
    assert (summary["step_ms_median"] > 0).all()
    assert (cwd / "figures" / "batch_sweep.png").is_file()
    assert (cwd / "figures" / "batch_sweep.pdf").is_file()
    assert sorted((cwd / "logs" / "runs").glob("*.log"))

    # `snakemake figures` re-renders from the records on disk and starts no training run
    records = sorted((cwd / "results" / "runs").glob("*.json"))
    stamps = [p.stat().st_mtime_ns for p in records]
    (cwd / "figures" / "batch_sweep.png").unlink()
    result = snakemake(cwd, "--cores", "1", "figures")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (cwd / "figures" / "batch_sweep.png").is_file()
    assert [p.stat().st_mtime_ns for p in records] == stamps
