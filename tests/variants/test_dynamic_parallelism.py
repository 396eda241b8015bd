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
