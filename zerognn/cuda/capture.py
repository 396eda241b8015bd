"""Capturing work into a CUDA Graph: the one way every variant here does it.

``capturing(graph, stream)`` captures the work a ``with`` block launches on ``stream`` (ordered after
the current stream, which waits for the capture in turn). The cycle collector is paused meanwhile: a
CUDA Graph it frees during capture destroys a graph, an API call that is illegal then and invalidates
the capture. Unlike ``torch.cuda.graph()`` it neither synchronizes the device nor empties the
allocator's cache (about 85 ms a capture on the H200): a caller that wants a measured, clean start
(``zerognn.fixed_launch.step_graph``) does that itself, and one that captures on most steps
(``segment_graphs``) does not pay for it.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

import torch


@contextlib.contextmanager
def capturing(graph: torch.cuda.CUDAGraph, stream: torch.cuda.Stream) -> Iterator[None]:
    current = torch.cuda.current_stream()
    stream.wait_stream(current)
    collecting = gc.isenabled()
    gc.disable()
    try:
        with torch.cuda.stream(stream):
            graph.capture_begin()
            try:
                yield
            finally:
                graph.capture_end()
    finally:
        if collecting:
            gc.enable()
    current.wait_stream(stream)
