"""GAT over sampled blocks: multi-head attention over sampled neighbours plus the self loop.

Hidden layers concatenate their heads; the output layer averages them. The projections, the attention
scores and the biases go through ``zerognn.models.dense``'s layers, whose reductions over rows are in
fixed order under ``zerognn.determinism``.
"""

from __future__ import annotations

import torch
from torch import nn

from ..cuda.dense_gemm import column_sums
from ..errors import ZeroGNNError
from .dense import add_bias, fixed_order, linear
from .ops import AggregationOps


class _HeadScores(torch.autograd.Function):
    """score[m, h] = z[m, h, :] . att[h, :]: a row-wise dot product whose gradient for att sums over rows."""

    @staticmethod
    def forward(ctx, z, att):
        ctx.save_for_backward(z, att)
        return (z * att).sum(-1)

    @staticmethod
    def backward(ctx, grad):
        z, att = ctx.saved_tensors
        per_row = grad.unsqueeze(-1) * z
        if fixed_order(per_row):
            grad_att = column_sums(per_row.reshape(z.shape[0], -1)).view_as(att)
        else:
            grad_att = per_row.sum(0)
        return grad.unsqueeze(-1) * att, grad_att


class GAT(nn.Module):
    dense_rows = "src"  # it projects every source row before attention (zerognn.measure.floor)
    # No fuses_input_gather: its first layer's GEMM takes x itself, so the feature rows are gathered first.

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
            z = linear(x, self.lins[i].weight, None, relu=False).view(x.shape[0], self.heads, -1)
            score_src = _HeadScores.apply(z, self.att_src[i])
            score_dst = _HeadScores.apply(z[: block.num_dst], self.att_dst[i])
            h = ops.gat(z, score_src, score_dst, block, self.negative_slope)
            if i != last:
                x = torch.relu(add_bias(h.reshape(h.shape[0], -1), self.biases[i]))
            else:
                x = add_bias(h.mean(dim=1), self.biases[i])
        return x
