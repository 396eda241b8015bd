"""A bounded cache of CUDA Graphs, one per (segment, shape signature): naive whole-segment capture.

``SegmentGraphs.run(key, fn, inputs)`` replays the graph captured for ``key`` after copying
``inputs`` into its static input tensors, or — on a miss — clones the inputs, captures ``fn`` on
them and replays it. Outputs are the graph's static tensors (valid until that graph replays again).
Least recently used graphs are evicted beyond ``capacity``, releasing their memory pools. Hits,
misses, evictions and time spent capturing are counted for the run record.
"""

from __future__ import annotations

import gc
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..errors import ZeroGNNError


@dataclass
class _Captured:
    graph: torch.cuda.CUDAGraph
    inputs: tuple[torch.Tensor, ...]
    outputs: Any


class SegmentGraphs:
    def __init__(self, capacity: int):
        if capacity < 1:
            raise ZeroGNNError(f"a graph cache needs room for at least one graph, got {capacity}")
        self.capacity = capacity
        self._graphs: OrderedDict[Hashable, _Captured] = OrderedDict()
        self.hits = self.misses = self.evictions = 0
        self.capture_s = 0.0
        self._stream: torch.cuda.Stream | None = None  # the capture stream, made at the first capture

    def run(self, key: Hashable, fn: Callable[..., Any], inputs: Sequence[torch.Tensor]) -> Any:
        captured = self._graphs.get(key)
        if captured is None:
            captured = self._capture(key, fn, inputs)
        else:
            self.hits += 1
            self._graphs.move_to_end(key)
            for static, value in zip(captured.inputs, inputs):
                static.copy_(value)
        captured.graph.replay()
        return captured.outputs

    def _capture(self, key: Hashable, fn: Callable[..., Any], inputs: Sequence[torch.Tensor]) -> _Captured:
        self.misses += 1
        started = time.perf_counter()
        static = tuple(t.clone() for t in inputs)  # before evicting: the inputs may be an evicted graph's outputs
        while len(self._graphs) >= self.capacity:
            self._graphs.popitem(last=False)
            self.evictions += 1
        graph = torch.cuda.CUDAGraph()
        outputs = self._captured_on_side_stream(graph, fn, static)
        captured = self._graphs[key] = _Captured(graph, static, outputs)
        self.capture_s += time.perf_counter() - started
        return captured

    def _captured_on_side_stream(self, graph: torch.cuda.CUDAGraph, fn: Callable[..., Any],
                                 static: tuple[torch.Tensor, ...]) -> Any:
        # torch.cuda.graph() would synchronize the device, run gc.collect() and empty the allocator's
        # cache on every capture (~85 ms a capture on the H200, most of a step's time) — costs of that
        # helper, not of capturing. A cache that captures on most steps does what it needs directly:
        # a side stream ordered after the current one, and the cycle collector paused so that it cannot
        # destroy a graph (an API call illegal during capture) mid-capture.
        if self._stream is None:
            self._stream = torch.cuda.Stream()
        current = torch.cuda.current_stream()
        self._stream.wait_stream(current)
        collecting = gc.isenabled()
        gc.disable()
        try:
            with torch.cuda.stream(self._stream):
                graph.capture_begin()
                try:
                    outputs = fn(*static)
                finally:
                    graph.capture_end()
        finally:
            if collecting:
                gc.enable()
        current.wait_stream(self._stream)
        return outputs

    def info(self) -> dict[str, Any]:
        calls = self.hits + self.misses
        return {"graph_hits": self.hits, "graph_misses": self.misses, "captures": self.misses,
                "hit_rate": self.hits / calls if calls else None, "evictions": self.evictions,
                "capture_s": self.capture_s, "cache_capacity": self.capacity}
