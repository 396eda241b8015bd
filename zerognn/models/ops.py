"""Neighbour aggregations the models call, behind one small interface.

A model never touches edge lists itself: it calls an ``AggregationOps`` object with a block (a sampled
hop). ``TorchOps`` is the PyTorch-ops implementation over the reference sampler's ``Hop``; the CUDA
variants supply their own ops object (kernels reading live counts from device memory) with the same
three methods, so every variant runs the same model code.

An ops object whose ``folds_relu_backward`` is true masks, in ``sage`` and ``gcn`` called with
``relu_input=True``, the gradient it returns for x by x > 0 (x being a ReLU's output), so the model's ReLU
runs no backward kernel of its own; without the attribute (or with it false) the models never pass
``relu_input`` and the ReLU's backward masks as usual.

An ops object whose ``accepts_gathered_rows`` is true also takes, as ``sage``'s and ``gcn``'s x, the rows of a
table named by ids, not yet gathered (``zerognn.cuda.gather.GatheredRows``): what the CUDA variants hand the
first layer of a model that declares ``fuses_input_gather`` (SAGE, GCN: x reaches nothing but that call).
"""

from __future__ import annotations

from typing import Protocol

import torch
import torch.nn.functional as F

from ..sampling import Hop


class AggregationOps(Protocol):
    folds_relu_backward: bool  # optional: whether sage/gcn take relu_input and mask x's gradient by x > 0
    accepts_gathered_rows: bool  # optional: whether sage/gcn take rows of a table read through ids as x

    def sage(self, x: torch.Tensor, block, relu_input: bool = False) -> torch.Tensor:
        """[mean of sampled neighbours' rows of ``x`` (zeros where none) | the destination's own row]: [num_dst, 2F]."""

    def gcn(self, x: torch.Tensor, block, relu_input: bool = False) -> torch.Tensor:
        """(x_dst + sum of neighbours) / (count + 1) per destination: [num_dst, F]."""

    def gat(self, z: torch.Tensor, score_src: torch.Tensor, score_dst: torch.Tensor, block,
            negative_slope: float) -> torch.Tensor:
        """Attention-weighted sum over neighbours and the self loop: z [num_src, H, C] -> [num_dst, H, C]."""


class TorchOps:
    """Aggregations from PyTorch scatter ops, the way PyG/DGL-style code writes them. They fold no ReLU
    backward: the models' ReLU keeps its own (``threshold_backward``), as PyTorch code would have it."""

    folds_relu_backward = False
    accepts_gathered_rows = False  # x is always a tensor here: the models' input is gathered with PyTorch

    @staticmethod
    def _sum_and_count(x: torch.Tensor, block: Hop) -> tuple[torch.Tensor, torch.Tensor]:
        out = x.new_zeros((block.num_dst,) + tuple(x.shape[1:]))
        out.index_add_(0, block.edge_dst, x[block.edge_src])
        count = torch.bincount(block.edge_dst, minlength=block.num_dst).to(x.dtype)
        return out, count.view((-1,) + (1,) * (x.dim() - 1))

    def sage(self, x: torch.Tensor, block: Hop, relu_input: bool = False) -> torch.Tensor:
        # relu_input is only a hint here: nothing is folded, so the models never set it for these ops
        total, count = self._sum_and_count(x, block)
        return torch.cat([total / count.clamp(min=1), x[: block.num_dst]], dim=1)

    def gcn(self, x: torch.Tensor, block: Hop, relu_input: bool = False) -> torch.Tensor:
        total, count = self._sum_and_count(x, block)
        return (total + x[: block.num_dst]) / (count + 1)

    def gat(self, z: torch.Tensor, score_src: torch.Tensor, score_dst: torch.Tensor, block: Hop,
            negative_slope: float) -> torch.Tensor:
        n = block.num_dst
        loops = torch.arange(n, device=z.device)
        src = torch.cat([block.edge_src, loops])
        dst = torch.cat([block.edge_dst, loops])
        logits = F.leaky_relu(score_src[src] + score_dst[dst], negative_slope)  # [E, H]
        heads = logits.shape[1]
        top = logits.new_full((n, heads), float("-inf")).scatter_reduce(
            0, dst.unsqueeze(1).expand(-1, heads), logits, reduce="amax", include_self=True)
        weights = torch.exp(logits - top[dst])
        denom = logits.new_zeros((n, heads)).index_add_(0, dst, weights)
        alpha = weights / denom[dst]
        return z.new_zeros((n,) + tuple(z.shape[1:])).index_add_(0, dst, z[src] * alpha.unsqueeze(-1))


TORCH_OPS = TorchOps()
