"""torch-compile trains exactly like torch-eager (CPU here; on a GPU against host-mediated) and reports its graphs."""

import pytest

from zerognn.datasets import load_dataset
from zerognn.measure.captures import counting_cuda_graph_captures

from .runner import run_steps


def run_on_cpu(ds, variant, steps):
    v, losses, _ = run_steps(ds, variant, "sage", steps, device="cpu", hidden=32, lr=0.01)
    return v, losses


def test_compiled_step_matches_torch_eager_on_the_cpu(tiny_dataset_dir):
    ds = load_dataset(tiny_dataset_dir)
    _, eager = run_on_cpu(ds, "torch-eager", 6)
    v, compiled = run_on_cpu(ds, "torch-compile", 6)
    assert ((compiled - eager).abs() / eager).max() < 1e-4, (eager, compiled)
    info = v.info()
    assert info["dynamo_graphs"] >= 1 and info["frames_compiled"] >= 1


@pytest.mark.gpu
def test_compiled_step_matches_host_mediated_over_50_steps_and_records_cuda_graphs(tiny_dataset_dir):
    ds = load_dataset(tiny_dataset_dir).to("cuda")
    _, mediated, _ = run_steps(ds, "host-mediated", "sage", 50)
    with counting_cuda_graph_captures() as captures:
        _, compiled, _ = run_steps(ds, "torch-compile", "sage", 50)
    assert ((compiled - mediated).abs() / mediated).max() < 1e-4
    # At least the tree manager's pool graph; every batch brings new sizes, which cudagraph trees
    # warm up before they would record, so on this workload that may be all.
    assert captures.count >= 1
