"""The hardware floor: FLOPs and bytes from live sizes, the peak table, and the sizes themselves."""

import pytest

from zerognn.datasets.store import load_dataset
from zerognn.measure.floor import GPU_PEAKS, StepSizes, floor_metrics, step_memory, step_sizes, step_work
from zerognn.models import build_model
from zerognn.sampling import batch_seeds, epoch_permutation, sample_subgraph

# Products-like SAGE 15-10-5 at B=1024 (100 features, hidden 256, 47 classes): live frontiers per hop.
PRODUCTS_B1024 = StepSizes((1024.0, 7452.0, 54668.0, 173198.0), (15360.0, 70000.0, 270000.0))


def test_sage_flops_count_forward_weight_and_input_gradients():
    model = build_model("sage", 100, 256, 47, 3, seed=0)
    flops, nbytes = step_work(model, PRODUCTS_B1024)
    # one GEMM per layer over [mean | self]: K = 2 x input width, on the destination rows
    layer = [2 * 54668 * 200 * 256, 2 * 7452 * 512 * 256, 2 * 1024 * 512 * 47]
    assert flops == pytest.approx(2 * layer[0] + 3 * layer[1] + 3 * layer[2])
    assert flops / 1e9 == pytest.approx(17.2, abs=0.05)
    assert 0.44e9 < nbytes < 0.49e9  # no feature gather: the first layer reads the rows through the ids


def test_the_feature_gather_counts_only_for_a_model_that_takes_its_input_gathered():
    """SAGE and GCN read the feature rows in place (``fuses_input_gather``): the floor counts no gathered
    copy and the ideal memory holds none; GAT's first GEMM takes the rows gathered: read and a copy written
    once, and the copy held."""
    sizes = StepSizes((10.0, 40.0, 100.0), (35.0, 90.0))
    gathered_copy = 100 * 8  # the last frontier's feature rows
    for name in ("sage", "gcn"):
        model = build_model(name, 8, 16, 3, 2, seed=0)
        assert model.fuses_input_gather is True
        work, memory = step_work(model, sizes), step_memory(model, sizes)
        model.fuses_input_gather = False  # the same model, taking its input gathered
        assert step_work(model, sizes)[1] - work[1] == pytest.approx(2 * 4 * gathered_copy)  # read, written
        assert step_work(model, sizes)[0] == work[0]
        assert step_memory(model, sizes) - memory == 4 * gathered_copy
        assert step_memory(model, sizes, 2) - step_memory(build_model(name, 8, 16, 3, 2, seed=0), sizes, 2) == (
            2 * gathered_copy)  # bf16 rows: 2 bytes an element
    gat = build_model("gat", 8, 16, 3, 2, seed=0)
    assert not getattr(gat, "fuses_input_gather", False)
    fused_gat = build_model("gat", 8, 16, 3, 2, seed=0)
    fused_gat.fuses_input_gather = True
    assert step_work(gat, sizes)[1] - step_work(fused_gat, sizes)[1] == pytest.approx(2 * 4 * gathered_copy)
    assert step_memory(gat, sizes) - step_memory(fused_gat, sizes) == 4 * gathered_copy


def test_gcn_and_gat_count_their_own_gemm_rows():
    sizes = StepSizes((10.0, 40.0), (30.0,))
    gcn = build_model("gcn", 8, 16, 3, 1, seed=0)
    gat = build_model("gat", 8, 16, 3, 1, seed=0)
    assert step_work(gcn, sizes)[0] == pytest.approx(2 * 2 * 10 * 8 * 3)       # destinations, K = 8
    assert step_work(gat, sizes)[0] == pytest.approx(2 * 2 * 40 * 8 * 4 * 3)   # every source row, 4 heads
    assert step_work(gat, sizes)[1] > step_work(gcn, sizes)[1]  # GAT also writes and reads its projection


def test_floor_is_the_larger_of_compute_and_memory_time_on_a_known_gpu():
    tflops, tbps = GPU_PEAKS["NVIDIA H200"].fp32, GPU_PEAKS["NVIDIA H200"].tb_s
    m = floor_metrics(1.0, (tflops * 1e12 * 2e-4, tbps * 1e12 * 1e-4), "NVIDIA H200")
    assert m["floor_ms"] == pytest.approx(0.2) and m["step_over_floor"] == pytest.approx(5.0)
    m = floor_metrics(1.0, (tflops * 1e12 * 1e-4, tbps * 1e12 * 3e-4), "NVIDIA H200")
    assert m["floor_ms"] == pytest.approx(0.3)


def test_the_floor_takes_the_peak_of_the_runs_precision():
    peaks = GPU_PEAKS["NVIDIA H200"]
    work = (peaks.fp32 * 1e12 * 1e-3, peaks.tb_s * 1e12 * 1e-5)  # 1 ms of fp32 FFMA, 0.01 ms of bytes
    assert floor_metrics(1.0, work, "NVIDIA H200")["floor_ms"] == pytest.approx(1.0)
    tf32 = floor_metrics(1.0, work, "NVIDIA H200", "tf32")
    assert tf32["floor_ms"] == pytest.approx(peaks.fp32 / peaks.tf32) and tf32["floor_gflop"] == pytest.approx(
        peaks.fp32)
    assert all(p.bf16 > p.tf32 > p.fp32 for p in GPU_PEAKS.values())
    bf16 = floor_metrics(1.0, work, "NVIDIA H200", "bfloat16")
    assert bf16["floor_ms"] == pytest.approx(peaks.fp32 / peaks.bf16)


def test_bf16_activations_halve_the_feature_and_activation_bytes_only():
    model = build_model("sage", 100, 64, 10, 2, seed=0)
    sizes = StepSizes(frontiers=(128.0, 640.0, 2560.0), edges=(640.0, 2560.0))
    flops, full = step_work(model, sizes)
    flops_low, half = step_work(model, sizes, activation_bytes=2)
    fixed = 28 * sum(p.numel() for p in model.parameters()) + 16 * sum(sizes.frontiers[:2]) + 8 * sum(sizes.edges)
    assert flops_low == flops and full - fixed == pytest.approx(2 * (half - fixed))
    memory_fixed = 12 * sum(p.numel() for p in model.parameters()) + 4 * (sum(sizes.frontiers) + sum(sizes.edges))
    assert step_memory(model, sizes) - memory_fixed == 2 * (step_memory(model, sizes, 2) - memory_fixed)


def test_unknown_gpu_or_cpu_gets_work_but_no_floor():
    m = floor_metrics(1.0, (2e9, 3e8), "Some Future GPU")
    assert m["floor_ms"] is None and m["step_over_floor"] is None
    assert m["floor_gflop"] == pytest.approx(2.0) and m["floor_gbytes"] == pytest.approx(0.3)
    assert floor_metrics(1.0, (2e9, 3e8), None)["floor_ms"] is None


def test_step_sizes_are_the_reference_samplers_mean_live_sizes(tiny_dataset_dir):
    ds = load_dataset(tiny_dataset_dir)
    spe = ds.train_idx.numel() // 64
    sizes = step_sizes(ds.graph, ds.train_idx, 64, [5, 3], 0, [0, 1], spe)
    subs = [sample_subgraph(ds.graph, batch_seeds(epoch_permutation(ds.train_idx, 0, 0), s, 64), [5, 3], 0, 0, s)
            for s in (0, 1)]
    for h in range(3):
        assert sizes.frontiers[h] == pytest.approx(sum(sub.frontiers[h].numel() for sub in subs) / 2)
    for h in range(2):
        assert sizes.edges[h] == pytest.approx(sum(sub.hops[h].num_edges for sub in subs) / 2)
    assert sizes.frontiers[0] == 64


def test_the_ideal_memory_counts_the_steps_own_tensors_at_live_sizes():
    sizes = StepSizes((10.0, 40.0, 100.0), (35.0, 90.0))  # seeds, then two hops
    model = build_model("sage", 8, 16, 3, 2, seed=0)
    params = sum(p.numel() for p in model.parameters())
    by_hand = (12 * params                      # gradients and Adam's two moments
               + 4 * (10 + 40 + 100 + 35 + 90)  # one id per frontier node and per sampled edge
               + 4 * 40 * 16 + 4 * 10 * 3)      # each layer's output: hidden on hop 1's nodes, classes on the seeds
    assert step_memory(model, sizes) == by_hand  # no gathered features: SAGE reads them through the ids
    gat = build_model("gat", 8, 16, 3, 2, seed=0)
    gat_by_hand = (12 * sum(p.numel() for p in gat.parameters()) + 4 * (10 + 40 + 100 + 35 + 90)
                   + 4 * 100 * 8                # the gathered features (the last frontier's rows), GAT's GEMM input
                   + 4 * 40 * 16 + 4 * 10 * 3)
    assert step_memory(gat, sizes) == gat_by_hand
