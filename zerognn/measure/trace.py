"""Profile one steady-state window with torch.profiler and analyse its Chrome trace.

The training loop marks the window, each step and each phase with ``record_function`` ranges (names
below). From the exported trace we compute the GPU's busy time per step (the union of GPU activity in
the window), the idle gaps between activities of one graph launch, host synchronisations and host
launches per step (runtime/driver API calls that start inside a step range, on any host thread), and
host-side time per phase. The profiler slows the host far more than the GPU, so nothing here is a
fraction of the window's wall time: ``zerognn.measure.execution`` relates the busy time to the
unprofiled step time.

Event categories are the ones kineto writes (libkineto ``ActivityType`` names, as in
``torch/profiler/_chrome_trace_export.py``): GPU work is ``kernel`` (also kernels replayed from a CUDA
Graph and CDP child kernels), ``gpu_memcpy`` and ``gpu_memset``; API calls are ``cuda_runtime`` and
``cuda_driver``; ``record_function`` ranges are ``user_annotation``. Kineto also copies each range onto
the GPU timeline as ``gpu_user_annotation``, which is ignored here. GPU activities are also counted
(per step): every kernel, copy and memset is a dependent node the GPU must start, so their number
bounds how close a step can come to its busy time.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import gzip
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from ..atomic import atomic_path
from ..errors import ZeroGNNError
from .profiler_noise import quiet_profiler
from .timing import Steps

WINDOW = "zerognn/window"
WINDOW_SYNC = "zerognn/window_sync"
STEP = "zerognn/step"
PHASE_PREFIX = "zerognn/phase/"
# Steps run under the profiler before the window opens: the first launches of a fresh CUPTI session
# pay one-off costs, which would otherwise count as idle GPU time of the steady state (on the H200 a
# 5-step window of a replayed graph held ~3 ms more wall time than its kernels and launch gaps).
PROFILER_LEAD_IN_STEPS = 1

ANNOTATION_CATEGORY = "user_annotation"
GPU_ACTIVITY_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
API_CATEGORIES = frozenset({"cuda_runtime", "cuda_driver"})

# API calls that block the host thread until the GPU has caught up. Polls (cudaStreamQuery,
# cudaEventQuery) and ...Async copies return at once, so they are not syncs. Names are compared after
# dropping CUPTI's version and per-thread-stream suffixes (cuMemcpyDtoH_v2, cudaMemcpy_ptds).
HOST_SYNC_CALLS = frozenset({
    "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
    "cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize",
})
# Blocking copies: every cudaMemcpy* / cuMemcpyDtoH* / cuMemcpyHtoD* whose name lacks "Async".
HOST_SYNC_COPY_PREFIXES = ("cudaMemcpy", "cuMemcpyDtoH", "cuMemcpyHtoD")

# API calls that enqueue GPU work: kernel launches (runtime and driver), whole-graph launches (one
# call replays a captured CUDA Graph) and copies/memsets, blocking or not.
HOST_LAUNCH_CALLS = frozenset({
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel",
    "cudaLaunchCooperativeKernelMultiDevice", "cuLaunchKernel", "cuLaunchKernelEx",
    "cuLaunchCooperativeKernel", "cudaGraphLaunch", "cuGraphLaunch",
})
HOST_LAUNCH_PREFIXES = ("cudaMemcpy", "cudaMemset", "cuMemcpy", "cuMemset")
# Launches that replay a whole captured graph: GPU activity carrying one of their correlation ids
# (CUPTI gives a graph's kernels, copies and memsets the id of the launch that replayed them) belongs
# to that replay, so an idle gap between two such activities is a gap inside the graph.
GRAPH_LAUNCH_CALLS = frozenset({"cudaGraphLaunch", "cuGraphLaunch"})

_API_SUFFIX = re.compile(r"(_v\d+|_ptsz|_ptds)+$")

# GPU activity classes for the breakdown of a step's GPU time, by what the kernel's name contains (the
# first class that matches). The suite's own kernels and cuBLAS are named; PyTorch's generic kernels
# (elementwise, fills, reductions, scatters) and copies and memsets fall into "other". SAGE's and GCN's
# feature rows are read by their first aggregation (through the frontier's ids), so in the CUDA variants
# their gather class holds the labels' gather alone; GAT's features are gathered first (gather_rows).
KERNEL_CLASSES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("sampling", ("sample_neighbors", "dedupe_neighbors", "relabel_nodes", "relabel_neighbors")),
    ("gather", ("gather_rows", "gather_labels")),
    ("aggregation", ("sage_concat", "gcn_aggregate", "gat_attention", "ell_transpose")),
    ("dense", ("gemm", "gemv", "cutlass", "cublas", "splitKreduce", "dot_kernel", "reduce_1Block_kernel",
               "dense_column_sums", "dense_chunk_sums")),
    ("loss", ("cross_entropy", "nll_loss", "softmax")),
    ("optimizer", ("multi_tensor_apply", "fused_adam")),
    ("step control", ("step_begin", "step_end", "loop_begin", "loop_continue")),
)
OTHER_CLASS = "other"


def kernel_class(name: str) -> str:
    """The ``KERNEL_CLASSES`` class of a GPU activity's name, else ``OTHER_CLASS``."""
    for cls, needles in KERNEL_CLASSES:
        if any(n in name for n in needles):
            return cls
    return OTHER_CLASS


@dataclass(frozen=True)
class TraceMetrics:
    """What one profiled window says; ``None`` where the trace holds no events of the needed kind."""

    n_steps: int
    window_us: float
    window_ms: float
    gpu_busy_ms_per_step: float | None
    # kernels, copies and memsets that start in the window, per step; None without GPU activity
    gpu_activities_per_step: float | None
    # GPU time per step of each KERNEL_CLASSES class (activities that start in the window); {} without
    gpu_ms_by_class: dict[str, float]
    # idle time between consecutive GPU activities of one graph launch; None without correlation ids
    gpu_gap_in_graph_ms_per_step: float | None
    host_syncs_per_step: float | None
    host_launches_per_step: float | None
    phase_ms: dict[str, float]

    @property
    def profiled_step_ms(self) -> float:
        """The window's wall time per step (profiler included)."""
        return self.window_ms / self.n_steps

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


    def host_side_only(self) -> TraceMetrics:
        """These metrics with the GPU side's unknown: for a variant whose GPU work the trace shows once per
        launch rather than once per step (a loop body in a conditional graph node)."""
        return dataclasses.replace(self, gpu_busy_ms_per_step=None, gpu_activities_per_step=None,
                                   gpu_ms_by_class={}, gpu_gap_in_graph_ms_per_step=None)


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """Mark a step phase (sample, gather, forward, backward, optimizer) for the profiler's breakdown
    (``phase_ms``: host-side time per phase)."""
    with torch.profiler.record_function(f"{PHASE_PREFIX}{name}"):
        yield


def api_name(name: str) -> str:
    """A runtime/driver API name without CUPTI's ``_v2``/``_ptsz``/``_ptds`` suffixes."""
    return _API_SUFFIX.sub("", name)


def is_host_sync(name: str) -> bool:
    name = api_name(name)
    return name in HOST_SYNC_CALLS or (name.startswith(HOST_SYNC_COPY_PREFIXES) and "Async" not in name)


def is_host_launch(name: str) -> bool:
    name = api_name(name)
    return name in HOST_LAUNCH_CALLS or name.startswith(HOST_LAUNCH_PREFIXES)


def load_chrome_trace(path: str | os.PathLike) -> dict[str, Any]:
    """Read a Chrome trace written by ``export_chrome_trace``, plain or gzipped."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            gzipped = f.read(2) == b"\x1f\x8b"
        with (gzip.open(path, "rt") if gzipped else path.open()) as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        raise ZeroGNNError(
            f"cannot read profiler trace {path}: {e}. Re-run the profiled run to write it again."
        ) from e
    # The Chrome trace format also allows a bare array of events.
    return {"traceEvents": trace} if isinstance(trace, list) else trace


def analyze_chrome_trace(trace: dict[str, Any] | str | os.PathLike, n_steps: int) -> TraceMetrics:
    """Compute :class:`TraceMetrics` from a trace (dict or file) of a window of ``n_steps`` steps."""
    if n_steps < 1:
        raise ZeroGNNError(f"n_steps must be at least 1 to analyse a trace, got {n_steps}.")
    events, annotations, (start, end) = _windowed(trace)
    steps = sorted(_interval(e) for e in annotations if e["name"] == STEP and start <= _start(e) < end)
    if len(steps) != n_steps:
        raise ZeroGNNError(
            f"the trace's {WINDOW} range holds {len(steps)} '{STEP}' ranges but n_steps={n_steps}; "
            f"wrap each step in record_function('{STEP}') (profile_window does) and pass the same count."
        )

    gpu_events = [e for e in events if e.get("cat") in GPU_ACTIVITY_CATEGORIES]
    api_events = [e for e in events if e.get("cat") in API_CATEGORIES]
    api = [e for e in api_events if _inside(_start(e), steps)]
    window_us = end - start
    busy_us = union_length([_interval(e) for e in gpu_events], start, end) if gpu_events else None
    graph_launches = {_correlation(e) for e in api_events if api_name(e["name"]) in GRAPH_LAUNCH_CALLS} - {None}
    has_correlation = any(_correlation(e) is not None for e in gpu_events)
    gap_us = _gaps_inside_launches(gpu_events, graph_launches, start, end) if has_correlation else None

    class_us: dict[str, float] = {}
    for e in gpu_events:
        if start <= _start(e) < end:
            cls = kernel_class(e["name"])
            class_us[cls] = class_us.get(cls, 0.0) + float(e.get("dur", 0.0))

    phase_us: dict[str, float] = {}
    for e in annotations:
        if e["name"].startswith(PHASE_PREFIX) and start <= _start(e) < end:
            phase = e["name"][len(PHASE_PREFIX):]
            phase_us[phase] = phase_us.get(phase, 0.0) + float(e.get("dur", 0.0))

    return TraceMetrics(
        n_steps=n_steps,
        window_us=window_us,
        window_ms=window_us / 1e3,
        gpu_busy_ms_per_step=None if busy_us is None else busy_us / 1e3 / n_steps,
        gpu_activities_per_step=sum(start <= _start(e) < end for e in gpu_events) / n_steps if gpu_events else None,
        gpu_ms_by_class={cls: us / 1e3 / n_steps for cls, us in sorted(class_us.items())},
        gpu_gap_in_graph_ms_per_step=None if gap_us is None else gap_us / 1e3 / n_steps,
        host_syncs_per_step=sum(is_host_sync(e["name"]) for e in api) / n_steps if api_events else None,
        host_launches_per_step=sum(is_host_launch(e["name"]) for e in api) / n_steps if api_events else None,
        phase_ms={name: us / 1e3 / n_steps for name, us in sorted(phase_us.items())},
    )


def window_gpu_activities(trace: dict[str, Any] | str | os.PathLike) -> tuple[list[dict[str, Any]], int]:
    """The GPU activities that start inside a trace's window, in time order, and the window's step count.

    The exported trace also holds the lead-in step (``PROFILER_LEAD_IN_STEPS``), run before the window:
    per-step figures read from the whole trace would count it as one more step's work.
    """
    events, annotations, (start, end) = _windowed(trace)
    n_steps = sum(e["name"] == STEP and start <= _start(e) < end for e in annotations)
    inside = [e for e in events if e.get("cat") in GPU_ACTIVITY_CATEGORIES and start <= _start(e) < end]
    return sorted(inside, key=_start), n_steps


def profile_window(
    step_fn: Callable[[int], object],
    n_steps: int,
    device: torch.device | str,
    trace_path: str | os.PathLike | None = None,
) -> TraceMetrics:
    """Run ``step_fn(i)`` for i in 0..lead-in + n_steps - 1 under torch.profiler; analyse the last n_steps.

    The first ``PROFILER_LEAD_IN_STEPS`` calls run (and are synchronised) before the window. Each
    call in the window is wrapped in a ``zerognn/step`` range inside one ``zerognn/window`` range; on CUDA the
    window ends with a device synchronise (its own ``zerognn/window_sync`` range) so queued GPU work is
    inside the window. With ``trace_path`` the trace is also kept there as gzipped JSON.
    """
    cuda = torch.device(device).type == "cuda"
    activities = [torch.profiler.ProfilerActivity.CPU]
    if cuda:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
        # Work queued before the window (warm-up) must not run inside it and inflate the GPU fraction.
        torch.cuda.synchronize(device)
    with tempfile.TemporaryDirectory(prefix="zerognn-trace-") as tmp:
        raw = Path(tmp) / "trace.json"
        with quiet_profiler(), torch.profiler.profile(activities=activities) as prof:
            for i in range(PROFILER_LEAD_IN_STEPS):
                step_fn(i)
            if cuda:
                torch.cuda.synchronize(device)
            with torch.profiler.record_function(WINDOW):
                for i in range(PROFILER_LEAD_IN_STEPS, PROFILER_LEAD_IN_STEPS + n_steps):
                    with torch.profiler.record_function(STEP):
                        step_fn(i)
                with torch.profiler.record_function(WINDOW_SYNC):
                    if cuda:
                        torch.cuda.synchronize(device)
        prof.export_chrome_trace(str(raw))
        if trace_path is not None:
            with atomic_path(trace_path) as out, raw.open("rb") as src, gzip.open(out, "wb") as dst:
                shutil.copyfileobj(src, dst)
        return analyze_chrome_trace(raw, n_steps)


def profile_steps(steps: Steps, first: int, n_steps: int, device: torch.device | str,
                  trace_path: str | os.PathLike | None = None) -> TraceMetrics:
    """The lead-in step and ``n_steps`` steps from global step ``first`` under the profiler (``profile_window``).

    A device-driven variant gets the window's steps as one block, as in steady state. CUPTI reports the
    body of a conditional graph node once per graph launch, not once per loop iteration, so its trace
    shows one step of GPU work for a whole block: its GPU-side metrics are left unknown rather than read
    from it; its host-side ones (syncs, launches) are what the trace sees.
    """
    def one_by_one(i: int) -> None:
        steps.run_steps(first + i, 1)

    def in_one_block(i: int) -> None:
        if i < PROFILER_LEAD_IN_STEPS:
            steps.run_steps(first + i, 1)
        elif i == PROFILER_LEAD_IN_STEPS:
            steps.run_steps(first + i, n_steps)

    metrics = profile_window(in_one_block if steps.device_driven else one_by_one, n_steps, device, trace_path)
    return metrics.host_side_only() if steps.device_driven else metrics


def _start(event: dict[str, Any]) -> float:
    return float(event["ts"])


def _interval(event: dict[str, Any]) -> tuple[float, float]:
    start = _start(event)
    return start, start + float(event.get("dur", 0.0))


def _windowed(trace: dict[str, Any] | str | os.PathLike
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], tuple[float, float]]:
    """A trace's complete events, its annotations among them, and its window's span."""
    if not isinstance(trace, dict):
        trace = load_chrome_trace(trace)
    events = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X"]
    annotations = [e for e in events if e.get("cat") == ANNOTATION_CATEGORY]
    return events, annotations, _window(annotations)


def _window(annotations: list[dict[str, Any]]) -> tuple[float, float]:
    windows = [_interval(e) for e in annotations if e["name"] == WINDOW]
    if len(windows) != 1:
        raise ZeroGNNError(
            f"expected exactly one '{WINDOW}' range in the trace, found {len(windows)}; record the "
            f"window with profile_window (or one record_function('{WINDOW}') around the steps)."
        )
    start, end = windows[0]
    for sync_start, sync_end in (_interval(e) for e in annotations if e["name"] == WINDOW_SYNC):
        if start <= sync_start:
            end = max(end, sync_end)
    return start, end


def _correlation(event: dict[str, Any]) -> int | None:
    return event.get("args", {}).get("correlation")


def _gaps_inside_launches(gpu_events: list[dict[str, Any]], launches: set[int], lo: float,
                          hi: float) -> float:
    """Idle time in [lo, hi] between busy stretches of GPU activity where the activity that ends one
    stretch and the one that starts the next came from the same launch in ``launches``."""
    total, last_end, last_launch = 0.0, None, None
    for e in sorted(gpu_events, key=_start):
        s, t = _interval(e)
        s, t = max(s, lo), min(t, hi)
        if t <= s:
            continue
        launch = _correlation(e)
        if last_end is not None and s > last_end:
            if launch == last_launch and launch in launches:
                total += s - last_end
        if last_end is None or t >= last_end:
            last_end, last_launch = t, launch
    return total


def _inside(t: float, ranges: list[tuple[float, float]]) -> bool:
    """Whether ``t`` falls in one of the sorted, disjoint ``ranges`` (half-open)."""
    i = bisect.bisect_right(ranges, (t, float("inf"))) - 1
    return i >= 0 and ranges[i][0] <= t < ranges[i][1]


def union_length(intervals: Iterable[tuple[float, float]], lo: float, hi: float) -> float:
    """Length of the union of ``intervals`` clipped to [lo, hi]."""
    total, cur_start, cur_end = 0.0, None, None
    for s, e in sorted((max(s, lo), min(e, hi)) for s, e in intervals):
        if e <= s:
            continue
        if cur_end is None or s > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = s, e
        else:
            cur_end = max(cur_end, e)
    if cur_end is not None:
        total += cur_end - cur_start
    return total
