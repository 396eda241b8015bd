"""Independent GPU work on a second branch of a captured CUDA Graph: ``concurrently(main, side)``.

A training step on one stream runs every kernel after the one before, also those that do not depend on
each other: a dense layer's weight gradient and its input gradient read the same output gradient and write
different tensors. Small ones leave most of the GPU idle (on products-like at B=256 the second SAGE layer's
input-gradient GEMM has 2,318 rows). Here ``side`` is launched on a stream of its own, forked from the
current stream and joined back before ``concurrently`` returns, so in a captured graph the two are parallel
branches and the GPU runs them at once.

Only while the current stream captures a graph: there a fork and a join are edges of the graph, made once.
In an eager step they would be host calls (an event record and two waits) on every step, which a host-bound
step pays for in full, so eager work runs ``main`` then ``side`` in order on the current stream, as one
stream would. The result is the same either way: the two read what the current stream wrote before the
fork and write disjoint outputs, which the caller allocates before the fork (``side`` must not allocate,
so that no block of the caching allocator belongs to the side stream).

cuBLAS keeps a workspace per (thread, stream), allocated at a GEMM's first use of the pair. The first eager
call in a thread therefore runs a small GEMM on the side stream, so that the workspace exists before any
capture (one per thread that forks: the backward's, in a training step); a capturing thread that has not
done so runs in order. ``serial()`` turns forking off inside it (a
conditional node's body capture, ``zerognn.cuda.live_rows``, whose streams are not this capture's).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

import torch

A = TypeVar("A")
B = TypeVar("B")

_streams: dict[int, torch.cuda.Stream] = {}
_warm: set[tuple[int, int]] = set()  # (thread id, device index) pairs whose side-stream workspace exists
_local = threading.local()


def _index(device: torch.device) -> int:
    return device.index if device.index is not None else torch.cuda.current_device()


def stream(device: torch.device) -> torch.cuda.Stream:
    """The side stream of ``device`` (one per device, for the whole process)."""
    index = _index(device)
    if index not in _streams:
        _streams[index] = torch.cuda.Stream(index)
    return _streams[index]


@contextlib.contextmanager
def serial() -> Iterator[None]:
    """Inside it, ``concurrently`` runs its two in order on the current stream, capturing or not."""
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1


def _warm_up(device: torch.device) -> None:
    """A GEMM on the side stream from this thread, so that cuBLAS's workspace for the pair exists."""
    current, other = torch.cuda.current_stream(device), stream(device)
    other.wait_stream(current)
    with torch.cuda.stream(other):
        a = torch.ones(8, 8, device=device)
        torch.mm(a, a)
    current.wait_stream(other)


def concurrently(device: torch.device, main: Callable[[], A], side: Callable[[], B]) -> tuple[A, B]:
    """``(main(), side())``: on parallel branches while the current stream of ``device`` (a GPU) captures a
    graph, in order otherwise. Both are done, as far as the current stream is concerned, when this returns."""
    if device.type != "cuda" or getattr(_local, "depth", 0) > 0:
        return main(), side()
    key = (threading.get_ident(), _index(device))
    if not torch.cuda.is_current_stream_capturing():
        if key not in _warm:
            _warm_up(device)
            _warm.add(key)
        return main(), side()
    if key not in _warm:  # a first use while capturing: cuBLAS would allocate its workspace inside the capture
        return main(), side()
    current, other = torch.cuda.current_stream(device), stream(device)
    other.wait_stream(current)
    with torch.cuda.stream(other):
        second = side()
    first = main()
    current.wait_stream(other)
    return first, second
