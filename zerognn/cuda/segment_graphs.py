"""A bounded cache of CUDA Graphs, one per (segment, shape signature): naive whole-segment capture.

``SegmentGraphs.run(key, fn, inputs)`` replays the graph captured for ``key`` after copying
``inputs`` into its static input tensors, or — on a miss — clones the inputs, captures ``fn`` on
them and replays it. Outputs are the graph's static tensors (valid until that graph replays again).
Least recently used graphs are evicted beyond ``capacity``. Hits, misses, evictions and time spent
capturing are counted for the run record.

Each graph owns a private memory pool of PyTorch's caching allocator. Evicting a graph gives its pool
back to the allocator's cache, not to the driver: the pool's blocks stay reserved, and no allocation
outside that pool can reuse them, until ``torch.cuda.empty_cache()`` frees them. The allocator's own
last resort before an out-of-memory error (freeing every cached block) is skipped while a capture is
underway, which is when this cache allocates nearly everything; so in a run that captures on most
steps the evicted pools pile up until a capture runs out of memory. Hence once every ``capacity``
evictions, before the next capture begins (never during one), the cache calls ``release``
(``torch.cuda.empty_cache``, which also frees the allocator's other unused cached blocks) to hand the
evicted pools to the driver: one device-synchronizing release per cache-full of graphs. A pool
whose tensors are still referenced (an evicted graph's outputs the caller holds) keeps those blocks
until a later release. Releases and their seconds (``pool_releases``, ``release_s``; not counted in
``capture_s``) go to the run record too.
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
    def __init__(self, capacity: int, release: Callable[[], None] = torch.cuda.empty_cache):
        if capacity < 1:
            raise ZeroGNNError(f"a graph cache needs room for at least one graph, got {capacity}")
        self.capacity = capacity
        self._release = release  # hands the evicted graphs' pools to the driver
        self._graphs: OrderedDict[Hashable, _Captured] = OrderedDict()
        self.hits = self.misses = self.evictions = self.pool_releases = 0
        self.capture_s = self.release_s = 0.0
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
        released_s = self._evict()
        graph = torch.cuda.CUDAGraph()
        if self._stream is None:
            self._stream = torch.cuda.Stream()
        # capturing() skips torch.cuda.graph()'s per-capture device sync and cache flush: a cache that
        # captures on most steps would pay ~85 ms a capture on the H200, most of a step's time.
        with capturing(graph, self._stream):
            outputs = fn(*static)
        captured = self._graphs[key] = _Captured(graph, static, outputs)
        self.capture_s += time.perf_counter() - started - released_s
        return captured

    def _evict(self) -> float:
        """Makes room for one more graph; returns the seconds spent releasing pools (0 without a release)."""
        before = self.evictions
        while len(self._graphs) >= self.capacity:
            self._graphs.popitem(last=False)  # the graph is destroyed here: its pool goes to the allocator's cache
            self.evictions += 1
        if self.evictions // self.capacity == before // self.capacity:
            return 0.0
        started = time.perf_counter()
        self._release()  # outside any capture: the allocator cannot free memory while one is underway
        seconds = time.perf_counter() - started
        self.pool_releases += 1
        self.release_s += seconds
        return seconds

    def info(self) -> dict[str, Any]:
        calls = self.hits + self.misses
        return {"graph_hits": self.hits, "graph_misses": self.misses, "captures": self.misses,
                "hit_rate": self.hits / calls if calls else None, "evictions": self.evictions,
                "capture_s": self.capture_s, "cache_capacity": self.capacity,
                "pool_releases": self.pool_releases, "release_s": self.release_s}
