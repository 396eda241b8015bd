"""GraphSAGE with mean aggregation: h_dst' = W [mean(h_src) | h_dst] + b, one GEMM per layer.

Each layer's weight is [W_neigh | W_self] over the concatenated input the ops write in one pass, so the
two linears of the usual formulation are one GEMM with bias (and ReLU) in its epilogue. The halves are
initialised as two ``nn.Linear`` layers over the neighbour and self inputs would be.
"""

from __future__ import annotations

import torch
from torch import nn

from .dense import linear
from .ops import AggregationOps


class SAGE(nn.Module):
    dense_rows = "dst"  # its GEMM runs on destination rows (zerognn.measure.floor)
    # Its first layer reads x only through ops.sage, so ops that accept rows read through ids get the feature
    # rows so, with no gathered copy (zerognn.cuda.gather.model_input; zerognn.measure.floor counts none).
    fuses_input_gather = True

    def __init__(self, in_dim: int, hidden: int, out_dim: int, num_layers: int):
        super().__init__()
        self.widths = dims = [in_dim] + [hidden] * (num_layers - 1) + [out_dim]
        self_lins = [nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:])]
        neigh_lins = [nn.Linear(a, b, bias=False) for a, b in zip(dims[:-1], dims[1:])]
        self.lins = nn.ModuleList(nn.Linear(2 * a, b) for a, b in zip(dims[:-1], dims[1:]))
        with torch.no_grad():
            for lin, self_lin, neigh_lin in zip(self.lins, self_lins, neigh_lins):
                lin.weight.copy_(torch.cat([neigh_lin.weight, self_lin.weight], dim=1))
                lin.bias.copy_(self_lin.bias)

    def forward(self, x: torch.Tensor, blocks: list, ops: AggregationOps) -> torch.Tensor:
        last = len(self.lins) - 1
        # A hidden layer's ReLU output is read by the next layer's aggregation alone (its self half too), so
        # ops that fold the ReLU's backward into that aggregation's mask it there, not in the dense layer.
        fold = getattr(ops, "folds_relu_backward", False)
        for i, (block, lin) in enumerate(zip(blocks, self.lins)):
            h = ops.sage(x, block, relu_input=True) if fold and i > 0 else ops.sage(x, block)
            x = linear(h, lin.weight, lin.bias, relu=i != last, relu_backward_downstream=fold)
        return x
