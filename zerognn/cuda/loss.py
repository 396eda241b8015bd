"""The training loss on our kernel, with autograd: ``cross_entropy``, what the CUDA variants train with.

``kernels/cross_entropy.cu`` computes the mean cross-entropy of fp32 logits [rows, classes] against int64
labels and its gradient with respect to the logits in one launch, where ``F.cross_entropy`` runs log_softmax
and nll_loss forward and their backwards as separate kernels. The forward stashes the gradient; the
backward only scales it by the incoming gradient of the loss (one elementwise kernel), and ``backward(loss)``
skips even that: the stashed gradient goes straight to the logits.

The launch is a fixed grid, ``CE_BLOCKS`` blocks of ``CE_THREADS`` threads whatever the rows: global warp g
takes rows g, g + CE_BLOCKS * CE_THREADS / 32, ..., so which warp adds which row depends on the row index
alone. Each warp sums its rows' losses in row order, each block its warps in warp order into a per-block
partial, and the last block to finish (an arrival ticket on an int counter) sums the partials in block
order, writes the loss and sets the counter back to zero: no float atomics, the same bits in every run
(deterministic mode or not) and at any capacity, and still one launch per step. The partials and the
counter are scratch allocated (zeroed) once per device on the first call and kept in ``_SCRATCH``, so a
step allocates and fills nothing for them and a captured CUDA Graph replays the same buffers; that first
call must come before any capture (the CUDA variants run a step eagerly first). Two losses at once on two
streams of one device would share the counter and the partials: the suite runs one step stream per
device, one loss at a time.

The live row count may come from device memory (``n_rows``, int32 [1], as every kernel here reads its
live counts): the loss is the mean over the first ``n_rows`` rows and the gradient of the rows past them is
zero, so a fixed launch over an envelope's capacity (``zerognn.fixed_launch.step_graph``) is replayed as
is. Without ``n_rows`` every row is live.

Precision: the models' logits are fp32 at every run precision (``zerognn.precision``: at ``bfloat16`` only
the GEMMs' operands are bf16, their results come back in the stored fp32), so the kernel takes fp32 only.
Logits of any other dtype, or labels that are not int64, go to ``F.cross_entropy`` instead (then without
``n_rows``: every row is live). CPU tensors are an error, as for every kernel here.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ..errors import ZeroGNNError
from .launch import launch

CE_BLOCKS = 128  # the fixed grid, whatever the rows
CE_THREADS = 256  # each block's threads: 8 warps, 1024 warps in all

# Per device: (the blocks' partial sums, float32 [CE_BLOCKS]; the arrival counter, int32 [1], zero between
# launches), allocated and zeroed once.
_SCRATCH: dict[torch.device, tuple[torch.Tensor, torch.Tensor]] = {}


def _scratch(device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    scratch = _SCRATCH.get(device)
    if scratch is None:
        if device.type == "cuda" and torch.cuda.is_current_stream_capturing():
            raise ZeroGNNError("cross_entropy's first call on a device must come before CUDA Graph capture (its "
                               "scratch is allocated then): run the loss once eagerly first")
        scratch = _SCRATCH[device] = (torch.zeros(CE_BLOCKS, dtype=torch.float32, device=device),
                                      torch.zeros(1, dtype=torch.int32, device=device))
    return scratch


def _launch(logits: torch.Tensor, labels: torch.Tensor, n_rows: torch.Tensor | None, overflow: torch.Tensor | None,
            want_grad: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    rows, classes = logits.shape
    loss = torch.empty((), dtype=torch.float32, device=logits.device)
    grad = torch.empty_like(logits) if want_grad else None
    block_loss, blocks_done = _scratch(logits.device)
    launch("cross_entropy_forward_backward", CE_BLOCKS, logits, np.int64(classes), labels, n_rows, np.int32(rows),
           loss, grad, overflow, block_loss, blocks_done, threads=CE_THREADS)
    return loss, grad


class _CrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, labels, n_rows, overflow):
        loss, ctx.grad = _launch(logits, labels, n_rows, overflow, ctx.needs_input_grad[0])
        ctx.logits = logits if ctx.grad is not None else None  # for backward(loss): the gradient's destination
        return loss

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_loss):
        return ctx.grad * grad_loss, None, None, None


def cross_entropy(logits: torch.Tensor, labels: torch.Tensor, n_rows: torch.Tensor | None = None,
                  overflow: torch.Tensor | None = None) -> torch.Tensor:
    """The mean cross-entropy of ``logits`` [rows, classes] against class ``labels`` [rows] (a 0-dim tensor),
    its gradient computed with it.

    ``n_rows`` (int32 [1] on the device): how many leading rows are live (None: all); ``overflow`` (int64 [2],
    optional): the record a live count above the rows raises. A label out of range gives a NaN loss."""
    if logits.dim() != 2 or labels.dim() != 1 or labels.shape[0] != logits.shape[0]:
        raise ZeroGNNError(f"cross_entropy takes logits [rows, classes] and one label per row; got logits "
                           f"{tuple(logits.shape)} and labels {tuple(labels.shape)}")
    if logits.dtype != torch.float32 or labels.dtype != torch.int64:
        # Not a dtype the kernel takes (no model here makes one): PyTorch's loss, over every row.
        return F.cross_entropy(logits, labels)
    if n_rows is not None and (n_rows.dtype != torch.int32 or n_rows.numel() != 1):
        raise ZeroGNNError(f"cross_entropy's n_rows is an int32 [1] tensor, got {n_rows.dtype} {tuple(n_rows.shape)}")
    return _CrossEntropy.apply(logits.contiguous(), labels.contiguous(), n_rows, overflow)


def backward(loss: torch.Tensor) -> None:
    """``loss.backward()``, for a loss from ``cross_entropy`` without its two extra kernels.

    ``loss.backward()`` seeds the loss's gradient with a fill kernel (ones) and scales the stashed gradient of
    the logits by it, one more elementwise kernel, to multiply by 1. Here the stashed gradient goes to the
    logits as is (``torch.autograd.backward(logits, grad)``): the same gradients, bit for bit, two GPU
    activities fewer per step. A loss of any other origin (PyTorch's, the dtype fallback) runs its own
    ``backward()``. Like ``backward()`` it frees the graph it ran through; calling it twice is an error."""
    node = loss.grad_fn
    if not isinstance(node, _CrossEntropy._backward_cls):
        loss.backward()
        return
    if node.logits is None:
        raise ZeroGNNError("this loss's backward has run already (or its logits needed no gradient)")
    logits, grad = node.logits, node.grad
    node.logits = node.grad = None  # neither outlives the backward
    _run_backward(logits, grad)


def _run_backward(logits: torch.Tensor, grad: torch.Tensor) -> None:
    """``torch.autograd.backward(logits, grad)`` without its check of ``grad``'s shape, which imports
    ``torch.fx.experimental.symbolic_shapes`` and with it sympy (about 2 s, once per process, inside the
    setup of every CUDA variant). ``grad`` is the kernel's own, allocated like ``logits``, so the check has
    nothing to find; the engine call is the one ``torch.autograd.backward`` makes after it (a PyTorch
    without it gets ``backward`` itself)."""
    run = getattr(torch.autograd.graph, "_engine_run_backward", None)
    if run is None or grad.shape != logits.shape:
        torch.autograd.backward(logits, grad)
        return
    run((logits,), (grad,), False, False, (), allow_unreachable=True, accumulate_grad=True)
