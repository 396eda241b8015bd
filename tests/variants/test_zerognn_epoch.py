"""zerognn-epoch: zerognn's step looped on the device trains exactly as zerognn does, one launch a block (GPU)."""

import pytest
import torch

from zerognn.datasets import load_dataset
from zerognn.measure.execution import UNTRACED_CLASS
from zerognn.measure.untraced import untraced_gpu_ms_per_step

from .runner import run_steps, same_bits
from .test_zerognn import FANOUTS, _too_small

pytestmark = pytest.mark.gpu
STEPS = 40  # tiny at B=128: 9 steps an epoch, so 4.4 epochs


@pytest.fixture(scope="module")
def ds(tiny_dataset_dir):
    return load_dataset(tiny_dataset_dir).to("cuda")


def test_one_block_of_several_epochs_trains_like_zerognn(ds):
    _, zero, p_zero = run_steps(ds, "zerognn", "sage", STEPS, fanouts=FANOUTS)
    v, looped, p_looped = run_steps(ds, "zerognn-epoch", "sage", STEPS, fanouts=FANOUTS, blocks=[STEPS])
    # The same graph on the same batches, with the fixed-order kernels: the same bits.
    assert same_bits(looped, zero), (looped[:5], zero[:5])
    assert all(same_bits(a, b) for a, b in zip(p_zero, p_looped))
    info = v.info()
    assert info["committed_steps"] == STEPS and info["overflow_count"] == 0
    # two epochs a launch at most (one permutation row each): 0..17, 18..35, 36..39
    assert info["loop_launches"] == 3 and info["loop_steps_per_launch_max"] == 18


def test_the_counter_and_the_mirror_agree_after_every_launch(ds):
    v, _, _ = run_steps(ds, "zerognn-epoch", "sage", 3, fanouts=FANOUTS, blocks=[3])
    done = 3
    for count in (1, 7, 9, 11, 0, 2):
        v.run_steps(done, count)
        done += count
        v.finish()
        assert int(v.control.state[0]) == v.control.read_mirror()[0] == done
        stamps = v.step_stamps_ns(done - count, count)
        assert all(b > a for a, b in zip(stamps, stamps[1:])), stamps


def test_an_overflow_mid_block_is_regrown_and_trains_like_zerognn(ds):
    def squeeze(v):
        v.make_envelope = lambda: _too_small(v)

    _, zero, p_zero = run_steps(ds, "zerognn", "sage", 30, fanouts=FANOUTS, configure=squeeze)
    v, looped, p_looped = run_steps(ds, "zerognn-epoch", "sage", 30, fanouts=FANOUTS, configure=squeeze,
                                    blocks=[30])
    info = v.info()
    assert info["overflow_count"] >= 1 and info["recoveries"] and info["committed_steps"] == 30, info
    assert len(info["captures"]) == 1 + len(info["recoveries"])
    assert same_bits(looped, zero), (looped[:5], zero[:5])
    assert all(same_bits(a, b) for a, b in zip(p_zero, p_looped))


def test_a_run_of_zerognn_epoch_launches_once_a_block_and_times_steps_on_the_device(tiny_dataset_dir, tmp_path):
    from zerognn.train import RunSpec, run

    spec = RunSpec(dataset="tiny", model="sage", variant="zerognn-epoch", batch_size=100, fanouts=FANOUTS,
                   hidden=32, warmup_steps=5, measure_steps=8, profile_steps=8, eval_nodes=0, device="cuda",
                   whole_epoch=True)
    record = run(spec, tiny_dataset_dir, tmp_path / "r.json", progress=lambda m: None)
    m = record["metrics"]
    assert m["host_syncs_per_step"] == 0 and m["host_launches_per_step"] == pytest.approx(1 / 8), m
    assert len(m["step_ms"]) == 8 and min(m["step_ms"]) > 0
    # the trace shows a loop body once per launch: no GPU-side metric is read from it; the body's GPU time
    # comes from its replay from the host, and with it the execution fraction
    busy = m["gpu_busy_ms_per_step"]
    assert busy > 0 and m["gpu_untraced_ms_per_step"] == busy and 0 < m["gpu_exec_fraction"] <= 1, m
    assert m["gpu_ms_by_class"] == {UNTRACED_CLASS: busy}
    assert m["gpu_activities_per_step"] is None and m["window_ms"] > 0
    # 5 + 8 timed steps, 13..23 untimed, the epoch 24..35, then the profiler's 1 + 8
    assert m["epoch_first_step"] == 24 and m["epoch_s_measured"] > 0
    assert record["variant_info"]["committed_steps"] == 45
    torch.cuda.synchronize()


def test_the_body_replayed_from_the_host_reruns_the_last_steps_and_puts_everything_back(ds):
    # 12 steps of 9 an epoch: the last five (7..11) cross an epoch boundary, whose order is rewound
    v, _, _ = run_steps(ds, "zerognn-epoch", "sage", 12, fanouts=FANOUTS, blocks=[12])
    kept = [v.graph._flat, v.ctx.loss_log, *v.control.tensors()]
    before = [t.clone() for t in kept]
    filled, sample = v.graph.orders.filled, [f.clone() for f in v.graph.sampled[0]]
    replay = v.untraced_replay()
    restore = replay.prepare()
    assert int(v.control.state[0]) == 7 and replay.run() == 5
    # the last step replayed is step 11 again (its sample), on the final parameters: state moved
    assert all(torch.equal(a, b) for a, b in zip(sample, v.graph.sampled[0]))
    assert int(v.control.state[0]) == 12 and not torch.equal(v.ctx.loss_log, before[1])
    restore()
    assert all(torch.equal(t, b) for t, b in zip(kept, before)) and v.graph.orders.filled == filled
    assert untraced_gpu_ms_per_step(v.untraced_replay(), torch.device("cuda")) > 0
    assert all(torch.equal(t, b) for t, b in zip(kept, before))
    v.run_steps(12, 0)  # the loop's host side still agrees with the device
    assert v.info()["committed_steps"] == 12
