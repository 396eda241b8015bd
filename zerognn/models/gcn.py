"""GCN over sampled blocks: h_dst' = W (h_dst + sum h_src) / (count + 1) + b (self loop included)."""

from __future__ import annotations

import torch
from torch import nn

from .dense import linear
from .ops import AggregationOps


class GCN(nn.Module):
    dense_rows = "dst"  # its GEMM runs on destination rows (zerognn.measure.floor)
    # Its first layer reads x only through ops.gcn, so ops that accept rows read through ids get the feature
    # rows so, with no gathered copy (zerognn.cuda.gather.model_input; zerognn.measure.floor counts none).
    fuses_input_gather = True

    def __init__(self, in_dim: int, hidden: int, out_dim: int, num_layers: int):
        super().__init__()
        self.widths = dims = [in_dim] + [hidden] * (num_layers - 1) + [out_dim]
        self.lins = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, x: torch.Tensor, blocks: list, ops: AggregationOps) -> torch.Tensor:
        last = len(self.lins) - 1
        # A hidden layer's ReLU output is read by the next layer's aggregation alone (its self loop too), so
        # ops that fold the ReLU's backward into that aggregation's mask it there, not in the dense layer.
        fold = getattr(ops, "folds_relu_backward", False)
        for i, (block, lin) in enumerate(zip(blocks, self.lins)):
            # Aggregating before the linear layer keeps the GEMM on num_dst rows, not num_src.
            h = ops.gcn(x, block, relu_input=True) if fold and i > 0 else ops.gcn(x, block)
            x = linear(h, lin.weight, lin.bias, relu=i != last, relu_backward_downstream=fold)
        return x
