import json
import math

import pandas as pd
import pytest

from zerognn.errors import ZeroGNNError
from zerognn.records.summary import SUMMARY_COLUMNS, read_summary, summarize
from zerognn.records.table import markdown_table

from .factory import make_record, write_records


def _records():
    gpu = dict(device="cuda", gpu_name="NVIDIA H200", gpu_exec_fraction=0.5, peak_mem_bytes=2**30)
    return [
        # group (tiny, sage, b256, 15-10-5, g1): host-mediated median 10 ms
        make_record("host-mediated", step_ms=(9.0, 10.0, 11.0), **gpu),
        make_record("zerognn", step_ms=(2.0, 2.5, 3.0), **gpu),
        make_record("torch-eager", step_ms=(19.0, 20.0, 21.0), **gpu),
        # group b1024: host-mediated median 30 ms
        make_record("host-mediated", batch_size=1024, step_ms=(30.0,), **gpu),
        make_record("zerognn", batch_size=1024, step_ms=(6.0,), **gpu),
        # group with no host-mediated run
        make_record("zerognn", dataset="arxiv-like", step_ms=(4.0,), **gpu),
        # same dataset/batch as the first group but 2 GPUs: a different group
        make_record("zerognn", gpus=2, step_ms=(5.0,), **gpu),
    ]


def test_summary_rows_columns_and_speedups(tmp_path):
    write_records(tmp_path / "runs", _records())
    df = summarize(tmp_path / "runs", tmp_path / "summary.csv")

    assert list(df.columns) == SUMMARY_COLUMNS
    assert list(zip(df["dataset"], df["batch_size"], df["variant"], df["gpus"])) == [
        ("arxiv-like", 256, "zerognn", 1),
        ("tiny", 256, "host-mediated", 1),
        ("tiny", 256, "torch-eager", 1),
        ("tiny", 256, "zerognn", 1),
        ("tiny", 256, "zerognn", 2),
        ("tiny", 1024, "host-mediated", 1),
        ("tiny", 1024, "zerognn", 1),
    ]
    speedup = dict(zip(df["run_id"], df["speedup_vs_host_mediated"]))
    assert speedup["tiny__sage__host-mediated__b256__f15-10-5__g1"] == pytest.approx(1.0)
    assert speedup["tiny__sage__zerognn__b256__f15-10-5__g1"] == pytest.approx(10.0 / 2.5)
    assert speedup["tiny__sage__torch-eager__b256__f15-10-5__g1"] == pytest.approx(10.0 / 20.0)
    assert speedup["tiny__sage__zerognn__b1024__f15-10-5__g1"] == pytest.approx(30.0 / 6.0)
    assert math.isnan(speedup["arxiv-like__sage__zerognn__b256__f15-10-5__g1"])
    assert math.isnan(speedup["tiny__sage__zerognn__b256__f15-10-5__g2"])

    row = df.iloc[1]
    assert row["fanouts"] == "15-10-5"
    assert row["final_loss"] == pytest.approx((1.0 + 0.9 + 0.8 + 0.7 + 0.6) / 5)
    assert row["gpu_name"] == "NVIDIA H200" and row["git_commit"] == "abc123"
    assert row["peak_mem_bytes"] == 2**30

    back = read_summary(tmp_path / "summary.csv")
    pd.testing.assert_frame_equal(back, df)


def test_final_loss_with_null_or_few_losses(tmp_path):
    write_records(tmp_path / "runs", [
        make_record("a", losses=[2.0, 4.0]),
        make_record("b", losses=[1.0, None]),
        make_record("c", losses=[]),
    ])
    df = summarize(tmp_path / "runs", tmp_path / "s.csv").set_index("variant")
    assert df.loc["a", "final_loss"] == pytest.approx(3.0)
    assert math.isnan(df.loc["b", "final_loss"]) and math.isnan(df.loc["c", "final_loss"])
    assert df["speedup_vs_host_mediated"].isna().all()
    assert df["gpu_exec_fraction"].isna().all()


def test_same_run_id_in_two_files_is_an_error(tmp_path):
    record = make_record("zerognn")
    name = f"{record['run_id']}.json"
    (tmp_path / "runs" / "old").mkdir(parents=True)
    (tmp_path / "runs" / "old" / name).write_text(json.dumps(record))
    (tmp_path / "runs" / name).write_text(json.dumps(record))
    with pytest.raises(ZeroGNNError, match="appears in both"):
        summarize(tmp_path / "runs", tmp_path / "s.csv")
    assert not (tmp_path / "s.csv").exists()


@pytest.mark.parametrize("make_dir", [True, False])
def test_empty_or_missing_runs_dir(tmp_path, make_dir):
    if make_dir:
        (tmp_path / "runs").mkdir()
    with pytest.raises(ZeroGNNError, match="run the pipeline first"):
        summarize(tmp_path / "runs", tmp_path / "s.csv")


def test_read_summary_from_another_version(tmp_path):
    (tmp_path / "s.csv").write_text("dataset,variant\ntiny,zerognn\n")
    with pytest.raises(ZeroGNNError, match="lacks columns"):
        read_summary(tmp_path / "s.csv")


def _good_summary(tmp_path):
    write_records(tmp_path / "runs", [make_record("host-mediated"), make_record("zerognn", step_ms=(2.0, 3.0, 4.0))])
    summary = tmp_path / "summary.csv"
    summarize(tmp_path / "runs", summary)
    return summary


def _rejected(path, *said):
    with pytest.raises(ZeroGNNError) as e:
        read_summary(path)
    message = str(e.value)
    assert "\n" not in message and str(path) in message, message
    assert "zerognn summarize" in message and "snakemake figures" in message, message
    for text in said:
        assert text in message, message
    return message


def test_read_summary_rejects_a_truncated_file(tmp_path):
    summary = _good_summary(tmp_path)
    text = summary.read_text()
    last = text.rstrip("\n").rsplit("\n", 1)[1]
    cut = text[: len(text) - len(last) // 2 - 1]  # the last line cut in the middle
    summary.write_text(cut)
    _rejected(summary, "is truncated", "line 3")
    # cut short at a field boundary, then ended: too few fields
    summary.write_text(text[: len(text) - len(last) - 1] + ",".join(last.split(",")[:8]) + "\n")
    _rejected(summary, f"line 3 has 8 fields but the header has {len(SUMMARY_COLUMNS)}")
    # every field there, but required ones empty (what pandas would read as NaN)
    fields = last.split(",")
    fields[SUMMARY_COLUMNS.index("run_id")] = fields[SUMMARY_COLUMNS.index("epoch_s")] = ""
    summary.write_text(text[: len(text) - len(last) - 1] + ",".join(fields) + "\n")
    _rejected(summary, "line 3 has no value for epoch_s, run_id")


def test_read_summary_rejects_empty_header_only_and_missing_files(tmp_path):
    summary = _good_summary(tmp_path)
    header = summary.read_text().split("\n", 1)[0]
    summary.write_text(header + "\n")
    _rejected(summary, "has a header but no rows")
    summary.write_text("")
    _rejected(summary, "is empty")
    summary.write_text("\n\n")
    _rejected(summary, "is empty")
    summary.unlink()
    _rejected(summary, "does not exist")


def test_read_summary_rejects_a_repeated_run(tmp_path):
    summary = _good_summary(tmp_path)
    last = summary.read_text().rstrip("\n").rsplit("\n", 1)[1]
    with summary.open("a") as f:
        f.write(last + "\n")
    _rejected(summary, "lists run tiny__sage__zerognn__b256__f15-10-5__g1 twice (lines 3 and 4)")


@pytest.mark.parametrize("column, value, said", [
    ("batch_size", "abc", "line 2, column batch_size holds 'abc', not an integer"),
    ("gpus", "1.5", "column gpus holds '1.5', not an integer"),
    ("peak_mem_bytes", "1.5", "column peak_mem_bytes holds '1.5', not an integer"),
    ("step_ms_median", "fast", "column step_ms_median holds 'fast', not a number"),
    ("run_id", "tiny__sage__zerognn__b256", "line 2 has run_id 'tiny__sage__zerognn__b256' but its dataset"),
])
def test_read_summary_rejects_values_of_the_wrong_type(tmp_path, column, value, said):
    summary = _good_summary(tmp_path)
    header, first, rest = summary.read_text().split("\n", 2)
    fields = first.split(",")
    fields[SUMMARY_COLUMNS.index(column)] = value
    summary.write_text("\n".join([header, ",".join(fields), rest]))
    _rejected(summary, said)


def test_read_summary_rejects_a_parse_error(tmp_path):
    summary = _good_summary(tmp_path)
    header, first, rest = summary.read_text().split("\n", 2)
    summary.write_text("\n".join([header, '"' + first, rest]))
    _rejected(summary, "is damaged")


def test_the_summary_as_a_markdown_table_lists_every_run_in_order(tmp_path):
    write_records(tmp_path / "runs", [
        make_record("zerognn", step_ms=(2.0, 3.0, 4.0), batch_size=1024, epoch_s_measured=0.031, epoch_first_step=10),
        make_record("host-mediated", batch_size=1024),
        make_record("my-baseline", model="gcn"),
        make_record("host-mediated"),
    ])
    table = markdown_table(summarize(tmp_path / "runs", tmp_path / "summary.csv")).splitlines()
    assert table[0].startswith("| dataset | model | variant |") and set(table[1]) == {"|", "-"}
    assert len(table) == 2 + 4 and all(line.count("|") == table[0].count("|") for line in table)
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in table[2:]]
    # SAGE first by batch size, host-mediated before zerognn, then the other models
    assert [(r[1], r[2], r[3]) for r in rows] == [("SAGE", "host-mediated", "256"), ("SAGE", "host-mediated", "1024"),
                                                 ("SAGE", "zerognn", "1024"), ("GCN", "my-baseline", "256")]
    assert rows[2][5:8] == ["1", "3.00", ""] and rows[2][10] == "3.67" and rows[2][12] == ""  # empty: a CPU run
    assert rows[2][8] == "0.03 (0.03)" and rows[1][8] == "0.11"  # epoch from the median (measured)
    assert rows[2][9] == ""  # no setup time in a record without phases
    assert "host load" not in table[0]


def test_the_markdown_table_shows_host_load_and_the_slowdown_when_runs_have_one(tmp_path):
    write_records(tmp_path / "runs", [
        make_record("zerognn", host_launches_per_step=0.025, device="cuda"),
        make_record("zerognn", step_ms=(12.0, 13.0, 14.0), host_load=16),
        make_record("host-mediated"),
    ])
    table = markdown_table(summarize(tmp_path / "runs", tmp_path / "summary.csv")).splitlines()
    header = [c.strip() for c in table[0].split("|")[1:-1]]
    assert header[4:6] == ["GPUs", "host load"] and header[11:13] == ["× host-mediated [95 % CI]", "× alone"]
    rows = {(r[2], r[5]): r for r in ([c.strip() for c in line.split("|")[1:-1]] for line in table[2:])}
    assert rows[("zerognn", "16")][12] == "1.18" and rows[("zerognn", "0")][12] == "1.00"
    assert rows[("zerognn", "0")][18] == "0.025" and rows[("host-mediated", "0")][18] == ""


def test_the_markdown_table_shows_the_intervals_and_flags_an_unstable_configuration(tmp_path):
    write_records(tmp_path / "runs", _trials("host-mediated", BASE_MS) + _trials("zerognn", FAST_MS))
    table = markdown_table(summarize(tmp_path / "runs", tmp_path / "summary.csv")).splitlines()
    rows = {r[2]: r for r in ([c.strip() for c in line.split("|")[1:-1]] for line in table[2:])}
    assert rows["host-mediated"][5:8] == ["10", "4.25 [3.80–5.00]", "**13.9 %**"]  # sd 0.604 over mean 4.34
    assert rows["zerognn"][7] == "0.1 %" and rows["zerognn"][10].startswith("3.98 [")


# Ten trials each (a fresh process per trial): host-mediated spreads, zerognn barely moves.
BASE_MS = [4.0, 4.4, 3.4, 5.3, 4.9, 3.8, 4.1, 4.6, 3.9, 5.0]
FAST_MS = [1.066, 1.067, 1.068, 1.069, 1.067, 1.066, 1.068, 1.067, 1.069, 1.066]


def _trials(variant, medians, **kw):
    # each trial's steps centred on its median, so the trial's median is exactly that value
    peak = 2**20 * (3 if variant == "host-mediated" else 4)
    return [make_record(variant, step_ms=(m * 0.9, m, m * 1.1), trial=k, peak_mem_bytes=peak, device="cuda",
                        gpu_name="NVIDIA H200", **kw)
            for k, m in enumerate(medians, start=1)]


def test_a_configurations_trials_make_one_row_with_intervals_recomputed_from_the_records(tmp_path):
    from zerognn.records import stats
    from zerognn.records.schema import iter_records

    write_records(tmp_path / "runs", _trials("host-mediated", BASE_MS) + _trials("zerognn", FAST_MS))
    df = summarize(tmp_path / "runs", tmp_path / "summary.csv").set_index("variant")
    assert len(df) == 2 and (df["trials"] == 10).all()
    assert list(df["run_id"]) == [f"tiny__sage__{v}__b256__f15-10-5__g1" for v in ("host-mediated", "zerognn")]
    base = df.loc["host-mediated"]
    # by hand: sorted 3.4 3.8 3.9 4.0 4.1 | 4.4 4.6 4.9 5.0 5.3 -> median 4.25; ranks 2 and 9 -> 3.8, 5.0
    assert base["step_ms_median"] == pytest.approx(4.25)
    assert (base["step_ms_median_ci_low"], base["step_ms_median_ci_high"]) == (3.8, 5.0)
    assert base["step_ms_cv"] == pytest.approx(pd.Series(BASE_MS).std() / pd.Series(BASE_MS).mean())
    assert base["speedup_vs_host_mediated"] == 1.0 and pd.isna(base["speedup_vs_host_mediated_ci_low"])
    # the same intervals again, from the records alone, by the documented method
    by_variant = {}
    for r in iter_records(tmp_path / "runs"):
        by_variant.setdefault(r["config"]["variant"], []).append(r["metrics"]["step_ms_median"])
    fast = df.loc["zerognn"]
    assert fast["speedup_vs_host_mediated"] == pytest.approx(4.25 / 1.067)
    low, high = stats.ratio_ci(by_variant["host-mediated"], by_variant["zerognn"])
    assert (fast["speedup_vs_host_mediated_ci_low"], fast["speedup_vs_host_mediated_ci_high"]) == (low, high)
    assert low < fast["speedup_vs_host_mediated"] < high
    assert (fast["step_ms_median_ci_low"], fast["step_ms_median_ci_high"]) == stats.median_ci(by_variant["zerognn"])
    assert fast["peak_mem_vs_host_mediated"] == pytest.approx(4 / 3)
    assert fast["peak_mem_vs_host_mediated_ci_low"] == fast["peak_mem_vs_host_mediated_ci_high"] == pytest.approx(4 / 3)
    pd.testing.assert_frame_equal(read_summary(tmp_path / "summary.csv").set_index("variant"), df)


def test_fewer_than_six_trials_give_no_interval_and_one_trial_summarises_as_before(tmp_path):
    write_records(tmp_path / "runs", _trials("host-mediated", BASE_MS[:5]) + _trials("zerognn", FAST_MS[:1]))
    df = summarize(tmp_path / "runs", tmp_path / "summary.csv").set_index("variant")
    assert list(df["trials"]) == [5, 1]
    assert df["step_ms_median_ci_low"].isna().all() and df["speedup_vs_host_mediated_ci_low"].isna().all()
    assert df.loc["host-mediated", "step_ms_cv"] > 0 and pd.isna(df.loc["zerognn", "step_ms_cv"])
    assert df.loc["zerognn", "step_ms_median"] == FAST_MS[0]


def test_only_the_trials_that_were_profiled_or_evaluated_give_those_values(tmp_path):
    records = _trials("zerognn", FAST_MS[:3])
    records[0]["metrics"]["host_syncs_per_step"] = 0.0
    records[0]["accuracy"] |= {"val": 0.7, "test": 0.6}
    for r in records[1:]:
        r["accuracy"] |= {"val": None, "test": None, "eval_nodes": 0}
    write_records(tmp_path / "runs", records)
    row = summarize(tmp_path / "runs", tmp_path / "s.csv").iloc[0]
    assert row["host_syncs_per_step"] == 0.0 and row["val_acc"] == 0.7 and row["test_acc"] == 0.6


@pytest.mark.parametrize("field, value", [("git_commit", "def456"), ("gpu_name", "NVIDIA A100")])
def test_trials_that_differ_in_commit_or_gpu_are_refused(tmp_path, field, value):
    records = _trials("zerognn", FAST_MS[:3])
    records[2]["environment"][field] = value
    write_records(tmp_path / "runs", records)
    with pytest.raises(ZeroGNNError, match=f"the trials of tiny__sage__zerognn__b256__f15-10-5__g1 differ in "
                                           f"{field} .*: they are not repeats of one configuration"):
        summarize(tmp_path / "runs", tmp_path / "s.csv", allow_mixed_provenance=True)  # even across machines
    assert not (tmp_path / "s.csv").exists()


def test_summarize_names_each_unstable_configuration(tmp_path, capsys):
    from zerognn.cli import main

    write_records(tmp_path / "runs", _trials("host-mediated", BASE_MS) + _trials("zerognn", FAST_MS))
    assert main(["summarize", "--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "s.csv")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{tmp_path / 's.csv'}: 2 configurations from 20 run records (trials)"
    assert out[1:] == ["unstable: tiny__sage__host-mediated__b256__f15-10-5__g1: between-trial CV 13.9 % over 10 "
                       "trials (10 % or more: its interval, not its median, is the result)"]


@pytest.mark.parametrize("field, value, what", [("git_commit", "def456", "commits"),
                                                ("boot_id", "other-boot", "machine instances")])
def test_a_comparison_group_of_two_commits_or_machines_is_refused_unless_allowed(tmp_path, field, value, what):
    records = _trials("host-mediated", BASE_MS[:2]) + _trials("zerognn", FAST_MS[:2])
    for r in records:
        r["environment"]["boot_id"] = "boot-1"
    records[-1]["environment"][field] = records[-2]["environment"][field] = value  # zerognn's trials
    write_records(tmp_path / "runs", records)
    with pytest.raises(ZeroGNNError, match=f"the comparison group tiny sage 256 15-10-5 1 0 False float32 mixes {what}"
                                           ".*mixed_provenance: true"):
        summarize(tmp_path / "runs", tmp_path / "s.csv")
    df = summarize(tmp_path / "runs", tmp_path / "s.csv", allow_mixed_provenance=True)
    assert len(df) == 2


def test_groups_may_differ_from_each_other_and_records_without_a_boot_id_count_for_none(tmp_path):
    records = _trials("host-mediated", BASE_MS[:1]) + _trials("zerognn", FAST_MS[:1])
    other = _trials("zerognn", FAST_MS[:1], batch_size=1024)
    other[0]["environment"] |= {"git_commit": "def456", "boot_id": "boot-2"}
    write_records(tmp_path / "runs", records + other)
    assert len(summarize(tmp_path / "runs", tmp_path / "s.csv")) == 3


def test_memory_both_ways_and_the_ideal_are_medians_over_trials(tmp_path):
    records = _trials("zerognn", FAST_MS[:3])
    for r, reserved in zip(records, (5, 7, 6)):
        r["metrics"] |= {"peak_reserved_bytes": 2**20 * reserved, "ideal_mem_bytes": 2**20}
    write_records(tmp_path / "runs", records)
    row = summarize(tmp_path / "runs", tmp_path / "s.csv").iloc[0]
    assert (row["peak_mem_bytes"], row["peak_reserved_bytes"], row["ideal_mem_bytes"]) == (4 * 2**20, 6 * 2**20,
                                                                                         2**20)


def test_setup_is_the_setup_and_warm_up_phases_and_the_raw_fraction_is_uncapped(tmp_path):
    records = _trials("zerognn", FAST_MS[:3])
    for r, setup in zip(records, (0.5, 0.7, 0.6)):
        r["metrics"]["phase_s"] = {"start": 3.0, "setup": setup, "warm-up": 0.1, "timed steps": 0.05, "total": 9.0}
    records[0]["metrics"] |= {"gpu_busy_ms_per_step": 1.1 * FAST_MS[0], "gpu_exec_fraction": 1.0}
    write_records(tmp_path / "runs", records)
    row = summarize(tmp_path / "runs", tmp_path / "s.csv").iloc[0]
    assert row["setup_s"] == pytest.approx(0.7)  # the median of 0.6, 0.8, 0.7
    assert row["gpu_exec_fraction"] == 1.0 and row["gpu_exec_fraction_raw"] == pytest.approx(1.1 * FAST_MS[0] / 1.067)


def test_the_docs_table_of_summary_columns_lists_exactly_the_columns():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "records.md").read_text()
    section = text.split("## From records to summary rows", 1)[1].split("\n## ", 1)[0]
    first_cells = re.findall(r"^\| (`.+?) \| ", section, flags=re.M)
    named = {name for cell in first_cells for name in re.findall(r"`([a-z_0-9]+)`", cell)}
    # "`speedup_vs_host_mediated`, `_ci_low`, `_ci_high`" names three columns
    stems = {name for cell in first_cells if "`_ci_low`" in cell for name in re.findall(r"`([a-z][a-z_0-9]*)`", cell)}
    columns = {n for n in named if not n.startswith("_")} | {f"{s}{e}" for s in stems for e in ("_ci_low", "_ci_high")}
    assert columns == set(SUMMARY_COLUMNS)
