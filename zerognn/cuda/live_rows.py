"""Dense work over a captured step's live rows: a bucket of rows chosen on the device by a CUDA Graph SWITCH node.

A fixed-envelope step (ZeroGNN) provisions every hop's rows before capture. Our kernels read the live
counts from device memory and skip the rest, but cuBLAS takes its sizes from the host when the graph is
captured, so the dense layers' GEMMs ran over every provisioned row (on products-like at B=1024, about
16 % of the rows of the two large layers). Here a layer's GEMMs are captured once per bucket, a few fixed
row counts up to the capacity (``RowBuckets``), each into one body of a SWITCH node, and
``live_rows_select`` (kernels/live_rows.cu), captured just before the node, sets the node's handle from
the live count: every replay runs the GEMMs of the smallest bucket that holds the live rows, and no other.

Rows past the bucket are not written: they keep whatever the graph's memory held. Every reader of such an
output reads live rows only (the aggregations read rows below their live counts); the weight gradients sum
over the bucket's rows, whose padded part is zero in both operands (the aggregation writes zeros past its
live count, and the scatter backward's gradient is zero there).

Bodies are captured on a stream of their own (``_body_stream``, one per device) into the node's body graphs
(``cudaStreamBeginCaptureToGraph``). PyTorch's allocator does not know those captures, so a body must not
allocate: the ops in it write into buffers allocated before (``out=``), and ``run_over_live_rows`` checks that the
allocator's count of allocations did not move. cuBLAS keeps a workspace per stream, allocated at first use:
outside capture (the eager pass before it) ``run_over_live_rows`` runs the body at the capacity, on that same
stream, which allocates it; that pass computes over every row, as the step did before.

A graph whose dense work runs here cannot be a child graph (CUDA forbids conditional nodes there): a step
that a device-side loop clones into its body keeps its GEMMs at the capacity (``zerognn.fixed_launch``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ..errors import ZeroGNNError
from .graph_api import check, runtime
from .launch import launch

BUCKETS = 8  # per layer: the SWITCH node's bodies
LAUNCH_COVER_CYCLES = 1_000_000  # GPU clocks of sleep ahead of timed work: ~0.5 ms, longer than its launch


@dataclass(frozen=True)
class RowBuckets:
    """Row counts a layer's dense work may run at: ``edges`` = first, first + step, ... (``count - 1`` of them,
    capped at the capacity) and the capacity itself, the last."""

    capacity: int
    first: int
    step: int
    count: int
    typical: int  # the live rows to expect (e.g. the largest calibration saw): what a switch is judged by

    @classmethod
    def between(cls, low: int, capacity: int, count: int = BUCKETS, typical: int | None = None) -> RowBuckets:
        """``count`` buckets evenly spaced from ``low`` rows (the first edge) to ``capacity``; ``typical``
        defaults to ``low``."""
        capacity = int(capacity)
        low = max(1, min(int(low), capacity))
        typical = min(capacity, int(low if typical is None else typical))
        if count < 2 or low >= capacity:
            return cls(capacity, capacity, 1, 1, typical)
        return cls(capacity, low, -(-(capacity - low) // (count - 1)), int(count), typical)

    @property
    def edges(self) -> tuple[int, ...]:
        return tuple(min(self.capacity, self.first + b * self.step) for b in range(self.count - 1)) + (self.capacity,)

    def bucket(self, live: int) -> int:
        """The bucket ``live`` rows take: what ``live_rows_select`` computes on the device."""
        b = 0 if live <= self.first else -(-(live - self.first) // self.step)
        return min(b, self.count - 1)


@dataclass(frozen=True)
class LiveRows:
    """A tensor's rows: ``buckets`` on the host, the live count (int32 [1]) on the device."""

    count: torch.Tensor
    buckets: RowBuckets


_ATTRIBUTE = "_zerognn_live_rows"


def attach(t: torch.Tensor, rows: LiveRows) -> torch.Tensor:
    """Mark ``t`` (rows first, ``rows.buckets.capacity`` of them) as having ``rows`` live; returns ``t``."""
    if t.shape[0] != rows.buckets.capacity:
        raise ValueError(f"a tensor of {t.shape[0]} rows cannot take buckets up to {rows.buckets.capacity} rows")
    setattr(t, _ATTRIBUTE, rows)
    return t


def take(t: torch.Tensor) -> LiveRows | None:
    """The live rows attached to this very tensor, or None."""
    return getattr(t, _ATTRIBUTE, None)


_streams: dict[int, torch.cuda.Stream] = {}


def _body_stream(device: torch.device) -> torch.cuda.Stream:
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index not in _streams:
        _streams[index] = torch.cuda.Stream(index)
    return _streams[index]


def _allocations(device: torch.device) -> int:
    return torch.cuda.memory_stats(device).get("allocation.all.allocated", 0)


_switch_costs: dict[int, float] = {}


def switch_cost_us(device: torch.device) -> float:
    """What one switch adds to a step's GPU time on this device, measured once per process: a graph of
    ``BUCKETS``-way switches around a small GEMM (the live count at the capacity) against a graph of the
    GEMMs alone (select kernel, condition, the body's launch and return). Not while a stream captures."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index in _switch_costs:
        return _switch_costs[index]
    from .capture import capturing

    nodes, replays, size = 8, 20, 64
    a, b = torch.randn(size, size, device=device), torch.randn(size, size, device=device)
    out = torch.empty(size, size, device=device)
    count = torch.full((1,), size, dtype=torch.int32, device=device)
    rows = LiveRows(count, RowBuckets.between(size // BUCKETS, size))
    # cuBLAS keeps a workspace per (thread, stream), for the rest of the process: the graphs are captured on the
    # current stream and the bodies on the body stream, which the step's own GEMMs use anyway, so the
    # measurement leaves no workspace of its own behind
    current, child = torch.cuda.current_stream(device), _body_stream(device)
    torch.mm(a, b, out=out)
    child.wait_stream(current)
    with torch.cuda.stream(child):
        torch.mm(a, b, out=out)
    current.wait_stream(child)
    times = []
    for switched in (False, True):
        graph = torch.cuda.CUDAGraph()
        with capturing(graph, current):
            for _ in range(nodes):
                if switched:
                    _switch(rows, lambda n: torch.mm(a[:n], b, out=out[:n]))
                else:
                    torch.mm(a, b, out=out)
        graph.replay()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(LAUNCH_COVER_CYCLES)  # the replays queue up behind it: GPU time, not launch time
        start.record()
        for _ in range(replays):
            graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000 / replays)
    _switch_costs[index] = max(0.0, (times[1] - times[0]) / nodes)
    return _switch_costs[index]


# GPU time (µs) a layer's dense work saves at its typical bucket over every row, by the caller's key, from a
# pass outside capture
_savings: dict[tuple, float] = {}


def _time_us(body: Callable[[int], None], rows: int) -> float:
    """GPU time of ``body(rows)`` on the current stream, the host waiting for it."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(LAUNCH_COVER_CYCLES)  # the GPU waits while the host queues: the events time the GPU's work
    start.record()
    body(rows)
    end.record()
    end.synchronize()  # a pass before capture: the host may wait (and may not query during capture)
    return start.elapsed_time(end) * 1000


def _pays(rows: LiveRows, key: tuple) -> bool:
    """Whether a switch saves more than it costs: the work's time at the capacity less its time at a typical
    live count's bucket (both timed in a pass outside capture), against ``switch_cost_us``. Untimed work
    switches."""
    saved = _savings.get(key)
    return saved is None or saved > _switch_costs.get(rows.count.device.index or 0, 0.0)


def run_over_live_rows(rows: LiveRows, body: Callable[[int], None], key: tuple | None = None) -> None:
    """Run ``body(n)``, a layer's dense work over its first ``n`` rows, at the bucket the live rows take.

    While the current stream captures a graph: a SWITCH node after the work captured so far, ``body``
    captured once per bucket into the node's bodies; the stream continues after the node. Work (named by
    ``key``) whose switch would cost more than it saves (``_pays``) is captured at the capacity instead.
    Otherwise: ``body(capacity)`` on the body stream (ordered after the current stream, which waits for it),
    and, with a ``key`` seen for the first time, timed there at the capacity and at a typical live count's
    bucket, waited for: what ``_pays`` judges by."""
    buckets, device = rows.buckets, rows.count.device
    if buckets.count == 1:
        body(buckets.capacity)
        return
    current = torch.cuda.current_stream(device)
    if not torch.cuda.is_current_stream_capturing():
        if key is not None:
            switch_cost_us(device)
        child = _body_stream(device)
        child.wait_stream(current)
        with torch.cuda.stream(child):
            body(buckets.capacity)
            if key is not None and key not in _savings:
                typical = buckets.edges[buckets.bucket(buckets.typical)]
                body(typical)  # warm
                saved = _time_us(body, buckets.capacity) - _time_us(body, typical)
                body(buckets.capacity)  # the pass's outputs over every row, as without the timing
                _savings[key] = saved
        current.wait_stream(child)
        return
    if key is not None and not _pays(rows, key):
        body(buckets.capacity)
        return
    _switch(rows, body)


def _switch(rows: LiveRows, body: Callable[[int], None]) -> None:
    """Capture a SWITCH node over ``rows``' buckets, ``body`` in each (the current stream is capturing)."""
    buckets, device = rows.buckets, rows.count.device
    current, child = torch.cuda.current_stream(device), _body_stream(device)
    rt = runtime()
    stream, body_stream = rt.cudaStream_t(current.cuda_stream), rt.cudaStream_t(child.cuda_stream)
    if check(rt.cudaStreamIsCapturing(body_stream)) != rt.cudaStreamCaptureStatus.cudaStreamCaptureStatusNone:
        raise ZeroGNNError("the live-row body stream is still capturing: an earlier capture into a conditional "
                           "body did not end")
    _, _, graph, _, _, _ = check(rt.cudaStreamGetCaptureInfo(stream))
    handle = check(rt.cudaGraphConditionalHandleCreate(
        graph, buckets.count - 1, rt.cudaGraphConditionalHandleFlags.cudaGraphCondAssignDefault))
    launch("live_rows_select", 1, np.uint64(int(handle)), rows.count, np.int32(buckets.first),
           np.int32(buckets.step), np.int32(buckets.count), threads=1)
    _, _, graph, dependencies, edges, count = check(rt.cudaStreamGetCaptureInfo(stream))
    params = rt.cudaGraphNodeParams()
    params.type = rt.cudaGraphNodeType.cudaGraphNodeTypeConditional
    params.conditional.handle = handle
    params.conditional.type = rt.cudaGraphConditionalNodeType.cudaGraphCondTypeSwitch
    params.conditional.size = buckets.count
    node = check(rt.cudaGraphAddNode(graph, dependencies, edges, count, params))
    check(rt.cudaStreamUpdateCaptureDependencies(
        stream, [node], None, 1, rt.cudaStreamUpdateCaptureDependenciesFlags.cudaStreamSetCaptureDependencies))
    for graph_of_body, edge in zip(params.conditional.phGraph_out, buckets.edges):
        allocated = _allocations(device)
        check(rt.cudaStreamBeginCaptureToGraph(body_stream, graph_of_body, None, None, 0,
                                               rt.cudaStreamCaptureMode.cudaStreamCaptureModeRelaxed))
        try:
            with torch.cuda.stream(child):
                body(edge)
        finally:
            check(rt.cudaStreamEndCapture(body_stream))
        if _allocations(device) != allocated:
            raise ZeroGNNError(f"dense work over {edge} live rows allocated memory inside a CUDA Graph conditional "
                               f"body, which PyTorch's allocator does not track; give it preallocated outputs (out=)")
