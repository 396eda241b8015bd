"""The committed profiler after-effect records (results/reference/h200/aftereffect/) are what docs/measurement.md
says: five fresh processes per variant from one commit, one machine and one call, with the quoted ratios
computed from each record's two timed windows."""

import json
import re
import statistics
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STUDY = REPO / "results" / "reference" / "h200" / "aftereffect"
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
