"""PyTorch-facing wrappers of the sampling kernels: one hop's sample, dedupe and relabel (the gathers of
features and labels by node id are in ``zerognn.cuda.gather``).

Every wrapper takes its live counts as int32 device scalars and its buffers with explicit capacities,
so the same calls serve exact sizes (host-mediated: capacities = live sizes, read back by the host)
and fixed envelopes (ZeroGNN: capacities from calibration, live sizes never leave the device).
Buffers are allocated through PyTorch, so the caching allocator accounts for all of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..errors import ZeroGNNError
from ..graph import CSRGraph
from .aggregate import EllBlock
from .launch import THREADS, grid_for, launch

MAX_FANOUT = 64  # ZG_MAX_FANOUT in kernels/zerognn_common.cuh
RANK_WORDS = 1024  # ZG_RANK_WORDS: bitmap words per tile of relabel_nodes' scan


def sample_lanes(fanout: int) -> int:
    """Threads that sample one node: the fanout rounded up to a power of two, at most a warp
    (``zg_sample_lanes`` in kernels/zerognn_common.cuh, whose grid-stride loop works under any grid)."""
    return min(32, 1 << max(0, int(fanout) - 1).bit_length())


def new_overflow(device) -> torch.Tensor:
    """The overflow record kernels raise: [flag, largest size needed] (int64)."""
    return torch.zeros(2, dtype=torch.int64, device=device)


@dataclass
class SamplerScratch:
    """What the hop kernels keep per graph node, allocated once per graph and device (``for_graph``):

    * two bitmaps, one bit per node: the hop's frontier (``seen``, set by sample_neighbors) and its new nodes
      (``bits``, set by dedupe_neighbors for neighbours outside the frontier, and read back in id order), with
      the scratch of relabel_nodes' single-pass scan over the latter (a status word per tile of RANK_WORDS
      words and the ticket counter that hands tiles out; kernels/relabel_nodes.cu). Zeroed at allocation and
      zero again between hops: relabel_nodes clears every word of both, and the block that draws a launch's
      last ticket resets the statuses and the ticket, so back-to-back launches and CUDA Graph replays need
      nothing from the host;
    * each node's local id in the hop's next frontier, written by sample_neighbors (the frontier's nodes)
      and relabel_nodes (the new ones) and read by relabel_neighbors for the sampled neighbours, which are
      all one or the other: never cleared.
    """

    bits: torch.Tensor         # int32 [ceil(num_nodes / 32)]: the hop's new nodes
    seen: torch.Tensor         # int32 [ceil(num_nodes / 32)]: the hop's frontier
    tile_status: torch.Tensor  # int64 [one per RANK_WORDS words]: flag << 32 | count, zero between hops
    tile_ticket: torch.Tensor  # int32 [1]: the next tile to take, zero between hops
    local_ids: torch.Tensor    # int32 [num_nodes]: a node's position in the next frontier, or -1

    @classmethod
    def for_graph(cls, num_nodes: int, device) -> SamplerScratch:
        words = -(-int(num_nodes) // 32)
        tiles = max(1, -(-words // RANK_WORDS))
        return cls(torch.zeros(words, dtype=torch.int32, device=device),
                   torch.zeros(words, dtype=torch.int32, device=device),
                   torch.zeros(tiles, dtype=torch.int64, device=device),
                   torch.zeros(1, dtype=torch.int32, device=device),
                   torch.full((int(num_nodes),), -1, dtype=torch.int32, device=device))

    @property
    def words(self) -> np.int64:
        return np.int64(self.bits.numel())


def check_graph(graph: CSRGraph) -> None:
    if graph.col.dtype != torch.int32:
        raise ZeroGNNError("the CUDA sampler needs int32 column ids (graphs with fewer than 2^31 nodes)")
    if not graph.col.is_cuda:
        raise ZeroGNNError("the CUDA sampler needs the graph on the GPU")


def sample(graph: CSRGraph, frontier: torch.Tensor, n_frontier: torch.Tensor, capacity: int, fanout: int,
           hop_key: torch.Tensor, overflow: torch.Tensor, grid: int | None = None,
           scratch: SamplerScratch | None = None, new_count: torch.Tensor | None = None,
           ) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample up to ``fanout`` neighbours of each of the first ``n_frontier`` frontier nodes.

    In a hop (``scratch`` and ``new_count``, an int32 [1], both given) the same kernel also marks the live
    frontier in ``scratch.seen``, writes its local ids and zeroes ``new_count`` for ``dedupe``: no kernel of
    their own. The sample is the same with or without them.
    """
    if not 0 < fanout <= MAX_FANOUT:
        raise ZeroGNNError(f"fanout {fanout} is outside 1..{MAX_FANOUT}, the CUDA sampler's limit")
    if (scratch is None) != (new_count is None):
        raise ZeroGNNError("sample() marks a hop's frontier with both a SamplerScratch and a new-node count, "
                           "or with neither")
    device = frontier.device
    nbr = torch.empty(capacity * fanout, dtype=torch.int64, device=device)
    counts = torch.empty(capacity, dtype=torch.int32, device=device)
    seen, local_ids = (None, None) if scratch is None else (scratch.seen, scratch.local_ids)
    launch("sample_neighbors", grid or grid_for(capacity * sample_lanes(fanout)), graph.rowptr, graph.col, frontier,
           n_frontier, np.int32(capacity), np.int32(fanout), hop_key, nbr, counts, seen, local_ids, new_count,
           overflow)
    return nbr, counts


def dedupe(n_frontier: torch.Tensor, nbr: torch.Tensor, counts: torch.Tensor, fanout: int, scratch: SamplerScratch,
           new_count: torch.Tensor, grid: int | None = None) -> torch.Tensor:
    """Mark the sampled neighbours outside the frontier as new (``scratch.bits``) and count each once into
    ``new_count``; returns it. The frontier must be marked and the count zeroed: ``sample`` in a hop."""
    launch("dedupe_neighbors", grid or grid_for(nbr.numel()), nbr, counts, n_frontier, np.int32(fanout),
           scratch.seen, scratch.bits, new_count)
    return new_count


def relabel(frontier: torch.Tensor, n_frontier: torch.Tensor, scratch: SamplerScratch, new_count: torch.Tensor,
            nbr: torch.Tensor, counts: torch.Tensor, fanout: int, next_capacity: int, overflow: torch.Tensor,
            grid: int | None = None, next_count: torch.Tensor | None = None,
            neighbours_on: torch.cuda.Stream | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The next frontier (frontier + new nodes in id order), its live size, and neighbours' local ids.

    ``next_count`` (int32 [1]) receives the live size when given, e.g. a slot of a per-hop size log.

    With ``neighbours_on`` (a stream), relabel_neighbors runs there, forked from the current stream after
    relabel_nodes, and the caller joins that stream before anything reads the local ids it writes: in a
    captured graph it is a branch beside the next hop, which needs only the next frontier. The next hop writes
    ``scratch.local_ids`` meanwhile, but changes none that this one reads: every neighbour sampled here is in
    the next frontier, whose ids the next hop's sample writes again unchanged (a node keeps its position from
    hop to hop: each frontier starts with the one before), and its new nodes are not among them (a hop that
    overflowed is rolled back whatever it read).
    """
    device = frontier.device
    next_frontier = torch.empty(next_capacity, dtype=torch.int64, device=device)
    if next_count is None:
        next_count = torch.empty(1, dtype=torch.int32, device=device)
    nbr_local = torch.empty(nbr.numel(), dtype=torch.int32, device=device)
    tiles = scratch.tile_status.numel()
    launch("relabel_nodes", grid or grid_for(max(tiles * THREADS, next_capacity)), frontier, n_frontier,
           scratch.bits, scratch.seen, scratch.words, scratch.tile_status, scratch.tile_ticket, new_count,
           scratch.local_ids, next_frontier, next_count, np.int32(next_capacity), overflow)
    if neighbours_on is not None:
        neighbours_on.wait_stream(torch.cuda.current_stream())
        for t in (nbr, counts, n_frontier, nbr_local):  # the caller may drop nbr before the branch has read it:
            t.record_stream(neighbours_on)  # the allocator must not hand its block to the next hop meanwhile
    with torch.cuda.stream(neighbours_on):  # None: the current stream
        launch("relabel_neighbors", grid or grid_for(nbr.numel()), nbr, counts, n_frontier, np.int32(fanout),
               scratch.local_ids, nbr_local)
    return next_frontier, next_count, nbr_local


@dataclass
class HopDraft:
    """A hop between dedupe and relabel: the point where host-mediated control reads the new-node count."""

    frontier: torch.Tensor      # int64 [capacity]; the first n_frontier are live
    n_frontier: torch.Tensor    # int32 [1]
    fanout: int
    nbr: torch.Tensor
    counts: torch.Tensor
    new_count: torch.Tensor     # int32 [1]
    scratch: SamplerScratch

    @property
    def capacity(self) -> int:
        return self.frontier.numel()


def sample_and_dedupe(graph: CSRGraph, frontier: torch.Tensor, n_frontier: torch.Tensor, fanout: int,
                      hop_key: torch.Tensor, overflow: torch.Tensor, scratch: SamplerScratch) -> HopDraft:
    """Sample one hop of ``frontier`` (marking it) and mark the new nodes among its neighbours: two kernels."""
    capacity = frontier.numel()
    new_count = torch.empty(1, dtype=torch.int32, device=frontier.device)  # zeroed by sample_neighbors
    nbr, counts = sample(graph, frontier, n_frontier, capacity, fanout, hop_key, overflow, scratch=scratch,
                         new_count=new_count)
    dedupe(n_frontier, nbr, counts, fanout, scratch, new_count)
    return HopDraft(frontier, n_frontier, fanout, nbr, counts, new_count, scratch)


def finish_hop(draft: HopDraft, overflow: torch.Tensor, next_capacity: int,
               next_count: torch.Tensor | None = None, neighbours_on: torch.cuda.Stream | None = None,
               ) -> tuple[torch.Tensor, torch.Tensor, EllBlock]:
    """Relabel: (next frontier, its live size, the hop's block), over ``next_capacity`` frontier slots
    (``neighbours_on``: ``relabel``'s)."""
    next_frontier, next_live, nbr_local = relabel(draft.frontier, draft.n_frontier, draft.scratch, draft.new_count,
                                                  draft.nbr, draft.counts, draft.fanout, next_capacity, overflow,
                                                  next_count=next_count, neighbours_on=neighbours_on)
    block = EllBlock(draft.capacity, next_capacity, draft.fanout, nbr_local, draft.counts, draft.n_frontier, overflow)
    return next_frontier, next_live, block


def sample_hop_ell(graph: CSRGraph, frontier: torch.Tensor, n_frontier: torch.Tensor, fanout: int,
                   hop_key: torch.Tensor, overflow: torch.Tensor, scratch: SamplerScratch,
                   next_capacity: int | None = None, next_count: torch.Tensor | None = None,
                   neighbours_on: torch.cuda.Stream | None = None) -> tuple[torch.Tensor, torch.Tensor, EllBlock]:
    """One hop: sample, dedupe and relabel; returns (next frontier, its live size, the hop's block).

    ``frontier`` holds as many slots as it has elements, of which ``n_frontier`` (device) are live.
    With ``next_capacity=None`` the host reads the number of new nodes back (one synchronisation) and
    sizes the next frontier exactly — host-mediated control. With a ``next_capacity`` nothing leaves
    the device and a live size above a capacity raises ``overflow`` — fixed-launch control.
    ``neighbours_on``: see ``relabel``.
    """
    draft = sample_and_dedupe(graph, frontier, n_frontier, fanout, hop_key, overflow, scratch)
    if next_capacity is None:
        next_capacity = frontier.numel() + int(draft.new_count.item())  # the host-mediated metadata read
    return finish_hop(draft, overflow, next_capacity, next_count, neighbours_on)
