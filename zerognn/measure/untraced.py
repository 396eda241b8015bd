"""GPU time the profiler's trace cannot show, measured by replaying that work launched from the host.

Kineto records kernels through CUPTI's kernel activity, which reports a CDP2 parent but not the child
it launches from the device (CUPTI keeps those in a separate CDP-kernel record that kineto does not
enable), and the parent's span ends before its tail-launched child starts. A variant whose work the
trace misses says how to run that work again from the host (``UntracedReplay``): the same kernels
with the same exact grids, under the profiler, and their kernel time per step is what the trace
missed. The children run on the same stream between the traced kernels, so the two add.

A device-driven loop (``zerognn-epoch``) is the other case: the profiler reports a loop body's kernels
once per launch, not once per step, so the trace's GPU side is dropped (``TraceMetrics.host_side_only``)
and the replay is the whole body — the step graph the loop runs, launched from the host for the last
steps — timed as the union of all its GPU activity (the graph has a concurrent branch). Such a replay
changes training state, so it comes with ``prepare``: run before the profiled replay, outside it, it sets the
replay up and returns what puts the state back afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from .trace import TraceMetrics, union_length


@dataclass(frozen=True)
class UntracedReplay:
    """``run()`` re-runs the untraced work of some recent steps, launched from the host, and returns
    how many steps it replayed; ``kernels`` names the kernels whose time the trace missed (None: every
    GPU activity of the replay); ``prepare()``, if given, runs first, outside the profiler, and returns what
    undoes the replay's changes once it has run."""

    run: Callable[[], int]
    kernels: frozenset[str] | None
    prepare: Callable[[], Callable[[], None]] | None = None


def untraced_gpu_ms_per_step(replay: UntracedReplay, device: torch.device) -> float:
    """GPU busy time per step (the union of the activities' spans) of ``replay.kernels`` while ``replay.run()``
    executes under the profiler, between ``replay.prepare()`` and what it returned (run whatever happened)."""
    restore = replay.prepare() if replay.prepare is not None else None
    torch.cuda.synchronize(device)
    try:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            steps = replay.run()
            torch.cuda.synchronize(device)
    finally:
        if restore is not None:
            restore()
    spans = [(e.time_range.start, e.time_range.end) for e in prof.events()
             if e.device_type == torch.autograd.DeviceType.CUDA
             and (replay.kernels is None or e.name in replay.kernels)]
    return union_length(spans, float("-inf"), float("inf")) / 1e3 / max(steps, 1)


def untraced_ms(replay: UntracedReplay | None, trace: TraceMetrics | None, device: torch.device) -> float | None:
    """What ``replay`` adds to the trace's GPU time per step; None without a replay or without a trace."""
    if replay is None or trace is None:
        return None
    return untraced_gpu_ms_per_step(replay, device)
