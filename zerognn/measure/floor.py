"""The hardware floor of a training step: the least time any implementation could take on this GPU.

    floor = max(dense FLOPs / the precision's peak, bytes moved / memory bandwidth)

computed from the step's live sizes, never from buffer capacities, so padding counts against the
variant that pays for it. The sizes come from the reference sampler on the timed steps' own batches
(the same for every variant of a configuration), and the work from the model's own weight shapes:

* **FLOPs**: the dense GEMMs only — forward, weight gradients, and input gradients of every layer
  but the first (input features need none); 2 FLOPs per multiply-add, over the rows the model's GEMM
  runs on (``dense_rows``: destinations for SAGE and GCN, which aggregate first; sources for GAT,
  which projects every source row before attention).
* **Bytes**: each hop's sampling (the frontier's two row offsets, one column id read and one local id
  written per sampled edge), each layer's input read and output written forward, its output gradient
  and input read again and (but for the first layer) its input gradient written backward — GAT also
  writes and reads its projected rows — and Adam's update (parameter, gradient and two moments read;
  parameter and moments written). The first layer's input is the feature rows of the last frontier:
  for SAGE and GCN (``fuses_input_gather``) its read is the one read of those rows, through the
  frontier's ids, and no gathered copy is written or read; GAT, whose first GEMM takes the rows
  gathered, also counts the gather (rows read and a copy written once). Writing a gathered copy is no
  work a SAGE or GCN step must do (the CUDA variants' first aggregation reads the rows in place), so
  the floor stays a lower bound for every variant: those that still gather (``torch-eager``,
  ``torch-compile``) pay for their copy against it.

Peaks come from ``GPU_PEAKS``, keyed by the exact name CUDA reports; an unknown GPU gets no floor
(None), never a guess. The FLOP peak is the one of the run's precision (``zerognn.precision``): fp32 FFMA
for float32, the dense TF32 tensor-core peak for tf32 (fp32 storage, so the bytes are the same), the dense
bf16 tensor-core peak for bfloat16, whose feature rows and activations count 2 bytes an element (what a
bf16 implementation moves; this one stores fp32 and casts, and the casts count against it).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ..graph import CSRGraph
from ..precision import DEFAULT as DEFAULT_PRECISION
from ..precision import PRECISIONS
from ..sampling import batch_seeds, epoch_permutation, sample_subgraph


@dataclass(frozen=True)
class GpuPeaks:
    """A GPU's dense peaks: TFLOP/s by precision (``zerognn.precision.Precision.peak`` names the field) and
    memory bandwidth in TB/s."""

    fp32: float  # FFMA
    tf32: float  # tensor cores, dense (datasheets quote twice this "with sparsity")
    bf16: float  # tensor cores, dense
    tb_s: float


# name (torch.cuda.get_device_name) -> its peaks, from the vendor's datasheets (SXM boards at their boost
# clock; the H100 whitepaper's table for the Hopper tensor-core rates, which the H200 shares).
GPU_PEAKS: dict[str, GpuPeaks] = {
    "NVIDIA H200": GpuPeaks(fp32=66.9, tf32=494.7, bf16=989.4, tb_s=4.8),
    "NVIDIA H100 80GB HBM3": GpuPeaks(fp32=66.9, tf32=494.7, bf16=989.4, tb_s=3.35),
    "NVIDIA A100-SXM4-80GB": GpuPeaks(fp32=19.5, tf32=156.0, bf16=312.0, tb_s=2.039),
    "NVIDIA A100-SXM4-40GB": GpuPeaks(fp32=19.5, tf32=156.0, bf16=312.0, tb_s=1.555),
}

FLOOR_FIELDS = ("floor_ms", "step_over_floor", "floor_gflop", "floor_gbytes")
SIZE_SAMPLES = 8  # timed steps whose batches are sampled for the live sizes


@dataclass(frozen=True)
class StepSizes:
    """Mean live sizes over sampled steps: ``frontiers[h]`` nodes before hop h (0: the seeds), ``edges[h]``."""

    frontiers: tuple[float, ...]
    edges: tuple[float, ...]


def step_sizes(graph: CSRGraph, train_idx: torch.Tensor, batch_size: int, fanouts: list[int], seed: int,
               global_steps: list[int], steps_per_epoch: int, batch_index=lambda step: step) -> StepSizes:
    """Reference-sample the batches of ``global_steps`` (``batch_index`` maps a step to this rank's batch)."""
    frontiers = torch.zeros(len(fanouts) + 1, dtype=torch.float64)
    edges = torch.zeros(len(fanouts), dtype=torch.float64)
    for g in global_steps:
        epoch, step = divmod(g, steps_per_epoch)
        seeds = batch_seeds(epoch_permutation(train_idx, seed, epoch), batch_index(step), batch_size)
        sub = sample_subgraph(graph, seeds, fanouts, seed, epoch, step)
        frontiers += torch.tensor([f.numel() for f in sub.frontiers], dtype=torch.float64)
        edges += torch.tensor([h.num_edges for h in sub.hops], dtype=torch.float64)
    n = max(len(global_steps), 1)
    return StepSizes(tuple((frontiers / n).tolist()), tuple((edges / n).tolist()))


def step_work(model: nn.Module, sizes: StepSizes, activation_bytes: int = 4) -> tuple[float, float]:
    """(dense FLOPs, bytes moved) of one training step of ``model`` over ``sizes``, with feature rows and
    activations of ``activation_bytes`` per element (the precision's; parameters, Adam and ids stay 4).

    The model names its layer widths (``widths``: input, hidden..., output), its GEMMs' weights
    (``lins``), whether those run on a layer's destination or source rows (``dense_rows``) and whether its
    first layer reads the feature rows in place (``fuses_input_gather``) or takes them gathered.
    """
    a = activation_bytes
    layers = len(model.lins)
    projects_sources = model.dense_rows == "src"
    flops = 0.0
    nbytes = sum(4 * 7 * p.numel() for p in model.parameters())  # Adam: p, g, m, v read; p, m, v written
    for h, edges in enumerate(sizes.edges):
        nbytes += 16 * sizes.frontiers[h] + 8 * edges
    if not getattr(model, "fuses_input_gather", False):  # the feature gather: rows read, a copy written
        nbytes += 2 * a * sizes.frontiers[-1] * model.widths[0]
    for i, lin in enumerate(model.lins):
        n_src, n_dst = sizes.frontiers[layers - i], sizes.frontiers[layers - i - 1]
        gemm = 2.0 * (n_src if projects_sources else n_dst) * lin.weight.numel()
        flops += gemm * (2 if i == 0 else 3)
        d_in, d_out = model.widths[i], model.widths[i + 1]
        activations = a * (n_src * d_in + n_dst * d_out)
        if projects_sources:
            activations += 2 * a * n_src * lin.weight.shape[0]
        nbytes += 2 * activations + (a * n_src * d_in if i > 0 else 0)
    return flops, nbytes


def step_memory(model: nn.Module, sizes: StepSizes, activation_bytes: int = 4) -> int:
    """The ideal memory of one training step of ``model`` over ``sizes`` (``ideal_mem_bytes``): the bytes of
    the tensors the step keeps at once at its live sizes, above the resident dataset and parameters — the
    parameters' gradients and Adam's two moments, one id per node of every frontier and per sampled edge,
    GAT's gathered feature rows (its first GEMM's input, saved for its weight gradient; SAGE and GCN,
    ``fuses_input_gather``, read the rows in place through the frontier's ids and need no copy) and every
    layer's output, all alive when the forward pass ends. Every variant computes this step, so none can
    hold less; exact-size allocation of these alone is the ideal. Feature rows and outputs take
    ``activation_bytes`` per element (the precision's)."""
    layers, a = len(model.lins), activation_bytes
    nbytes = 12 * sum(p.numel() for p in model.parameters())
    nbytes += 4 * (sum(sizes.frontiers) + sum(sizes.edges))
    if not getattr(model, "fuses_input_gather", False):
        nbytes += a * sizes.frontiers[-1] * model.widths[0]
    nbytes += sum(a * sizes.frontiers[layers - i - 1] * model.widths[i + 1] for i in range(layers))
    return int(nbytes)


def gpu_peak(gpu_name: str | None, precision: str = DEFAULT_PRECISION) -> tuple[float, float] | None:
    """(FLOP/s at ``precision``, bytes/s) of a known GPU; None for any other name."""
    peaks = GPU_PEAKS.get(gpu_name or "")
    if peaks is None:
        return None
    return getattr(peaks, PRECISIONS[precision].peak) * 1e12, peaks.tb_s * 1e12


def floor_metrics(step_ms_median: float, work: tuple[float, float] | None, gpu_name: str | None,
                  precision: str = DEFAULT_PRECISION) -> dict:
    """The record's floor fields (``FLOOR_FIELDS``) at ``precision``; the time fields are None on an unknown GPU."""
    metrics = dict.fromkeys(FLOOR_FIELDS)
    if work is None:
        return metrics
    flops, nbytes = work
    metrics.update(floor_gflop=flops / 1e9, floor_gbytes=nbytes / 1e9)
    peak = gpu_peak(gpu_name, precision)
    if peak is not None:
        floor_ms = max(flops / peak[0], nbytes / peak[1]) * 1e3
        metrics.update(floor_ms=floor_ms, step_over_floor=step_ms_median / floor_ms)
    return metrics
