"""Synthetic node-classification datasets: an R-MAT graph with learnable labels, features and splits.

Everything is a function of (name, scale, seed) through ``zerognn.rng`` hashing, so the CPU and CUDA
build the same graph, labels and splits (features agree up to float rounding).

- Graph: R-MAT edges (``rmat``), half of them moved inside the source's community, symmetrised.
- Labels: a node's class is its community, i.e. the block of its pre-relabelling id.
- Features: the class centroid (random orthonormal vectors) plus Gaussian noise whose scale is set so
  that the best feature-only classifier scores about ``FEATURE_ACCURACY``; neighbours, which share
  the class about half the time, carry the rest of the signal.
- Splits: a hash-keyed shuffle of the nodes cut by the spec's fractions, each split sorted.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import torch

from ..errors import ZeroGNNError
from ..graph import CSRGraph
from ..rng import combine, draw, key_int
from . import rmat
from .build import build_into, check_free_space, check_out_dir, create_npy
from .specs import SYNTHETIC, SyntheticSpec, check_seed, scaled
from .store import Dataset, load_dataset, write_meta

GENERATOR_VERSION = 1
INTRA_COMMUNITY = 0.5
FEATURE_ACCURACY = 0.6
PURPOSE_CENTROIDS = 3
PURPOSE_FEATURES = 4
PURPOSE_SPLITS = 5
FEATURE_CHUNK_ELEMENTS = 1 << 23


def make_synthetic(
    name: str, scale: float = 1.0, seed: int = 0, device: torch.device | str = "cpu",
    out_dir: str | Path | None = None, force: bool = False,
) -> Dataset:
    """Generate the synthetic dataset ``name`` at ``scale`` from ``seed`` on ``device``.

    With ``out_dir`` the dataset is written there atomically (store format, large arrays streamed
    to disk), fully checked, and returned memory-mapped from it; otherwise it is returned in host
    memory. An existing dataset in ``out_dir`` is replaced only with ``force`` (see ``check_out_dir``).
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

    draws = rmat.draws_for_target(n, spec.num_edges, seed, device, chunk, communities=c, intra_prob=INTRA_COMMUNITY)
    old_of_new, new_of_old = rmat.node_permutation(n, seed, device)
    labels = rmat.community_of(old_of_new, n, c).cpu()
    del old_of_new
    edge_chunks = functools.partial(
        rmat.rmat_edge_chunks, n, draws, seed, device, chunk,
        communities=c, intra_prob=INTRA_COMMUNITY, relabel=new_of_old,
    )
    num_chunks = math.ceil(draws / chunk)
    sigma = noise_scale(c, FEATURE_ACCURACY)
    train_idx, val_idx, test_idx = _splits(spec, seed, device)
    meta = {
        "source": "synthetic-rmat", "scale": scale, "seed": seed, "generator_version": GENERATOR_VERSION,
        "rmat_initiator": list(rmat.GRAPH500), "rmat_draws": draws, "intra_community": INTRA_COMMUNITY,
        "feature_noise": sigma,
    }

    def dataset(graph: CSRGraph, features: torch.Tensor) -> Dataset:
        return Dataset(spec.name, graph, features, labels, train_idx, val_idx, test_idx, c, dict(meta))

    if out_dir is None:
        graph = rmat.build_csr(n, edge_chunks, device, num_chunks=num_chunks)
        features = torch.empty(n, spec.num_features, dtype=torch.float32)
        _write_features(features.numpy(), labels, c, sigma, seed, device)
        return dataset(graph, features)

    with build_into(out_dir, spec.name, force, if_invalid="this is a bug in the generator: please report it") as tmp:
        graph = rmat.build_csr(n, edge_chunks, device, num_chunks=num_chunks, col_path=tmp / "col.npy")
        np.save(tmp / "rowptr.npy", graph.rowptr.numpy())
        features = create_npy(tmp / "features.npy", np.float32, (n, spec.num_features))
        _write_features(features, labels, c, sigma, seed, device)
        features.flush()
        for key, tensor in (("labels", labels), ("train_idx", train_idx), ("val_idx", val_idx), ("test_idx", test_idx)):
            np.save(tmp / f"{key}.npy", tensor.numpy())
        write_meta(tmp, dataset(graph, torch.from_numpy(features)))
        del features, graph
    return load_dataset(out_dir)


def noise_scale(num_classes: int, accuracy: float) -> float:
    """Noise sigma at which nearest-centroid on ``num_classes`` orthonormal centroids scores ``accuracy``.

    With x = e_c + sigma * z the classifier is right iff z_k < z_c + 1/sigma for every k != c, so the
    accuracy is E[Phi(z + 1/sigma)^(C-1)] over z ~ N(0, 1); solved for sigma by bisection. With more
    classes than features the centroids cannot be orthonormal and the accuracy comes out lower.
    """
    t = torch.linspace(-10, 10, 8001, dtype=torch.float64)
    weight = torch.exp(-t * t / 2) / math.sqrt(2 * math.pi) * (t[1] - t[0])

    def acc(q: float) -> float:
        return float((weight * torch.special.ndtr(t + q) ** (num_classes - 1)).sum())

    lo, hi = 0.0, 20.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if acc(mid) < accuracy else (lo, mid)
    return 1.0 / ((lo + hi) / 2)


def _gaussians(keys: torch.Tensor, count: int) -> torch.Tensor:
    """``count`` standard normals per key (float64, Box-Muller on two 32-bit halves of each draw)."""
    r = draw(keys[:, None], torch.arange((count + 1) // 2, device=keys.device)[None, :])
    u1 = (((r >> 32) & 0xFFFFFFFF) + 1).to(torch.float64) * 2.0**-32  # in (0, 1]: log is finite
    u2 = (r & 0xFFFFFFFF).to(torch.float64) * 2.0**-32
    radius = torch.sqrt(-2 * torch.log(u1))
    angle = 2 * math.pi * u2
    return torch.cat([radius * torch.cos(angle), radius * torch.sin(angle)], dim=1)[:, :count]


def centroids(num_classes: int, num_features: int, seed: int) -> torch.Tensor:
    """Class centroids: random orthonormal vectors (random unit vectors when classes > features).

    Computed on the CPU in float64, so every device uses the same ones.
    """
    keys = combine(key_int(seed, PURPOSE_CENTROIDS), torch.arange(num_classes))
    g = _gaussians(keys, num_features)
    if num_classes <= num_features:
        return torch.linalg.qr(g.T).Q.T.contiguous()
    return g / g.norm(dim=1, keepdim=True)


def _write_features(
    out: np.ndarray, labels: torch.Tensor, num_classes: int, sigma: float, seed: int, device: torch.device
) -> None:
    """Fill ``out`` (N x F float32, in memory or memory-mapped) row chunk by row chunk."""
    n, f = out.shape
    means = centroids(num_classes, f, seed).to(device)
    key = key_int(seed, PURPOSE_FEATURES)
    rows = max(1, FEATURE_CHUNK_ELEMENTS // f)
    progress = rmat.Progress("features", math.ceil(n / rows))
    for i, u0 in enumerate(range(0, n, rows), 1):
        u1 = min(u0 + rows, n)
        keys = combine(key, torch.arange(u0, u1, device=device))
        x = means[labels[u0:u1].to(device)] + sigma * _gaussians(keys, f)
        out[u0:u1] = x.to(torch.float32).cpu().numpy()
        progress.step(i)


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
