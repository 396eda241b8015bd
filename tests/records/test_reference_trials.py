"""The committed trials study the docs render (docs/templates/studies.yaml) is what docs/results.md says: one
commit and one machine boot, every variant in every round, each round one invocation, the rounds back to back,
and the section's table and sentences (with the README's speedup) computed from the records and their summary."""

import json
import re
import statistics
from datetime import datetime, timedelta
from pathlib import Path

from tests.records.rendered import study_dir
from zerognn.records.summary import read_summary

REPO = Path(__file__).resolve().parents[2]
STUDY = study_dir("trials")
RECORDS = [json.loads(p.read_text()) for p in sorted((STUDY / "runs").glob("*.json"))]
SUMMARY = read_summary(STUDY / "summary.csv").set_index("variant")
SECTION = (REPO / "docs" / "results.md").read_text().split("## Repeated trials", 1)[1].split("\n## ", 1)[0]
TEXT = " ".join(SECTION.split())


def _trials(variant: str) -> list[dict]:
    return sorted((r for r in RECORDS if r["config"]["variant"] == variant), key=lambda r: r["config"]["trial"])


def test_every_variant_in_every_round_from_one_commit_and_machine_boot():
    rounds = {r["config"]["trial"] for r in RECORDS}
    assert rounds == set(range(1, 11))
    assert len(RECORDS) == len(rounds) * len(SUMMARY)
    for field in ("git_commit", "boot_id", "source_sha256"):
        assert len({r["environment"][field] for r in RECORDS}) == 1, field
    by_start = sorted(RECORDS, key=lambda r: r["environment"]["started_at"])
    assert [r["config"]["trial"] for r in by_start] == sorted(r["config"]["trial"] for r in RECORDS)  # rounds
    assert all((r["config"]["profile_steps"] > 0) == (r["config"]["trial"] == 1) for r in RECORDS)


def _round_spans() -> list[tuple[datetime, datetime]]:
    spans = []
    for t in range(1, 11):
        records = [r for r in RECORDS if r["config"]["trial"] == t]
        starts = [datetime.fromisoformat(r["environment"]["started_at"]) for r in records]
        ends = [s + timedelta(seconds=r["metrics"]["phase_s"]["total"]) for s, r in zip(starts, records)]
        spans.append((min(starts), max(ends)))
    return spans


def test_every_round_is_one_invocation_within_minutes_of_the_next():
    for t in range(1, 11):  # no round split between invocations (a call runs whole invocations)
        assert len({r["environment"]["call_id"] for r in RECORDS if r["config"]["trial"] == t}) == 1, t
    assert len({r["environment"]["call_id"] for r in RECORDS}) == 10
    spans = _round_spans()
    gaps = [(later[0] - earlier[1]).total_seconds() for earlier, later in zip(spans, spans[1:])]
    assert all(0 <= g < 120 for g in gaps), gaps  # back to back: at most one call's install and build between
    assert "each round is one Snakemake invocation (10 in the records' `call_id`)" in TEXT
    starts = sorted(datetime.fromisoformat(r["environment"]["started_at"]) for r in RECORDS)
    assert f"minutes of processes started within {(starts[-1] - starts[0]).total_seconds() / 60:.1f} minutes" in TEXT


def test_the_docs_table_is_the_records():
    steps = dict((row[0], row[1:]) for row in re.findall(
        r"^\| ([a-z-]+) \| (\d+) \| ([\d.]+) \[([\d.]+)–([\d.]+)\] \| (?:\*\*)?([\d.]+) %(?:\*\*)? \| "
        r"([\d.]+)(?: \[([\d.]+)–([\d.]+)\])? \| ([\d.]+) \|$", SECTION, flags=re.M))
    processes = dict((row[0], row[1:]) for row in re.findall(
        r"^\| ([a-z-]+) \| ([\d.]+)–([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", SECTION, flags=re.M))
    assert steps.keys() == processes.keys()
    rows = [(v, *steps[v][:4], *processes[v][:2], *steps[v][4:], *processes[v][2:]) for v in steps]
    assert sorted(row[0] for row in rows) == sorted(SUMMARY.index)
    for variant, n, median, ci_low, ci_high, low, high, cv, speedup, sp_low, sp_high, setup, first, later in rows:
        s, trials = SUMMARY.loc[variant], _trials(variant)
        medians = [r["metrics"]["step_ms_median"] for r in trials]
        totals = [r["metrics"]["phase_s"]["total"] for r in trials]
        assert int(n) == s["trials"] == len(trials), variant
        assert (median, low, high) == (f"{s['step_ms_median']:.2f}", f"{min(medians):.2f}", f"{max(medians):.2f}")
        assert (ci_low, ci_high) == tuple(f"{v:.2f}" for v in sorted(medians)[1:9:7]), variant  # ranks 2 and 9 of 10
        assert (ci_low, ci_high) == (f"{s['step_ms_median_ci_low']:.2f}", f"{s['step_ms_median_ci_high']:.2f}")
        assert (cv, speedup, setup) == (f"{100 * s['step_ms_cv']:.1f}", f"{s['speedup_vs_host_mediated']:.2f}",
                                        f"{s['setup_s']:.2f}"), variant
        interval = ("", "") if variant == "host-mediated" else (f"{s['speedup_vs_host_mediated_ci_low']:.2f}",
                                                                f"{s['speedup_vs_host_mediated_ci_high']:.2f}")
        assert (sp_low, sp_high) == interval, variant
        assert (first, later) == (f"{totals[0]:.1f}", f"{statistics.median(totals[1:]):.1f}"), variant


def test_the_docs_sentences_are_the_records():
    assert "in 10 rounds whose variant order rotates" in TEXT
    commit, gpu = re.search(r"at commit (\w+) on one (.+?) host", TEXT).groups()
    assert RECORDS[0]["environment"]["git_commit"].startswith(commit)
    assert {r["environment"]["gpu_name"] for r in RECORDS} == {gpu}
    minutes = sum(r["metrics"]["phase_s"]["total"] for r in RECORDS) / 60
    assert f"{minutes:.1f} minutes of processes started within" in TEXT
    drift = re.search(r"host-mediated ([\d. /]+) ms in rounds 1–10", TEXT).group(1)
    assert drift == " / ".join(f"{r['metrics']['step_ms_median']:.2f}" for r in _trials("host-mediated"))
    cvs = [100 * SUMMARY.loc[v, "step_ms_cv"] for v in SUMMARY.index if not v.startswith("zerognn")]
    low, high = map(int, re.search(r"variants' move (\d+)–(\d+) % between", TEXT).groups())
    assert (low, high) == (round(min(cvs)), round(max(cvs)))
    z = SUMMARY.loc["zerognn"]
    assert f"trials agree to {100 * z['step_ms_cv']:.1f} %" in TEXT
    assert (f"speedup over host-mediated is {z['speedup_vs_host_mediated']:.2f}x, and its interval runs from "
            f"{z['speedup_vs_host_mediated_ci_low']:.2f}x to {z['speedup_vs_host_mediated_ci_high']:.2f}x") in TEXT
    compiled, eager = SUMMARY.loc["torch-compile"], SUMMARY.loc["torch-eager"]
    assert (f"takes {compiled['step_ms_median']:.2f} ms [{compiled['step_ms_median_ci_low']:.2f}–"
            f"{compiled['step_ms_median_ci_high']:.2f}], {compiled['step_ms_median'] / eager['step_ms_median']:.2f}x "
            f"`torch-eager`'s {eager['step_ms_median']:.2f} ms [{eager['step_ms_median_ci_low']:.2f}–"
            f"{eager['step_ms_median_ci_high']:.2f}]") in TEXT
    info = {json.dumps({k: r["variant_info"][k] for k in ("dynamo_graphs", "graph_breaks", "recompilations")})
            for r in _trials("torch-compile")}
    assert info == {json.dumps({"dynamo_graphs": 10, "graph_breaks": 8, "recompilations": 0})}
    assert "in every trial Dynamo compiled the step into 10 graphs with 8 graph breaks and recompiled none" in TEXT
    setups = [SUMMARY.loc[v, "setup_s"] for v in ("torch-compile", "torch-eager", "zerognn")]
    assert re.search(rf"spends {setups[0]:.1f} s of compilation and first steps against {setups[1]:.1f} s", TEXT)
    assert f"calibration and capture take {setups[2]:.2f} s" in TEXT
    captures = [r["variant_info"]["captures"][0]["capture_s"] for r in _trials("zerognn")]
    assert statistics.median(captures) < setups[2] / 10  # the setup is the calibration and construction, not capture
    assert (f"`zerognn`'s setup ({setups[2]:.2f} s) is its envelope's calibration and the step graph's construction; "
            f"the capture itself takes {statistics.median(captures):.3f} s of it") in TEXT
    later = [r["metrics"]["phase_s"] for r in _trials("zerognn")[1:]]
    totals = [p["total"] for p in later]
    assert (f"writes its record {statistics.median(totals):.1f} s after it starts ({min(totals):.1f}–"
            f"{max(totals):.1f} s over trials 2–10), about {statistics.median(p['start'] for p in later):.1f} s of"
            ) in TEXT


def test_the_host_bound_first_steps_are_what_the_docs_say():
    variants = re.search(r"the first five steps of ([a-z, -]+) take", TEXT).group(1).replace(" and ", ", ").split(", ")
    warmups = [r["metrics"]["phase_s"]["warm-up"] for r in RECORDS if r["config"]["variant"] in variants]
    assert sorted(variants) == ["cuda-graph-naive", "dynamic-parallelism", "host-mediated", "torch-eager"]
    assert re.search(rf"take {min(warmups):.1f}–{max(warmups):.1f} s \(the `warm-up` phase", TEXT)


def test_the_readme_gives_the_headline_speedup_from_these_trials():
    readme = " ".join((REPO / "README.md").read_text().split())
    z, host = SUMMARY.loc["zerognn"], SUMMARY.loc["host-mediated"]
    low, high = z["speedup_vs_host_mediated_ci_low"], z["speedup_vs_host_mediated_ci_high"]
    assert (f"products-like SAGE B=1024 ({int(z['trials'])} trials): **{z['speedup_vs_host_mediated']:.2f}x "
            f"[{low:.2f}–{high:.2f}]** ({z['step_ms_median']:.3f} vs {host['step_ms_median']:.2f} ms)") in readme


def test_the_papers_records_ran_torch_compile_in_its_default_mode():
    papers = study_dir("papers")
    compiled = [json.loads(p.read_text()) for p in (papers / "runs").glob("*torch-compile*")]
    # the default mode captures no graph (reduce-overhead captured its one cudagraph-tree graph), like the trials'
    assert len(compiled) == 6 and all(r["metrics"]["cuda_graph_captures"] == 0 for r in compiled)
    assert all(r["metrics"]["cuda_graph_captures"] == 0 for r in _trials("torch-compile"))
    section = (REPO / "README.md").read_text().split("## papers100M at full scale", 1)[1].split("\n## ", 1)[0]
    assert f"{papers.relative_to(REPO)}/" in section and "reduce-overhead" not in section
