"""The execution envelope: worst case, calibration against the reference sampler, growth."""

import pytest
import torch

from tests.conftest import random_graph
from zerognn.errors import ZeroGNNError
from zerognn.fixed_launch.envelope import Envelope, calibrate, worst_case
from zerognn.sampling import batch_seeds, epoch_permutation, sample_subgraph


def test_worst_case_is_b_times_product_capped_by_n():
    env = worst_case(num_nodes=10_000, batch_size=100, fanouts=[15, 10, 5])
    assert env.frontier_capacity == (100, 1600, 10_000, 10_000)


def test_calibrated_capacities_cover_the_calibration_batches_and_stay_under_the_worst_case():
    g = random_graph(4000, 40000, seed=1, skew=True)
    train = torch.arange(0, 4000, 2)
    env = calibrate(g, train, 128, [10, 5], seed=0, samples=6, margin=0.1)
    worst = worst_case(4000, 128, [10, 5]).frontier_capacity
    observed = env.calibration["calibration_max"]
    for h in range(2):
        assert observed[h] <= env.frontier_capacity[h + 1] <= worst[h + 1]
        assert env.frontier_capacity[h + 1] == min(worst[h + 1], -(-observed[h] * 11 // 10))
    # training batches (another key space) mostly fit; the margin is what absorbs their variation
    perm = epoch_permutation(train, 0, 0)
    fits = 0
    for step in range(10):
        sub = sample_subgraph(g, batch_seeds(perm, step, 128), [10, 5], 0, 0, step)
        fits += all(f.numel() <= c for f, c in zip(sub.frontiers[1:], env.frontier_capacity[1:]))
    assert fits >= 8


def test_growth_after_an_overflow_keeps_capacities_monotone():
    env = Envelope(100, (10, 5), (100, 800, 900), "calibrated")
    grown = env.grown(hop=0, needed=1000)
    assert grown.frontier_capacity == (100, 1250, 1250)
    assert env.grown(hop=1, needed=950).frontier_capacity == (100, 800, 1188)
    # never beyond the worst case
    assert env.grown(hop=0, needed=1000, limit=(100, 1100, 1150)).frontier_capacity == (100, 1100, 1150)


def test_record_lists_provisioned_and_live_sizes():
    env = Envelope(4, (2,), (4, 10), "calibrated", {"margin": 0.1})
    rec = env.record(live_max=[8], live_mean=[7.0])
    assert rec == {"policy": "calibrated", "margin": 0.1,
                   "hops": [{"hop": 1, "provisioned": 10, "live_max": 8, "live_mean": 7.0}]}


def test_bad_envelopes_are_rejected():
    with pytest.raises(ZeroGNNError, match="must not shrink"):
        Envelope(100, (10,), (100, 50), "calibrated")
    with pytest.raises(ZeroGNNError, match="int32"):
        Envelope(2**20, (5000,), (2**20, 2**21), "worst-case")
    with pytest.raises(ZeroGNNError, match="margin"):
        calibrate(random_graph(100, 500, seed=0), torch.arange(50), 10, [3], seed=0, margin=-1)


def test_the_policy_records_the_calibrations_seconds_and_no_fit_off_a_gpu(tiny_dataset_dir):
    from tests.variants.runner import make_context
    from zerognn.datasets import load_dataset
    from zerognn.fixed_launch.envelope_policy import CalibratedEnvelope

    policy = CalibratedEnvelope()
    policy.ctx = make_context(load_dataset(tiny_dataset_dir), device="cpu")
    record = policy.make_envelope().record()
    assert record["calibration_batches"] == policy.calibration_batches and record["calibration_s"] > 0
    assert "wave_fit" not in record and "wave_fit_s" not in record  # the waves are fitted on a GPU only
