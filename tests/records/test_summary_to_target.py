"""Runs to the target in the summary: times to the target over seeds with their intervals, only where every seed
reached it; epochs to the target and the flag where they are not host-mediated's; accuracy as mean ± std."""

import statistics

import pandas as pd
import pytest

from zerognn.records import RunKey
from zerognn.records.stats import median_ci, ratio_ci
from zerognn.records.summary import read_summary, summarize
from zerognn.records.table import markdown_table

from .factory import make_record, write_records


def to_target(variant, seed, times, epochs, accuracy=0.7, setup=0.5, reached=True):
    """A record of seed ``seed`` that evaluated after each epoch, reaching the target (0.6) at epoch ``epochs``."""
    record = make_record(variant)
    record["config"] |= {"seed": seed, "epochs": len(times), "eval_every": 1, "eval_nodes": 100}
    record["run_id"] = RunKey.of(record["config"]).run_id
    spe = record["metrics"]["steps_per_epoch"]
    evaluations = [{"step": spe * (k + 1), "epoch": k + 1, "train_s": s, "eval_s": 0.1,
                    "val_acc": 0.65 if reached and k + 1 >= epochs else 0.5, "train_loss": 1.0}
                   for k, s in enumerate(times)]
    evaluations[-1]["val_acc"] = accuracy if reached else 0.5
    hit = evaluations[epochs - 1] if reached else None
    record["training"] = {
        "target_val_acc": 0.6, "epochs": len(times), "eval_every": 1, "eval_nodes": 100, "setup_s": setup,
        "evaluations": evaluations, "time_to_target_s": hit and hit["train_s"],
        "time_to_target_with_setup_s": hit and hit["train_s"] + setup, "epochs_to_target": hit and hit["epoch"],
        "not_reached": None if reached else "val accuracy peaked at 0.5000, below the target 0.6, within 3 epochs"}
    return record


def test_times_to_the_target_over_six_seeds_with_intervals_ratio_and_accuracy(tmp_path):
    ours = [to_target("zerognn", s, [0.1 + s / 100, 0.2 + s / 100, 0.3], 2, accuracy=0.70 + s / 100)
            for s in range(6)]
    theirs = [to_target("host-mediated", s, [1.0 + s / 10, 2.0 + s / 10, 3.0], 2) for s in range(6)]
    write_records(tmp_path / "runs", ours + theirs)
    df = summarize(tmp_path / "runs", tmp_path / "s.csv").set_index("variant")
    row = df.loc["zerognn"]
    times = [0.2 + s / 100 for s in range(6)]
    assert row["trials"] == 6 and row["targets_reached"] == 6
    assert row["time_to_target_s"] == statistics.median(times)
    assert (row["time_to_target_s_ci_low"], row["time_to_target_s_ci_high"]) == median_ci(times)
    assert row["time_to_target_with_setup_s"] == pytest.approx(statistics.median(times) + 0.5)
    assert (row["epochs_to_target"], row["epochs_to_target_min"], row["epochs_to_target_max"]) == (2, 2, 2)
    accuracy = [0.70 + s / 100 for s in range(6)]
    assert row["final_val_acc_mean"] == pytest.approx(statistics.fmean(accuracy))
    assert row["final_val_acc_std"] == pytest.approx(statistics.stdev(accuracy))
    base = [2.0 + s / 10 for s in range(6)]
    assert row["tta_speedup_vs_host_mediated"] == pytest.approx(statistics.median(base) / statistics.median(times))
    low, high = ratio_ci(base, times)
    assert (row["tta_speedup_vs_host_mediated_ci_low"], row["tta_speedup_vs_host_mediated_ci_high"]) == (low, high)
    assert pd.isna(row["convergence_flag"]) and pd.isna(df.loc["host-mediated", "tta_speedup_vs_host_mediated_ci_low"])
    assert read_summary(tmp_path / "s.csv").equals(summarize(tmp_path / "runs", tmp_path / "again.csv"))
    table = markdown_table(read_summary(tmp_path / "s.csv"))
    assert "| time to target s [95 % CI] |" in table and "| 6/6 | 0.23 [0.20–0.25] |" in table
    assert "| 2 (2–2) | 0.7250 ± 0.0187 |" in table


def test_a_seed_that_never_reaches_the_target_leaves_no_time_and_no_ratio(tmp_path):
    records = [to_target("zerognn", s, [0.1, 0.2, 0.3], 2, reached=s != 1) for s in range(3)]
    records += [to_target("host-mediated", s, [1.0, 2.0, 3.0], 2) for s in range(3)]
    write_records(tmp_path / "runs", records)
    row = summarize(tmp_path / "runs", tmp_path / "s.csv").set_index("variant").loc["zerognn"]
    assert row["targets_reached"] == 2 and row["trials"] == 3
    assert all(pd.isna(row[c]) for c in ("time_to_target_s", "time_to_target_with_setup_s", "epochs_to_target",
                                          "tta_speedup_vs_host_mediated"))
    assert row["final_val_acc_mean"] == pytest.approx(statistics.fmean([0.7, 0.5, 0.7]))


def test_epochs_to_the_target_outside_host_mediateds_range_are_flagged(tmp_path, capsys):
    from zerognn.cli import main

    records = [to_target("zerognn", s, [0.1, 0.2, 0.3, 0.4], 3 + s % 2) for s in range(3)]
    records += [to_target("cuda-graph-naive", s, [0.1, 0.2, 0.3, 0.4], 2 + s % 2) for s in range(3)]
    records += [to_target("host-mediated", s, [1.0, 2.0, 3.0, 4.0], 1 + s % 2) for s in range(3)]
    write_records(tmp_path / "runs", records)
    assert main(["summarize", "--runs", str(tmp_path / "runs"), "--out", str(tmp_path / "s.csv")]) == 0
    df = read_summary(tmp_path / "s.csv").set_index("variant")
    assert df.loc["zerognn", "convergence_flag"] == "epochs to target 3-4, host-mediated 1-2"
    assert pd.isna(df.loc["cuda-graph-naive", "convergence_flag"])  # 2-3 overlaps 1-2
    out = capsys.readouterr().out
    assert "converges differently: tiny__sage__zerognn__b256__f15-10-5__g1: epochs to target 3-4" in out
    assert "cuda-graph-naive" not in out.split("converges differently", 1)[1]


def test_runs_without_training_leave_every_target_column_empty(tmp_path):
    write_records(tmp_path / "runs", [make_record("zerognn"), make_record("host-mediated")])
    df = summarize(tmp_path / "runs", tmp_path / "s.csv")
    assert df["targets_reached"].isna().all() and df["convergence_flag"].isna().all()
    assert "time to target" not in markdown_table(df)
