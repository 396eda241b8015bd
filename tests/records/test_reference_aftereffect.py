"""The committed profiler after-effect records the docs render (docs/templates/studies.yaml) are what
docs/measurement.md says: rounds of fresh processes from one commit, one machine and one call, each profiled
process beside one that skips the session, with the quoted ratios computed here from each record's two windows."""

import json
import statistics
from pathlib import Path

import pytest

from tests.records.rendered import study_dir

REPO = Path(__file__).resolve().parents[2]
STUDY = study_dir("aftereffect")
RECORDS = [json.loads(p.read_text()) for p in sorted(STUDY.glob("*.json"))]
TEXT = " ".join((REPO / "docs" / "measurement.md").read_text().split())


def _ratios(variant: str, profiled: bool) -> list[float]:
    return [statistics.median(r["after_ms"]) / statistics.median(r["before_ms"])
            for r in RECORDS if r["variant"] == variant and bool(r["profiled_steps"]) == profiled]


def _span(ratios: list[float]) -> str:
    return f"{min(ratios):.3f}–{max(ratios):.3f}x"


def test_rounds_of_both_kinds_of_process_from_one_commit_machine_and_call():
    kinds = sorted((r["variant"], bool(r["profiled_steps"])) for r in RECORDS)
    rounds = kinds.count(("zerognn", True))
    both = [(v, p) for v in ("host-mediated", "zerognn") for p in (False, True)]
    assert rounds >= 3 and kinds == sorted(both * rounds)
    for field in ("boot_id", "call_id", "source_sha256", "gpu_name"):
        assert len({r["environment"][field] for r in RECORDS}) == 1, field
    assert len({r["environment"]["git_commit"][:7] for r in RECORDS}) == 1  # some read from git, some stated
    for r in RECORDS:
        assert len(r["before_ms"]) == len(r["after_ms"]) == 40
        assert r["after_over_before"] == pytest.approx(statistics.median(r["after_ms"]) /
                                                       statistics.median(r["before_ms"]))


def test_the_docs_ratios_are_the_records():
    commit = RECORDS[0]["environment"]["git_commit"][:7]
    rounds = len(_ratios("zerognn", True))
    assert f"at commit {commit}, {rounds} rounds of fresh processes in 1 call" in TEXT
    with_hm, without_hm = _ratios("host-mediated", True), _ratios("host-mediated", False)
    assert (f"host-mediated's second window was {_span(with_hm)} its first with the session (median of the "
            f"{len(with_hm)} {statistics.median(with_hm):.3f}) and {_span(without_hm)} without it (median "
            f"{statistics.median(without_hm):.3f})") in TEXT
    assert (f"`zerognn`'s {_span(_ratios('zerognn', True))} with it and {_span(_ratios('zerognn', False))} "
            "without") in TEXT


def test_the_conclusion_is_the_one_the_ratios_allow():
    with_hm, without_hm = _ratios("host-mediated", True), _ratios("host-mediated", False)
    drift = min(without_hm) <= statistics.median(with_hm) <= max(without_hm)
    assert ("these processes show no after-effect beyond that drift" in TEXT) == drift
    assert ("an after-effect beyond the drift between two windows" in TEXT) == (not drift)
