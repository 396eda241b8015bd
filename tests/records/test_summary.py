import json
import math

import pandas as pd
import pytest

from zerognn.errors import ZeroGNNError
from zerognn.records import SUMMARY_COLUMNS, read_summary, summarize

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
    (tmp_path / "runs" / "old").mkdir(parents=True)
    (tmp_path / "runs" / "old" / "x.json").write_text(json.dumps(record))
    (tmp_path / "runs" / "y.json").write_text(json.dumps(record))
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
