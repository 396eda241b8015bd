"""Gradients that arrive with their column sums: a layer's bias gradient from the op that wrote the gradient.

A dense layer's bias gradient is the column sum of the gradient of its output, which its backward would
read again, row by row, after the op downstream has just written it (for the first SAGE layer at B=1024 a
[65132, 256] matrix, about 67 MB, in a kernel of its own). The CUDA ops' scatter backwards gather those sums
while they write the gradient (``kernels/zerognn_common.cuh``, ``zg_column_sums_begin``) and ``attach`` them
to the gradient they return; the dense layer's backward ``take``s them instead of summing
(``zerognn.models.dense``).

The sums travel on the gradient tensor itself, so they are only ever used for that very tensor: when
autograd hands the layer anything else (the sum of the gradients of two readers, a gradient the layer
masks by its own ReLU first, a cast), the layer finds none and sums the rows itself. Nothing is kept
anywhere else, so nothing outlives the gradient.
"""

from __future__ import annotations

import torch

_ATTRIBUTE = "_zerognn_column_sums"


def attach(grad: torch.Tensor, sums: torch.Tensor) -> torch.Tensor:
    """Mark ``grad`` [rows, columns] as having column sums ``sums`` [columns]; returns ``grad``."""
    if sums.shape != grad.shape[-1:]:
        raise ValueError(f"column sums of shape {tuple(sums.shape)} do not fit a gradient of shape {tuple(grad.shape)}")
    setattr(grad, _ATTRIBUTE, sums)
    return grad


def take(grad: torch.Tensor) -> torch.Tensor | None:
    """The column sums attached to this very tensor, or None."""
    return getattr(grad, _ATTRIBUTE, None)
