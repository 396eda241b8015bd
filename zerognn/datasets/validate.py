"""What makes a dataset valid: meta.json's keys, and the arrays' dtypes, shapes, CSR pointers, id and
label ranges (the structural checks every load runs, since GPU kernels index with these ids
unchecked) and, in the full check, their values (finite features, disjoint splits). Problems are
raised as ``Invalid``; the store and the builder add where the dataset is and how to rebuild it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ..graph import INT32_MAX
from .features import FEATURE_MODES, FEATURES_REGENERATED, FEATURES_STORED

SPLITS = ("train_idx", "val_idx", "test_idx")
ARRAYS = ("rowptr", "col", "features", "labels", *SPLITS)
# meta.json keys every loader relies on: their type and smallest value.
META_KEYS: dict[str, tuple[type, int | None]] = {
    "format_version": (int, None), "name": (str, None), "num_nodes": (int, 1), "num_edges": (int, 0),
    "num_features": (int, 1), "num_classes": (int, 1),
}
# Elements per vectorised step of a scan: temporaries stay bounded on memory-mapped arrays.
CHECK_CHUNK = 1 << 24


class Invalid(Exception):
    """A problem with array ``key`` (None: with meta.json); callers add where it is and what to do."""

    def __init__(self, problem: str, key: str | None = None) -> None:
        super().__init__(problem)
        self.problem, self.key = problem, key

    def __str__(self) -> str:
        return self.text(".npy")

    def text(self, suffix: str) -> str:
        return self.problem if self.key is None else f"{self.key}{suffix} {self.problem}"


def check_sizes(meta: dict[str, Any], keys: Iterable[str] = META_KEYS, source: str = "meta.json") -> None:
    """Each of ``keys`` is in ``meta`` with the type and smallest value ``META_KEYS`` gives it."""
    for key in keys:
        kind, minimum = META_KEYS[key]
        if key not in meta:
            raise Invalid(f"{source} lacks the key {key!r}")
        value = meta[key]
        if isinstance(value, bool) or not isinstance(value, kind) or (kind is str and not value):
            expected = "an integer" if kind is int else "a non-empty string"
            raise Invalid(f"{source} has {key} = {value!r}, expected {expected}")
        if minimum is not None and value < minimum:
            raise Invalid(f"{source} has {key} = {value}, expected at least {minimum}")


def check_feature_mode(meta: dict[str, Any], source: str = "meta.json") -> str:
    """meta.json's ``features``: stored (the default) or regenerated, which needs the generator's inputs."""
    mode = meta.get("features", FEATURES_STORED)
    if mode not in FEATURE_MODES:
        raise Invalid(f"{source} has features = {mode!r}, expected one of {', '.join(FEATURE_MODES)}")
    if mode == FEATURES_REGENERATED:
        for key, kind in (("seed", int), ("feature_noise", float)):
            value = meta.get(key)
            if isinstance(value, bool) or not isinstance(value, (kind, int)) or value < 0:
                raise Invalid(f"{source} has regenerated features but {key} = {value!r}, expected a number >= 0")
    return mode


def stored_arrays(meta: dict[str, Any]) -> tuple[str, ...]:
    """The arrays a dataset keeps on disk: all of ``ARRAYS`` unless its features are regenerated."""
    if meta.get("features", FEATURES_STORED) == FEATURES_REGENERATED:
        return tuple(key for key in ARRAYS if key != "features")
    return ARRAYS


def check_arrays(sizes: dict[str, Any], arrays: dict[str, np.ndarray], full: bool) -> None:
    """Structural checks (dtypes, shapes, CSR pointers, id and label ranges); ``full`` adds value scans.

    Features are checked when ``arrays`` holds them (not when the dataset regenerates them).
    """
    n, e, f, c = (sizes[key] for key in ("num_nodes", "num_edges", "num_features", "num_classes"))
    _expect(arrays, "rowptr", (np.int64,), (n + 1,), "num_nodes + 1")
    _expect(arrays, "col", (np.int32, np.int64), (e,), "num_edges")
    if "features" in arrays:
        _expect(arrays, "features", (np.float32,), (n, f), "(num_nodes, num_features)")
    _expect(arrays, "labels", (np.int64,), (n,), "num_nodes")
    for split in SPLITS:
        _expect(arrays, split, (np.int64,), None, "")
    if arrays["col"].dtype == np.int32 and n - 1 > INT32_MAX:
        raise Invalid(f"is int32 but {n} nodes need int64 ids", "col")
    _check_rowptr(arrays["rowptr"], e)
    _check_range(arrays, "col", 0, n, "node ids")
    _check_range(arrays, "labels", -1, c, "labels")
    if arrays["train_idx"].size == 0:
        raise Invalid("is empty: the train split has no nodes", "train_idx")
    for split in SPLITS:
        _check_range(arrays, split, 0, n, "node ids")
        _check_split_labels(arrays["labels"], arrays[split], split, c)
    if full and "features" in arrays:
        _check_finite(arrays["features"])
        _check_splits_disjoint(arrays, n)


def _expect(
    arrays: dict[str, np.ndarray], key: str, dtypes: tuple[type, ...], shape: tuple[int, ...] | None, what: str
) -> None:
    arr = arrays[key]
    # Equality with the native dtype also rejects byte-swapped files, which torch cannot wrap.
    if arr.dtype not in [np.dtype(d) for d in dtypes]:
        names = "/".join(np.dtype(d).name for d in dtypes)
        found = arr.dtype.name if arr.dtype.isnative else f"byte-swapped {arr.dtype.name}"
        raise Invalid(f"has dtype {found}, expected {names}", key)
    if shape is None:
        if arr.ndim != 1:
            raise Invalid(f"has shape {arr.shape}, expected 1-D", key)
    elif arr.shape != shape:
        raise Invalid(f"has shape {arr.shape}, expected {shape} from meta.json's {what}", key)


def _chunks(length: int, step: int = CHECK_CHUNK) -> Iterator[slice]:
    for start in range(0, length, step):
        yield slice(start, min(start + step, length))


def _check_rowptr(rowptr: np.ndarray, num_edges: int) -> None:
    first, last = int(rowptr[0]), int(rowptr[-1])
    if first != 0 or last != num_edges:
        raise Invalid(f"runs from {first} to {last}, expected 0 to num_edges = {num_edges}", "rowptr")
    for s in _chunks(rowptr.size - 1):
        # rowptr[s.start + 1 : s.stop + 1] against rowptr[s]: each step within and across chunks.
        drops = np.flatnonzero(rowptr[s.start + 1:s.stop + 1] < rowptr[s])
        if drops.size:
            v = s.start + int(drops[0])
            raise Invalid(f"decreases at node {v} ({int(rowptr[v])} -> {int(rowptr[v + 1])})", "rowptr")


def _check_range(arrays: dict[str, np.ndarray], key: str, low: int, high: int, what: str) -> None:
    """Every entry of ``arrays[key]`` in [low, high)."""
    arr = arrays[key]
    for s in _chunks(arr.size):
        lo, hi = int(arr[s].min()), int(arr[s].max())
        if lo < low or hi >= high:
            raise Invalid(f"holds {what} outside [{low}, {high}) (min {lo}, max {hi})", key)


def _check_split_labels(labels: np.ndarray, idx: np.ndarray, split: str, num_classes: int) -> None:
    for s in _chunks(idx.size):
        unlabelled = np.flatnonzero(labels[idx[s]] < 0)
        if unlabelled.size:
            v = int(idx[s][unlabelled[0]])
            raise Invalid(f"has label {int(labels[v])} for node {v} of {split}, expected [0, {num_classes})", "labels")


def _check_finite(features: np.ndarray) -> None:
    rows = max(1, CHECK_CHUNK // max(1, features.shape[1]))
    for s in _chunks(features.shape[0], rows):
        bad = np.flatnonzero(~np.isfinite(features[s]).all(axis=1))
        if bad.size:
            v = s.start + int(bad[0])
            raise Invalid(f"has a non-finite value (NaN or Inf) in row {v}", "features")


def _check_splits_disjoint(arrays: dict[str, np.ndarray], num_nodes: int) -> None:
    seen = np.zeros(num_nodes, dtype=np.bool_)
    for split in SPLITS:
        for s in _chunks(arrays[split].size):
            ids = arrays[split][s]
            unique = np.unique(ids)
            again = unique[seen[unique]]
            if unique.size < ids.size or again.size:
                v = int(again[0]) if again.size else _first_repeat(ids)
                raise Invalid(f"repeats node {v}, within itself or from an earlier split", split)
            seen[unique] = True


def _first_repeat(ids: np.ndarray) -> int:
    ordered = np.sort(ids)
    return int(ordered[np.flatnonzero(ordered[1:] == ordered[:-1])[0]])


