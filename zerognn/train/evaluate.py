"""Accuracy of the trained model on val/test nodes, with the reference sampler and PyTorch ops.

Evaluation is variant-independent on purpose: every variant trains the same parameters, and judging
them with one sampler keeps accuracy comparable. It samples with the training fanouts under a key
(epoch = EVAL_EPOCH) that training never uses, of a fixed seed (EVAL_SEED) whatever the run's own, so
every variant and every seed is judged on the same subgraphs of the same nodes in the same batches.
"""

from __future__ import annotations

import torch

from ..datasets.store import Dataset
from ..models import TORCH_OPS
from ..records.spec import RunSpec
from ..sampling import sample_subgraph

EVAL_EPOCH = 2**32 - 1
EVAL_SEED = 0


@torch.no_grad()
def accuracy(model: torch.nn.Module, ds: Dataset, nodes: torch.Tensor, fanouts: list[int], seed: int,
             batch_size: int) -> float | None:
    """Fraction of ``nodes`` whose predicted class equals the label (labels < 0 are skipped)."""
    nodes = nodes[ds.labels[nodes] >= 0]
    if nodes.numel() == 0:
        return None
    was_training = model.training
    model.eval()
    correct = 0
    for step, start in enumerate(range(0, nodes.numel(), batch_size)):
        seeds = nodes[start:start + batch_size]
        sub = sample_subgraph(ds.graph, seeds, fanouts, seed, EVAL_EPOCH, step)
        logits = model(ds.features[sub.frontiers[-1]], sub.hops[::-1], TORCH_OPS)
        correct += int((logits.argmax(dim=1) == ds.labels[seeds]).sum())
    model.train(was_training)
    return correct / nodes.numel()


def validation_accuracy(model: torch.nn.Module, ds: Dataset, spec: RunSpec) -> float | None:
    """Accuracy on the first ``spec.eval_nodes`` validation nodes (None with 0)."""
    n = spec.eval_nodes
    return accuracy(model, ds, ds.val_idx[:n], spec.fanouts, EVAL_SEED, spec.batch_size) if n else None


def evaluate(model: torch.nn.Module, ds: Dataset, spec: RunSpec) -> dict[str, float | int | None]:
    """The record's ``accuracy``: on the first ``spec.eval_nodes`` val and test nodes (null with 0)."""
    n = spec.eval_nodes
    val = validation_accuracy(model, ds, spec)
    test = accuracy(model, ds, ds.test_idx[:n], spec.fanouts, EVAL_SEED, spec.batch_size) if n else None
    return {"val": val, "test": test, "eval_nodes": n}
