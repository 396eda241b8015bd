"""dynamic-parallelism draws the reference samples and trains like host-mediated (GPU)."""

import pytest
import torch

from zerognn.cuda import sampling
from zerognn.cuda.launch import device_launched
from zerognn.datasets import load_dataset
from zerognn.graph import CSRGraph
from zerognn.measure.untraced import untraced_gpu_ms_per_step
from zerognn.sampling import sample_subgraph

from .runner import run_steps, same_bits

pytestmark = pytest.mark.gpu


def test_device_launched_kernels_sample_exactly_the_reference(tiny_dataset_dir):
    ds = load_dataset(tiny_dataset_dir).to("cuda")
    v, _, _ = run_steps(ds, "dynamic-parallelism", "sage", 1)
    seeds = v.seeds(0, 0)
    with device_launched():
        last, n_last, _ = v.sample(seeds, 0, 0)
    ref = sample_subgraph(ds.graph, seeds, [5, 3], 0, 0, 0)
    assert torch.equal(last, ref.frontiers[-1]) and int(n_last) == last.numel()


@pytest.mark.parametrize("model_name", ["sage", "gcn", "gat"])
def test_losses_match_host_mediated_over_50_steps(tiny_dataset_dir, model_name):
    ds = load_dataset(tiny_dataset_dir).to("cuda")
    _, mediated, _ = run_steps(ds, "host-mediated", model_name, 50)
    _, device, _ = run_steps(ds, "dynamic-parallelism", model_name, 50)
    assert same_bits(device, mediated)  # the fixed-order kernels: bit for bit


def _kernel_us(prof, name: str) -> float:
    return sum(e.time_range.elapsed_us() for e in prof.events()
               if e.device_type == torch.autograd.DeviceType.CUDA and e.name == name)


def test_the_trace_misses_device_launched_children_and_the_replay_measures_them():
    """Kineto lists no CDP2 child and a parent's span ends before its child runs (measured on the H200:
    10.5 us for a parent whose child takes 870 us host-launched). If CUPTI ever covered the children,
    adding the replay's measurement would count them twice, so both facts are checked."""
    n, degree, fanout = 1 << 20, 32, 15
    graph = CSRGraph(torch.arange(0, (n + 1) * degree, degree, device="cuda"),
                     torch.randint(0, n, (n * degree,), dtype=torch.int32, device="cuda"))
    frontier = torch.arange(n, device="cuda")
    n_frontier = torch.tensor([n], dtype=torch.int32, device="cuda")
    key = torch.tensor([12345], dtype=torch.int64, device="cuda")
    overflow = sampling.new_overflow("cuda")

    def run():
        return sampling.sample(graph, frontier, n_frontier, n, fanout, key, overflow)

    run()
    with device_launched():
        run()  # loads the device-launch module outside the profile
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        host_nbr, _ = run()
        torch.cuda.synchronize()
        with device_launched():
            device_nbr, _ = run()
        torch.cuda.synchronize()
    child_us, parent_us = _kernel_us(prof, "sample_neighbors"), _kernel_us(prof, "dl_sample_neighbors")
    assert torch.equal(host_nbr, device_nbr)
    assert child_us > 50, f"the host-launched child took {child_us:.1f} us; the check needs a longer one"
    assert parent_us < 0.5 * child_us, (
        f"dl_sample_neighbors now spans {parent_us:.1f} us of its child's {child_us:.1f} us: the trace sees "
        "device-launched work, so adding the measured replay (zerognn.measure.untraced) would count it twice")


def test_children_gpu_time_is_measured_after_the_run(tiny_dataset_dir):
    ds = load_dataset(tiny_dataset_dir).to("cuda")
    v, _, _ = run_steps(ds, "dynamic-parallelism", "sage", 3)
    before = [p.detach().clone() for p in v.ctx.model.parameters()]
    replay = v.untraced_replay()
    assert "sample_neighbors" in replay.kernels
    assert untraced_gpu_ms_per_step(replay, torch.device("cuda")) > 0
    assert all(p.grad is None for p in v.ctx.model.parameters())
    assert all(torch.equal(a, b) for a, b in zip(before, v.ctx.model.parameters()))
