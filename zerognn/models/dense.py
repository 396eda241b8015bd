"""The models' dense layer: ``x @ weight.T + bias``, optionally followed by ReLU, as one GEMM.

Bias and ReLU run in the GEMM's epilogue (``torch._addmm_activation``, cuBLASLt on a GPU) instead of
as separate elementwise kernels; PyTorch gives that op no gradient, so the backward is written out
here: the ReLU mask from the saved output, then the weight, bias and (when needed) input gradients.
The bias gradient is a matrix-vector product with a ones vector (cuBLAS reads the gradient at memory
bandwidth; a column ``sum(0)`` over a tall matrix reads it several times slower). Every variant runs
the same layer, so an improvement here serves them all alike.
"""

from __future__ import annotations

import torch

_ones: dict[tuple[torch.device, torch.dtype], torch.Tensor] = {}


def _ones_vector(n: int, like: torch.Tensor) -> torch.Tensor:
    """A ones vector of length ``n``, kept across steps: no fill kernel in a step once it is long enough."""
    key = (like.device, like.dtype)
    ones = _ones.get(key)
    if ones is None or ones.numel() < n:
        ones = _ones[key] = torch.ones(max(n, 2 * (0 if ones is None else ones.numel())), dtype=like.dtype,
                                       device=like.device)
    return ones[:n]


class _Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, relu: bool):
        out = torch._addmm_activation(bias, x, weight.t()) if relu else torch.addmm(bias, x, weight.t())
        ctx.relu = relu
        ctx.save_for_backward(x, weight, out if relu else None)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, weight, out = ctx.saved_tensors
        if ctx.relu:
            grad = torch.ops.aten.threshold_backward(grad, out, 0)
        grad_x = grad @ weight if ctx.needs_input_grad[0] else None
        return grad_x, grad.t() @ x, torch.mv(grad.t(), _ones_vector(grad.shape[0], grad)), None


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, relu: bool) -> torch.Tensor:
    """``relu(x @ weight.T + bias)`` (or without the ReLU) in one kernel forward."""
    return _Linear.apply(x, weight, bias, relu)
