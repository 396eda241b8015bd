"""``cuda-graph-naive``: host-mediated control, each sync-free segment replayed as a captured CUDA Graph.

The step is host-mediated's — the host reads every hop's new-node count to size what follows — cut
at those reads into segments: [sample + dedupe hop 0], [relabel hop h-1 + sample + dedupe hop h] ...,
[relabel the last hop + gathers + forward + backward + optimizer]. Each segment is captured into a
CUDA Graph keyed by its shape signature (the sizes the host read) and replayed when the same shapes
come back; a bounded cache evicts the least recently used. Because frontier sizes change with every
batch, most segments miss and are captured anew: this is what graph capture gives when the metadata
loop stays on the host (docs/design.md, Execution variants). The record keeps hits, misses, evictions,
capture time and the releases of evicted graphs' memory pools (once per cache-full of evictions,
``zerognn/cuda/segment_graphs.py``) with their time. The first step runs eagerly, so that lazy
initialisation (Adam's state, cuBLAS) is not captured.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import torch

from ..cuda import sampling
from ..cuda.aggregate import CUDA_OPS, EllBlock
from ..cuda.gather import gather_labels, model_input
from ..cuda.loss import backward, cross_entropy
from ..cuda.segment_graphs import SegmentGraphs
from ..distributed import average_gradients
from ..optimizer import adam_step
from . import register
from .base import phase
from .host_mediated import HostMediated

_DRAFT_TENSORS = 5  # HopDraft's tensors, in field order, without its fanout and scratch


def _draft(tensors: tuple[torch.Tensor, ...], fanout: int, scratch: sampling.SamplerScratch) -> sampling.HopDraft:
    frontier, n_frontier, nbr, counts, new_count = tensors
    return sampling.HopDraft(frontier, n_frontier, fanout, nbr, counts, new_count, scratch)


def _tensors(draft: sampling.HopDraft) -> tuple[torch.Tensor, ...]:
    values = (getattr(draft, f.name) for f in fields(draft))  # not astuple: it would deep-copy the tensors
    return tuple(v for v in values if isinstance(v, torch.Tensor))


@register
class CudaGraphNaive(HostMediated):
    name = "cuda-graph-naive"
    description = "host-mediated control; every sync-free segment captured as a CUDA Graph per shape signature"

    cache_capacity = 32

    def setup(self) -> None:
        super().setup()
        self.graphs = SegmentGraphs(self.cache_capacity)
        self._steps_run = 0

    def _run(self, key, fn, inputs):
        if self._steps_run == 0:
            return fn(*inputs)  # the first step eagerly: lazy initialisation stays out of every graph
        return self.graphs.run(key, fn, inputs)

    def step(self, epoch: int, step: int, global_step: int) -> None:
        ctx = self.ctx
        fanouts = ctx.fanouts
        seeds = self.seeds(epoch, step)
        keys = self.hop_keys(epoch, step)
        sizes = [seeds.numel()]  # frontier sizes, as the host learns them
        blocks: list[torch.Tensor] = []  # (nbr_local, counts, n_dst) per finished hop
        with phase("sample"):
            draft = self._run(("first", sizes[0]), self._first_segment, (seeds, self._batch, keys))
            for hop in range(1, len(fanouts)):
                fresh = int(draft[-1].item())  # the host-mediated metadata read
                sizes.append(sizes[-1] + fresh)
                out = self._run(("hop", hop, sizes[-2], fresh), self._middle_segment(hop, fresh), (*draft, keys))
                blocks += out[:3]
                draft = out[3:]
            fresh = int(draft[-1].item())
            sizes.append(sizes[-1] + fresh)
        with phase("train (one captured segment)"):
            loss = self._run(("last", tuple(sizes)), self._last_segment(tuple(sizes)),
                             (*draft, *blocks, seeds, self._batch))
        ctx.loss_log[global_step] = loss.detach()
        self._steps_run += 1

    # ------------------------------------------------------------------ the captured segments

    def _first_segment(self, seeds, n_seeds, keys):
        fanout = self.ctx.fanouts[0]
        return _tensors(sampling.sample_and_dedupe(self.ctx.dataset.graph, seeds, n_seeds, fanout, keys[0:1],
                                                   self._overflow, self._scratch))

    def _middle_segment(self, hop: int, fresh: int):
        fanouts = self.ctx.fanouts

        def segment(*tensors):
            previous = _draft(tensors[:_DRAFT_TENSORS], fanouts[hop - 1], self._scratch)
            keys = tensors[_DRAFT_TENSORS]
            frontier, n_live, block = sampling.finish_hop(previous, self._overflow, previous.capacity + fresh)
            draft = sampling.sample_and_dedupe(self.ctx.dataset.graph, frontier, n_live, fanouts[hop],
                                               keys[hop:hop + 1], self._overflow, self._scratch)
            return (block.nbr_local, block.counts, block.n_dst, *_tensors(draft))

        return segment

    def _last_segment(self, sizes: tuple[int, ...]):
        ctx = self.ctx
        fanouts = ctx.fanouts

        def segment(*tensors):
            last = _draft(tensors[:_DRAFT_TENSORS], fanouts[-1], self._scratch)
            earlier = tensors[_DRAFT_TENSORS:-2]
            seeds, n_seeds = tensors[-2:]
            blocks = [EllBlock(sizes[h], sizes[h + 1], fanouts[h], *earlier[3 * h:3 * h + 3], self._overflow)
                      for h in range(len(fanouts) - 1)]
            frontier, n_live, block = sampling.finish_hop(last, self._overflow, sizes[-1])
            blocks.append(block)
            x = model_input(ctx.model, CUDA_OPS, ctx.dataset.features, frontier, n_live, self._overflow)
            y = gather_labels(ctx.dataset.labels, seeds, n_seeds, self._overflow)
            ctx.optimizer.zero_grad(set_to_none=True)  # so that backward writes the graph's own gradients
            loss = cross_entropy(ctx.model(x, blocks[::-1], CUDA_OPS), y, n_seeds, self._overflow)
            # Gathered features (GAT) are dead after the first layer: not part of the graph's working set
            # through the backward. SAGE's and GCN's x holds no buffer (rows read through the ids).
            del x
            backward(loss)
            if ctx.world.size > 1:
                average_gradients(list(ctx.model.parameters()), ctx.world)
            adam_step(ctx.optimizer)
            return loss

        return segment

    def info(self) -> dict[str, Any]:
        return self.graphs.info()
