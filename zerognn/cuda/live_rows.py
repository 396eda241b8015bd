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
from dataclasses import dataclass, field

import numpy as np
import torch

from ..errors import ZeroGNNError
from .graph_api import check, runtime
from .launch import launch

BUCKETS = 8  # per layer: the SWITCH node's bodies
LAUNCH_COVER_CYCLES = 1_000_000  # GPU clocks of sleep ahead of timed work: ~0.5 ms, longer than its launch


@dataclass
class Judge:
    """The verdicts on one captured step's dense work (``_judge``), by the work's key, for its run record."""

    verdicts: dict[tuple, dict] = field(default_factory=dict)

    def record(self) -> dict:
        """What a run record shows: every verdict, and the CUDA Graphs reaching them captured (setup work)."""
        return {"verdicts": [dict(v) for v in self.verdicts.values()], "graphs_captured": 2 * len(self.verdicts)}


@dataclass(frozen=True)
class RowBuckets:
    """Row counts a layer's dense work may run at: ``edges`` = first, first + step, ... (``count - 1`` of them,
    capped at the capacity) and the capacity itself, the last. ``judge`` keeps the verdicts on work over them;
    without one, keyed or not, work always switches."""

    capacity: int
    first: int
    step: int
    count: int
    judge: Judge | None = field(default=None, compare=False, repr=False)

    @classmethod
    def between(cls, low: int, capacity: int, count: int = BUCKETS, judge: Judge | None = None) -> RowBuckets:
        """``count`` buckets evenly spaced from ``low`` rows (the first edge) to ``capacity``."""
        capacity = int(capacity)
        low = max(1, min(int(low), capacity))
        if count < 2 or low >= capacity:
            return cls(capacity, capacity, 1, 1, judge)
        return cls(capacity, low, -(-(capacity - low) // (count - 1)), int(count), judge)

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


COPIES, REPLAYS = 4, 10  # a verdict's graphs: copies of the work in each, replays timed
# Per switch. In a step a switch left the GPU idle ~4-6 us longer than in the verdict's graphs, where switches
# follow each other (products-like SAGE on an H200: 13-15 us a switch in the step's trace against ~9.4 us back
# to back), and at B=256 switches the graphs found 2-4 us faster made the step slower (0.432 -> 0.445 ms)
MIN_SAVING_US = 6.0


def _replay_us(build: Callable[[], None], stream: torch.cuda.Stream) -> float:
    """GPU time per ``COPIES``: a graph of what ``build`` launches, captured on ``stream`` and replayed."""
    from .capture import capturing

    graph = torch.cuda.CUDAGraph()
    with capturing(graph, stream):
        build()
    with torch.cuda.stream(stream):
        graph.replay()  # warm
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(LAUNCH_COVER_CYCLES)  # the replays queue up behind it: GPU time, not launch time
        start.record()
        for _ in range(REPLAYS):
            graph.replay()
        end.record()
    end.synchronize()  # a pass before capture: the host may wait (and may not query during capture)
    return start.elapsed_time(end) * 1000 / (REPLAYS * COPIES)


def _judge(rows: LiveRows, body: Callable[[int], None], key: tuple, stream: torch.cuda.Stream) -> None:
    """Time the work as the step would run it, both ways: graphs of ``COPIES`` runs at the capacity and of
    ``COPIES`` switches at the bucket of the live count the pass holds (a real batch's), the bodies the real
    ones. A switch's cost (its select kernel, the node, the body's launch and return on the device) depends on
    the body, so it is measured with it, not with a stand-in. The capacity graph replays last: the outputs
    leave the pass holding every row."""
    live = int(rows.count.item())  # outside capture: a host read in the pass before it is allowed
    switched = _replay_us(lambda: [_switch(rows, body) for _ in range(COPIES)], stream)
    at_capacity = _replay_us(lambda: [body(rows.buckets.capacity) for _ in range(COPIES)], stream)
    rows.buckets.judge.verdicts[key] = {
        "work": " ".join(map(str, key)), "live_rows": live, "capacity": rows.buckets.capacity,
        "capacity_us": round(at_capacity, 2), "switched_us": round(switched, 2),
        "switches": switched + MIN_SAVING_US < at_capacity}


def run_over_live_rows(rows: LiveRows, body: Callable[[int], None], key: tuple | None = None) -> None:
    """Run ``body(n)``, a layer's dense work over its first ``n`` rows, at the bucket the live rows take.

    While the current stream captures a graph: a SWITCH node after the work captured so far, ``body``
    captured once per bucket into the node's bodies; the stream continues after the node. Work named by a
    ``key``, over buckets that have a ``judge``, is judged first, in a pass outside capture (``_judge``), and
    captured at the capacity where a switch did not save ``MIN_SAVING_US``. Otherwise: ``body(capacity)`` on the
    body stream (ordered after the current stream, which waits for it), so its cuBLAS workspace exists before
    capture, then, for such work not judged yet, the verdict."""
    buckets, device = rows.buckets, rows.count.device
    if buckets.count == 1:
        body(buckets.capacity)
        return
    current = torch.cuda.current_stream(device)
    if not torch.cuda.is_current_stream_capturing():
        child = _body_stream(device)
        child.wait_stream(current)
        with torch.cuda.stream(child):
            body(buckets.capacity)
        current.wait_stream(child)
        if key is not None and buckets.judge is not None and key not in buckets.judge.verdicts:
            body(buckets.capacity)  # and the current stream's workspace, which the verdict's graphs capture on
            _judge(rows, body, key, current)
        return
    verdict = None if key is None or buckets.judge is None else buckets.judge.verdicts.get(key)
    if verdict is not None and not verdict["switches"]:
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
