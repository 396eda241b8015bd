"""Count the CUDA Graph captures a run makes, whichever code captures them.

Every capture in PyTorch, ``torch.cuda.graph`` and inductor's cudagraph trees included, goes through
``torch.cuda.CUDAGraph.capture_begin``; torch keeps no count that outlives a run, so the entry point
is wrapped for the length of a ``with`` block and restored on every exit path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch


@dataclass
class CaptureCount:
    count: int = 0


@contextlib.contextmanager
def counting_cuda_graph_captures() -> Iterator[CaptureCount]:
    """Yield a counter of the captures begun in this process while the block runs."""
    counter = CaptureCount()
    original = torch.cuda.CUDAGraph.capture_begin

    def counted(graph: torch.cuda.CUDAGraph, *args: Any, **kwargs: Any) -> Any:
        counter.count += 1
        return original(graph, *args, **kwargs)

    torch.cuda.CUDAGraph.capture_begin = counted
    try:
        yield counter
    finally:
        torch.cuda.CUDAGraph.capture_begin = original
