"""The models' dense layer: ``x @ weight.T + bias``, optionally followed by ReLU, as one GEMM.

Bias and ReLU run in the GEMM's epilogue (``torch._addmm_activation``, cuBLASLt on a GPU) instead of
as separate elementwise kernels; PyTorch gives that op no gradient, so the backward is written out
here: the ReLU mask from the saved output, then the weight, bias and (when needed) input gradients.
The bias gradient is a matrix-vector product with a ones vector (cuBLAS reads the gradient at memory
bandwidth; a column ``sum(0)`` over a tall matrix reads it several times slower), unless the op that wrote
the gradient summed its columns as it wrote it (``zerognn.column_sums``: the CUDA ops' scatter backwards
under a hidden layer's ReLU), which saves reading it again. Every variant runs the same layer, so an
improvement here serves them all alike.

Under ``zerognn.determinism`` on a GPU every GEMM of the layer (output, input, weight and bias
gradients) runs in ``zerognn.cuda.dense_gemm`` instead: each element one sequential sum, so no bit depends
on how many rows of zeros a variant pads its batch with. cuBLAS gives the same bits only for the same
shapes; it picks a different kernel, and for some shapes a split of the sum, as the row count changes.
``add_bias`` is the bias alone, for layers whose GEMM has no epilogue (GAT's, after attention).

``relu_backward_downstream``: the ReLU's output goes only to an aggregation that masks the gradient it
returns by that output (the CUDA ops, ``folds_relu_backward``), so the backward takes the gradient as the
ReLU input's and runs no ``threshold_backward`` of its own: one kernel fewer per hidden layer, the same
gradient. Wrong for any other reader of the output, whose gradient would reach the GEMMs unmasked.

At precision ``bfloat16`` (``zerognn.precision``) the layer casts its GEMM operands to bf16 and each result
back to the stored dtype (fp32 accumulation inside the GEMM); the bias gradient stays an fp32 reduction.
"""

from __future__ import annotations

import torch

from .. import column_sums, determinism, precision
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


def _bias_grad(grad: torch.Tensor) -> torch.Tensor:
    """``grad.sum(0)``: the column sums the op that wrote ``grad`` gathered, if it did (``zerognn.column_sums``),
    else a matrix-vector product with ones."""
    sums = column_sums.take(grad)
    return sums if sums is not None else torch.mv(grad.t(), _ones_vector(grad.shape[0], grad))


def fixed_order(t: torch.Tensor) -> bool:
    """Whether a reduction over ``t``'s rows takes the fixed-order kernels (a deterministic run on a GPU,
    outside torch.compile's tracing, which cannot call them)."""
    return determinism.enabled() and t.is_cuda and not torch.compiler.is_compiling()


def _as(t: torch.Tensor | None, dtype: torch.dtype | None) -> torch.Tensor | None:
    return t if t is None or dtype is None else t.to(dtype)


class _Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, relu: bool, relu_backward_downstream: bool):
        ctx.has_bias, ctx.fixed = bias is not None, fixed_order(x)
        ctx.relu = relu and not relu_backward_downstream  # whether the backward applies the mask itself
        # bf16 GEMMs (zerognn.precision): operands cast here, results back to the stored dtype
        ctx.low, stored = None if ctx.fixed else precision.gemm_dtype(), x.dtype
        x, weight, low_bias = _as(x, ctx.low), _as(weight, ctx.low), _as(bias, ctx.low)
        if ctx.fixed:
            out = dense_gemm.linear(x, weight, bias, relu)
        elif bias is None:
            out = torch.relu(x @ weight.t()) if relu else x @ weight.t()
        else:
            out = torch._addmm_activation(low_bias, x, weight.t()) if relu else torch.addmm(low_bias, x, weight.t())
        out = _as(out, stored if ctx.low is not None else None)
        ctx.save_for_backward(x, weight, out if ctx.relu else None)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, weight, out = ctx.saved_tensors
        if ctx.relu:
            grad = torch.ops.aten.threshold_backward(grad, out, 0)
        if ctx.fixed:
            grad_x = dense_gemm.input_grad(grad, weight) if ctx.needs_input_grad[0] else None
            grad_w, grad_b = dense_gemm.weight_and_bias_grad(grad, x, ctx.has_bias)
            return grad_x, grad_w, grad_b, None, None
        low_grad = _as(grad, ctx.low)
        grad_x = low_grad @ weight if ctx.needs_input_grad[0] else None
        grad_b = _bias_grad(grad) if ctx.has_bias else None
        grad_w = low_grad.t() @ x
        if ctx.low is not None:  # gradients in the parameters' and activations' own dtype
            grad_x, grad_w = _as(grad_x, grad.dtype), grad_w.to(grad.dtype)
        return grad_x, grad_w, grad_b, None, None


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, relu: bool,
           relu_backward_downstream: bool = False) -> torch.Tensor:
    """``relu(x @ weight.T + bias)`` (or without the ReLU, or the bias) in one kernel forward.

    ``relu_backward_downstream``: the output's one reader masks its gradient by the ReLU (an aggregation
    called with ``relu_input=True`` on ops whose ``folds_relu_backward`` is true), so the backward does not."""
    return _Linear.apply(x, weight, bias, relu, relu and relu_backward_downstream)


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
