"""scripts/reference_status.py: whether a card's committed reference is complete at one commit, on copies of the
committed epoch study's records (its config plans 36 runs, all committed at one commit)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
EPOCH = REPO / "results/reference/h200/epoch/runs"
sys.path.insert(0, str(REPO / "scripts"))
import reference_status  # noqa: E402

sys.path.remove(str(REPO / "scripts"))


@pytest.fixture
def card(tmp_path, monkeypatch) -> Path:
    """A card whose one needed study is a copy of the committed epoch study."""
    monkeypatch.setattr(reference_status, "NEEDED", ("epoch",))
    monkeypatch.setattr(reference_status, "BESIDE", {})
    shutil.copytree(EPOCH, tmp_path / "h200/epoch/runs")
    return tmp_path / "h200"


def edit(path: Path, change) -> None:
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record, indent=2) + "\n")


def commit_of(card: Path) -> str:
    return json.loads(next((card / "epoch/runs").glob("*.json")).read_text())["environment"]["git_commit"]


def test_a_study_with_every_planned_run_at_one_commit_is_complete(card):
    lines, complete = reference_status.report(card, commit_of(card)[:7])
    assert complete, lines
    assert lines == [f"epoch            36 records ({commit_of(card)[:7]} x36): complete",
                     f"{card}: complete, at one commit"]


def test_a_missing_run_a_needed_study_and_records_of_no_config_are_each_named(card, monkeypatch):
    missing = card / "epoch/runs/products-like__sage__zerognn__b1024__f15-10-5__g1__t4.json"
    missing.unlink()
    lines, complete = reference_status.report(card, None)
    assert not complete
    assert lines[0].endswith("35 records (" + commit_of(card)[:7] + " x35): 1 of the 36 runs its config plans are "
                             "missing (products-like__sage__zerognn__b1024__f15-10-5__g1__t4)")
    assert lines[1] == " " * 15 + (  # the group, as gpu_stages.sh selects it, and how to go on from its records
        "ONLY=batch_size=1024: 1 run (11 committed: to go on from them on another machine, scripts/carry_records.py "
        "epoch --card h200 --only batch_size=1024, then CARRIED=1)")

    monkeypatch.setattr(reference_status, "NEEDED", ("epoch", "interference"))
    shutil.copytree(card / "epoch/runs", card / "old/runs")
    lines, _ = reference_status.report(card, None)
    assert lines[2].startswith("interference      0 records (-): not recorded")
    # its two host loads are compared run against run, so they are one stage (on one machine), not two
    assert lines[3] == " " * 15 + "the whole study, with no ONLY=: 96 runs"
    assert lines[4].startswith("old              35 records (") and lines[4].endswith(
        "no config workflow/config/h200-old.yaml: re-record it from a config or retire it")


def test_records_of_two_commits_or_another_than_the_stated_are_not_complete(card):
    original = commit_of(card)[:7]
    lines, complete = reference_status.report(card, "0000000")
    assert not complete and lines[-2] == f"the records name commit {original}, not 0000000 (--commit)"
    first = sorted((card / "epoch/runs").glob("*.json"))[0]
    edit(first, lambda r: r["environment"].update(git_commit="f" * 40))
    lines, complete = reference_status.report(card, None)
    assert not complete
    assert lines[-2] == f"the records name 2 commits ({', '.join(sorted([original, 'fffffff']))}), not one"


def test_the_epoch_studys_loop_runs_must_carry_an_execution_fraction(card):
    profiled = card / "epoch/runs/products-like__sage__zerognn-epoch__b1024__f15-10-5__g1.json"
    assert json.loads(profiled.read_text())["metrics"]["gpu_exec_fraction"] is not None
    edit(profiled, lambda r: r["metrics"].update(gpu_exec_fraction=None, gpu_busy_ms_per_step=None))
    lines, complete = reference_status.report(card, None)
    assert not complete
    assert lines[0].endswith(": zerognn-epoch's profiled runs do not all carry an execution fraction")


def test_each_group_with_runs_missing_is_named_as_a_stage_selects_it(card):
    for path in (card / "epoch/runs").glob("*__b256__*.json"):
        path.unlink()
    (card / "epoch/runs/products-like__sage__zerognn-epoch__b4096__f15-10-5__g1__t2.json").unlink()
    lines, complete = reference_status.report(card, None)
    assert not complete
    assert lines[1] == " " * 15 + "ONLY=batch_size=256: 12 runs"  # none committed: nothing to carry
    assert lines[2].startswith(" " * 15 + "ONLY=batch_size=4096: 1 run (11 committed: ")
    assert lines[3] == f"{card}: not complete"


def test_runs_a_study_compares_across_a_field_must_have_run_on_one_machine(card, monkeypatch):
    monkeypatch.setattr(reference_status, "ONE_MACHINE_ACROSS", {"epoch": "batch_size"})
    lines, complete = reference_status.report(card, None)
    assert complete, lines
    moved = card / "epoch/runs/products-like__sage__zerognn-epoch__b256__f15-10-5__g1__t3.json"
    edit(moved, lambda r: r["environment"].update(boot_id="another-boot"))
    lines, complete = reference_status.report(card, None)
    assert not complete
    assert lines[0].endswith(
        ": its runs that differ only in batch_size are compared, yet 1 such set ran on more than one machine "
        "(products-like__sage__zerognn-epoch__b1024__f15-10-5__g1 on 2): re-record the study with them together "
        "on one machine (git rm -r its records and figures, then the stage without ONLY=batch_size=)")
    moved.unlink()  # a missing run is then named as the whole study's stage: its batch sizes are recorded together
    lines, _ = reference_status.report(card, None)
    assert lines[1] == " " * 15 + "the whole study, with no ONLY=: 1 run"


def test_a_variant_whose_module_cannot_be_imported_here_is_planned_as_the_stand_ins_runs(tmp_path):
    broken = tmp_path / "needs_a_library.py"
    broken.write_text("from zerognn.errors import ZeroGNNError\n"
                      "raise ZeroGNNError('the mine peer needs a library this machine lacks')\n")
    given = yaml.safe_load((REPO / "workflow/config/h200-epoch.yaml").read_text())
    given |= {"variants": ["zerognn", "host-mediated", "mine"], "variant_modules": [str(broken)]}
    planned, absent = reference_status.plan_standing_in(given)
    assert absent == ["mine"]
    hosted = {i for i in planned if "__host-mediated__" in i}
    assert len(hosted) == len(given["batch_sizes"]) * given["trials"] and len(planned) == 3 * len(hosted)
    assert {i.replace("__host-mediated__", "__mine__") for i in hosted} <= planned
    assert reference_status.plan_standing_in(given | {"variants": ["zerognn", "host-mediated"]}) is None


def test_what_the_docs_read_beside_the_studies_is_named_and_counts_among_the_commits(card, monkeypatch):
    monkeypatch.setattr(reference_status, "BESIDE", {"bench-ops.txt": "STAGE=bench-ops",
                                                     "aftereffect": "STAGE=aftereffect CONTROL=1"})
    commit = commit_of(card)
    lines, complete = reference_status.report(card, commit[:7])
    assert not complete
    assert lines[1:3] == ["bench-ops.txt     0 records (-): not recorded: STAGE=bench-ops makes it",
                          "aftereffect       0 records (-): not recorded: STAGE=aftereffect CONTROL=1 makes it"]
    (card / "bench-ops.txt").write_text(f"# zerognn bench-ops, commit {commit} (environment, dirty False)\n")
    (card / "aftereffect").mkdir()
    for name in ("zerognn-1", "zerognn-control-1"):
        (card / "aftereffect" / f"{name}.json").write_text(json.dumps({"environment": {"git_commit": commit}}))
    lines, complete = reference_status.report(card, commit[:7])
    assert complete, lines
    assert lines[1:3] == [f"bench-ops.txt     1 records ({commit[:7]} x1): complete",
                          f"aftereffect       2 records ({commit[:7]} x2): complete"]
    (card / "old-aftereffect").mkdir()
    (card / "old-aftereffect" / "zerognn-1.json").write_text(json.dumps({"environment": {"git_commit": "f" * 40}}))
    lines, complete = reference_status.report(card, None)
    assert not complete
    assert lines[3] == ("old-aftereffect    1 records (fffffff x1): no stage writes it here: re-record it into "
                        "aftereffect/ (STAGE=aftereffect CONTROL=1) or retire it")
    assert lines[-2].startswith("the records name 2 commits")


def test_every_study_of_the_reference_the_docs_read_is_needed():
    """A reference recorded again is complete only with every study the committed one holds (a study left out of
    ``NEEDED`` would be lost when the new reference takes the committed one's place)."""
    card = REPO / "results/reference" / Path(reference_status.RENDERED["reference"]).parent
    held = {runs.parent.name for runs in card.glob("*/runs")}
    assert {"determinism", "small-batch", "reference", "trials"} <= held
    assert held - {reference_status.TWO_GPUS} <= set(reference_status.NEEDED)
