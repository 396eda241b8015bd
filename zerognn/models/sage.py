"""GraphSAGE with mean aggregation: h_dst' = W_self h_dst + W_neigh mean(h_src) + b."""

from __future__ import annotations

import torch
from torch import nn

from .ops import AggregationOps


class SAGE(nn.Module):
    def __init__(self, in_dim: int, hidden: int, out_dim: int, num_layers: int):
        super().__init__()
        dims = [in_dim] + [hidden] * (num_layers - 1) + [out_dim]
        self.self_lins = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.neigh_lins = nn.ModuleList(nn.Linear(a, b, bias=False) for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, x: torch.Tensor, blocks: list, ops: AggregationOps) -> torch.Tensor:
        last = len(self.self_lins) - 1
        for i, (block, self_lin, neigh_lin) in enumerate(zip(blocks, self.self_lins, self.neigh_lins)):
            # The neighbour GEMM accumulates into the self term (cuBLAS beta=1): no separate add pass.
            x = self_lin(x[: block.num_dst]).addmm_(ops.mean(x, block), neigh_lin.weight.t())
            if i != last:
                x = torch.relu(x)
        return x
