"""GPU time the profiler's trace cannot show, measured by replaying that work launched from the host.

Kineto records kernels through CUPTI's kernel activity, which reports a CDP2 parent but not the child
it launches from the device (CUPTI keeps those in a separate CDP-kernel record that kineto does not
enable), and the parent's span ends before its tail-launched child starts. A variant whose work the
trace misses says how to run that work again from the host (``UntracedReplay``): the same kernels
with the same exact grids, under the profiler, and their kernel time per step is what the trace
missed. The children run on the same stream between the traced kernels, so the two add.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from .trace import TraceMetrics


@dataclass(frozen=True)
class UntracedReplay:
    """``run()`` re-runs the untraced work of some recent steps, launched from the host, and returns
    how many steps it replayed; ``kernels`` names the kernels whose time the trace missed."""

    run: Callable[[], int]
    kernels: frozenset[str]


def untraced_gpu_ms_per_step(replay: UntracedReplay, device: torch.device) -> float:
    """Kernel time per step of ``replay.kernels`` while ``replay.run()`` executes under the profiler."""
    torch.cuda.synchronize(device)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        steps = replay.run()
        torch.cuda.synchronize(device)
    us = sum(e.time_range.elapsed_us() for e in prof.events()
             if e.device_type == torch.autograd.DeviceType.CUDA and e.name in replay.kernels)
    return us / 1e3 / max(steps, 1)


def untraced_ms(replay: UntracedReplay | None, trace: TraceMetrics | None, device: torch.device) -> float | None:
    """What ``replay`` adds to the trace's GPU time per step; None without a replay or without GPU work in the
    trace (nothing to add it to)."""
    if replay is None or trace is None or trace.gpu_busy_ms_per_step is None:
        return None
    return untraced_gpu_ms_per_step(replay, device)
