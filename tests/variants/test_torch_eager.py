"""torch-eager computes exactly the reference training step, deterministically, on CPU (and GPU)."""

import pytest
import torch
import torch.nn.functional as F

from zerognn.datasets import load_dataset
from zerognn.models import TORCH_OPS
from zerognn.sampling import batch_seeds, epoch_permutation, sample_subgraph

from .runner import make_context, run_steps

FANOUTS = [5, 3]


def make_ctx(ds, device, steps):
    return make_context(ds, "sage", steps, fanouts=FANOUTS, hidden=32, lr=0.01, device=device)


def run_variant(ds, device, steps=6):
    _, losses, params = run_steps(ds, "torch-eager", "sage", steps, fanouts=FANOUTS, device=device, hidden=32, lr=0.01)
    return losses, params


def test_torch_eager_matches_a_hand_written_reference_step(tiny_dataset_dir):
    ds = load_dataset(tiny_dataset_dir)
    losses, params = run_variant(ds, "cpu")
    # the same math written out directly
    ctx = make_ctx(ds, "cpu", 6)
    per_epoch = ds.train_idx.numel() // 128
    for g in range(6):
        epoch, step = divmod(g, per_epoch)
        seeds = batch_seeds(epoch_permutation(ds.train_idx, 0, epoch), step, 128)
        sub = sample_subgraph(ds.graph, seeds, FANOUTS, 0, epoch, step)
        loss = F.cross_entropy(ctx.model(ds.features[sub.frontiers[-1]], sub.hops[::-1], TORCH_OPS), ds.labels[seeds])
        ctx.optimizer.zero_grad()
        loss.backward()
        ctx.optimizer.step()
        assert abs(float(loss.detach()) - float(losses[g])) <= 1e-6 * abs(float(loss.detach()))
    assert all(torch.equal(p, q) for p, q in zip(params, ctx.model.parameters()))


def test_torch_eager_is_deterministic(tiny_dataset_dir):
    ds = load_dataset(tiny_dataset_dir)
    a, _ = run_variant(ds, "cpu")
    b, _ = run_variant(ds, "cpu")
    assert torch.equal(a, b)


@pytest.mark.gpu
def test_torch_eager_gpu_losses_match_cpu(tiny_dataset_dir):
    ds = load_dataset(tiny_dataset_dir)
    cpu, _ = run_variant(ds, "cpu", steps=10)
    gpu, _ = run_variant(ds.to("cuda"), "cuda", steps=10)
    assert torch.allclose(cpu, gpu, rtol=1e-4, atol=0)
