"""A calibrated envelope's capacities fitted to the dense layers' GEMM waves.

A GEMM runs as waves of thread blocks, as many at once as the GPU holds, so its time moves in steps as its
row count grows, not in proportion (``scripts/gemm_rows_sweep.py`` measures it: on an H200 the second SAGE
layer's forward at B=1024 took the same time from 5,200 to 8,233 rows and half as long again from 8,545). A
fixed envelope runs its GEMMs over every provisioned row, so a capacity just past such a step pays a whole
wave on every step for rows that are padding in almost every batch.

``fit`` keeps the calibrated envelope's safety but no more than it needs: for each frontier that dense layers
run their GEMMs over, it times those layers' forward and backward (``zerognn.models.dense.linear``, at the
run's precision and determinism) at ``CANDIDATES`` row counts from the largest calibration frontier plus
``MIN_MARGIN`` up to the calibrated capacity, and provisions the largest row count whose time is within
``TIE`` (3 %) of the fastest (each row count timed in ``PASSES`` passes, ascending then descending, and its
fastest kept: a one-off stall of the GPU in one pass does not decide). Every calibration batch still fits
with at least ``MIN_MARGIN`` to spare; a batch that does not raises the overflow record like any other (the
step is rolled back, the envelope grown and the step captured again: ``zerognn.fixed_launch.step_graph``),
which the record counts. The envelope's record keeps each fitted frontier's times (``wave_fit``).

cuBLAS keeps a workspace per stream for the rest of the process, so the timing runs on the stream the step
will run on (``stream``): a stream of its own would leave a workspace that the step never uses in the run's
memory (on an H200 it raised the peak by 57 MiB at B=1024 and 61 MiB at B=256).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import torch
from torch import nn

from ..measure.timing import queued_gpu_time_us
from ..models.dense import linear
from .envelope import Envelope

MIN_MARGIN = 0.05  # headroom over the largest calibration frontier that a fitted capacity always keeps
CANDIDATES = 16  # row counts timed per frontier
# Times within 3 % of the fastest count as equal, and the largest such row count is provisioned: a wave step
# costs the layers a fifth of their time or more, while the part of the work that grows with every row (the
# weight gradient's sum over rows) adds a few percent across a band of equal waves, which buys no headroom back
TIE = 0.03
CALLS, REPEATS = 3, 3  # per row count: GPU time, queued behind a sleep (zerognn.measure.timing)
PASSES = 2  # timings of each row count, in passes of alternating order; the fastest counts


def dense_layers(model: nn.Module) -> dict[int, list[tuple[int, nn.Linear]]]:
    """Frontier -> the (layer index, linear) pairs whose GEMMs run over its rows: the destinations of a
    model that aggregates first (``dense_rows = "dst"``), the sources of one that projects first."""
    layers = len(model.lins)
    sources = getattr(model, "dense_rows", "dst") == "src"
    rows: dict[int, list[tuple[int, nn.Linear]]] = {}
    for i, lin in enumerate(model.lins):
        rows.setdefault(layers - i if sources else layers - i - 1, []).append((i, lin))
    return rows


def candidates(low: int, high: int, count: int = CANDIDATES) -> list[int]:
    """``count`` row counts from ``low`` to ``high`` (both included, ascending); just ``high`` if low >= high."""
    if low >= high:
        return [high]
    step = (high - low) / (count - 1)
    return sorted({min(high, low + round(k * step)) for k in range(count)} | {high})


def choose(times: dict[int, float]) -> int:
    """The largest row count whose time is within ``TIE`` of the fastest."""
    fastest = min(times.values())
    return max(rows for rows, t in times.items() if t <= fastest * (1 + TIE))


def _dense_step(layers: list[tuple[int, nn.Linear]], last: int, rows: int, device) -> Callable[[], None]:
    """The forward and backward of ``layers``' dense GEMMs over ``rows`` rows, on stand-in tensors (constant
    values: no random stream is drawn, and the model's parameters get no gradient). The output's gradient is
    the output itself (its values do not change a GEMM's time, and no buffer of its size is added)."""
    work = []
    for i, lin in layers:
        n, k = lin.weight.shape
        x = torch.full((rows, k), 0.01, device=device, requires_grad=i > 0)  # the first layer's input takes none
        w = torch.full((n, k), 0.01, device=device, requires_grad=True)
        b = None if lin.bias is None else torch.zeros(n, device=device, requires_grad=True)
        work.append((x, w, b, i != last))

    def step() -> None:  # gradients returned, not accumulated: no add kernel of the stand-ins' own
        for x, w, b, relu in work:
            y = linear(x, w, b, relu)
            torch.autograd.grad(y, [t for t in (x, w, b) if t is not None and t.requires_grad], y.detach())
    return step


def _timed(time_us: Callable[[int], float], rows: list[int]) -> dict[int, float]:
    """Each row count's fastest of ``PASSES`` timings, the passes in alternating order."""
    times: dict[int, float] = {}
    for p in range(PASSES):
        for r in rows if p % 2 == 0 else rows[::-1]:
            times[r] = min(times.get(r, float("inf")), time_us(r))
    return times



def fit(envelope: Envelope, model: nn.Module, device: torch.device,
        time_us: Callable[[list[tuple[int, nn.Linear]], int], float] | None = None,
        stream: torch.cuda.Stream | None = None) -> Envelope:
    """``envelope`` (calibrated: its record holds ``calibration_max``) with each frontier that dense layers run
    over provisioned at its fitted row count. ``time_us(layers, rows)`` times those layers' dense work; by
    default on ``device``, a GPU (elsewhere the envelope comes back unchanged), on ``stream`` (the step's)."""
    largest = envelope.calibration.get("calibration_max")
    if largest is None or (time_us is None and device.type != "cuda"):
        return envelope
    if time_us is None:
        def time_us(layers, rows):
            with torch.cuda.stream(stream):  # None: the current stream
                return queued_gpu_time_us(_dense_step(layers, len(model.lins) - 1, rows, device), CALLS, REPEATS)
    caps, fitted = list(envelope.frontier_capacity), []
    for frontier, layers in sorted(dense_layers(model).items()):
        if frontier == 0 or frontier >= len(caps):
            continue  # the seeds: always the batch
        high = caps[frontier]
        low = min(high, max(caps[frontier - 1], math.ceil(largest[frontier - 1] * (1 + MIN_MARGIN))))
        times = _timed(lambda rows: time_us(layers, rows), candidates(low, high))
        caps[frontier] = choose(times)
        fitted.append({"hop": frontier, "calibrated": high, "provisioned": caps[frontier],
                       "calibrated_us": round(times[high], 2), "provisioned_us": round(times[caps[frontier]], 2)})
    for h in range(1, len(caps)):  # capacities never shrink from hop to hop
        caps[h] = max(caps[h], caps[h - 1])
    if device.type == "cuda":
        torch.cuda.empty_cache()  # the stand-ins' blocks: not the step's
    return replace(envelope, frontier_capacity=tuple(caps),
                   calibration={**envelope.calibration, "min_margin": MIN_MARGIN, "wave_fit": fitted})
