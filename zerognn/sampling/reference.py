"""The reference L-hop neighbour sampler, in PyTorch ops (CPU or GPU).

Semantics every variant must reproduce exactly (docs/design.md, Sampling semantics):

* a frontier node v of degree d with fanout f keeps all d neighbours (in CSR order) if d <= f, else f
  distinct neighbour *positions* chosen by Floyd's algorithm: for i in 0..f-1, j = d - f + i,
  t = uniform_below(draw(key_v, i), j + 1), pick t unless already picked, else pick j;
* key_v = combine(hop_key(seed, epoch, step, hop), v) — a function of the node id, never of its
  position in a buffer, so the sampled edge set does not depend on frontier order or on the device;
* the next frontier is the current frontier (same order) followed by the new neighbours (those not
  already in the frontier) in ascending id order; edges are relabelled into local ids.

Edges of a hop are grouped by destination (frontier position) and, within one destination, ordered by
draw index.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .. import rng
from ..errors import ZeroGNNError
from ..graph import CSRGraph

SAMPLING_PURPOSE = 2


def hop_key(seed: int, epoch: int, step: int, hop: int) -> int:
    """The 64-bit key of one hop of one training step (a Python int)."""
    return rng.key_int(seed, SAMPLING_PURPOSE, epoch, step, hop)


@dataclass(frozen=True)
class Hop:
    """One sampled hop in local ids: edge e goes from ``src[e]`` (in the next frontier) to ``dst[e]``."""

    num_dst: int
    num_src: int
    edge_src: torch.Tensor
    edge_dst: torch.Tensor

    @property
    def num_edges(self) -> int:
        return self.edge_src.numel()


@dataclass(frozen=True)
class SampledSubgraph:
    """``frontiers[0]`` are the seeds; ``hops[h]`` links ``frontiers[h]`` (dst) to ``frontiers[h+1]`` (src)."""

    frontiers: list[torch.Tensor]
    hops: list[Hop]

    @property
    def seeds(self) -> torch.Tensor:
        return self.frontiers[0]

    def edge_set(self, hop: int) -> set[tuple[int, int]]:
        """The hop's sampled edges as a set of global (dst, src) pairs (for tests and checks)."""
        h = self.hops[hop]
        dst = self.frontiers[hop][h.edge_dst].tolist()
        src = self.frontiers[hop + 1][h.edge_src].tolist()
        return set(zip(dst, src))


def floyd_positions(keys: torch.Tensor, degrees: torch.Tensor, fanout: int) -> torch.Tensor:
    """Floyd's f distinct positions in [0, d) for each (key, d) with d > f: an [n, f] int64 tensor."""
    picks = torch.empty(keys.numel(), fanout, dtype=torch.int64, device=keys.device)
    for i in range(fanout):
        j = degrees - fanout + i
        t = rng.uniform_below(rng.draw(keys, i), j + 1)
        if i:
            taken = (picks[:, :i] == t.unsqueeze(1)).any(dim=1)
            t = torch.where(taken, j, t)
        picks[:, i] = t
    return picks


def sample_hop(graph: CSRGraph, frontier: torch.Tensor, fanout: int, key: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample one hop: returns (dst frontier positions, global neighbour ids), one entry per edge."""
    if fanout <= 0:
        raise ZeroGNNError(f"fanouts must be positive, got {fanout}")
    frontier = frontier.to(torch.int64)
    start = graph.rowptr[frontier]
    degrees = graph.rowptr[frontier + 1] - start
    counts = torch.clamp(degrees, max=fanout)
    dst = torch.repeat_interleave(torch.arange(frontier.numel(), device=frontier.device), counts)
    offsets = torch.cumsum(counts, 0) - counts
    position = torch.arange(dst.numel(), device=frontier.device) - offsets[dst]
    big = degrees > fanout
    if bool(big.any()):
        node_keys = rng.combine(key, frontier[big])
        picks = floyd_positions(node_keys, degrees[big], fanout)
        # Nodes with d > f own exactly f consecutive edge slots, in frontier order: align row-major.
        position[big[dst]] = picks.reshape(-1)
    neighbours = graph.col[start[dst] + position].to(torch.int64)
    return dst, neighbours


def extend_frontier(frontier: torch.Tensor, neighbours: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Dedupe/relabel: the next frontier and each neighbour's local id in it."""
    unique = torch.unique(neighbours)
    new = unique[~torch.isin(unique, frontier)]
    next_frontier = torch.cat([frontier, new])
    sorted_ids, order = torch.sort(next_frontier)
    local = order[torch.searchsorted(sorted_ids, neighbours)]
    return next_frontier, local


def sample_subgraph(
    graph: CSRGraph, seeds: torch.Tensor, fanouts: list[int], seed: int, epoch: int, step: int
) -> SampledSubgraph:
    """Sample len(fanouts) hops from ``seeds`` (which must be distinct node ids)."""
    frontiers = [seeds.to(torch.int64)]
    hops = []
    for hop, fanout in enumerate(fanouts):
        frontier = frontiers[-1]
        dst, neighbours = sample_hop(graph, frontier, fanout, hop_key(seed, epoch, step, hop))
        next_frontier, src = extend_frontier(frontier, neighbours)
        hops.append(Hop(frontier.numel(), next_frontier.numel(), src, dst))
        frontiers.append(next_frontier)
    return SampledSubgraph(frontiers, hops)
