"""The on-disk dataset format (versioned) and the in-memory ``Dataset`` it loads into.

A dataset is a directory::

    meta.json         format_version, name, source, sizes, dtypes, generator parameters
    rowptr.npy        int64 [N+1]
    col.npy           int32 [E] (int64 when N > 2^31)
    features.npy      float32 [N, F]
    labels.npy        int64 [N]
    train_idx.npy, val_idx.npy, test_idx.npy   int64 node ids

The directory is built under a temporary name and renamed into place (``atomic_dir``), so a killed
build never leaves a directory that looks complete. Arrays load memory-mapped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..errors import ZeroGNNError
from ..graph import CSRGraph

FORMAT_VERSION = 1
ARRAYS = ("rowptr", "col", "features", "labels", "train_idx", "val_idx", "test_idx")


@dataclass
class Dataset:
    """A node-classification dataset: graph, features, labels and splits (all torch tensors)."""

    name: str
    graph: CSRGraph
    features: torch.Tensor
    labels: torch.Tensor
    train_idx: torch.Tensor
    val_idx: torch.Tensor
    test_idx: torch.Tensor
    num_classes: int
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def num_nodes(self) -> int:
        return self.graph.num_nodes

    @property
    def num_features(self) -> int:
        return int(self.features.shape[1])

    def to(self, device: torch.device | str) -> "Dataset":
        return Dataset(
            self.name, self.graph.to(device), self.features.to(device), self.labels.to(device),
            self.train_idx.to(device), self.val_idx.to(device), self.test_idx.to(device),
            self.num_classes, dict(self.meta),
        )

    def check(self) -> None:
        """Validate shapes, dtypes and id ranges; raises ZeroGNNError naming the problem."""
        self.graph.check()
        n = self.num_nodes
        if self.features.dim() != 2 or self.features.shape[0] != n:
            raise ZeroGNNError(f"{self.name}: features have shape {tuple(self.features.shape)}, expected ({n}, F)")
        if self.labels.shape != (n,):
            raise ZeroGNNError(f"{self.name}: labels have shape {tuple(self.labels.shape)}, expected ({n},)")
        for split in ("train_idx", "val_idx", "test_idx"):
            idx = getattr(self, split)
            if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= n):
                raise ZeroGNNError(f"{self.name}: {split} holds node ids outside [0, {n})")
        if self.train_idx.numel() == 0:
            raise ZeroGNNError(f"{self.name}: the train split is empty")


def save_dataset(ds: Dataset, directory: Path, extra_meta: dict[str, Any] | None = None) -> None:
    """Write ``ds`` into ``directory`` (which must be a fresh, empty directory: see atomic_dir)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    arrays = {
        "rowptr": ds.graph.rowptr, "col": ds.graph.col, "features": ds.features, "labels": ds.labels,
        "train_idx": ds.train_idx, "val_idx": ds.val_idx, "test_idx": ds.test_idx,
    }
    for key, tensor in arrays.items():
        np.save(directory / f"{key}.npy", tensor.detach().cpu().numpy())
    write_meta(directory, ds, extra_meta)


def write_meta(directory: Path, ds_or_sizes: Dataset | dict[str, Any], extra_meta: dict[str, Any] | None = None) -> None:
    """Write meta.json last: its presence marks the arrays as complete."""
    if isinstance(ds_or_sizes, Dataset):
        ds = ds_or_sizes
        sizes = {
            "name": ds.name, "num_nodes": ds.num_nodes, "num_edges": ds.graph.num_edges,
            "num_features": ds.num_features, "num_classes": ds.num_classes,
            "col_dtype": str(ds.graph.col.dtype).replace("torch.", ""),
            "num_train": int(ds.train_idx.numel()), "num_val": int(ds.val_idx.numel()),
            "num_test": int(ds.test_idx.numel()), **ds.meta,
        }
    else:
        sizes = dict(ds_or_sizes)
    meta = {"format_version": FORMAT_VERSION, **sizes, **(extra_meta or {})}
    (Path(directory) / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")


def read_meta(directory: Path) -> dict[str, Any]:
    directory = Path(directory)
    path = directory / "meta.json"
    if not path.is_file():
        raise ZeroGNNError(
            f"{directory} is not a dataset directory (no meta.json); build it with "
            f"`zerognn dataset make NAME --out {directory}`."
        )
    try:
        meta = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ZeroGNNError(f"{path} is not valid JSON ({exc}); delete {directory} and rebuild it.") from exc
    version = meta.get("format_version")
    if version != FORMAT_VERSION:
        raise ZeroGNNError(
            f"{directory} has dataset format version {version!r}, this zerognn reads version "
            f"{FORMAT_VERSION}; delete the directory and rebuild it with `zerognn dataset make`."
        )
    return meta


def load_dataset(directory: Path, mmap: bool = True, check: bool = False) -> Dataset:
    """Load a dataset directory written by ``save_dataset`` (arrays memory-mapped by default)."""
    directory = Path(directory)
    meta = read_meta(directory)
    tensors = {}
    for key in ARRAYS:
        path = directory / f"{key}.npy"
        if not path.is_file():
            raise ZeroGNNError(f"{directory} lacks {key}.npy; delete the directory and rebuild it.")
        try:
            # torch.from_numpy wants a writable array; a copy-on-write memmap keeps memory bounded.
            arr = np.load(path, mmap_mode="c" if mmap else None)
        except (ValueError, OSError) as exc:
            raise ZeroGNNError(f"{path} is unreadable ({exc}); delete {directory} and rebuild it.") from exc
        tensors[key] = torch.from_numpy(arr)
    ds = Dataset(
        name=meta["name"],
        graph=CSRGraph(tensors["rowptr"], tensors["col"]),
        features=tensors["features"],
        labels=tensors["labels"],
        train_idx=tensors["train_idx"],
        val_idx=tensors["val_idx"],
        test_idx=tensors["test_idx"],
        num_classes=int(meta["num_classes"]),
        meta=meta,
    )
    if ds.num_nodes != meta["num_nodes"] or ds.graph.num_edges != meta["num_edges"]:
        raise ZeroGNNError(
            f"{directory}: arrays hold {ds.num_nodes} nodes / {ds.graph.num_edges} edges but meta.json "
            f"says {meta['num_nodes']} / {meta['num_edges']}; delete the directory and rebuild it."
        )
    if check:
        ds.check()
    return ds
