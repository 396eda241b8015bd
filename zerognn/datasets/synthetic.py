"""Synthetic node-classification datasets: an R-MAT graph with learnable labels, features and splits.

Everything is a function of (name, scale, seed) through ``zerognn.rng`` hashing, so the CPU and CUDA
build the same graph, labels and splits (features agree up to float rounding).

- Graph: R-MAT edges (``rmat``), half of them moved inside the source's community, symmetrised.
- Labels: a node's class is its community, i.e. the block of its pre-relabelling id.
- Features: the class centroid (random orthonormal vectors) plus Gaussian noise whose scale is set so
  that the best feature-only classifier scores about ``FEATURE_ACCURACY``; neighbours, which share
  the class about half the time, carry the rest of the signal (``zerognn.datasets.features``). Stored,
  or for the specs that say so regenerated at load.
- Splits: a hash-keyed shuffle of the nodes cut by the spec's fractions, each split sorted.
"""

from __future__ import annotations

import functools
import logging
import time
from pathlib import Path

import numpy as np
import torch

from ..errors import ZeroGNNError
from ..graph import CSRGraph
from ..rng import combine, key_int
from . import rmat
from .build import build_into, check_free_space, check_out_dir, create_npy
from .features import FEATURES_STORED, fill_features, noise_scale
from .progress import Progress, peak_host_memory_bytes
from .specs import SYNTHETIC, SyntheticSpec, check_seed, scaled
from .store import Dataset, load_dataset, write_meta

log = logging.getLogger(__name__)

GENERATOR_VERSION = 1
INTRA_COMMUNITY = 0.5
FEATURE_ACCURACY = 0.6
PURPOSE_SPLITS = 5  # 3 and 4 are the features' (zerognn.datasets.features)


def make_synthetic(
    name: str, scale: float = 1.0, seed: int = 0, device: torch.device | str = "cpu",
    out_dir: str | Path | None = None, force: bool = False, features_on: torch.device | str | None = None,
) -> Dataset:
    """Generate the synthetic dataset ``name`` at ``scale`` from ``seed`` on ``device``.

    With ``out_dir`` the dataset is written there atomically (store format, large arrays streamed
    to disk), fully checked, and returned memory-mapped from it; otherwise it is returned in host
    memory. An existing dataset in ``out_dir`` is replaced only with ``force`` (see ``check_out_dir``).
    Regenerated features of the returned dataset are computed on ``features_on`` (default: ``device``;
    "meta" for sizes only, see ``load_dataset``).
    """
    spec = _resolve(name, scale)
    scale, seed = float(scale), check_seed(seed)
    device = _check_device(device)
    n, c = spec.num_nodes, spec.num_classes
    rmat.check_num_nodes(n)
    if out_dir is not None:
        out_dir = Path(out_dir)
        check_out_dir(out_dir, force)
        check_free_space(out_dir, spec.disk_bytes(), spec.name)
    chunk = rmat.default_chunk_edges(device)
    log.info("building %s: %s nodes, about %s edges, on %s", spec.name, f"{n:,}", f"{spec.num_edges:,}", device)

    draws = rmat.draws_for_target(n, spec.num_edges, seed, device, chunk, communities=c, intra_prob=INTRA_COMMUNITY)
    old_of_new, new_of_old = rmat.node_permutation(n, seed, device)
    labels = rmat.community_of(old_of_new, n, c).cpu()
    del old_of_new
    edge_chunks = functools.partial(
        rmat.rmat_edge_chunks, n, draws, seed, device, chunk,
        communities=c, intra_prob=INTRA_COMMUNITY, relabel=new_of_old,
    )
    sigma = noise_scale(c, FEATURE_ACCURACY)
    train_idx, val_idx, test_idx = _splits(spec, seed, device)
    meta = {
        "source": "synthetic-rmat", "scale": scale, "seed": seed, "generator_version": GENERATOR_VERSION,
        "rmat_initiator": list(rmat.GRAPH500), "rmat_draws": draws, "intra_community": INTRA_COMMUNITY,
        "feature_noise": sigma, "features": spec.features,
    }

    def dataset(graph: CSRGraph, features: torch.Tensor) -> Dataset:
        return Dataset(spec.name, graph, features, labels, train_idx, val_idx, test_idx, c, dict(meta))

    def fill(out: np.ndarray) -> None:
        progress = Progress("features", n, "rows")
        fill_features(out, labels, c, sigma, seed, device, progress)

    if out_dir is None:
        graph = rmat.build_csr(n, edge_chunks, device, num_edges=draws)
        features = torch.empty(n, spec.num_features, dtype=torch.float32)
        fill(features.numpy())
        return dataset(graph, features)

    started = time.monotonic()
    with build_into(out_dir, spec.name, force, if_invalid="this is a bug in the generator: please report it") as tmp:
        graph = rmat.build_csr(n, edge_chunks, device, num_edges=draws, col_path=tmp / "col.npy")
        np.save(tmp / "rowptr.npy", graph.rowptr.numpy())
        shape = torch.Size((n, spec.num_features))
        if spec.features == FEATURES_STORED:
            features = create_npy(tmp / "features.npy", np.float32, tuple(shape))
            fill(features)
            features.flush()
        else:
            log.info("features: regenerated where the dataset is loaded, not stored")
            features = torch.empty(shape, device="meta")
        for key, tensor in (("labels", labels), ("train_idx", train_idx), ("val_idx", val_idx), ("test_idx", test_idx)):
            np.save(tmp / f"{key}.npy", tensor.numpy())
        write_meta(tmp, dataset(graph, torch.from_numpy(features) if isinstance(features, np.ndarray) else features))
        del features, graph
        log.info("checking the dataset before publishing it")
    log.info("built %s in %.1f s (peak host memory %.1f GB, mapped dataset files included)", spec.name,
             time.monotonic() - started, peak_host_memory_bytes() / 1e9)
    return load_dataset(out_dir, features_on=features_on if features_on is not None else device)


def _splits(spec: SyntheticSpec, seed: int, device: torch.device) -> tuple[torch.Tensor, ...]:
    """Train/val/test node ids: a hash-keyed shuffle cut by the spec's fractions, each sorted."""
    n = spec.num_nodes
    ids = torch.arange(n, device=device)
    order = torch.sort(combine(key_int(seed, PURPOSE_SPLITS), ids), stable=True).indices
    bounds = np.cumsum([0, *spec.split_sizes()])
    return tuple(torch.sort(order[bounds[i]:bounds[i + 1]]).values.cpu() for i in range(3))


def _resolve(name: str, scale: float) -> SyntheticSpec:
    if name not in SYNTHETIC:
        raise ZeroGNNError(
            f"unknown synthetic dataset {name!r}; choose one of {', '.join(SYNTHETIC)}."
        )
    return scaled(SYNTHETIC[name], scale)


def _check_device(device: torch.device | str) -> torch.device:
    try:
        device = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ZeroGNNError(f"unknown device {device!r} ({exc}); use 'cpu' or 'cuda'.") from exc
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ZeroGNNError("device 'cuda' was asked for but no CUDA GPU is visible to torch; use device 'cpu'.")
    if device.type not in ("cpu", "cuda"):
        raise ZeroGNNError(f"device {device} is not supported; use 'cpu' or 'cuda'.")
    return device
