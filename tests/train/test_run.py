"""A whole measured run on the CPU: the record it writes, and the errors a user can hit."""

import json

import pytest

from zerognn.cli import main
from zerognn.errors import ZeroGNNError
from zerognn.records.schema import read_record
from zerognn.train import RunSpec, run


def small_spec(**overrides):
    args = dict(dataset="tiny", model="sage", variant="torch-eager", batch_size=128, fanouts=[5, 3],
                hidden=32, warmup_steps=2, measure_steps=4, profile_steps=2, eval_nodes=200, device="cpu")
    args.update(overrides)
    return RunSpec(**args)


def test_run_writes_a_complete_record(tiny_dataset_dir, tmp_path):
    out = tmp_path / "runs" / "r.json"
    messages = []
    record = run(small_spec(), tiny_dataset_dir, out, progress=messages.append)
    assert read_record(out) == json.loads(json.dumps(record))
    m = record["metrics"]
    assert len(m["step_ms"]) == 4 and m["step_ms_p10"] <= m["step_ms_median"] <= m["step_ms_p90"]
    assert m["gpu_exec_fraction"] is None and m["peak_mem_bytes"] is None  # CPU run
    assert set(m["phase_ms"]) >= {"sample", "gather", "forward", "backward", "optimizer"}
    assert len(record["losses"]) == 9 and all(v > 0 for v in record["losses"])
    assert 0.0 <= record["accuracy"]["val"] <= 1.0
    assert record["run_id"] == "tiny__sage__torch-eager__b128__f5-3__g1"
    assert record["environment"]["torch"]
    assert any("step time median" in msg for msg in messages)
    assert not list(out.parent.glob(".*tmp*"))  # nothing half-written left behind


def test_training_reduces_the_loss(tiny_dataset_dir, tmp_path):
    record = run(small_spec(warmup_steps=20, measure_steps=10, profile_steps=0, lr=0.01), tiny_dataset_dir,
                 tmp_path / "r.json", progress=lambda m: None)
    losses = record["losses"]
    assert sum(losses[-5:]) / 5 < 0.8 * sum(losses[:5]) / 5


@pytest.mark.parametrize("overrides, message", [
    (dict(batch_size=100000), "exceeds tiny's"),
    (dict(variant="nope"), "unknown variant"),
    (dict(dataset="arxiv-like"), "holds dataset 'tiny'"),
])
def test_bad_runs_fail_before_writing_anything(tiny_dataset_dir, tmp_path, overrides, message):
    out = tmp_path / "r.json"
    with pytest.raises(ZeroGNNError, match=message):
        run(small_spec(**overrides), tiny_dataset_dir, out, progress=lambda m: None)
    assert not out.exists()


def test_spec_validation():
    with pytest.raises(ZeroGNNError, match="fanouts"):
        small_spec(fanouts="15,x")
    with pytest.raises(ZeroGNNError, match="batch_size"):
        small_spec(batch_size=0)


def test_cli_reports_errors_in_one_line(tiny_dataset_dir, tmp_path, capsys):
    code = main(["run", "--dataset", "tiny", "--dataset-dir", str(tiny_dataset_dir), "--device", "cpu",
                 "--batch-size", "0", "--out", str(tmp_path / "r.json")])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("zerognn: error: batch_size must be a positive integer")
    assert main(["dataset", "info", str(tmp_path)]) == 2
    assert "not a dataset directory" in capsys.readouterr().err


def test_cli_lists_variants(capsys):
    assert main(["variants"]) == 0
    assert "torch-eager" in capsys.readouterr().out


def test_cuda_request_without_gpu_is_a_clear_error(tiny_dataset_dir, tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(ZeroGNNError, match="no CUDA GPU"):
        run(small_spec(device="cuda"), tiny_dataset_dir, tmp_path / "r.json", progress=lambda m: None)
    with pytest.raises(ZeroGNNError, match="'host-mediated' needs a CUDA GPU"):
        run(small_spec(variant="host-mediated"), tiny_dataset_dir, tmp_path / "r.json", progress=lambda m: None)
    assert not (tmp_path / "r.json").exists()
