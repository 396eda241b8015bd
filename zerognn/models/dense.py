"""The models' dense layer: ``x @ weight.T + bias``, optionally followed by ReLU, as one GEMM.

Bias and ReLU run in the GEMM's epilogue (``torch._addmm_activation``, cuBLASLt on a GPU) instead of
as separate elementwise kernels; PyTorch gives that op no gradient, so the backward is written out
here: the ReLU mask from the saved output, then the weight, bias and (when needed) input gradients.
The bias gradient is a matrix-vector product with a ones vector (cuBLAS reads the gradient at memory
bandwidth; a column ``sum(0)`` over a tall matrix reads it several times slower). Every variant runs
the same layer, so an improvement here serves them all alike.

Under ``zerognn.determinism`` on a GPU every GEMM of the layer (output, input, weight and bias
gradients) runs in ``zerognn.cuda.dense_gemm`` instead: each element one sequential sum, so no bit depends
on how many rows of zeros a variant pads its batch with. cuBLAS gives the same bits only for the same
shapes; it picks a different kernel, and for some shapes a split of the sum, as the row count changes.
``add_bias`` is the bias alone, for layers whose GEMM has no epilogue (GAT's, after attention).
"""

from __future__ import annotations

import torch

from .. import determinism
from ..cuda import dense_gemm

_ones: dict[tuple[torch.device, torch.dtype], torch.Tensor] = {}


def _ones_vector(n: int, like: torch.Tensor) -> torch.Tensor:
    """A ones vector of length ``n``, kept across steps: no fill kernel in a step once it is long enough."""
    key = (like.device, like.dtype)
    ones = _ones.get(key)
    if ones is None or ones.numel() < n:
        ones = _ones[key] = torch.ones(max(n, 2 * (0 if ones is None else ones.numel())), dtype=like.dtype,
                                       device=like.device)
    return ones[:n]


def fixed_order(t: torch.Tensor) -> bool:
    """Whether a reduction over ``t``'s rows takes the fixed-order kernels (a deterministic run on a GPU,
    outside torch.compile's tracing, which cannot call them)."""
    return determinism.enabled() and t.is_cuda and not torch.compiler.is_compiling()


class _Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, relu: bool):
        ctx.relu, ctx.has_bias, ctx.fixed = relu, bias is not None, fixed_order(x)
        if ctx.fixed:
            out = dense_gemm.linear(x, weight, bias, relu)
        elif bias is None:
            out = torch.relu(x @ weight.t()) if relu else x @ weight.t()
        else:
            out = torch._addmm_activation(bias, x, weight.t()) if relu else torch.addmm(bias, x, weight.t())
        ctx.save_for_backward(x, weight, out if relu else None)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, weight, out = ctx.saved_tensors
        if ctx.relu:
            grad = torch.ops.aten.threshold_backward(grad, out, 0)
        if ctx.fixed:
            grad_x = dense_gemm.input_grad(grad, weight) if ctx.needs_input_grad[0] else None
            grad_w, grad_b = dense_gemm.weight_and_bias_grad(grad, x, ctx.has_bias)
            return grad_x, grad_w, grad_b, None
        grad_x = grad @ weight if ctx.needs_input_grad[0] else None
        grad_b = torch.mv(grad.t(), _ones_vector(grad.shape[0], grad)) if ctx.has_bias else None
        return grad_x, grad.t() @ x, grad_b, None


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, relu: bool) -> torch.Tensor:
    """``relu(x @ weight.T + bias)`` (or without the ReLU, or the bias) in one kernel forward."""
    return _Linear.apply(x, weight, bias, relu)


class _AddBias(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bias):
        return x + bias

    @staticmethod
    def backward(ctx, grad):
        rows = grad.reshape(-1, grad.shape[-1])
        return grad, dense_gemm.column_sums(rows) if fixed_order(grad) else rows.sum(0)


def add_bias(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """``x + bias`` over the last dimension, its bias gradient summed in fixed order when deterministic."""
    return _AddBias.apply(x, bias)
