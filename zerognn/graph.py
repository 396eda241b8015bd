"""The CSR graph container every other module samples from.

``rowptr`` is int64 (edge counts pass 2^31 on papers100M-sized graphs); ``col`` is int32 while node
ids fit in int32 and int64 beyond, which halves the largest array on every graph we study.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .errors import ZeroGNNError

INT32_MAX = 2**31 - 1


def col_dtype_for(num_nodes: int) -> torch.dtype:
    """The narrowest column dtype that holds every node id of a graph with ``num_nodes`` nodes."""
    return torch.int32 if num_nodes - 1 <= INT32_MAX else torch.int64


@dataclass(frozen=True)
class CSRGraph:
    """Out-neighbour lists in compressed sparse row form: ``col[rowptr[v]:rowptr[v+1]]``."""

    rowptr: torch.Tensor
    col: torch.Tensor

    def __post_init__(self) -> None:
        if self.rowptr.dtype != torch.int64 or self.rowptr.dim() != 1 or self.rowptr.numel() < 1:
            raise ZeroGNNError(
                f"CSR rowptr must be a 1-D int64 tensor with N+1 entries, got {self.rowptr.dtype} "
                f"of shape {tuple(self.rowptr.shape)}; rebuild the dataset with `zerognn dataset make`."
            )
        if self.col.dtype not in (torch.int32, torch.int64) or self.col.dim() != 1:
            raise ZeroGNNError(
                f"CSR col must be a 1-D int32/int64 tensor, got {self.col.dtype} of shape "
                f"{tuple(self.col.shape)}; rebuild the dataset with `zerognn dataset make`."
            )
        if self.col.dtype == torch.int32 and self.num_nodes - 1 > INT32_MAX:
            raise ZeroGNNError(
                f"{self.num_nodes} nodes do not fit int32 column ids; store col as int64."
            )

    @property
    def num_nodes(self) -> int:
        return self.rowptr.numel() - 1

    @property
    def num_edges(self) -> int:
        return self.col.numel()

    @property
    def device(self) -> torch.device:
        return self.col.device

    def degrees(self) -> torch.Tensor:
        return self.rowptr[1:] - self.rowptr[:-1]

    def to(self, device: torch.device | str) -> CSRGraph:
        return CSRGraph(self.rowptr.to(device), self.col.to(device))

    def check(self) -> None:
        """Full structural validation (O(N + E)); raises ZeroGNNError naming the first problem."""
        rp = self.rowptr
        if int(rp[0]) != 0 or int(rp[-1]) != self.num_edges:
            raise ZeroGNNError(
                f"CSR rowptr must start at 0 and end at the edge count {self.num_edges}, "
                f"got {int(rp[0])}..{int(rp[-1])}: the graph files are corrupt; rebuild the dataset."
            )
        if self.num_nodes and bool((rp[1:] < rp[:-1]).any()):
            raise ZeroGNNError("CSR rowptr is not non-decreasing: the graph files are corrupt; rebuild the dataset.")
        if self.num_edges and (int(self.col.min()) < 0 or int(self.col.max()) >= self.num_nodes):
            raise ZeroGNNError(
                f"CSR col holds ids outside [0, {self.num_nodes}): the graph files are corrupt; rebuild the dataset."
            )

    @staticmethod
    def from_edges(src: torch.Tensor, dst: torch.Tensor, num_nodes: int, dedupe: bool = True) -> CSRGraph:
        """Build CSR from an edge list held in memory (small graphs, loaders, tests).

        With ``dedupe`` repeated edges and self loops are dropped. Rows are sorted by neighbour id.
        """
        src = src.to(torch.int64)
        dst = dst.to(torch.int64)
        if src.numel() and (int(src.min()) < 0 or int(dst.min()) < 0 or int(src.max()) >= num_nodes
                            or int(dst.max()) >= num_nodes):
            raise ZeroGNNError(f"edge list holds node ids outside [0, {num_nodes})")
        key = src * num_nodes + dst
        if dedupe:
            key = torch.unique(key[src != dst])
        else:
            key = torch.sort(key).values
        rows = key // num_nodes
        cols = key % num_nodes
        counts = torch.bincount(rows, minlength=num_nodes)
        rowptr = torch.zeros(num_nodes + 1, dtype=torch.int64, device=src.device)
        rowptr[1:] = torch.cumsum(counts, 0)
        return CSRGraph(rowptr, cols.to(col_dtype_for(num_nodes)))
