"""GNN models over sampled blocks (GraphSAGE-mean, GCN, GAT) and the factory that builds them.

Layer i consumes the blocks innermost first: ``model(x, blocks, ops)`` takes the features of the last
frontier and ``blocks = hops[::-1]``; the output has one row per seed.
"""

from __future__ import annotations

import torch
from torch import nn

from ..errors import ZeroGNNError
from .gat import GAT
from .gcn import GCN
from .ops import TORCH_OPS, AggregationOps, TorchOps
from .sage import SAGE

MODELS = {"sage": SAGE, "gcn": GCN, "gat": GAT}


def build_model(name: str, in_dim: int, hidden: int, out_dim: int, num_layers: int, seed: int) -> nn.Module:
    """Build a model with parameters that depend only on (name, sizes, seed), on the CPU."""
    if name not in MODELS:
        raise ZeroGNNError(f"unknown model {name!r}; choose one of {', '.join(MODELS)}")
    if num_layers < 1:
        raise ZeroGNNError(f"a model needs at least one layer (one fanout), got {num_layers}")
    cpu_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        return MODELS[name](in_dim, hidden, out_dim, num_layers)
    finally:
        torch.random.set_rng_state(cpu_state)


__all__ = ["MODELS", "TORCH_OPS", "AggregationOps", "TorchOps", "build_model", "GAT", "GCN", "SAGE"]
