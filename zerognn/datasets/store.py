"""The on-disk dataset format (versioned), its validation, and the in-memory ``Dataset`` it loads into.

A dataset is a directory::

    meta.json         format_version, name, source, sizes, dtypes, generator parameters
    rowptr.npy        int64 [N+1]
    col.npy           int32 [E] (int64 when N > 2^31)
    features.npy      float32 [N, F]; absent when meta.json says "features": "regenerated" (the rows
                      are then computed where the dataset is loaded: zerognn.datasets.features)
    labels.npy        int64 [N]: a class in [0, C), or -1 for an unlabelled node in no split
    train_idx.npy, val_idx.npy, test_idx.npy   int64 node ids

The directory is built under a temporary name and renamed into place after a full check
(``zerognn.datasets.build``), so a killed or failed build never leaves a directory that looks
complete, and a build never replaces a directory that is not a dataset of ours. Arrays load
memory-mapped. Loading always runs the structural checks (``zerognn.datasets.validate``): sizes,
dtypes, the CSR pointers and every id range, as GPU kernels index with these ids unchecked; the full
check adds the value scans.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..errors import ZeroGNNError
from ..graph import CSRGraph
from .features import regenerate_features
from .validate import ARRAYS, SPLITS, Invalid, check_arrays, check_feature_mode, check_sizes, stored_arrays

FORMAT_VERSION = 1
DATASET_FILES = frozenset({"meta.json", *(f"{key}.npy" for key in ARRAYS)})
# Snakemake's mark on a directory() output: a dataset the workflow built holds it beside DATASET_FILES.
WORKFLOW_MARKS = frozenset({".snakemake_timestamp"})


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

    def with_features_on(self, device: torch.device | str) -> Dataset:
        """This dataset with its regenerated features computed on ``device`` (loaded as sizes only, see
        ``load_dataset``); stored features are returned as they are."""
        if not self.features.is_meta:
            return self
        return dataclasses.replace(self, features=regenerate_features(self.meta, self.labels, device))

    def to(self, device: torch.device | str) -> Dataset:
        return Dataset(
            self.name, self.graph.to(device), self.features.to(device), self.labels.to(device),
            self.train_idx.to(device), self.val_idx.to(device), self.test_idx.to(device),
            self.num_classes, dict(self.meta),
        )

    def check(self, full: bool = True) -> None:
        """Validate dtypes, shapes, id ranges and (``full``) values; raises ZeroGNNError naming the problem."""
        sizes = {
            "num_nodes": self.num_nodes, "num_edges": self.graph.num_edges,
            "num_features": int(self.features.shape[1]) if self.features.dim() == 2 else 1,
            "num_classes": self.num_classes,
        }
        try:
            # Features with no storage (shapes only, see load_dataset) have no values to check.
            keys = ("labels", *SPLITS) if self.features.is_meta else ("features", "labels", *SPLITS)
            arrays = {key: _numpy(key, getattr(self, key)) for key in keys}
            arrays.update(rowptr=_numpy("rowptr", self.graph.rowptr), col=_numpy("col", self.graph.col))
            check_sizes(sizes, sizes, source="the dataset")
            check_arrays(sizes, arrays, full)
        except Invalid as problem:
            raise ZeroGNNError(f"dataset {self.name}: {problem.text('')}.") from None


def _numpy(key: str, tensor: torch.Tensor) -> np.ndarray:
    try:
        return tensor.detach().cpu().numpy()
    except TypeError as exc:
        raise Invalid(f"has dtype {tensor.dtype}, which the format does not use", key) from exc


def save_dataset(ds: Dataset, directory: Path, extra_meta: dict[str, Any] | None = None) -> None:
    """Write ``ds`` into ``directory`` (which must be a fresh, empty directory: see atomic_dir)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    arrays = {
        "rowptr": ds.graph.rowptr, "col": ds.graph.col, "features": ds.features, "labels": ds.labels,
        "train_idx": ds.train_idx, "val_idx": ds.val_idx, "test_idx": ds.test_idx,
    }
    for key in stored_arrays(ds.meta):
        np.save(directory / f"{key}.npy", arrays[key].detach().cpu().numpy())
    write_meta(directory, ds, extra_meta)


def write_meta(directory: Path, ds_or_sizes: Dataset | dict[str, Any],
               extra_meta: dict[str, Any] | None = None) -> None:
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


def _rebuild(directory: Path, meta: dict[str, Any] | None = None) -> str:
    """The fix for a damaged dataset: a forced rebuild where the build would recognise it as ours."""
    if meta is not None and dataset_name_in(directory) is not None:
        options = "".join(
            f" --{key} {meta[key]}" for key, default in (("scale", 1), ("seed", 0))
            if isinstance(meta.get(key), (int, float)) and meta[key] != default
        )
        return f"rebuild it with `zerognn dataset make {meta['name']} --out {directory}{options} --force`"
    return f"delete {directory} and rebuild it with `zerognn dataset make NAME --out {directory}`"


def read_meta(directory: Path) -> dict[str, Any]:
    """meta.json of ``directory``, with the format version and every key loaders rely on checked."""
    directory = Path(directory)
    path = directory / "meta.json"
    if not path.is_file():
        raise ZeroGNNError(
            f"{directory} is not a dataset directory (no meta.json); build it with "
            f"`zerognn dataset make NAME --out {directory}`."
        )
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ZeroGNNError(f"{path} is unreadable or not valid JSON ({exc}); {_rebuild(directory)}.") from exc
    if not isinstance(meta, dict):
        raise ZeroGNNError(f"{path} holds a JSON {type(meta).__name__}, not an object; {_rebuild(directory)}.")
    version = meta.get("format_version")
    if version != FORMAT_VERSION:
        raise ZeroGNNError(
            f"{directory} has dataset format version {version!r}, this zerognn reads version "
            f"{FORMAT_VERSION}; delete the directory and rebuild it with `zerognn dataset make`."
        )
    try:
        check_sizes(meta)
        check_feature_mode(meta)
    except Invalid as problem:
        raise ZeroGNNError(f"{directory}: {problem}; {_rebuild(directory, meta)}.") from None
    return meta


def dataset_name_in(directory: Path) -> str | None:
    """The name of the zerognn dataset in ``directory``, or None unless it is one we wrote."""
    try:
        meta = json.loads((Path(directory) / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or type(meta.get("format_version")) is not int:
        return None
    name = meta.get("name")
    return name if meta["format_version"] == FORMAT_VERSION and isinstance(name, str) and name else None


def open_arrays(directory: Path, mmap_mode: str | None, keys: tuple[str, ...] = ARRAYS) -> dict[str, np.ndarray]:
    arrays = {}
    for key in keys:
        path = directory / f"{key}.npy"
        if not path.is_file():
            raise Invalid("is missing", key)
        try:
            arrays[key] = np.load(path, mmap_mode=mmap_mode)
        except (ValueError, OSError, EOFError) as exc:
            raise Invalid(f"is unreadable ({exc})", key) from exc
    return arrays


def load_dataset(directory: Path, mmap: bool = True, check: bool = False,
                 features_on: torch.device | str = "cpu") -> Dataset:
    """Load a dataset directory written by ``save_dataset`` (arrays memory-mapped by default).

    The structural checks always run; ``check`` adds the full value scans (``zerognn dataset info --check``).
    A dataset whose features are regenerated (meta.json ``features``) gets them computed on
    ``features_on`` as float32 (on "meta": shapes only, nothing computed); stored features are read.
    """
    directory = Path(directory)
    meta = read_meta(directory)
    try:
        # torch.from_numpy wants a writable array; a copy-on-write memmap keeps memory bounded.
        arrays = open_arrays(directory, "c" if mmap else None, stored_arrays(meta))
        check_arrays(meta, arrays, full=check)
    except Invalid as problem:
        raise ZeroGNNError(f"{directory}: {problem}; {_rebuild(directory, meta)}.") from None
    tensors = {key: torch.from_numpy(arr) for key, arr in arrays.items()}
    if "features" not in tensors:
        tensors["features"] = regenerate_features(meta, tensors["labels"], "meta")
    return Dataset(
        name=meta["name"],
        graph=CSRGraph(tensors["rowptr"], tensors["col"]),
        features=tensors["features"],
        labels=tensors["labels"],
        train_idx=tensors["train_idx"],
        val_idx=tensors["val_idx"],
        test_idx=tensors["test_idx"],
        num_classes=meta["num_classes"],
        meta=meta,
    ).with_features_on(features_on)


