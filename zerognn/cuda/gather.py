"""Rows of the input by node id: the gathers, and the feature rows a frontier names, not yet gathered.

``gather_rows`` copies ``table[ids[:n_ids]]`` into a buffer with one row per id slot (rows past the live
count zeroed) and ``gather_labels`` the labels likewise (``kernels/gather_rows.cu``). ``GatheredRows``
names the same feature rows without copying them: the CUDA ops' SAGE and GCN aggregations read them where
they are, ``table[ids[j]]`` wherever they read row j of their input (``kernels/sage_concat.cu``,
``kernels/gcn_aggregate.cu``: the forwards' ``rows`` argument), so a first layer over them needs no gather
kernel and no gathered buffer is written or read back. ``model_input`` is the one place that decides,
for every CUDA variant, which of the two the model's first layer gets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..errors import ZeroGNNError
from .launch import grid_for, launch, vector_width


def gather_rows(table: torch.Tensor, ids: torch.Tensor, n_ids: torch.Tensor, overflow: torch.Tensor,
                grid: int | None = None) -> torch.Tensor:
    """``table[ids[:n_ids]]`` into a buffer with one row per id slot (float32 rows)."""
    out = torch.empty(ids.numel(), table.shape[1], dtype=torch.float32, device=ids.device)
    launch("gather_rows", grid or grid_for(ids.numel() * vector_width(table.shape[1])), table,
           np.int64(table.shape[1]), ids, n_ids, np.int32(ids.numel()), out, overflow)
    return out


def gather_labels(labels: torch.Tensor, ids: torch.Tensor, n_ids: torch.Tensor, overflow: torch.Tensor,
                  grid: int | None = None) -> torch.Tensor:
    out = torch.empty(ids.numel(), dtype=torch.int64, device=ids.device)
    launch("gather_labels", grid or grid_for(out.numel()), labels, ids, n_ids, np.int32(ids.numel()), out, overflow)
    return out


@dataclass(frozen=True)
class GatheredRows:
    """The rows ``table[ids[j]]`` of the first ``n_ids`` id slots, not copied out: what ``gather_rows``
    would return (``materialize`` does that), as a value that ops declaring ``accepts_gathered_rows``
    read in place. It holds no buffer of its own, only the table and the ids, which live on anyway.

    Only the rows that live destinations reference are ever read — those of live ids, as over a gathered
    buffer — so the slots past ``n_ids`` may hold anything."""

    table: torch.Tensor     # float32 [num_rows, width], contiguous: the input features
    ids: torch.Tensor       # int64 [slots]: the row of each input row in ``table``; the first n_ids are live
    n_ids: torch.Tensor     # int32 [1] on the device: the live id count
    overflow: torch.Tensor  # int64 [2]: the record ``materialize`` raises if n_ids exceeds the slots

    def __post_init__(self):
        if self.table.dim() != 2 or self.table.dtype != torch.float32 or not self.table.is_contiguous():
            raise ZeroGNNError(f"rows read through ids need a contiguous float32 table of rows, got a "
                               f"{self.table.dtype} tensor of shape {tuple(self.table.shape)}"
                               f"{'' if self.table.is_contiguous() else ' (not contiguous)'}")
        if self.ids.dim() != 1 or self.ids.dtype != torch.int64:
            raise ZeroGNNError(f"rows read through ids need int64 ids, one per row, got a {self.ids.dtype} "
                               f"tensor of shape {tuple(self.ids.shape)}")

    @property
    def shape(self) -> torch.Size:
        """The shape of the gathered buffer these rows stand for: one row per id slot."""
        return torch.Size((self.ids.numel(), self.table.shape[1]))

    @property
    def dtype(self) -> torch.dtype:
        return self.table.dtype

    @property
    def device(self) -> torch.device:
        return self.ids.device

    def materialize(self, grid: int | None = None) -> torch.Tensor:
        """The rows gathered into a buffer of their own (``gather_rows``: rows past ``n_ids`` zeroed)."""
        return gather_rows(self.table, self.ids, self.n_ids, self.overflow, grid)


def model_input(model, ops, features: torch.Tensor, ids: torch.Tensor, n_ids: torch.Tensor,
                overflow: torch.Tensor) -> torch.Tensor | GatheredRows:
    """The input of ``model``'s first layer over ``ops``: the feature rows of ``ids`` (the last frontier,
    ``n_ids`` of them live), as ``GatheredRows`` or gathered.

    ``GatheredRows`` — no gather kernel, no buffer — when the model declares ``fuses_input_gather`` (its
    first layer reads x only through ``ops.sage`` or ``ops.gcn``: SAGE and GCN), the ops read such rows
    (``accepts_gathered_rows``: the CUDA ops) and the features are float32 (the kernels' type, at every
    precision: only GEMM operands are cast). Otherwise the rows gathered by ``gather_rows``, as GAT's
    first GEMM needs them."""
    if (getattr(model, "fuses_input_gather", False) and getattr(ops, "accepts_gathered_rows", False)
            and features.dtype == torch.float32):
        return GatheredRows(features, ids, n_ids, overflow)
    return gather_rows(features, ids, n_ids, overflow)
