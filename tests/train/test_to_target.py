"""A run to the target on the CPU: tiny trained whole epochs, evaluated on a schedule, timed to its target; and
the schedules that cannot run, refused in one line before any training."""

import pytest

from zerognn.datasets.specs import TARGETS
from zerognn.errors import ZeroGNNError
from zerognn.records.schema import read_record
from zerognn.train import RunSpec, run


def to_target(**overrides):
    # The configuration tiny's target was fixed with (docs/measurement.md): it reaches it in its second epoch.
    args = dict(dataset="tiny", model="sage", variant="torch-eager", batch_size=128, fanouts=[15, 10, 5], hidden=256,
                warmup_steps=2, measure_steps=4, profile_steps=2, eval_nodes=400, device="cpu", epochs=3)
    args.update(overrides)
    return RunSpec(**args)


def test_a_run_to_the_target_records_every_evaluation_and_its_time_to_the_target(tiny_dataset_dir, tmp_path):
    messages = []
    record = run(to_target(), tiny_dataset_dir, tmp_path / "r.json", progress=messages.append)
    assert read_record(tmp_path / "r.json")["training"] == record["training"]
    t, spe = record["training"], record["metrics"]["steps_per_epoch"]
    assert spe == 9 and t["target_val_acc"] == TARGETS["tiny"] and (t["epochs"], t["eval_every"]) == (3, 1)
    assert [e["step"] for e in t["evaluations"]] == [9, 18, 27] and [e["epoch"] for e in t["evaluations"]] == [1, 2, 3]
    # Training time grows from the timed steps on; evaluations and setup are timed apart.
    phases = record["metrics"]["phase_s"]
    times = [e["train_s"] for e in t["evaluations"]]
    trained = phases["timed steps"] + phases["training to target"]
    assert phases["timed steps"] < times[0] < times[1] < times[2] <= trained
    assert t["setup_s"] == pytest.approx(phases["setup"] + phases["warm-up"], abs=1e-3)
    assert all(e["eval_s"] > 0 and 0 <= e["val_acc"] <= 1 and e["train_loss"] > 0 for e in t["evaluations"])
    first = next(e for e in t["evaluations"] if e["val_acc"] >= t["target_val_acc"])
    assert t["epochs_to_target"] == first["epoch"] == 2 and t["not_reached"] is None
    assert t["time_to_target_s"] == first["train_s"]
    assert t["time_to_target_with_setup_s"] == pytest.approx(first["train_s"] + t["setup_s"])
    # Losses cover every step trained: to the third epoch, then the profiler's lead-in and profiled steps.
    assert len(record["losses"]) == 3 * spe + 1 + 2
    assert t["evaluations"][-1]["train_loss"] == pytest.approx(sum(record["losses"][22:27]) / 5)
    assert any("time to target:" in m and "2 epoch(s)" in m for m in messages)


def test_a_target_not_reached_is_null_with_the_reason(tiny_dataset_dir, tmp_path):
    t = run(to_target(epochs=1), tiny_dataset_dir, tmp_path / "r.json", progress=lambda m: None)["training"]
    assert t["time_to_target_s"] is None and t["time_to_target_with_setup_s"] is None and t["epochs_to_target"] is None
    assert t["not_reached"].startswith("val accuracy peaked at 0.") and t["not_reached"].endswith(
        f"below the target {TARGETS['tiny']:g}, within 1 epochs")


def test_a_plain_run_has_no_training():
    assert to_target(epochs=0).evaluation_steps(9) == []


@pytest.mark.parametrize("overrides, message", [
    (dict(epochs=3, eval_every=2), "epochs 3 is not a multiple of eval_every 2"),
    (dict(eval_nodes=0), "set eval_nodes > 0"),
    (dict(whole_epoch=True), "leave whole_epoch off"),
    (dict(epochs=-1), "epochs must be an integer >= 0"),
])
def test_a_run_to_the_target_that_cannot_run_is_refused_in_one_line(overrides, message):
    with pytest.raises(ZeroGNNError, match=message):
        to_target(**overrides)


def test_an_evaluation_before_the_timed_steps_end_is_refused_before_training(tiny_dataset_dir, tmp_path):
    with pytest.raises(ZeroGNNError, match=r"the first evaluation \(after step 9: 1 epoch\(s\) of 9 steps\) would "
                                           r"come before the 25 warm-up and timed steps end"):
        run(to_target(warmup_steps=5, measure_steps=20), tiny_dataset_dir, tmp_path / "r.json",
            progress=lambda m: None)
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("args, message", [
    (["--epochs", "-1"], "argument --epochs: must be an integer >= 0, got '-1'"),
    (["--epochs", "2", "--eval-every", "0"], "argument --eval-every: must be a positive integer, got '0'"),
    (["--epochs", "3", "--eval-every", "2"], "epochs 3 is not a multiple of eval_every 2"),
])
def test_the_command_line_refuses_a_bad_run_to_the_target_in_one_line(args, message, tmp_path, capsys):
    from zerognn.cli import main

    code = main(["run", "--dataset", "tiny", "--dataset-dir", str(tmp_path), "--device", "cpu", *args,
                 "--out", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "r.json").exists()


def test_a_dataset_without_a_target_records_the_curve_alone(tiny_dataset_dir, tmp_path, monkeypatch):
    monkeypatch.delitem(TARGETS, "tiny")
    messages = []
    t = run(to_target(epochs=2), tiny_dataset_dir, tmp_path / "r.json", progress=messages.append)["training"]
    assert t["target_val_acc"] is None and t["time_to_target_s"] is None and t["epochs_to_target"] is None
    assert len(t["evaluations"]) == 2 and all(e["val_acc"] is not None for e in t["evaluations"])
    assert t["not_reached"] == "no target fixed for tiny (zerognn.datasets.specs.TARGETS): the curve alone"
    assert any("not reached: no target fixed for tiny" in m for m in messages)
