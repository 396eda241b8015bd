"""The execution envelope: per-hop buffer capacities for a fixed launch structure (docs/design.md, Execution variants).

A fixed-launch step (ZeroGNN) cannot size buffers from live metadata, so it provisions every hop's
frontier for a capacity decided before capture:

* ``worst_case``: ``min(N, B * prod(1 + f_k))`` for the frontier after hop h — always safe, often an
  order of magnitude too large (and every padded kernel pays for it);
* ``calibrate``: sample ``samples`` batches with the reference sampler, take each hop's largest
  frontier, add ``margin`` (relative), cap by the worst case. Calibration batches come from their own
  key space (epoch ``CALIBRATION_EPOCH``), so training batches are unseen and overflow is a real case.

An overflowing hop is detected on the device; ``grown`` gives the envelope to re-capture with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import torch

from ..errors import ZeroGNNError
from ..graph import CSRGraph
from ..sampling import batch_seeds, epoch_permutation, sample_subgraph

CALIBRATION_EPOCH = 2**32 - 2  # evaluation uses 2**32 - 1; training epochs count up from 0


@dataclass(frozen=True)
class Envelope:
    """``frontier_capacity[h]`` bounds the frontier before hop h (index 0: the seeds, = batch size)."""

    batch_size: int
    fanouts: tuple[int, ...]
    frontier_capacity: tuple[int, ...]
    policy: str
    calibration: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if len(self.frontier_capacity) != len(self.fanouts) + 1 or self.frontier_capacity[0] != self.batch_size:
            raise ZeroGNNError(f"an envelope needs {len(self.fanouts) + 1} capacities starting at the batch size")
        if any(b < a for a, b in zip(self.frontier_capacity, self.frontier_capacity[1:])):
            raise ZeroGNNError(f"frontier capacities must not shrink from hop to hop: {self.frontier_capacity}")
        if max(self.frontier_capacity) * max(self.fanouts) >= 2**31:
            raise ZeroGNNError(
                f"an envelope of {max(self.frontier_capacity):,} nodes x fanout {max(self.fanouts)} overflows the "
                f"kernels' int32 slot indices; use a smaller batch size or fanout"
            )

    def grown(self, hop: int, needed: int, factor: float = 1.25, limit: tuple[int, ...] | None = None) -> Envelope:
        """The envelope after hop ``hop`` overflowed needing ``needed`` nodes: that hop and later ones grow.

        ``limit`` (the worst-case capacities) caps the growth: no frontier can exceed it.
        """
        caps = list(self.frontier_capacity)
        caps[hop + 1] = max(caps[hop + 1], math.ceil(needed * factor))
        for h in range(hop + 2, len(caps)):
            caps[h] = max(caps[h], caps[h - 1])
        if limit is not None:
            caps = [max(needed if h == hop + 1 else 0, min(c, cap)) for h, (c, cap) in enumerate(zip(caps, limit))]
        return replace(self, frontier_capacity=tuple(caps))

    def record(self, live_max: list[int] | None = None, live_mean: list[float] | None = None) -> dict:
        """``variant_info.envelope`` for the run record: per hop, provisioned and (if given) live sizes."""
        hops = []
        for h, capacity in enumerate(self.frontier_capacity[1:], start=1):
            row = {"hop": h, "provisioned": int(capacity)}
            if live_max is not None:
                row["live_max"] = int(live_max[h - 1])
            if live_mean is not None:
                row["live_mean"] = float(live_mean[h - 1])
            hops.append(row)
        return {"policy": self.policy, "hops": hops, **self.calibration}


def worst_case_capacities(num_nodes: int, batch_size: int, fanouts: list[int]) -> tuple[int, ...]:
    caps = [batch_size]
    for f in fanouts:
        caps.append(min(num_nodes, caps[-1] * (1 + f)))
    return tuple(caps)


def worst_case(num_nodes: int, batch_size: int, fanouts: list[int]) -> Envelope:
    return Envelope(batch_size, tuple(fanouts), worst_case_capacities(num_nodes, batch_size, fanouts), "worst-case")


def calibrate(graph: CSRGraph, train_idx: torch.Tensor, batch_size: int, fanouts: list[int], seed: int,
              samples: int = 8, margin: float = 0.15) -> Envelope:
    """Capacities from ``samples`` reference-sampled batches: max frontier per hop x (1 + margin), capped."""
    if samples < 1:
        raise ZeroGNNError(f"calibration needs at least one sampled batch, got {samples}")
    if margin < 0:
        raise ZeroGNNError(f"the envelope margin must be non-negative, got {margin}")
    permutation = epoch_permutation(train_idx, seed, CALIBRATION_EPOCH)
    steps = min(samples, permutation.numel() // batch_size)
    if steps == 0:
        raise ZeroGNNError(f"batch size {batch_size} exceeds the {train_idx.numel()} train nodes")
    observed = torch.zeros(steps, len(fanouts), dtype=torch.int64)
    for step in range(steps):
        seeds = batch_seeds(permutation, step, batch_size)
        sub = sample_subgraph(graph, seeds, fanouts, seed, CALIBRATION_EPOCH, step)
        observed[step] = torch.tensor([f.numel() for f in sub.frontiers[1:]])
    worst = worst_case_capacities(graph.num_nodes, batch_size, fanouts)
    peak = observed.max(dim=0).values.tolist()
    caps = [batch_size]
    for h, live in enumerate(peak):
        caps.append(max(caps[-1], min(worst[h + 1], math.ceil(live * (1 + margin)))))
    return Envelope(batch_size, tuple(fanouts), tuple(caps), "calibrated",
                    {"calibration_batches": steps, "margin": margin, "calibration_max": peak})
