"""Time each CUDA operator on a real sampled batch and compare it with its bytes-moved floor.

One host-mediated sample of a batch gives realistic frontiers and blocks; each operator is then
replayed on them and timed with CUDA events (``zerognn.measure.timing.micro_time_us``: the median of
``repeats`` after ``warmup``). The floor counts
every input byte read once and every output byte written once; achieved bandwidth = floor / time, so a
kernel that re-reads (gathers from a shared row, tests and sets bits at random) shows below the copy ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .. import rng
from ..cuda import sampling
from ..cuda.aggregate import CUDA_OPS
from ..cuda.gather import GatheredRows, gather_rows
from ..datasets.store import Dataset
from ..measure.timing import micro_time_us
from ..sampling import batch_seeds, epoch_permutation, hop_key


@dataclass
class OpTiming:
    name: str
    us: float
    floor_bytes: int

    @property
    def gbps(self) -> float:
        return self.floor_bytes / (self.us * 1e-6) / 1e9


def bench_ops(ds: Dataset, batch_size: int, fanouts: list[int], hidden: int = 256, heads: int = 4,
              warmup: int = 5, repeats: int = 50, seed: int = 0) -> list[OpTiming]:
    """Time every operator of one training step's sampling and first-layer aggregation."""
    dev = ds.graph.device
    seeds = batch_seeds(epoch_permutation(ds.train_idx, seed, 0), 0, batch_size)
    overflow = sampling.new_overflow(dev)
    scratch = sampling.SamplerScratch.for_graph(ds.num_nodes, dev)
    results: list[OpTiming] = []
    frontier, n = seeds, seeds.numel()
    n_dev = torch.tensor([n], dtype=torch.int32, device=dev)
    blocks = []
    for hop, f in enumerate(fanouts):
        key = torch.tensor([rng.as_signed(hop_key(seed, 0, 0, hop))], dtype=torch.int64, device=dev)
        _, counts = sampling.sample(ds.graph, frontier, n_dev, n, f, key, overflow)
        edges = int(counts.sum())
        sample_bytes = n * (8 + 16 + 4) + edges * (4 + 8)
        results.append(OpTiming(f"sample hop {hop + 1} (n={n:,}, f={f})", micro_time_us(
            lambda: sampling.sample(ds.graph, frontier, n_dev, n, f, key, overflow), warmup, repeats),
            sample_bytes))

        def whole_hop(next_capacity):
            draft = sampling.sample_and_dedupe(ds.graph, frontier, n_dev, f, key, overflow, scratch)
            return draft, sampling.finish_hop(draft, overflow, next_capacity)

        # The whole hop timed at once: its sample marks the frontier that dedupe reads, and relabel clears
        # both bitmaps, so no part of it repeats alone.
        fresh = int(whole_hop(n * (f + 1))[0].new_count)
        results.append(OpTiming(f"sample + dedupe + relabel hop {hop + 1} (+{fresh:,} new)", micro_time_us(
            lambda: whole_hop(n + fresh), warmup, repeats),
            sample_bytes + n * 4 + edges * 8 + n * 4 + (n + fresh) * 16 + fresh * 4 + edges * (8 + 4 + 4)
            + 4 * scratch.bits.numel() * 4))  # local ids by node and edge; two bitmaps written, read, cleared
        _, (next_frontier, next_dev, block) = whole_hop(n + fresh)
        blocks.append((block, edges))
        frontier, n, n_dev = next_frontier, n + fresh, next_dev

    width = ds.num_features
    results.append(OpTiming(f"gather features ({n:,} x {width})", micro_time_us(
        lambda: gather_rows(ds.features, frontier, n_dev, overflow), warmup, repeats), n * (8 + 8 * width)))

    block, edges = blocks[-1]  # the first GNN layer aggregates the last hop over the widest input
    # What SAGE's and GCN's first layer runs in place of the gather and an aggregation over its output: the
    # forward reading the feature rows through the frontier's ids (zerognn.cuda.gather.model_input).
    features = GatheredRows(ds.features, frontier, n_dev, overflow)
    for op, widen in (("sage", 2), ("gcn", 1)):
        fwd = getattr(CUDA_OPS, op)
        results.append(OpTiming(f"{op} forward over features by id ({block.num_dst:,} <- {block.num_src:,})",
                                micro_time_us(lambda: fwd(features, block), warmup, repeats),
                                block.num_src * (8 + 4 * width) + edges * 4 + block.num_dst * (4 + widen * 4 * width)))
    x = torch.randn(block.num_src, hidden, device=dev)
    rows = 4 * hidden
    for op, widen in (("sage", 2), ("gcn", 1)):
        fwd = getattr(CUDA_OPS, op)
        grad = torch.randn(block.num_dst, widen * hidden, device=dev)
        results.append(OpTiming(f"{op} forward ({block.num_dst:,} <- {block.num_src:,})", micro_time_us(
            lambda: fwd(x, block), warmup, repeats),
            block.num_src * rows + edges * 4 + block.num_dst * (4 + widen * rows)))
        xg = x.clone().requires_grad_(True)
        y = fwd(xg, block)
        results.append(OpTiming(f"{op} backward", micro_time_us(
            lambda: torch.autograd.grad(y, xg, grad, retain_graph=True), warmup, repeats),
            block.num_dst * (4 + widen * rows) + edges * 4 + 2 * block.num_src * rows))
    z = torch.randn(block.num_src, heads, hidden // heads, device=dev, requires_grad=True)
    s_src = torch.randn(block.num_src, heads, device=dev, requires_grad=True)
    s_dst = torch.randn(block.num_dst, heads, device=dev, requires_grad=True)
    attention_bytes = block.num_dst * (block.fanout + 1) * heads * 4
    gat_us = micro_time_us(lambda: CUDA_OPS.gat(z, s_src, s_dst, block, 0.2), warmup, repeats)
    results.append(OpTiming("gat forward", gat_us,
                            block.num_src * (rows + heads * 4) + edges * 4 + block.num_dst * (rows + heads * 4)
                            + attention_bytes))
    out = CUDA_OPS.gat(z, s_src, s_dst, block, 0.2)
    g = torch.randn_like(out)
    results.append(OpTiming("gat backward", micro_time_us(
        lambda: torch.autograd.grad(out, (z, s_src, s_dst), g, retain_graph=True), warmup, repeats),
        2 * block.num_src * (rows + heads * 4) + edges * 4 + block.num_dst * (rows + 2 * heads * 4) + attention_bytes))
    if int(overflow[0]):
        raise RuntimeError(f"an operator overflowed its buffer (needed {int(overflow[1])})")
    return results


def format_table(results: list[OpTiming], ceiling_gbps: float) -> str:
    lines = [f"{'operator':<44} {'time us':>9} {'floor MB':>9} {'GB/s':>8} {'of copy':>8}"]
    for r in results:
        lines.append(f"{r.name:<44} {r.us:>9.1f} {r.floor_bytes / 1e6:>9.2f} {r.gbps:>8.0f} "
                     f"{r.gbps / ceiling_gbps:>8.1%}")
    return "\n".join(lines)


def copy_ceiling_gbps(bytes_: int = 2**31) -> float:
    """Device-to-device copy bandwidth (bytes read + written per second), measured here."""
    src = torch.empty(bytes_ // 4, dtype=torch.float32, device="cuda").uniform_()
    dst = torch.empty_like(src)
    us = micro_time_us(lambda: dst.copy_(src), 3, 10)
    return 2 * bytes_ / (us * 1e-6) / 1e9


__all__ = ["OpTiming", "bench_ops", "copy_ceiling_gbps", "format_table"]
