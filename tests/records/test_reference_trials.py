"""The committed trials study (results/reference/h200/trials/) is what docs/results.md says: one commit, one
machine and one call, every variant in every round, and the section's table and sentences computed from the
records and their summary."""

import json
import re
import statistics
from pathlib import Path

from zerognn.records.summary import read_summary

REPO = Path(__file__).resolve().parents[2]
STUDY = REPO / "results" / "reference" / "h200" / "trials"
RECORDS = [json.loads(p.read_text()) for p in sorted((STUDY / "runs").glob("*.json"))]
SUMMARY = read_summary(STUDY / "summary.csv").set_index("variant")
SECTION = (REPO / "docs" / "results.md").read_text().split("## Repeated trials", 1)[1].split("\n## ", 1)[0]
TEXT = " ".join(SECTION.split())


def _trials(variant: str) -> list[dict]:
    return sorted((r for r in RECORDS if r["config"]["variant"] == variant), key=lambda r: r["config"]["trial"])


def test_every_variant_in_every_round_from_one_commit_machine_and_call():
    rounds = {r["config"]["trial"] for r in RECORDS}
    assert rounds == set(range(1, len(rounds) + 1))
    assert len(RECORDS) == len(rounds) * len(SUMMARY)
    for field in ("git_commit", "boot_id", "call_id", "source_sha256"):
        assert len({r["environment"][field] for r in RECORDS}) == 1, field
    by_start = sorted(RECORDS, key=lambda r: r["environment"]["started_at"])
    assert [r["config"]["trial"] for r in by_start] == sorted(r["config"]["trial"] for r in RECORDS)  # rounds
    assert all((r["config"]["profile_steps"] > 0) == (r["config"]["trial"] == 1) for r in RECORDS)


def test_the_docs_table_is_the_records():
    rows = re.findall(r"^\| ([a-z-]+) \| (\d+) \| ([\d.]+) \| ([\d.]+)–([\d.]+) \| ([\d.]+) % \| ([\d.]+) \| "
                      r"([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", SECTION, flags=re.M)
    assert sorted(row[0] for row in rows) == sorted(SUMMARY.index)
    for variant, n, median, low, high, cv, speedup, setup, first, later in rows:
        s, trials = SUMMARY.loc[variant], _trials(variant)
        medians = [r["metrics"]["step_ms_median"] for r in trials]
        totals = [r["metrics"]["phase_s"]["total"] for r in trials]
        assert int(n) == s["trials"] == len(trials), variant
        assert (median, low, high) == (f"{s['step_ms_median']:.2f}", f"{min(medians):.2f}", f"{max(medians):.2f}")
        assert (cv, speedup, setup) == (f"{100 * s['step_ms_cv']:.1f}", f"{s['speedup_vs_host_mediated']:.2f}",
                                        f"{s['setup_s']:.2f}"), variant
        assert (first, later) == (f"{totals[0]:.1f}", f"{statistics.median(totals[1:]):.1f}"), variant


def test_the_docs_sentences_are_the_records():
    n = len({r["config"]["trial"] for r in RECORDS})
    assert f"the first {['', 'one', 'two', 'three', 'four', 'five'][n]} rounds" in TEXT
    commit = re.search(r"at commit (\w+) in one call", TEXT).group(1)
    assert RECORDS[0]["environment"]["git_commit"].startswith(commit)
    drift = re.search(r"host-mediated ([\d. /]+) ms in rounds", TEXT).group(1)
    assert drift == " / ".join(f"{r['metrics']['step_ms_median']:.2f}" for r in _trials("host-mediated"))
    cvs = [100 * SUMMARY.loc[v, "step_ms_cv"] for v in SUMMARY.index if not v.startswith("zerognn")]
    low, high = map(int, re.search(r"variants' move (\d+)–(\d+) % between", TEXT).groups())
    assert (low, high) == (round(min(cvs)), round(max(cvs)))
    assert f"trials agree to {100 * SUMMARY.loc['zerognn', 'step_ms_cv']:.1f} %" in TEXT
    setups = [SUMMARY.loc[v, "setup_s"] for v in ("torch-compile", "torch-eager", "zerognn")]
    assert re.search(rf"with {setups[0]:.1f} s of compilation and first steps against {setups[1]:.1f} s", TEXT)
    assert f"calibration and capture take {setups[2]:.2f} s" in TEXT
    later = _trials("zerognn")[1:]
    assert f"writes its record {statistics.median(r['metrics']['phase_s']['total'] for r in later):.1f} s" in TEXT
    assert f"about {statistics.median(r['metrics']['phase_s']['start'] for r in later):.1f} s of which" in TEXT


def test_the_host_bound_first_steps_are_what_the_docs_say():
    variants = re.search(r"the first five steps of ([a-z, -]+) take", TEXT).group(1).replace(" and ", ", ").split(", ")
    warmups = [r["metrics"]["phase_s"]["warm-up"] for r in RECORDS if r["config"]["variant"] in variants]
    assert sorted(variants) == ["cuda-graph-naive", "dynamic-parallelism", "host-mediated", "torch-eager"]
    assert re.search(rf"take {min(warmups):.1f}–{max(warmups):.1f} s \(the `warm-up` phase", TEXT)
