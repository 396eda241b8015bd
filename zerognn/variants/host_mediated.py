"""``host-mediated``: our CUDA kernels, with the host reading each hop's sizes back to allocate.

Per hop: sample into an exact [n, fanout] ELL buffer, mark the frontier and the new nodes among the
neighbours, then read the number of new nodes back to the host (the synchronisation this study is about)
to allocate the next frontier and size the grids exactly. Every step buffer is exactly as large as the
live data (beside the per-node maps and local ids that every CUDA variant keeps), so this
variant's peak memory is the *ideal*, metadata-informed allocation ZeroGNN is judged against. The
model, optimizer and sampling semantics are those of every other variant.
"""

from __future__ import annotations

import torch

from .. import rng
from ..cuda import sampling
from ..cuda.aggregate import CUDA_OPS, EllBlock
from ..cuda.gather import gather_labels, model_input
from ..cuda.loss import cross_entropy
from ..sampling import hop_key
from . import register
from .base import Variant, phase


@register
class HostMediated(Variant):
    name = "host-mediated"
    description = "our CUDA kernels; the host reads every hop's sizes back to allocate exactly (the ideal memory)"
    requires_cuda = True

    def setup(self) -> None:
        ds = self.ctx.dataset
        sampling.check_graph(ds.graph)
        self._keys_host = torch.empty(len(self.ctx.fanouts), dtype=torch.int64, pin_memory=True)
        self._overflow = sampling.new_overflow(self.ctx.device)
        self._scratch = sampling.SamplerScratch.for_graph(ds.num_nodes, self.ctx.device)
        self._batch = torch.full((1,), self.ctx.batch_size, dtype=torch.int32, device=self.ctx.device)

    def hop_keys(self, epoch: int, step: int) -> torch.Tensor:
        """The step's per-hop sampling keys, computed on the host and copied to the device."""
        for hop in range(len(self.ctx.fanouts)):
            self._keys_host[hop] = rng.as_signed(hop_key(self.ctx.seed, epoch, step, hop))
        return self._keys_host.to(self.ctx.device, non_blocking=True)

    def sample(self, seeds: torch.Tensor, epoch: int, step: int) -> tuple[torch.Tensor, torch.Tensor, list[EllBlock]]:
        """Sample every hop; returns the last frontier, its live size (device) and the blocks, seeds first."""
        ctx = self.ctx
        graph = ctx.dataset.graph
        keys = self.hop_keys(epoch, step)
        frontier, n_dev = seeds, self._batch
        blocks = []
        for hop, fanout in enumerate(ctx.fanouts):
            frontier, n_dev, block = sampling.sample_hop_ell(graph, frontier, n_dev, fanout, keys[hop:hop + 1],
                                                             self._overflow, self._scratch)
            blocks.append(block)
        return frontier, n_dev, blocks

    def loss(self, epoch: int, step: int) -> torch.Tensor:
        """Sample, gather and forward the batch of (epoch, step); its loss, not yet backpropagated."""
        ctx = self.ctx
        ds = ctx.dataset
        seeds = self.seeds(epoch, step)
        with phase("sample"):
            last, n_last, blocks = self.sample(seeds, epoch, step)
        with phase("gather"):
            # SAGE's and GCN's first layer reads the feature rows through the frontier's ids: no gather kernel
            x = model_input(ctx.model, CUDA_OPS, ds.features, last, n_last, self._overflow)
            y = gather_labels(ds.labels, seeds, self._batch, self._overflow)
        with phase("forward"):
            return cross_entropy(ctx.model(x, blocks[::-1], CUDA_OPS), y, self._batch, self._overflow)

    def step(self, epoch: int, step: int, global_step: int) -> None:
        self.backward_and_update(self.loss(epoch, step), global_step)

