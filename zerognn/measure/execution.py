"""How busy the GPU is during a step, against the step's unprofiled time.

The trace of the profiled window gives the GPU's busy time per step (kernels, copies and memsets;
work the trace cannot see, measured apart, is added: for a device-driven loop, whose trace keeps only its
host side, that is all of it). The profiler slows the host far more than the
GPU — a host-bound step by 1.4x on the H200, a replayed graph by a few per cent — so the busy time is
set against the median of the *unprofiled* timed steps, never against the profiled window's wall time;
``profiler_dilation`` keeps the instrument's effect visible. The idle rest of a step is split into gaps
between the activities of one graph launch (the trace shows them) and the remainder, which is time
the GPU waited for the host to launch work (including the launch latency between launches).
"""

from __future__ import annotations

from .trace import TraceMetrics

EXECUTION_FIELDS = ("gpu_busy_ms_per_step", "gpu_untraced_ms_per_step", "gpu_exec_fraction", "profiler_dilation",
                    "gpu_gap_in_graph_ms_per_step", "gpu_wait_host_ms_per_step")


def execution_metrics(step_ms_median: float, trace: TraceMetrics | None,
                      untraced_ms_per_step: float | None = None) -> dict[str, float | None]:
    """The record's GPU execution fields (``EXECUTION_FIELDS``); None where the trace has no GPU work."""
    metrics = dict.fromkeys(EXECUTION_FIELDS)
    metrics["gpu_untraced_ms_per_step"] = untraced_ms_per_step
    if trace is None or step_ms_median <= 0:
        return metrics
    if trace.gpu_busy_ms_per_step is None and untraced_ms_per_step is None:
        return metrics
    busy = (trace.gpu_busy_ms_per_step or 0.0) + (untraced_ms_per_step or 0.0)
    gap = trace.gpu_gap_in_graph_ms_per_step
    metrics.update(
        gpu_busy_ms_per_step=busy,
        gpu_exec_fraction=min(1.0, busy / step_ms_median),
        profiler_dilation=trace.profiled_step_ms / step_ms_median,
        gpu_gap_in_graph_ms_per_step=gap,
        gpu_wait_host_ms_per_step=None if gap is None else max(0.0, step_ms_median - busy - gap),
    )
    return metrics


UNTRACED_CLASS = "device-launched (untraced)"


def gpu_ms_by_class(trace: TraceMetrics | None, untraced_ms_per_step: float | None = None) -> dict[str, float]:
    """The step's GPU time per kernel class from the trace, with the GPU work the trace cannot show
    (``gpu_untraced_ms_per_step``) as a class of its own; {} without a GPU trace."""
    if trace is None:
        return {}
    by_class = dict(trace.gpu_ms_by_class)
    if untraced_ms_per_step:
        by_class[UNTRACED_CLASS] = untraced_ms_per_step
    return by_class
