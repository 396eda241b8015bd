"""``torch-eager``: the training step as PyG/DGL-style users write it today, from PyTorch ops.

Sampling, dedupe and aggregation are the reference sampler's PyTorch ops; on a GPU every data-dependent
size (``unique``, ``repeat_interleave``, boolean indexing) is a real device-to-host synchronisation,
which is exactly the host-mediated cost this study measures. Runs on the CPU as well.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..models import TORCH_OPS
from ..sampling import Hop, sample_subgraph
from . import register
from .base import Variant, phase


@register
class TorchEager(Variant):
    name = "torch-eager"
    description = "PyTorch ops, host-mediated shapes (what PyG/DGL-style code does today); CPU or GPU"

    def step(self, epoch: int, step: int, global_step: int) -> None:
        ctx = self.ctx
        ds = ctx.dataset
        seeds = self.seeds(epoch, step)
        with phase("sample"):
            frontier, hops = self.sample(seeds, epoch, step)
        with phase("gather"):
            x = ds.features[frontier]
            y = ds.labels[seeds]
        with phase("forward"):
            loss = self.forward_loss(x, hops[::-1], y)
        self.backward_and_update(loss, global_step)

    def sample(self, seeds: torch.Tensor, epoch: int, step: int) -> tuple[torch.Tensor, list[Hop]]:
        """The batch's last frontier (node ids) and its hops, seeds first: the reference sampler's."""
        sub = sample_subgraph(self.ctx.dataset.graph, seeds, self.ctx.fanouts, self.ctx.seed, epoch, step)
        return sub.frontiers[-1], sub.hops

    def forward_loss(self, x: torch.Tensor, hops: list, y: torch.Tensor) -> torch.Tensor:
        """Model forward and loss over the sampled hops (outermost first)."""
        return F.cross_entropy(self.ctx.model(x, hops, TORCH_OPS), y)
