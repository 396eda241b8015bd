"""scripts/carry_records.py: a study's committed records of one comparison group copied into its stage workspace
for CARRIED=1, on a copy of the repository's config and of the committed reference's arxiv-like GCN B=1024
records; nothing there overwritten, nothing copied where the request is wrong."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from zerognn.errors import ZeroGNNError

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import carry_records  # noqa: E402

sys.path.remove(str(REPO / "scripts"))

ONLY = "dataset=arxiv-like,model=gcn,batch_size=1024"
COMMITTED = REPO / "results/reference/h100/reference/runs"


@pytest.fixture
def repo(tmp_path) -> Path:
    """A repository with the reference's config and schema, and rounds 1-2 of one group committed."""
    for part in ("workflow/config/h200-reference.yaml", "workflow/schemas"):
        (tmp_path / part).parent.mkdir(parents=True, exist_ok=True)
        copy = shutil.copytree if (REPO / part).is_dir() else shutil.copy
        copy(REPO / part, tmp_path / part)
    runs = tmp_path / "results/reference/h100/reference/runs"
    runs.mkdir(parents=True)
    for path in COMMITTED.glob("arxiv-like__gcn__*__b1024__*.json"):
        if not path.stem.endswith(("__t3", "__t4", "__t5", "__t6")):  # rounds 1 and 2
            shutil.copy(path, runs)
    (runs / "products-like__gcn__zerognn__b1024__f15-10-5__g1.json").write_text("{}")  # another group's
    return tmp_path


def test_the_groups_committed_records_are_copied_into_the_workspace(repo):
    commit = json.loads(next(COMMITTED.glob("arxiv-like__gcn__*")).read_text())["environment"]["git_commit"][:7]
    lines = carry_records.carry("reference", "h100", ONLY, repo=repo)
    carried = sorted(p.name for p in (repo / "stages/reference/results/runs").iterdir())
    committed = sorted(p.name for p in (repo / "results/reference/h100/reference/runs").glob("arxiv-like*"))
    assert carried == committed and len(carried) == 16  # 8 variants, 2 rounds; not the other group's
    assert lines[0].startswith("16 records copied into stages/reference/results/runs/ (0 there already) of the 48 "
                               f"runs --only {ONLY} selects, at commit {commit}; 32 still to record")
    assert f"STAGE=reference ONLY={ONLY} CARRIED=1" in lines[1]
    again = carry_records.carry("reference", "h100", ONLY, repo=repo)  # the same records again: nothing to do
    assert again[0].startswith("0 records copied into stages/reference/results/runs/ (16 there already)")


def test_a_different_record_in_the_workspace_is_never_overwritten(repo):
    workspace = repo / "stages/reference/results/runs"
    workspace.mkdir(parents=True)
    name = "arxiv-like__gcn__zerognn__b1024__f15-10-5__g1.json"
    (workspace / name).write_text(json.dumps({"another": "machine's round"}))
    with pytest.raises(ZeroGNNError, match=f"already holds 1 of these records, not as committed \\({name}\\)"):
        carry_records.carry("reference", "h100", ONLY, repo=repo)
    assert [p.name for p in workspace.iterdir()] == [name]  # nothing copied beside it
    assert json.loads((workspace / name).read_text()) == {"another": "machine's round"}


@pytest.mark.parametrize(("study", "card", "only", "error"), [
    ("reference", "h100", "dataset=arxiv-like,model=sage,batch_size=256", "none of the 60 runs .* is committed"),
    ("reference", "h300", ONLY, "no results/reference/h300/reference/runs/: give the card"),
    ("nope", "h100", ONLY, "no config workflow/config/h200-nope.yaml"),
    ("reference", "h100", "dataset=papers-like", "--only dataset=papers-like: no run"),
    ("reference", "h100", "datasets=arxiv-like", "give field=value pairs"),
])
def test_a_wrong_request_is_a_one_line_error_before_anything_is_copied(repo, study, card, only, error):
    with pytest.raises(ZeroGNNError, match=error) as raised:
        carry_records.carry(study, card, only, repo=repo)
    assert "\n" not in str(raised.value)
    assert not (repo / "stages").exists()


def test_records_of_two_commits_are_not_carried(repo):
    path = next((repo / "results/reference/h100/reference/runs").glob("arxiv-like__gcn__zerognn__*"))
    record = json.loads(path.read_text())
    record["environment"]["git_commit"] = "0" * 40
    path.write_text(json.dumps(record))
    with pytest.raises(ZeroGNNError, match="name 2 commits"):
        carry_records.carry("reference", "h100", ONLY, repo=repo)
