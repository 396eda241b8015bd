"""Neighbour aggregation on our kernels, with autograd: the ``AggregationOps`` the models call.

A block is an ``EllBlock``: for each destination p, ``counts[p]`` sampled neighbours in slots
``nbr_local[p*fanout : p*fanout + counts[p]]`` (positions in the source frontier), and the live number
of destinations as an int32 device scalar. Kernels read that live count; ``num_dst`` is the rows the
output buffer has (the exact count for host-mediated, the capacity for a fixed envelope), and a live
count above it raises the block's overflow record instead of writing past the buffer.

Each backward has two forms, chosen when it is traced (``zerognn.determinism``): the scatter form adds
into shared source rows with float ``atomicAdd``, so the order of the additions, and the last bits of the
gradient, change from run to run; the deterministic form builds the block's transpose
(``kernels/ell_transpose.cu``) and every source row pulls its readers' shares in slot order, so the same
block gives the same bits in every run and every variant.

The ReLU's backward is folded into the aggregation's (``folds_relu_backward``): called with
``relu_input=True`` (x is a ReLU's output, and this aggregation is its only reader), both forms of the
backward take x as ``relu_out`` and write the gradient already masked where x is not positive, which is
what the ReLU's own backward (PyTorch's ``threshold_backward``) would have done afterwards as one more
kernel per layer; the model's ReLU then passes its gradient through (``zerognn.models.dense.linear``'s
``relu_backward_downstream``). The saved x is the ReLU's output the dense layer would otherwise have
saved, so the step keeps no more memory.

``sage`` and ``gcn`` also take, as x, the rows of a table named by ids (``zerognn.cuda.gather.GatheredRows``,
what ``model_input`` hands SAGE's and GCN's first layer): the forward kernel then reads ``table[ids[j]]``
wherever it would read row j of x — the same additions in the same order, so the same bits as over the
rows gathered first — and no gather kernel runs. Such rows (the input features) take no gradient, so that
forward runs outside autograd.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .. import column_sums, determinism
from ..errors import ZeroGNNError
from ..sampling import Hop
from .gather import GatheredRows
from .launch import grid_for, launch, resident_blocks, vector_width


@dataclass(frozen=True)
class EllBlock:
    num_dst: int
    num_src: int
    fanout: int
    nbr_local: torch.Tensor  # int32 [num_dst * fanout]
    counts: torch.Tensor     # int32 [num_dst]
    n_dst: torch.Tensor      # int32 [1], the live destination count
    overflow: torch.Tensor   # int64 [2], the overflow record kernels raise


def as_hop(block: EllBlock) -> Hop:
    """An exactly sized ELL block as edge lists (the reference sampler's ``Hop``, what an ``edge_index`` is made
    of), each destination's sampled neighbours in slot order."""
    counts = block.counts[: block.num_dst].long()
    taken = torch.arange(block.fanout, device=counts.device) < counts[:, None]
    edge_src = block.nbr_local[: block.num_dst * block.fanout].view(block.num_dst, block.fanout)[taken].long()
    edge_dst = torch.arange(block.num_dst, device=counts.device).repeat_interleave(counts,
                                                                                output_size=edge_src.numel())
    return Hop(block.num_dst, block.num_src, edge_src, edge_dst)


@dataclass(frozen=True)
class EllTranspose:
    """The slots that read each source row, in slot order: ``order[ends[s] - degree[s] : ends[s]]``."""

    ends: torch.Tensor    # int32 [num_src], inclusive prefix sums of degree
    degree: torch.Tensor  # int32 [num_src]
    order: torch.Tensor   # int32 [num_dst * fanout], slot ids e = p * fanout + k grouped by source


def transpose(block: EllBlock) -> EllTranspose:
    """The block's transpose, built on the device at the block's capacity (capturable, no host sync)."""
    device = block.counts.device
    slots = block.num_dst * block.fanout
    grid = grid_for(slots)
    head = (block.nbr_local, block.counts, block.n_dst, np.int32(block.num_dst), np.int32(block.fanout))
    degree = torch.zeros(block.num_src, dtype=torch.int32, device=device)
    launch("ell_transpose_count", grid, *head, degree, block.overflow)
    ends = torch.cumsum(degree, 0, dtype=torch.int32)
    cursor = ends.clone()
    unordered = torch.empty(slots, dtype=torch.int32, device=device)
    launch("ell_transpose_place", grid, *head, cursor, unordered, block.overflow)
    order = torch.empty(slots, dtype=torch.int32, device=device)
    launch("ell_transpose_order", grid, *head, ends, degree, unordered, order, block.overflow)
    return EllTranspose(ends, degree, order)


def _rowwise(name: str, src: torch.Tensor, block: EllBlock, rows: int, width: int, out_width: int,
             relu_out: torch.Tensor | None = None, row_ids: torch.Tensor | None = None) -> torch.Tensor:
    """Launch a row kernel over ``src`` into a new [rows, out_width] buffer (zeroed for a backward).

    ``width`` is the kernel's row width: that of the forward input x, in both directions. A forward
    moves float4s where the width allows, reading row ``row_ids[j]`` of ``src`` for row j of x when given
    (None passes a null pointer: row j); a backward scatters them the same way (one vector atomic each on
    compute capability 9.0 and later), masked by ``relu_out`` (the forward's x, when it is a ReLU's output;
    None passes a null pointer), and then also returns its gradient's column sums (``zerognn.column_sums``).
    """
    backward = name.endswith("backward")
    wide = src.shape[1] if backward else out_width  # the destination side's row width: [aggregate | self] for SAGE
    items = block.num_dst * (wide // width * vector_width(width))
    head = (src.contiguous(), np.int64(width), block.nbr_local, block.counts, block.n_dst, np.int32(block.num_dst),
            np.int32(block.fanout))
    if not backward:
        out = torch.empty((rows, out_width), dtype=torch.float32, device=src.device)
        launch(name, grid_for(items), *head, row_ids, out, block.overflow)
        return out
    # The scatter adds into zeros. When x is a ReLU's output the gradient returned is that of the ReLU's input,
    # a dense layer's output, whose column sums are that layer's bias gradient: one row more, zeroed by the
    # same fill, collects them as the kernel writes (zerognn.column_sums). Its grid is what the GPU holds at
    # once, so that each block's one add per column into those sums stays few.
    summing = relu_out is not None
    buffer = torch.zeros((rows + summing, out_width), dtype=torch.float32, device=src.device)
    out = buffer[:rows]
    launch(name, grid_for(items, max_blocks=resident_blocks()) if summing else grid_for(items), *head, relu_out, out,
           buffer[rows] if summing else None, block.overflow)
    return column_sums.attach(out, buffer[rows]) if summing else out


def _forward_over_rows(x: GatheredRows, block: EllBlock, op: str, widen: int, relu_input: bool) -> torch.Tensor:
    """``<op>_forward`` over the rows of ``x.table`` that ``x.ids`` name, read in place (no gathered copy).
    Outside autograd: the rows are input features, which take no gradient."""
    if x.table.requires_grad:
        raise ZeroGNNError(f"{op} reads the rows of a table through ids in its forward alone and gives the table no "
                           f"gradient, but the table requires a gradient")
    if relu_input:
        raise ZeroGNNError(f"{op} was told its input is a ReLU's output, but it is the rows of a table read "
                           f"through ids (the input features), which no ReLU made")
    width = x.table.shape[1]
    return _rowwise(f"{op}_forward", x.table, block, block.num_dst, width, widen * width, row_ids=x.ids)


class _RowAggregation(torch.autograd.Function):
    """An aggregation that is linear in x [num_src, width], row by row: ``<op>_forward`` and its transpose
    ``<op>_backward``. ``widen`` is the ratio of output to input width (2 for SAGE's [aggregate | self]).
    With ``relu_input`` the backward also applies the mask of the ReLU whose output x is (x > 0), so the
    gradient it returns is that of the ReLU's input."""

    @staticmethod
    def forward(ctx, x, block, op, widen, relu_input):
        ctx.block, ctx.num_src, ctx.op, ctx.width = block, x.shape[0], op, x.shape[1]
        x = x.contiguous()
        ctx.relu_input = relu_input
        if relu_input:
            ctx.save_for_backward(x)
        return _rowwise(f"{op}_forward", x, block, block.num_dst, x.shape[1], widen * x.shape[1])

    @staticmethod
    def backward(ctx, grad):
        relu_out = ctx.saved_tensors[0] if ctx.relu_input else None
        if not determinism.enabled():
            grad_x = _rowwise(f"{ctx.op}_backward", grad, ctx.block, ctx.num_src, ctx.width, ctx.width, relu_out)
            return grad_x, None, None, None, None
        block, width = ctx.block, ctx.width
        t = transpose(block)
        grad_x = torch.empty((ctx.num_src, width), dtype=torch.float32, device=grad.device)
        launch(f"{ctx.op}_backward_transposed", grid_for(ctx.num_src * vector_width(width)), grad.contiguous(),
               np.int64(width), block.counts, block.n_dst, np.int32(block.num_dst), np.int32(block.fanout), t.ends,
               t.degree, t.order, np.int32(ctx.num_src), relu_out, grad_x, block.overflow)
        return grad_x, None, None, None, None


GAT_THREADS = 128


class _GatAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z, score_src, score_dst, block, negative_slope):
        z, score_src, score_dst = z.contiguous(), score_src.contiguous(), score_dst.contiguous()
        heads, channels = z.shape[1], z.shape[2]
        alpha = torch.empty(block.num_dst, block.fanout + 1, heads, dtype=torch.float32, device=z.device)
        out = torch.empty(block.num_dst, heads, channels, dtype=torch.float32, device=z.device)
        warps_per_block = GAT_THREADS // 32
        launch("gat_attention_forward", grid_for(block.num_dst * heads, warps_per_block), z, score_src, score_dst,
               block.nbr_local, block.counts, block.n_dst, np.int32(block.num_dst), np.int32(block.fanout),
               np.int32(heads), np.int32(channels), np.float32(negative_slope), alpha, out, block.overflow,
               threads=GAT_THREADS)
        ctx.save_for_backward(z, score_src, score_dst, alpha)
        ctx.block, ctx.negative_slope = block, negative_slope
        return out

    @staticmethod
    def backward(ctx, grad):
        z, score_src, score_dst, alpha = ctx.saved_tensors
        block = ctx.block
        heads, channels = z.shape[1], z.shape[2]
        grad = grad.contiguous()
        ordered = determinism.enabled()
        # The scatter form adds into zeroed source gradients; the ordered one writes every row of them.
        grad_z = (torch.empty_like if ordered else torch.zeros_like)(z)
        grad_src = (torch.empty_like if ordered else torch.zeros_like)(score_src)
        grad_dst = torch.zeros_like(score_dst)
        grad_logit = torch.empty_like(alpha) if ordered else None
        warps_per_block = GAT_THREADS // 32
        launch("gat_attention_backward", grid_for(block.num_dst * heads, warps_per_block), grad, z,
               score_src, score_dst, alpha, block.nbr_local, block.counts, block.n_dst, np.int32(block.num_dst),
               np.int32(block.fanout), np.int32(heads), np.int32(channels), np.float32(ctx.negative_slope), grad_z,
               grad_src, grad_dst, grad_logit, block.overflow, threads=GAT_THREADS)
        if ordered:
            t = transpose(block)
            num_src = z.shape[0]
            launch("gat_attention_backward_transposed", grid_for(num_src * heads * channels), grad, alpha, grad_logit,
                   block.n_dst, np.int32(block.num_dst), np.int32(block.fanout), np.int32(heads), np.int32(channels),
                   t.ends, t.degree, t.order, np.int32(num_src), grad_z, grad_src, block.overflow)
        return grad_z, grad_src, grad_dst, None, None


class CudaOps:
    """``AggregationOps`` over ``EllBlock``s, on our kernels.

    ``folds_relu_backward``: ``sage`` and ``gcn`` called with ``relu_input=True`` mask their input's
    gradient by the ReLU that made x, so the model's ReLU must not mask it again.
    ``accepts_gathered_rows``: ``sage`` and ``gcn`` take a ``GatheredRows`` as x and read its rows in
    place (``zerognn.cuda.gather.model_input`` hands one to models that declare ``fuses_input_gather``)."""

    folds_relu_backward = True
    accepts_gathered_rows = True

    def sage(self, x: torch.Tensor | GatheredRows, block: EllBlock, relu_input: bool = False) -> torch.Tensor:
        if isinstance(x, GatheredRows):
            return _forward_over_rows(x, block, "sage_concat", 2, relu_input)
        return _RowAggregation.apply(x, block, "sage_concat", 2, relu_input)

    def gcn(self, x: torch.Tensor | GatheredRows, block: EllBlock, relu_input: bool = False) -> torch.Tensor:
        if isinstance(x, GatheredRows):
            return _forward_over_rows(x, block, "gcn_aggregate", 1, relu_input)
        return _RowAggregation.apply(x, block, "gcn_aggregate", 1, relu_input)

    def gat(self, z, score_src, score_dst, block: EllBlock, negative_slope: float) -> torch.Tensor:
        return _GatAttention.apply(z, score_src, score_dst, block, negative_slope)


CUDA_OPS = CudaOps()
