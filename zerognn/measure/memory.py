"""Peak device memory of live tensors over a measured window, whatever a variant does inside it.

PyTorch's caching allocator keeps one peak counter per device. ``PeakMemory`` is the only code that
resets it: a local measurement (the working set of a CUDA Graph capture) first folds the window's
peak so far into the meter, so a capture inside the window (ZeroGNN's re-capture after an envelope
overflow) can never hide the steps before it.

A replayed CUDA Graph's tensors are freed for the allocator when capture ends, yet every replay
reuses their memory. A variant declares such bytes with :meth:`PeakMemory.hold` for as long as its
graph is the one replayed; they are added to the allocated bytes of every period in which they are
held. The meter also keeps the peak of reserved memory (``peak_reserved_bytes``): every segment the
allocator holds from the device, graph pools and cached free blocks included, which no other process can
use. On the CPU the meter measures nothing (both peaks are None).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import torch


class Allocator(Protocol):
    """What the meter reads of the device allocator (PyTorch's, or a fake in tests)."""

    def allocated(self) -> int: ...
    def max_allocated(self) -> int: ...
    def reset_peak(self) -> None: ...
    def reserved(self) -> int: ...
    def max_reserved(self) -> int: ...
    def empty_cache(self) -> None: ...


class TorchCudaAllocator:
    def __init__(self, device: torch.device):
        self.device = device

    def allocated(self) -> int:
        return torch.cuda.memory_allocated(self.device)

    def max_allocated(self) -> int:
        return torch.cuda.max_memory_allocated(self.device)

    def reset_peak(self) -> None:
        torch.cuda.reset_peak_memory_stats(self.device)

    def reserved(self) -> int:
        return torch.cuda.memory_reserved(self.device)

    def max_reserved(self) -> int:
        return torch.cuda.max_memory_reserved(self.device)

    def empty_cache(self) -> None:
        torch.cuda.empty_cache()


@dataclass
class CaptureMemory:
    """What :meth:`PeakMemory.capture` measured: the capture's working set and its pool's growth."""

    working_set_bytes: int = 0
    pool_bytes: int = 0


class PeakMemory:
    def __init__(self, device: torch.device | str, allocator: Allocator | None = None):
        device = torch.device(device)
        if allocator is None and device.type == "cuda":
            allocator = TorchCudaAllocator(device)
        self._allocator = allocator
        self._peak = 0
        self._reserved_peak = 0
        self._held = 0

    @property
    def enabled(self) -> bool:
        return self._allocator is not None

    def allocated(self) -> int | None:
        """Bytes the allocator counts as allocated now (None on the CPU)."""
        return None if self._allocator is None else self._allocator.allocated()

    def start_window(self) -> None:
        """Forget what came before: the peak from here on is the window's (held bytes stay held)."""
        if self._allocator is not None:
            self._allocator.reset_peak()
            self._peak = self._allocator.allocated() + self._held
            self._reserved_peak = self._allocator.reserved()

    def hold(self, nbytes: int) -> None:
        """From now on, ``nbytes`` of live memory the allocator does not count (0: none)."""
        self._close_period()
        self._held = int(nbytes)

    @contextlib.contextmanager
    def capture(self) -> Iterator[CaptureMemory]:
        """Measure a CUDA Graph capture: its working set (live bytes at its peak that are freed for the
        allocator once capture ends) and the growth of reserved memory (the graph's pool, fragmentation
        included). The capture's own peak counts towards the window's."""
        result = CaptureMemory()
        if self._allocator is None:
            yield result
            return
        self._allocator.empty_cache()  # so that the growth in reserved memory is the capture's pool alone
        reserved = self._allocator.reserved()
        self._close_period()
        yield result
        peak = self._allocator.max_allocated()
        self._close_period()
        result.working_set_bytes = peak - self._allocator.allocated()
        result.pool_bytes = self._allocator.reserved() - reserved

    def peak_bytes(self) -> int | None:
        """The largest live bytes (allocated + held) since ``start_window``; None on the CPU."""
        if self._allocator is None:
            return None
        self._close_period()
        return self._peak

    def peak_reserved_bytes(self) -> int | None:
        """The most bytes the allocator held from the device since ``start_window``: every segment, CUDA Graph
        pools and cached free blocks included (what the process takes from the device); None on the CPU."""
        if self._allocator is None:
            return None
        self._close_period()
        return self._reserved_peak

    def _close_period(self) -> None:
        """Fold the allocator's peaks since its last reset into the meter, then reset them."""
        if self._allocator is not None:
            self._peak = max(self._peak, self._allocator.max_allocated() + self._held)
            self._reserved_peak = max(self._reserved_peak, self._allocator.max_reserved())
            self._allocator.reset_peak()
