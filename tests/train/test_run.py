"""A whole measured run on the CPU: the record it writes, and the errors a user can hit."""

import json
import re

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
    assert m["floor_gflop"] > 0 and m["floor_gbytes"] > 0 and m["floor_ms"] is None  # no GPU peak to divide by
    assert set(m["phase_ms"]) >= {"sample", "gather", "forward", "backward", "optimizer"}
    assert len(record["losses"]) == 9 and all(v > 0 for v in record["losses"])
    assert 0.0 <= record["accuracy"]["val"] <= 1.0
    assert record["run_id"] == "tiny__sage__torch-eager__b128__f5-3__g1"
    assert record["environment"]["torch"]
    assert any("step time median" in msg for msg in messages)
    assert not list(out.parent.glob(".*tmp*"))  # nothing half-written left behind


def test_a_whole_epoch_is_trained_and_timed_after_the_measured_steps_and_before_the_profiler(tiny_dataset_dir,
                                                                                             tmp_path):
    messages = []
    # tiny: 1200 train nodes, 12 steps an epoch at B=100; 2 + 4 timed, 6..11 untimed, the epoch 12..23, then
    # the profiler's lead-in and 2 profiled steps: nothing timed follows a profiler session.
    spec = small_spec(whole_epoch=True, batch_size=100)
    record = run(spec, tiny_dataset_dir, tmp_path / "r.json", progress=messages.append)
    m = record["metrics"]
    assert m["steps_per_epoch"] == 12 and m["epoch_first_step"] == 12 and spec.profile_first_step(12) == 24
    assert m["epoch_s_measured"] > 0 and record["config"]["whole_epoch"] is True
    assert len(record["losses"]) == spec.steps_run(12) == 27 and all(v > 0 for v in record["losses"])
    said = [i for i, msg in enumerate(messages) for text in ("steps 6..11 up to the epoch boundary",
                                                             "whole epoch of 12 steps", "profiling 2 steps")
            if text in msg]
    assert len(said) == 3 and said == sorted(said), messages
    # The same updates as a run that trains those 27 steps with more warm-up: the phase only adds steps.
    plain = run(small_spec(warmup_steps=20, measure_steps=4, profile_steps=2, batch_size=100), tiny_dataset_dir,
                tmp_path / "p.json", progress=lambda m: None)
    assert plain["losses"] == record["losses"]
    assert plain["metrics"]["epoch_s_measured"] is None and plain["metrics"]["epoch_first_step"] is None


def test_a_records_phases_run_in_order_and_add_up_to_its_wall_time(tiny_dataset_dir, tmp_path):
    import time
    from datetime import datetime, timedelta

    from zerognn.measure.phases import PhaseClock

    clock = PhaseClock()
    begin = time.perf_counter()
    record = run(small_spec(whole_epoch=True, batch_size=100), tiny_dataset_dir, tmp_path / "r.json",
                 progress=lambda m: None, clock=clock)
    wall = time.perf_counter() - begin
    phases = record["metrics"]["phase_s"]
    assert list(phases) == ["start", "variant import", "dataset load", "context", "setup",
                            "warm-up", "timed steps", "whole epoch", "profiled steps", "untraced replay",
                            "floor sizes", "evaluation", "environment", "record", "total"]
    inside = sum(v for k, v in phases.items() if k not in ("start", "total"))
    assert 0 < inside <= wall + 0.01 and phases["total"] >= phases["start"] + inside - 0.01
    started, ended = (datetime.fromisoformat(record["environment"][k]) for k in ("started_at", "utc_time"))
    assert started <= ended + timedelta(seconds=1)  # utc_time is to the second


def test_a_run_under_host_load_says_so_in_its_id_and_record(tiny_dataset_dir, tmp_path, monkeypatch):
    from zerognn.lifetime import process_alive
    from zerognn.measure import host_load as host_load_module

    started = []
    real = host_load_module.subprocess.Popen

    def popen(command, *args, **kwargs):
        process = real(command, *args, **kwargs)
        if command[1:] == ["-c", host_load_module.SPIN]:
            started.append(process)
        return process

    monkeypatch.setattr(host_load_module.subprocess, "Popen", popen)
    messages = []
    record = run(small_spec(host_load=2), tiny_dataset_dir, tmp_path / "r.json", progress=messages.append)
    assert record["run_id"] == "tiny__sage__torch-eager__b128__f5-3__g1__h2" and record["config"]["host_load"] == 2
    assert record["environment"]["cpu_affinity"] >= 1
    # two for the timed steps, two more for the profiled ones (a whole epoch may run between, without load)
    assert len(started) == 4 and not any(process_alive(p.pid) for p in started)
    assert any("2 CPU-bound processes" in m for m in messages)


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
    assert err.startswith("zerognn run: error: argument --batch-size: must be a positive integer, got '0'")
    assert err.count("\n") == 1
    assert main(["dataset", "info", str(tmp_path)]) == 2
    assert "not a dataset directory" in capsys.readouterr().err


RUN_ID = "tiny__sage__torch-eager__b1024__f15-10-5__g1"  # the defaults' run on tiny


@pytest.mark.parametrize("args, message", [
    (["--fanouts", "15,-1"], "fanouts '15,-1' must be positive integers"),
    (["--fanouts", "15,,5"], "fanouts '15,,5' must be positive integers"),
    (["--fanouts", "0"], "one or more positive integers"),
    (["--lr", "nan"], "argument --lr: must be a finite number > 0"),
    (["--lr", "0"], "argument --lr: must be a finite number > 0"),
    (["--hidden", "1.5"], "argument --hidden: must be a positive integer"),
    (["--measure-steps", "0"], "argument --measure-steps: must be a positive integer"),
    (["--warmup-steps", "-1"], "argument --warmup-steps: must be an integer >= 0"),
    (["--threads", "0"], "argument --threads: must be a positive integer"),
    (["--gpus", "x"], "argument --gpus: must be a positive integer"),
    (["--variant", "nope"], "unknown variant 'nope'"),
    (["--out", "{tmp}/r.json"], "a record's file is named after its run; give --out {tmp}/" + RUN_ID + ".json"),
    (["--out", "{tmp}/a_file/"], "a_file is a file, not a directory"),
    (["--trace", "{tmp}"], "profiler trace --trace"),
    (["--dataset-dir", "{tmp}/missing"], "is not a dataset directory"),
])
def test_bad_run_arguments_stop_before_any_work_with_one_line(tiny_dataset_dir, tmp_path, capsys, args, message):
    (tmp_path / "a_file").write_text("x")
    base = {"--dataset": "tiny", "--dataset-dir": str(tiny_dataset_dir), "--device": "cpu",
            "--out": f"{tmp_path}/"}
    given = dict(zip(args[::2], [a.format(tmp=tmp_path) for a in args[1::2]]))
    argv = ["run", *[x for k, v in (base | given).items() for x in (k, v)]]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message.format(tmp=tmp_path) in err and err.count("\n") == 1, err
    assert not list(tmp_path.glob("*.json"))


def test_a_run_writes_its_record_by_its_run_id_into_a_directory(tiny_dataset_dir, tmp_path):
    argv = ["run", "--dataset", "tiny", "--dataset-dir", str(tiny_dataset_dir), "--device", "cpu", "--batch-size",
            "64", "--fanouts", "5,3", "--warmup-steps", "1", "--measure-steps", "2", "--profile-steps", "0",
            "--eval-nodes", "0"]
    assert main([*argv, "--out", str(tmp_path)]) == 0  # an existing directory
    assert main([*argv, "--out", f"{tmp_path}/new/"]) == 0  # a new one, named by its trailing '/'
    small = RUN_ID.replace("__b1024__f15-10-5", "__b64__f5-3")
    assert (tmp_path / f"{small}.json").is_file() and (tmp_path / "new" / f"{small}.json").is_file()


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


def test_the_variants_listing_lines_up_its_columns(capsys):
    assert main(["variants"]) == 0
    lines = capsys.readouterr().out.splitlines()
    starts = {line.index("needs a CUDA GPU" if "needs a CUDA GPU" in line else "runnable here") for line in lines}
    assert len(lines) >= 8 and len(starts) == 1  # the second column starts at the same place on every line
    assert all(line[next(iter(starts)) - 2:next(iter(starts))] == "  " for line in lines)


def test_a_closed_pipe_ends_the_command_quietly(monkeypatch, capsys):
    import sys

    class Closed:
        def write(self, text):
            raise BrokenPipeError

        def flush(self):
            pass

    monkeypatch.setattr(sys, "stdout", Closed())
    assert main(["variants"]) == 0
    assert capsys.readouterr().err == ""


def test_dataset_info_check_says_that_it_passed(tiny_dataset_dir, capsys):
    assert main(["dataset", "info", str(tiny_dataset_dir), "--check"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["name"] == "tiny" and "check passed" in out.err


def test_a_run_with_unstable_step_times_says_so(tiny_dataset_dir, tmp_path, monkeypatch):
    from zerognn.train import loop

    monkeypatch.setattr(loop, "time_steps", lambda *args: [1.0, 1.0, 1.0, 9.0, 9.0])
    messages = []
    run(small_spec(measure_steps=5, profile_steps=0), tiny_dataset_dir, tmp_path / "r.json", progress=messages.append)
    assert any("warning: unstable step times (p90 is 9.0x p10)" in m for m in messages), messages
    messages.clear()
    monkeypatch.setattr(loop, "time_steps", lambda *args: [1.0, 1.1, 1.2, 1.3, 1.9])
    run(small_spec(measure_steps=5, profile_steps=0), tiny_dataset_dir, tmp_path / "s.json", progress=messages.append)
    assert not any("warning: unstable" in m for m in messages)


@pytest.mark.parametrize("damage, message", [
    ("train_repeats", "its train split repeats node ids (1200 ids, 1 distinct)"),
    ("test_outside", "test_idx.npy holds node ids outside [0, 2000)"),  # refused by the loader
    ("features_inf", "feature row 5 holds NaN or inf"),
    ("features_nan", "feature row 7 holds NaN or inf"),
])
def test_a_dataset_with_bad_values_is_refused_before_training(tiny_dataset_dir, tmp_path, damage, message):
    import shutil

    import numpy as np

    bad = tmp_path / "tiny"
    shutil.copytree(tiny_dataset_dir, bad)
    if damage == "train_repeats":
        ids = np.load(bad / "train_idx.npy")
        np.save(bad / "train_idx.npy", np.full_like(ids, ids[0]))
    elif damage == "test_outside":
        ids = np.load(bad / "test_idx.npy")
        ids[-1] = 10**6
        np.save(bad / "test_idx.npy", ids)
    else:
        features = np.load(bad / "features.npy")
        features[5 if damage == "features_inf" else 7, 3] = np.inf if damage == "features_inf" else np.nan
        np.save(bad / "features.npy", features)
    out = tmp_path / "r.json"
    with pytest.raises(ZeroGNNError, match=re.escape(message)):
        run(small_spec(), bad, out, progress=lambda m: None)
    assert not out.exists()


def test_a_bfloat16_run_names_its_precision_and_trains_like_float32(tiny_dataset_dir, tmp_path):
    full = run(small_spec(profile_steps=0), tiny_dataset_dir, tmp_path / "full.json", progress=lambda m: None)
    low = run(small_spec(profile_steps=0, dtype="bfloat16"), tiny_dataset_dir, tmp_path / "low.json",
              progress=lambda m: None)
    assert low["run_id"] == full["run_id"] + "__pbfloat16" and low["config"]["dtype"] == "bfloat16"
    assert low["losses"] != full["losses"]  # the GEMMs did run on bf16 operands
    for a, b in zip(low["losses"], full["losses"]):
        assert abs(a - b) <= 2e-2 * abs(b)
    for field in ("ideal_mem_bytes", "floor_gbytes"):  # bf16 activations, counted at 2 bytes
        assert low["metrics"][field] < full["metrics"][field]
    assert low["metrics"]["floor_gflop"] == full["metrics"]["floor_gflop"]


@pytest.mark.parametrize("extra, said", [
    (["--dtype", "tf32"], "precision tf32 needs a CUDA GPU (its GEMMs run on tensor cores); use float32 on the CPU"),
    (["--dtype", "bfloat16", "--deterministic"], "precision bfloat16 does not apply in deterministic mode"),
])
def test_a_precision_the_run_cannot_use_is_one_line_before_any_work(tiny_dataset_dir, tmp_path, capsys, extra, said):
    code = main(["run", "--dataset", "tiny", "--dataset-dir", str(tiny_dataset_dir), "--device", "cpu", *extra,
                 "--out", str(tmp_path / "runs") + "/"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and said in err, err
    assert not (tmp_path / "runs").exists()  # nothing written, not even the directory
