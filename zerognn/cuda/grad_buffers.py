"""Zeroed gradient buffers made ahead of the backward that adds into them, off the step's critical path.

A scatter backward (``zerognn.cuda.aggregate``) adds into zeros, and the fill that makes them was a kernel
of its own in the step's chain: on products-like at B=1024 the second SAGE layer's gradient of the first
layer's output, [65,133 x 256] floats, about 18 us. The dense layer that reads the aggregation's output
runs its backward just before the aggregation's, and computes its weight gradient on a side branch
(``zerognn.cuda.side_stream``); the fill goes onto that branch, in parallel with the input gradient.

The aggregation's forward attaches a ``ZeroedGrad`` (the buffer's shape) to its output; the dense layer's
forward finds it there, and its backward ``allocate``s the buffer and zeroes it; the aggregation's backward
``take``s it, or fills one itself when no reader made it (another reader of the output, a deterministic
step): the same zeros either way. The request travels on the output tensor itself, like
``zerognn.column_sums``, and is kept by the aggregation's autograd node, so nothing outlives the step.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

_ATTRIBUTE = "_zerognn_zeroed_grad"


@dataclass
class ZeroedGrad:
    """A float32 gradient buffer of ``shape`` that a backward will add into; ``buffer`` once made ahead."""

    shape: tuple[int, ...]
    device: torch.device
    buffer: torch.Tensor | None = None

    def allocate(self) -> torch.Tensor:
        """The buffer, allocated on the current stream (the caller zeroes it, e.g. on a side branch)."""
        self.buffer = torch.empty(self.shape, dtype=torch.float32, device=self.device)
        return self.buffer

    def take(self) -> torch.Tensor:
        """The buffer made ahead, or a freshly zeroed one; either way the next ``take`` makes its own."""
        buffer, self.buffer = self.buffer, None
        return buffer if buffer is not None else torch.zeros(self.shape, dtype=torch.float32, device=self.device)


def attach(t: torch.Tensor, request: ZeroedGrad) -> torch.Tensor:
    """Mark ``t`` as the output whose gradient's backward will take ``request``'s buffer; returns ``t``."""
    setattr(t, _ATTRIBUTE, request)
    return t


def find(t: torch.Tensor) -> ZeroedGrad | None:
    """The request attached to this very tensor, or None."""
    return getattr(t, _ATTRIBUTE, None)
