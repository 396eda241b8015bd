"""zerognn.fixed_launch.gemm_waves: which frontier each dense layer runs over, the row counts timed, the choice
among them, and a fitted envelope that keeps its margin over calibration and never grows a capacity."""

import math

import pytest
import torch

from zerognn.fixed_launch import gemm_waves
from zerognn.fixed_launch.envelope import Envelope
from zerognn.models.gat import GAT
from zerognn.models.sage import SAGE


def _layer_indices(model):
    return {frontier: [i for i, _ in layers] for frontier, layers in gemm_waves.dense_layers(model).items()}


def test_dense_layers_run_over_destinations_or_sources_as_the_model_says():
    assert _layer_indices(SAGE(8, 16, 4, num_layers=3)) == {2: [0], 1: [1], 0: [2]}
    assert _layer_indices(GAT(8, 16, 4, num_layers=3, heads=2)) == {3: [0], 2: [1], 1: [2]}


def test_candidates_run_from_low_to_high_and_the_choice_is_the_largest_within_the_tie():
    rows = gemm_waves.candidates(1000, 1300, count=4)
    assert rows == [1000, 1100, 1200, 1300]
    assert gemm_waves.candidates(1300, 1300) == [1300] and gemm_waves.candidates(1400, 1300) == [1300]
    assert gemm_waves.choose({1000: 10.0, 1100: 10.05, 1200: 15.0, 1300: 15.0}) == 1100
    assert gemm_waves.choose({1000: 10.0, 1100: 12.0}) == 1000


def _envelope():
    # frontiers after hops 1..3: calibrated at 1.15 x the largest calibration frontier
    largest = [900, 4000, 8000]
    caps = (64,) + tuple(math.ceil(x * 1.15) for x in largest)
    return Envelope(64, (5, 5, 5), caps, "calibrated", {"margin": 0.15, "calibration_max": largest})


def test_a_fitted_capacity_ends_where_a_wave_of_the_gemms_begins_and_keeps_the_minimum_margin():
    waves = {1: 1000, 2: 4300}  # rows per wave of thread blocks, per frontier the layers run over

    def time_us(layers, rows):
        frontier = 3 - layers[0][0] - 1  # SAGE: layer i runs over the destinations, frontier 3 - i - 1
        return 10.0 * math.ceil(rows / waves[frontier])

    env = _envelope()
    fitted = gemm_waves.fit(env, SAGE(8, 16, 4, num_layers=3), torch.device("cpu"), time_us=time_us)
    caps, largest = fitted.frontier_capacity, env.calibration["calibration_max"]
    # frontier 1: 945..1035 rows, one wave up to 1000; frontier 2: 4200..4600, one wave up to 4300
    assert 945 <= caps[1] <= 1000 and caps[1] == max(r for r in gemm_waves.candidates(945, 1035) if r <= 1000)
    assert 4200 <= caps[2] <= 4300
    assert caps[3] == env.frontier_capacity[3]  # no dense layer runs over the last frontier's rows
    for h in (1, 2):
        assert math.ceil(largest[h - 1] * (1 + gemm_waves.MIN_MARGIN)) <= caps[h] <= env.frontier_capacity[h]
    assert [f["hop"] for f in fitted.calibration["wave_fit"]] == [1, 2]
    assert fitted.calibration["wave_fit"][0]["calibrated_us"] == 20.0
    assert fitted.calibration["wave_fit"][0]["provisioned_us"] == 10.0
    assert fitted.record()["min_margin"] == gemm_waves.MIN_MARGIN


def test_where_every_row_count_costs_the_same_the_calibrated_capacity_stays():
    env = _envelope()
    fitted = gemm_waves.fit(env, SAGE(8, 16, 4, num_layers=3), torch.device("cpu"), time_us=lambda layers, rows: 5.0)
    assert fitted.frontier_capacity == env.frontier_capacity


def test_a_stall_in_one_pass_does_not_decide_the_fit():
    calls = []

    def time_us(layers, rows):  # every row count costs the same, but the very first timing stalls
        calls.append(rows)
        return 50.0 if len(calls) == 1 else 5.0

    env = _envelope()
    fitted = gemm_waves.fit(env, SAGE(8, 16, 4, num_layers=3), torch.device("cpu"), time_us=time_us)
    assert fitted.frontier_capacity == env.frontier_capacity
    low_first = gemm_waves.candidates(945, 1035)
    assert calls[:2 * len(low_first)] == low_first + low_first[::-1]  # two passes, the second descending


def test_off_a_gpu_or_without_calibration_the_envelope_comes_back_unchanged():
    env = _envelope()
    assert gemm_waves.fit(env, SAGE(8, 16, 4, num_layers=3), torch.device("cpu")) is env
    worst = Envelope(64, (5,), (64, 384), "worst-case")
    assert gemm_waves.fit(worst, SAGE(8, 16, 4, num_layers=1), torch.device("cpu"), lambda *a: 1.0) is worst


@pytest.mark.gpu
def test_on_a_gpu_the_layers_are_timed_and_the_model_keeps_no_gradient():
    model = SAGE(100, 256, 47, num_layers=3).cuda()
    env = _envelope()
    stream = torch.cuda.Stream()
    gemm_waves.fit(env, model, torch.device("cuda"), stream=stream)  # the stream's cuBLAS workspaces made
    resident = torch.cuda.memory_allocated()
    fitted = gemm_waves.fit(env, model, torch.device("cuda"), stream=stream)
    # on a stream that already has its workspaces, the fit leaves nothing behind: no stand-in, no workspace
    assert torch.cuda.memory_allocated() == resident
    for entry in fitted.calibration["wave_fit"]:
        assert entry["provisioned_us"] > 0 and entry["provisioned"] <= entry["calibrated"]
        assert entry["provisioned_us"] <= entry["calibrated_us"] * (1 + gemm_waves.TIE)
    assert all(p.grad is None for p in model.parameters())
