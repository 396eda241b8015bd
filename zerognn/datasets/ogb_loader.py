"""Convert an OGB node-property dataset, read (and downloaded) by the ``ogb`` package, to the store format.

ogb keeps a dataset under ``root/<name with _ for ->/``: ``raw/`` (CSV or NPZ files), ``split/<type>/``,
``processed/`` (its own cache) and ``RELEASE_v<version>.txt``. It is driven here with three adaptations,
scoped to the call and to ogb's dataset module:

- no prompts: ogb calls ``input()`` before a download over 1 GB and when the release file is missing;
  asking for the dataset is the consent to download it, and a missing release file is reported as an
  error beforehand, so stdin is never read (it may be closed);
- its processed cache loads again under torch >= 2.6 (see ``_TorchForOgb``);
- its progress prints go to stderr, keeping stdout for the CLI's own output.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..errors import ZeroGNNError, missing_extra
from .build import DISK_FULL, build_into, check_free_space, check_out_dir
from .rmat import build_csr
from .specs import OGB_NAMES, dataset_bytes
from .store import Dataset, load_dataset, write_meta

EDGE_CHUNK = 1 << 24


def load_ogb(
    name: str, root: str | Path, out_dir: str | Path, device: torch.device | str = "cpu", force: bool = False
) -> Dataset:
    """Read OGB dataset ``name`` under ``root`` (downloading it there if absent), write it to ``out_dir``.

    Edges are symmetrised and deduplicated (self loops dropped), missing labels (NaN in papers100M)
    become -1 and are left out of the splits, which come from ogb's ``get_idx_split()``, sorted. The
    result is fully checked before it replaces ``out_dir``, which only ``force`` lets hold a dataset.
    """
    if name not in OGB_NAMES:
        raise ZeroGNNError(f"unknown OGB dataset {name!r}; choose one of {', '.join(OGB_NAMES)}.")
    out_dir = Path(out_dir)
    check_out_dir(out_dir, force)
    try:
        import ogb
        from ogb.nodeproppred import dataset as ogb_module
    except ImportError as exc:
        raise missing_extra("ogb", f"building {name}", exc) from exc

    root = Path(root)
    data, split = _read_with_ogb(ogb_module, name, root)
    graph, raw_labels = data[0]
    n = int(graph["num_nodes"])
    if graph["node_feat"] is None:
        raise ZeroGNNError(f"{name} under {root} has no node features; delete its directory and download it again.")
    features = np.asarray(graph["node_feat"], dtype=np.float32)
    labels = _labels(raw_labels)
    splits = {key: _split(split[key], labels, key) for key in ("train", "valid", "test")}
    edge_index = graph["edge_index"]
    num_edges = edge_index.shape[1]
    num_features = features.shape[1] if features.ndim == 2 else 1
    needed = dataset_bytes(n, 2 * num_edges, num_features, sum(ids.size for ids in splits.values()))
    check_free_space(out_dir, needed, name)
    ds_dir = root / "_".join(name.split("-"))
    if_invalid = f"the ogb files under {ds_dir} may be damaged: delete {ds_dir} and run again to download it"

    def edge_chunks() -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        for s in range(0, num_edges, EDGE_CHUNK):
            yield torch.from_numpy(edge_index[0, s:s + EDGE_CHUNK]), torch.from_numpy(edge_index[1, s:s + EDGE_CHUNK])

    with build_into(out_dir, name, force, if_invalid) as tmp:
        csr = build_csr(n, edge_chunks, device, num_edges=num_edges, col_path=tmp / "col.npy")
        np.save(tmp / "rowptr.npy", csr.rowptr.numpy())
        np.save(tmp / "features.npy", features)
        np.save(tmp / "labels.npy", labels)
        for ours, theirs in (("train_idx", "train"), ("val_idx", "valid"), ("test_idx", "test")):
            np.save(tmp / f"{ours}.npy", splits[theirs])
        ds = Dataset(
            name, csr, torch.from_numpy(features), torch.from_numpy(labels),
            *(torch.from_numpy(splits[key]) for key in ("train", "valid", "test")), int(data.num_classes),
            {"source": "ogb", "ogb_version": ogb.__version__, "ogb_root": str(root.resolve())},
        )
        write_meta(tmp, ds)
        del ds, csr
    return load_dataset(out_dir)


def _labels(raw: Any) -> np.ndarray:
    labels = np.asarray(raw).reshape(-1)
    if labels.dtype.kind == "f":
        labels = np.where(np.isnan(labels), -1, labels)
    return labels.astype(np.int64)


def _split(idx: Any, labels: np.ndarray, name: str = "split") -> np.ndarray:
    idx = np.sort(np.asarray(idx, dtype=np.int64).reshape(-1))
    if idx.size and (idx[0] < 0 or idx[-1] >= labels.shape[0]):
        bad = int(idx[0] if idx[0] < 0 else idx[-1])
        raise ZeroGNNError(f"the {name} split names node {bad}, outside the graph's {labels.shape[0]} nodes; the "
                           f"downloaded files are damaged: delete the dataset's directory under the ogb root and "
                           f"make it again")
    return idx[labels[idx] >= 0]


def _read_with_ogb(ogb_module: Any, name: str, root: Path) -> tuple[Any, dict[str, Any]]:
    """ogb's NodePropPredDataset and split for ``name``, with ogb's failures turned into ZeroGNNErrors."""
    import pandas as pd

    meta = pd.read_csv(
        os.path.join(os.path.dirname(ogb_module.__file__), "master.csv"), index_col=0, keep_default_na=False
    )[name]
    ds_dir = root / "_".join(name.split("-"))
    release = ds_dir / f"RELEASE_v{meta['version']}.txt"
    if ds_dir.is_dir() and not release.exists():
        raise ZeroGNNError(
            f"{ds_dir} exists but has no {release.name}, so ogb takes it for an outdated or partial download. "
            f"If it holds the complete extracted OGB archive of {name}, create the empty file {release}; "
            f"otherwise delete {ds_dir} and run again to download it."
        )
    if (ds_dir / "raw").is_dir():
        # ogb saves its cache into processed/ without creating the directory.
        (ds_dir / "processed").mkdir(exist_ok=True)

    downloads: list[str] = []
    try:
        with _driving_ogb(ogb_module, ds_dir, downloads):
            data = ogb_module.NodePropPredDataset(name=name, root=str(root))
            split = data.get_idx_split()
    except ZeroGNNError:
        raise
    except Exception as exc:
        if isinstance(exc, OSError) and exc.errno in DISK_FULL:
            raise ZeroGNNError(
                f"the disk holding {root} is full ({exc.strerror}) while ogb reads {name} there; "
                f"free space or choose another --ogb-root."
            ) from exc
        if downloads:
            raise ZeroGNNError(
                f"{name} is not under {ds_dir} and downloading it from {downloads[0]} failed "
                f"({type(exc).__name__}: {exc}). Put the extracted OGB archive there (raw/, split/, "
                f"{release.name}) or run this where the network is reachable, with the same root {root}."
            ) from exc
        raise ZeroGNNError(
            f"ogb could not read {name} from {ds_dir} ({type(exc).__name__}: {exc}); the files are "
            f"incomplete or damaged: delete {ds_dir} and run again to download it."
        ) from exc
    return data, split


class _TorchForOgb:
    """``torch`` as ogb's dataset module sees it while we drive it: ``load`` can read ogb's own cache.

    ogb 1.3.6 caches the parsed dataset with ``torch.save(..., pickle_protocol=4)`` (a dict of numpy
    arrays) and reads it back with a bare ``torch.load``. Since torch 2.6 that defaults to
    ``weights_only=True``, whose unpickler rejects protocol 4's FRAME opcode itself, so no
    ``safe_globals`` allow-list can make it load. Files inside the dataset directory, which ogb wrote
    from the archive's own files, are therefore loaded with ``weights_only=False``; anything else keeps
    torch's default.
    """

    def __init__(self, ds_dir: Path) -> None:
        self._dir = ds_dir.resolve()

    def __getattr__(self, attr: str) -> Any:
        return getattr(torch, attr)

    def load(self, f: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(f, (str, os.PathLike)) and Path(f).resolve().is_relative_to(self._dir):
            kwargs.setdefault("weights_only", False)
        return torch.load(f, *args, **kwargs)


@contextlib.contextmanager
def _driving_ogb(module: Any, ds_dir: Path, downloads: list[str]) -> Iterator[None]:
    """Patch ogb's dataset module for one call: no prompts, a loadable cache, prints to stderr."""

    def decide_download(url: str) -> bool:
        downloads.append(url)
        return True

    def no_prompt(prompt: str = "") -> str:
        raise ZeroGNNError(
            f"ogb asked {prompt.strip()!r} for {ds_dir}; zerognn never answers prompts. Delete {ds_dir} "
            f"and run again, or put the complete extracted OGB archive there."
        )

    patches = {"decide_download": decide_download, "input": no_prompt, "torch": _TorchForOgb(ds_dir)}
    missing = object()
    saved = {attr: module.__dict__.get(attr, missing) for attr in patches}
    for attr, value in patches.items():
        setattr(module, attr, value)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        for attr, value in saved.items():
            if value is missing:
                delattr(module, attr)
            else:
                setattr(module, attr, value)
