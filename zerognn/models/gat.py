"""GAT over sampled blocks: multi-head attention over sampled neighbours plus the self loop.

Hidden layers concatenate their heads; the output layer averages them.
"""

from __future__ import annotations

import torch
from torch import nn

from ..errors import ZeroGNNError
from .ops import AggregationOps


class GAT(nn.Module):
    dense_rows = "src"  # it projects every source row before attention (zerognn.measure.floor)

    def __init__(self, in_dim: int, hidden: int, out_dim: int, num_layers: int, heads: int = 4,
                 negative_slope: float = 0.2):
        super().__init__()
        if hidden % heads:
            raise ZeroGNNError(f"GAT hidden size {hidden} must be a multiple of its {heads} heads")
        self.heads = heads
        self.negative_slope = negative_slope
        dims = [in_dim] + [hidden] * (num_layers - 1)
        self.widths = dims + [out_dim]
        outs = [hidden // heads] * (num_layers - 1) + [out_dim]
        self.lins = nn.ModuleList(nn.Linear(a, heads * c, bias=False) for a, c in zip(dims, outs))
        self.att_src = nn.ParameterList(nn.Parameter(torch.empty(heads, c)) for c in outs)
        self.att_dst = nn.ParameterList(nn.Parameter(torch.empty(heads, c)) for c in outs)
        self.biases = nn.ParameterList(nn.Parameter(torch.zeros(heads * c if i < num_layers - 1 else c))
                                       for i, c in enumerate(outs))
        for p in list(self.att_src) + list(self.att_dst):
            nn.init.xavier_uniform_(p)

    def forward(self, x: torch.Tensor, blocks: list, ops: AggregationOps) -> torch.Tensor:
        last = len(self.lins) - 1
        for i, block in enumerate(blocks):
            z = self.lins[i](x).view(x.shape[0], self.heads, -1)
            score_src = (z * self.att_src[i]).sum(-1)
            score_dst = (z[: block.num_dst] * self.att_dst[i]).sum(-1)
            h = ops.gat(z, score_src, score_dst, block, self.negative_slope)
            if i != last:
                x = torch.relu(h.reshape(h.shape[0], -1) + self.biases[i])
            else:
                x = h.mean(dim=1) + self.biases[i]
        return x
