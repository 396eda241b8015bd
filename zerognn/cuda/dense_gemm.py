"""The dense layers' GEMMs in a fixed order of additions (``kernels/dense_gemm.cu``), for deterministic runs.

Every output element is one sequential sum over its reduction index, so it does not depend on how many
rows the matrices have: the output and input gradient of ``x @ w.T + bias`` get the same bits for a row
whether the batch holds only live rows or is padded to an envelope's capacity, and the weight and bias
gradients, which sum over rows, sum fixed chunks of ``CHUNK_ROWS`` rows and then the chunks in order, so
trailing rows of zeros change nothing. cuBLAS promises the same bits only for the same shapes.
"""

from __future__ import annotations

import numpy as np
import torch

from .launch import grid_for, launch

CHUNK_ROWS = 1024  # rows per partial sum of a weight gradient: fixed, whatever the row count
SUM_CHUNK_ROWS = 64  # rows per partial sum of a bias gradient (a column sum)


def _sm_count(device: torch.device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


def _gemm(a, a_i, a_r, b, b_j, b_r, rows_i, cols_j, reduce, chunk_rows, bias, relu, c, c_i, c_chunk) -> None:
    """c[chunk][i, j] = sum over the chunk's r of a(i, r) b(j, r) (+ bias[j], ReLU): see the .cu file."""
    chunks = max(1, -(-reduce // chunk_rows))

    def blocks(tile: int) -> int:
        return -(-rows_i // tile) * -(-cols_j // tile) * chunks

    # The tile decides which thread computes an element, never the order of its sum.
    tile = 128 if blocks(128) >= 2 * _sm_count(c.device) else 64
    launch(f"dense_gemm_{tile}", blocks(tile), a, np.int64(a_i), np.int64(a_r), b, np.int64(b_j), np.int64(b_r),
           np.int64(rows_i), np.int64(cols_j), np.int64(reduce), np.int64(chunk_rows), bias, np.int32(relu), c,
           np.int64(c_i), np.int64(c_chunk))


def linear(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None, relu: bool) -> torch.Tensor:
    """``x @ w.T (+ bias)``, through ReLU if asked: x [m, k], w [n, k]."""
    x, w = x.contiguous(), w.contiguous()
    (m, k), n = x.shape, w.shape[0]
    out = torch.empty(m, n, dtype=torch.float32, device=x.device)
    _gemm(x, k, 1, w, k, 1, m, n, k, max(k, 1), bias, relu, out, n, 0)
    return out


def input_grad(g: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``g @ w``: g [m, n], w [n, k]."""
    g, w = g.contiguous(), w.contiguous()
    (m, n), k = g.shape, w.shape[1]
    out = torch.empty(m, k, dtype=torch.float32, device=g.device)
    _gemm(g, n, 1, w, 1, k, m, k, n, max(n, 1), None, 0, out, k, 0)
    return out


def weight_and_bias_grad(g: torch.Tensor, x: torch.Tensor, bias: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``(g.T @ x, g.sum(0) if bias)``: g [m, n], x [m, k], summed over fixed chunks of rows."""
    g, x = g.contiguous(), x.contiguous()
    (m, n), k = g.shape, x.shape[1]
    chunks = max(1, -(-m // CHUNK_ROWS))
    partial = torch.empty(chunks, n * k, dtype=torch.float32, device=g.device)
    _gemm(g, 1, n, x, 1, k, n, k, m, CHUNK_ROWS, None, 0, partial, k, n * k)
    return _chunk_sums(partial).view(n, k), (column_sums(g) if bias else None)


def column_sums(t: torch.Tensor) -> torch.Tensor:
    """``t.sum(0)`` of a matrix, over fixed chunks of ``SUM_CHUNK_ROWS`` rows (a sequential sum each, one
    thread per chunk and column: short chunks keep enough threads reading a tall matrix)."""
    t = t.contiguous()
    m, n = t.shape
    chunks = max(1, -(-m // SUM_CHUNK_ROWS))
    partial = torch.empty(chunks, n, dtype=torch.float32, device=t.device)
    launch("dense_column_sums", grid_for(chunks * n), t, np.int64(m), np.int64(n), np.int64(SUM_CHUNK_ROWS), partial,
           np.int64(n))
    return _chunk_sums(partial)


def _chunk_sums(partial: torch.Tensor) -> torch.Tensor:
    """The sum of the rows of ``partial`` [chunks, count], in row order."""
    chunks, count = partial.shape
    out = torch.empty(count, dtype=torch.float32, device=partial.device)
    launch("dense_chunk_sums", grid_for(count), partial, np.int64(chunks), np.int64(count), out)
    return out
