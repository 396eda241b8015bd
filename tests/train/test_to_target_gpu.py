"""Runs to the target on the GPU: every CUDA variant trains the same epochs with evaluations between blocks
(captured graphs, a device-driven loop and compiled code included), so in deterministic mode they evaluate to
the same accuracies and reach the target at the same epoch; evaluation never disturbs training."""

import pytest

from zerognn.train import RunSpec, run

pytestmark = pytest.mark.gpu

CUDA_VARIANTS = ["host-mediated", "cuda-graph-naive", "dynamic-parallelism", "zerognn", "zerognn-worstcase",
                 "zerognn-epoch"]


def spec(variant, **overrides):
    # tiny at B=128: 9 steps an epoch; 2 + 4 timed steps, then on to epoch 3, evaluated after each.
    args = dict(dataset="tiny", model="sage", variant=variant, batch_size=128, fanouts=[15, 10, 5], hidden=256,
                warmup_steps=2, measure_steps=4, profile_steps=2, eval_nodes=400, device="cuda", epochs=3,
                deterministic=True)
    return RunSpec(**(args | overrides))


@pytest.fixture(scope="module")
def baseline(tiny_dataset_dir, tmp_path_factory):
    return run(spec("host-mediated"), tiny_dataset_dir, tmp_path_factory.mktemp("tta") / "h.json",
               progress=lambda m: None)


@pytest.mark.parametrize("variant", CUDA_VARIANTS[1:])
def test_every_cuda_variant_evaluates_to_host_mediateds_accuracies_bit_for_bit(variant, baseline, tiny_dataset_dir,
                                                                                tmp_path):
    record = run(spec(variant), tiny_dataset_dir, tmp_path / "r.json", progress=lambda m: None)
    ours, theirs = record["training"], baseline["training"]
    assert [e["val_acc"] for e in ours["evaluations"]] == [e["val_acc"] for e in theirs["evaluations"]]
    assert record["losses"] == baseline["losses"]
    assert ours["epochs_to_target"] == theirs["epochs_to_target"] is not None
    times = [e["train_s"] for e in ours["evaluations"]]
    assert 0 < times[0] < times[1] < times[2] and all(e["eval_s"] > 0 for e in ours["evaluations"])


def test_evaluating_between_blocks_leaves_training_as_a_run_without_them(tiny_dataset_dir, tmp_path):
    # The same 27 + 3 steps without evaluations (a plain run whose warm-up covers them): the same losses.
    with_evaluations = run(spec("zerognn"), tiny_dataset_dir, tmp_path / "t.json", progress=lambda m: None)
    plain = run(spec("zerognn", epochs=0, warmup_steps=23, eval_nodes=0), tiny_dataset_dir, tmp_path / "p.json",
                progress=lambda m: None)
    assert with_evaluations["losses"] == plain["losses"] and len(plain["losses"]) == 30
