"""The committed profiler after-effect records the docs quote (docs/templates/studies.yaml) are what docs/measurement.md
says: five fresh processes per variant from one commit, one machine and one call, with the quoted ratios
computed from each record's two timed windows."""

import json
import re
import statistics
from pathlib import Path

import pytest

from tests.records.rendered import study_dir

REPO = Path(__file__).resolve().parents[2]
STUDY = study_dir("aftereffect")
RECORDS = [json.loads(p.read_text()) for p in sorted(STUDY.glob("*.json"))]


def _ratios(variant: str) -> list[float]:
    return [statistics.median(r["after_ms"]) / statistics.median(r["before_ms"])
            for r in RECORDS if r["variant"] == variant]


def test_five_processes_per_variant_from_one_commit_machine_and_call():
    assert sorted(r["variant"] for r in RECORDS) == ["host-mediated"] * 5 + ["zerognn"] * 5
    for field in ("git_commit", "boot_id", "call_id", "source_sha256", "gpu_name"):
        assert len({r["environment"][field] for r in RECORDS}) == 1, field
    for r in RECORDS:
        assert len(r["before_ms"]) == len(r["after_ms"]) == 40 and r["profiled_steps"] == 5
        assert r["after_over_before"] == pytest.approx(statistics.median(r["after_ms"]) /
                                                       statistics.median(r["before_ms"]))


def test_the_docs_ratios_are_the_records():
    text = " ".join((REPO / "docs" / "measurement.md").read_text().split())
    commit = re.search(r"one H200 host at commit (\w+), five rounds of fresh processes", text).group(1)
    assert RECORDS[0]["environment"]["git_commit"].startswith(commit)
    hm = re.search(r"`host-mediated`'s median step after the session was ([\d.]+)–([\d.]+)x its median before "
                   r"\(median of the five ([\d.]+)\), `zerognn`'s ([\d.]+)–([\d.]+)x", text)
    assert hm, "the after-effect sentence is missing from docs/measurement.md"
    low, high, mid, z_low, z_high = map(float, hm.groups())
    ratios, z = _ratios("host-mediated"), _ratios("zerognn")
    assert (low, high, mid) == tuple(round(v, 3) for v in (min(ratios), max(ratios), statistics.median(ratios)))
    assert (z_low, z_high) == (round(min(z), 3), round(max(z), 3))


CONTROL = [json.loads(p.read_text()) for p in sorted((STUDY.parent / "aftereffect-control").glob("*.json"))]


def _control_ratios(variant: str, profiled: int) -> list[float]:
    return [statistics.median(r["after_ms"]) / statistics.median(r["before_ms"])
            for r in CONTROL if r["variant"] == variant and r["profiled_steps"] == profiled]


def test_the_control_is_three_rounds_of_both_kinds_of_process_from_one_commit_machine_and_call():
    kinds = sorted((r["variant"], r["profiled_steps"]) for r in CONTROL)
    assert kinds == sorted([(v, p) for v in ("host-mediated", "zerognn") for p in (0, 5)] * 3)
    for field in ("boot_id", "call_id", "source_sha256", "gpu_name"):
        assert len({r["environment"][field] for r in CONTROL}) == 1, field
    assert len({r["environment"]["git_commit"][:7] for r in CONTROL}) == 1  # some read from git, some stated
    for r in CONTROL:
        assert len(r["before_ms"]) == len(r["after_ms"]) == 40


def test_the_docs_control_ratios_are_the_records():
    text = " ".join((REPO / "docs" / "measurement.md").read_text().split())
    commit = re.search(r"A control at commit (\w+), three rounds in one call", text).group(1)
    assert CONTROL[0]["environment"]["git_commit"].startswith(commit)

    def span(ratios):
        return f"{min(ratios):.3f}–{max(ratios):.3f}x"

    with_hm, without_hm = _control_ratios("host-mediated", 5), _control_ratios("host-mediated", 0)
    assert (f"host-mediated's second window was {span(with_hm)} its first with the session (median of the three "
            f"{statistics.median(with_hm):.3f}) and {span(without_hm)} without it (median "
            f"{statistics.median(without_hm):.3f})") in text
    assert (f"`zerognn`'s {span(_control_ratios('zerognn', 5))} with it and {span(_control_ratios('zerognn', 0))} "
            "without") in text
    # the sentence's conclusion: the windows move as much without the session as with it
    assert max(without_hm) - min(without_hm) >= 0.1 and min(with_hm) < 1 < max(with_hm)
