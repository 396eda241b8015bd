"""torch-compile trains exactly like torch-eager (CPU here; on a GPU against host-mediated) and reports its graphs."""

import pytest
import torch

from zerognn.datasets import load_dataset
from zerognn.measure.captures import counting_cuda_graph_captures
from zerognn.models import build_model
from zerognn.variants import VariantContext, get_variant

from .runner import run_steps


def run_on_cpu(ds, variant, steps):
    model = build_model("sage", ds.num_features, 32, ds.num_classes, 2, seed=0)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    ctx = VariantContext(ds, model, opt, "sage", [5, 3], 128, 0, torch.device("cpu"), torch.zeros(steps))
    v = get_variant(variant)(ctx)
    v.setup()
    per_epoch = ds.train_idx.numel() // 128
    for g in range(steps):
        v.step(*divmod(g, per_epoch), g)
    v.finish()
    return v, ctx.loss_log


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
