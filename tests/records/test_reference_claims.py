"""The reference the docs render (docs/templates/studies.yaml) is what the README's claims table and
docs/results.md say of it: one commit, each comparison group it names recorded whole, the groups not yet recorded
named as such, and the speedup claim's verdict the one its intervals give, computed here from the records and
the summaries apart from the templates."""

import json
import re
import sys
from pathlib import Path

import pytest

from tests.records.rendered import study_dir
from zerognn.records import stats
from zerognn.records.ids import RunKey
from zerognn.records.summary import read_summary

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "workflow" / "config" / "h200-reference.yaml"
STUDY = study_dir("reference")
RECORDS = {p.stem: json.loads(p.read_text()) for p in sorted((STUDY / "runs").glob("*.json"))}
SUMMARY = read_summary(STUDY / "summary.csv")
TRIALS = read_summary(study_dir("trials") / "summary.csv")
README = " ".join((REPO / "README.md").read_text().split())
RESULTS = (REPO / "docs" / "results.md").read_text()
CLAIM = 5.28


def _planned_groups() -> dict[tuple, set[str]]:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        from round_targets import round_records
    finally:
        sys.path.remove(str(REPO / "scripts"))
    groups: dict[tuple, set[str]] = {}
    for round_ in round_records(str(CONFIG)):
        for path in round_:
            key = RunKey.parse(Path(path).stem)
            groups.setdefault((key.dataset, key.model, key.batch_size), set()).add(key.run_id)
    return groups


GROUPS = _planned_groups()
DONE = [g for g, runs in GROUPS.items() if runs <= set(RECORDS)]


def _label(group: tuple) -> str:
    dataset, model, batch_size = group
    return f"{dataset} {model.upper()} B={batch_size}"


def _zerognn(group: tuple):
    """The group's zerognn row: the trials study's for the group it repeats (ten trials), else the reference's."""
    for summary in (TRIALS, SUMMARY):
        rows = summary[(summary.dataset == group[0]) & (summary.model == group[1])
                       & (summary.batch_size == group[2]) & (summary.variant == "zerognn")]
        if len(rows):
            return rows.iloc[0]
    raise AssertionError(f"no zerognn row for {group}")


def test_every_record_names_one_commit_and_a_recorded_group_is_whole():
    assert len({r["environment"]["git_commit"] for r in RECORDS.values()}) == 1
    assert DONE, "the reference has no group recorded whole"
    assert set(RECORDS) <= set().union(*GROUPS.values())  # nothing the config does not plan


def test_the_groups_still_to_record_are_counted_in_the_readme_and_named_in_the_results():
    todo = [g for g in GROUPS if g not in DONE]
    section = " ".join(RESULTS.split("## The reference, group by group", 1)[1].split("\n## ", 1)[0].split())
    if not todo:
        assert "Recorded so far" not in README and "Still to record" not in section
        return
    assert f"Recorded so far at this commit: {len(DONE)} of the {len(GROUPS)} groups, on which the claims" in README
    named = section.split("Still to record at commit ", 1)[1].split(": ", 1)[1].split(" (`python scripts/", 1)[0]
    assert [re.sub(r" \(\d+ of its \d+ runs\)$", "", part) for part in named.split(", ")] == [_label(g) for g in todo]
    for group in todo:
        recorded = len(GROUPS[group] & set(RECORDS))
        partly = f"{_label(group)} ({len(GROUPS[group]) - recorded} of its {len(GROUPS[group])} runs)"
        assert (partly in named) == (recorded > 0), group


def _ratio(z) -> str:
    return f"{z['speedup_vs_host_mediated']:.2f}x [{z['speedup_vs_host_mediated_ci_low']:.2f}–" \
           f"{z['speedup_vs_host_mediated_ci_high']:.2f}]"


def test_the_speedup_verdict_is_what_the_intervals_give():
    above, within, below = [], [], []
    for group in DONE:
        z = _zerognn(group)
        low, high = z["speedup_vs_host_mediated_ci_low"], z["speedup_vs_host_mediated_ci_high"]
        assert low == low and high == high, f"{_label(group)}: a recorded group with no interval"
        (above if low >= CLAIM else within if high >= CLAIM else below).append(_label(group))
    row = README.split("| up to **5.28x**", 1)[1].split(" | |", 1)[0]
    measured, verdict = row.split(" | ")[-2:]
    headline = next(g for g in DONE if g in {(d, m, b) for d, m, b in zip(TRIALS.dataset, TRIALS.model,
                                                                             TRIALS.batch_size)})
    assert measured.startswith(f"{_label(headline)} ({_zerognn(headline)['trials']} trials): "
                               f"**{_ratio(_zerognn(headline))}**")
    top = max(DONE, key=lambda g: _zerognn(g)["speedup_vs_host_mediated"])
    if top != headline:
        assert f"the highest {_label(top)}: **{_ratio(_zerognn(top))}**" in measured
    if above:
        assert verdict.startswith(f"reproduced in {len(above)} of {len(DONE)} groups ({', '.join(above)}): "
                                  f"the whole interval lies at or above 5.28x")
    elif within:
        assert verdict.startswith(f"undecided: the interval contains 5.28x in {', '.join(within)}")
    else:
        highest = max(_zerognn(g)["speedup_vs_host_mediated_ci_high"] for g in DONE)
        assert verdict.startswith(f"not reproduced: every interval lies below 5.28x "
                                  f"(the highest ends at {highest:.2f}x)")
    if below and (above or within):
        assert f"below it, the whole interval, in the other {len(below)}" in verdict


def _steps(group: tuple, variant: str) -> list[float]:
    """Each trial's median step of ``variant`` in the group, from the trials study's records for the group it
    repeats (as the claims read it), else the reference's."""
    for directory in (study_dir("trials"), STUDY):
        steps = {}
        for path in sorted((directory / "runs").glob("*.json")):
            key = RunKey.parse(path.stem)
            if (key.dataset, key.model, key.batch_size, key.variant) == (*group, variant):
                assert key.trial not in steps, f"{path.stem}: two configurations in one group's variant"
                steps[key.trial] = json.loads(path.read_text())["metrics"]["step_ms_median"]
        if steps:
            return [steps[trial] for trial in sorted(steps)]  # trial order, as the summary resamples them
    raise AssertionError(f"no {variant} records for {group}")


def test_the_envelope_verdict_needs_every_groups_interval_above_one():
    ratios = {}
    for group in DONE:
        worst, tight = _steps(group, "zerognn-worstcase"), _steps(group, "zerognn")
        ratios[group] = (stats.median(worst) / stats.median(tight), stats.ratio_ci(worst, tight))
    row = README.split("| a tight envelope is what makes the graph pay off |", 1)[1].split(" |\n", 1)[0]
    measured, verdict = row.split(" | ")[:2]
    assert f"its step is {min(r for r, _ in ratios.values()):.2f}–{max(r for r, _ in ratios.values()):.2f}x" \
        in measured
    least = min(ratios, key=lambda g: ratios[g][0])
    (value, (low, high)) = ratios[least]
    if len(DONE) > 1:
        assert f"(the least in {_label(least)}: **{value:.2f}x [{low:.2f}–{high:.2f}]**)" in measured
    reaching = [_label(g) for g in DONE if ratios[g][1][0] <= 1]
    if reaching:
        assert verdict.startswith(f"not reproduced: the interval reaches 1 in {', '.join(reaching)}")
    else:
        assert verdict.startswith("reproduced") and "the whole interval lies above 1" in verdict


def test_every_recorded_group_has_its_speedup_in_the_results():
    section = " ".join(RESULTS.split("## The reference, group by group", 1)[1].split("\n## ", 1)[0].split())
    for group in DONE:
        z = SUMMARY[(SUMMARY.dataset == group[0]) & (SUMMARY.model == group[1]) & (SUMMARY.batch_size == group[2])
                    & (SUMMARY.variant == "zerognn")].iloc[0]
        row = section.split(f"**{_label(group)}**", 1)[1].split("| zerognn |", 1)[1].split("| zerognn-", 1)[0]
        assert f"| {_ratio(z).replace('x [', ' [')} |" in row, group  # the table's ratio column has no "x"


def test_each_recorded_group_has_its_table_in_the_results():
    section = RESULTS.split("## The reference, group by group", 1)[1].split("\n## ", 1)[0]
    for group in DONE:
        processes = sum(1 for run_id in GROUPS[group] if run_id in RECORDS)
        assert f"**{_label(group)}**: {processes} processes on " in section
    for group in GROUPS:
        if group not in DONE:
            assert f"**{_label(group)}**" not in section


@pytest.mark.parametrize("variant", ["torch-compile"])
def test_the_baselines_describe_the_default_mode_the_records_ran(variant):
    baselines = " ".join(RESULTS.split("## The baselines", 1)[1].split("\n## ", 1)[0].split())
    ran = [r for r in RECORDS.values() if r["config"]["variant"] == variant
           and (r["config"]["dataset"], r["config"]["model"], r["config"]["batch_size"]) in DONE]
    captures = {r["metrics"]["cuda_graph_captures"] for r in ran}
    assert ran and captures == {0}  # the default mode captures no graph (reduce-overhead captured one a run)
    assert "in its default mode with `dynamic=True`" in baselines and "captured 0 CUDA Graphs" in baselines
    assert "reduce-overhead" not in baselines
