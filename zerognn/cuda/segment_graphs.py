"""A bounded cache of CUDA Graphs, one per (segment, shape signature): naive whole-segment capture.

``SegmentGraphs.run(key, fn, inputs)`` replays the graph captured for ``key`` after copying
``inputs`` into its static input tensors, or — on a miss — clones the inputs, captures ``fn`` on
them and replays it. Outputs are the graph's static tensors (valid until that graph replays again).
Least recently used graphs are evicted beyond ``capacity``, releasing their memory pools. Hits,
misses, evictions and time spent capturing are counted for the run record.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..errors import ZeroGNNError
from .capture import capturing


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
        if self._stream is None:
            self._stream = torch.cuda.Stream()
        # capturing() skips torch.cuda.graph()'s per-capture device sync and cache flush: a cache that
        # captures on most steps would pay ~85 ms a capture on the H200, most of a step's time.
        with capturing(graph, self._stream):
            outputs = fn(*static)
        captured = self._graphs[key] = _Captured(graph, static, outputs)
        self.capture_s += time.perf_counter() - started
        return captured

    def info(self) -> dict[str, Any]:
        calls = self.hits + self.misses
        return {"graph_hits": self.hits, "graph_misses": self.misses, "captures": self.misses,
                "hit_rate": self.hits / calls if calls else None, "evictions": self.evictions,
                "capture_s": self.capture_s, "cache_capacity": self.capacity}
