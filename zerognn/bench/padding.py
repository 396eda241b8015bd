"""What padding costs the dense layers: cuBLAS GEMMs over envelope capacities vs exact live sizes.

ZeroGNN runs each layer's GEMMs over the envelope's capacity rows; a GEMM that read the live row count
from device memory could skip the padding, and this measurement bounds what it could save: for one
real batch, every SAGE layer's two GEMMs (forward and backward) are timed at the capacity and at the
live size. Times are CUDA-event medians (``zerognn.measure.timing.micro_time_us``), as the operator
benchmark's.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..datasets.store import Dataset
from ..fixed_launch.envelope import Envelope
from ..measure.timing import micro_time_us
from ..sampling import batch_seeds, epoch_permutation, sample_subgraph


@dataclass
class PaddingTiming:
    layer: int
    in_dim: int
    live_rows: int
    padded_rows: int
    exact_us: float
    padded_us: float


def _linear_step_us(rows: int, in_dim: int, out_dim: int, device) -> float:
    """One SAGE layer's dense work: two [rows, in] x [in, out] GEMMs, forward and backward."""
    x = torch.randn(rows, in_dim, device=device, requires_grad=True)
    w_self = torch.randn(out_dim, in_dim, device=device, requires_grad=True)
    w_neigh = torch.randn(out_dim, in_dim, device=device, requires_grad=True)
    grad = torch.randn(rows, out_dim, device=device)

    def step():
        y = x @ w_self.t() + x @ w_neigh.t()
        torch.autograd.grad(y, (x, w_self, w_neigh), grad)

    return micro_time_us(step, 5, 50)


def bench_gemm_padding(ds: Dataset, envelope: Envelope, hidden: int, num_classes: int,
                       seed: int = 0) -> list[PaddingTiming]:
    fanouts = list(envelope.fanouts)
    seeds = batch_seeds(epoch_permutation(ds.train_idx, seed, 0), 0, envelope.batch_size)
    live = [f.numel() for f in sample_subgraph(ds.graph, seeds, fanouts, seed, 0, 0).frontiers]
    hops = len(fanouts)
    dims = [ds.num_features] + [hidden] * (hops - 1)
    out_dims = [hidden] * (hops - 1) + [num_classes]
    rows = []
    for layer in range(hops):
        dst = hops - 1 - layer  # layer 0 produces the rows of the frontier before the last hop
        rows.append(PaddingTiming(layer, dims[layer], live[dst], envelope.frontier_capacity[dst],
                                  _linear_step_us(live[dst], dims[layer], out_dims[layer], ds.graph.device),
                                  _linear_step_us(envelope.frontier_capacity[dst], dims[layer], out_dims[layer],
                                                  ds.graph.device)))
    return rows


def format_padding(rows: list[PaddingTiming]) -> str:
    lines = [f"{'layer':>5} {'in':>5} {'live rows':>10} {'padded rows':>12} {'exact us':>9} "
             f"{'padded us':>10} {'cost us':>8}"]
    for r in rows:
        lines.append(f"{r.layer:>5} {r.in_dim:>5} {r.live_rows:>10,} {r.padded_rows:>12,} {r.exact_us:>9.1f} "
                     f"{r.padded_us:>10.1f} {r.padded_us - r.exact_us:>8.1f}")
    total = sum(r.padded_us - r.exact_us for r in rows)
    lines.append(f"padding costs the dense layers {total:.1f} us per step in all "
                 f"(the most a GEMM reading the live row count could save)")
    return "\n".join(lines)
