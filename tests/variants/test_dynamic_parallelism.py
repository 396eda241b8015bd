"""dynamic-parallelism draws the reference samples and trains like host-mediated (GPU)."""

import pytest
import torch

from zerognn.cuda.launch import device_launched
from zerognn.datasets import load_dataset
from zerognn.sampling import sample_subgraph

from .runner import run_steps

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
    assert ((device - mediated).abs() / mediated).max() < 1e-4


def test_profiler_trace_shows_the_device_launched_children(tiny_dataset_dir):
    """The GPU execution fraction counts trace kernels, so CDP2 children must appear in the trace."""
    ds = load_dataset(tiny_dataset_dir).to("cuda")
    v, _, _ = run_steps(ds, "dynamic-parallelism", "sage", 1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        v.step(0, 0, 0)  # step 0 again, now profiled
        torch.cuda.synchronize()
    kernels = {e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA}
    assert "dl_sample_neighbors" in kernels  # the parent
    assert "sample_neighbors" in kernels, sorted(kernels)  # its child, launched from the device
