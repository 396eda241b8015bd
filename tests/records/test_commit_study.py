"""scripts/commit_study.py: a study's records from a GPU host into results/reference/<card>/<study>/, checked first
(one commit, the one stated, a clean tree, its source files, one GPU model; nothing committed replaced), then its
summary and figures rebuilt. Run against a clone of this repository, on the committed epoch study's records."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
EPOCH = REPO / "results/reference/h200/epoch/runs"
sys.path.insert(0, str(REPO / "scripts"))
from commit_study import card  # noqa: E402

sys.path.remove(str(REPO / "scripts"))


def commit_study(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "scripts/commit_study.py"), *args, "--repo", str(repo)],
                          text=True, capture_output=True, timeout=300)


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A clone of this repository's history (the records' commit is in it)."""
    if subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        pytest.skip("no git history to clone")
    path = tmp_path_factory.mktemp("commit") / "repo"
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(REPO), str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "HEAD"], check=True)
    return path


def records(tmp_path: Path, n: int = 3, **environment) -> Path:
    out = tmp_path / "runs"
    out.mkdir()
    for source in sorted(EPOCH.glob("*__b256__*.json"))[:n]:
        record = json.loads(source.read_text())
        record["environment"] |= environment
        (out / source.name).write_text(json.dumps(record, indent=2) + "\n" if environment else source.read_text())
    return out


def test_the_card_is_the_gpu_model():
    assert card("NVIDIA H100 80GB HBM3") == "h100"
    assert card("NVIDIA H200") == "h200"
    assert card("NVIDIA A100-SXM4-80GB") == "a100"


@pytest.mark.parametrize("workspace", ["stages/look/", ""])  # a stage's workspace; an archive from before them
def test_a_stage_archive_lands_in_its_cards_study_with_summary_and_figures(clone, tmp_path, workspace):
    runs = records(tmp_path)
    commit = json.loads(next(runs.glob("*.json")).read_text())["environment"]["git_commit"]
    archive = tmp_path / "look.tgz"
    name = f"look-{len(workspace)}"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(runs, arcname=f"{workspace}results/runs")
        tar.add(runs, arcname=f"{workspace}logs/runs")  # not records: left out
    done = commit_study(clone, name, str(archive), "--commit", commit[:7])
    assert done.returncode == 0, done.stdout + done.stderr
    study = clone / "results/reference/h200" / name
    assert sorted(p.name for p in (study / "runs").iterdir()) == sorted(p.name for p in runs.iterdir())
    assert all((study / "runs" / p.name).read_bytes() == p.read_bytes() for p in runs.iterdir())
    assert "3 records added, 0 already there (commit " + commit[:7] + ", h200)" in done.stdout
    assert (study / "summary.csv").is_file() and (clone / "figures/reference/h200" / name).is_dir()

    again = commit_study(clone, name, str(runs))
    assert again.returncode == 0 and "0 records added, 3 already there" in again.stdout, again.stderr


def test_a_study_recorded_again_lands_beside_the_committed_one_under_its_cards_directory(clone, tmp_path):
    runs = records(tmp_path, n=2)
    done = commit_study(clone, "epoch", str(runs), "--card-dir", "h200-next")
    assert done.returncode == 0, done.stdout + done.stderr
    study = clone / "results/reference/h200-next/epoch"
    assert sorted(p.name for p in (study / "runs").iterdir()) == sorted(p.name for p in runs.iterdir())
    assert (clone / "figures/reference/h200-next/epoch").is_dir()
    assert "next: the rest of h200-next/ (python scripts/reference_status.py --card h200-next --commit" in done.stdout

    refused = commit_study(clone, "epoch", str(runs), "--card-dir", "h100-refused")
    assert refused.returncode == 2 and not (clone / "results/reference/h100-refused").exists()
    assert refused.stderr.strip() == ("commit_study: --card-dir h100-refused is not the records' card: they ran on "
                                      "h200; commit them under h200 or h200-<name>")


def test_an_archive_of_two_workspaces_is_refused(clone, tmp_path):
    runs = records(tmp_path, n=1)
    archive = tmp_path / "two.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(runs, arcname="stages/peers/results/runs")
        tar.add(runs, arcname="stages/tta/results/runs")
    done = commit_study(clone, "two", str(archive))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == (f"commit_study: {archive} holds the records of 2 workspaces "
                                   f"(stages/peers/results/runs/, stages/tta/results/runs/); commit a study from one")
    assert not (clone / "results/reference/h200/two").exists()


@pytest.mark.parametrize("case, environment, expected", [
    ("other commit", {}, "the records name commit "),
    ("dirty", {"git_dirty": True}, "records ran a tree git called dirty"),
    ("two cards", "mixed", "the records ran on 2 GPU models (h100, h200)"),
    ("not a record", "broken", ".json is not a run record: "),
])
def test_bad_records_are_refused_in_one_line_before_anything_is_written(clone, tmp_path, case, environment,
                                                                        expected):
    if environment == "mixed":
        runs = records(tmp_path)
        first = sorted(runs.iterdir())[0]
        record = json.loads(first.read_text())
        record["environment"]["gpu_name"] = "NVIDIA H100 80GB HBM3"
        first.write_text(json.dumps(record))
    elif environment == "broken":
        runs = records(tmp_path)
        sorted(runs.iterdir())[-1].write_text("{")
    else:
        runs = records(tmp_path, **environment)
    stated = ["--commit", "0000000"] if case == "other commit" else []
    done = commit_study(clone, f"bad-{case.replace(' ', '-')}", str(runs), *stated)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("commit_study: ") and expected in lines[0], done.stderr
    assert not list((clone / "results/reference").glob("*/bad-*"))


def test_a_committed_record_is_never_replaced(clone, tmp_path):
    runs = records(tmp_path, n=1)
    record = next(runs.iterdir())
    done = commit_study(clone, "epoch", str(runs))  # the same file: already there
    assert done.returncode == 0 and "0 records added, 1 already there" in done.stdout, done.stderr
    changed = json.loads(record.read_text())
    changed["environment"]["hostname"] = "another"
    record.write_text(json.dumps(changed))
    before = (clone / "results/reference/h200/epoch/runs" / record.name).read_bytes()
    refused = commit_study(clone, "epoch", str(runs))
    assert refused.returncode == 2 and "differ from those committed under the same id" in refused.stderr
    assert (clone / "results/reference/h200/epoch/runs" / record.name).read_bytes() == before


def test_a_study_allowed_to_span_machines_says_so_and_keeps_the_allowance(clone, tmp_path):
    runs = records(tmp_path, n=2)
    first, second = sorted(runs.iterdir())
    for path, boot_id in ((first, "machine-a"), (second, "machine-b")):
        record = json.loads(path.read_text())
        record["environment"]["boot_id"] = boot_id
        path.write_text(json.dumps(record))
    study = clone / "results/reference/h200/spans"
    refused = commit_study(clone, "spans", str(runs))  # the records are added; their summary is refused
    assert refused.returncode == 1 and "zerognn summarize --allow-mixed-provenance" in refused.stderr, refused.stderr
    assert not (study / "provenance.json").exists()

    done = commit_study(clone, "spans", str(runs), "--allow-mixed-provenance")
    assert done.returncode == 0, done.stdout + done.stderr
    stated = json.loads((study / "provenance.json").read_text())
    assert stated == {"mixed_provenance": True, "machine_instances": {"machine-a": 1, "machine-b": 1}}
    again = commit_study(clone, "spans", str(runs))  # the allowance is the study's, not the call's
    assert again.returncode == 0 and "summarise it with --allow-mixed-provenance" in again.stdout, again.stderr


def test_with_a_config_only_the_runs_it_plans_are_committed(clone, tmp_path):
    runs = records(tmp_path, n=12)  # B=256: six trials each of zerognn-epoch and zerognn
    config = yaml.safe_load((REPO / "workflow/config/h200-epoch.yaml").read_text()) | {"variants": ["zerognn"]}
    (tmp_path / "zerognn-only.yaml").write_text(yaml.safe_dump(config))
    done = commit_study(clone, "subset", str(runs), "--config", str(tmp_path / "zerognn-only.yaml"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"6 of the 12 records are runs {tmp_path / 'zerognn-only.yaml'} plans" in done.stdout
    committed = sorted(p.name for p in (clone / "results/reference/h200/subset/runs").iterdir())
    assert committed == sorted(p.name for p in runs.iterdir() if "__zerognn__" in p.name) and len(committed) == 6
