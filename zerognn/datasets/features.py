"""Synthetic node features: a class centroid plus Gaussian noise, a pure function of (seed, node, class).

A node's feature row is ``centroid[label] + sigma * z`` with ``z`` drawn from the key of (seed, node id)
through ``zerognn.rng``, so any range of rows can be computed anywhere, in any order. A dataset either
stores the rows in ``features.npy`` (``FEATURES_STORED``) or records how to compute them and has them
regenerated where it is loaded (``FEATURES_REGENERATED``: papers100M-like, whose float32 features
alone would take 57 GB of disk). The CPU and CUDA compute the same rows up to float rounding (the
noise uses float64 log, sin and cos).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ..rng import combine, draw, key_int

FEATURES_STORED = "stored"
FEATURES_REGENERATED = "regenerated"
FEATURE_MODES = (FEATURES_STORED, FEATURES_REGENERATED)
PURPOSE_CENTROIDS = 3
PURPOSE_FEATURES = 4
# Rows per chunk, as elements: float64 temporaries stay small on the host; a GPU takes larger steps.
CHUNK_ELEMENTS = {"cpu": 1 << 23, "cuda": 1 << 26}


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


def gaussians(keys: torch.Tensor, count: int) -> torch.Tensor:
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
    g = gaussians(keys, num_features)
    if num_classes <= num_features:
        return torch.linalg.qr(g.T).Q.T.contiguous()
    return g / g.norm(dim=1, keepdim=True)


def fill_features(out: np.ndarray | torch.Tensor, labels: torch.Tensor, num_classes: int, sigma: float, seed: int,
                  device: torch.device, progress: Any = None) -> None:
    """Fill ``out`` (N x F: a host array, memory-mapped or not, or a tensor on ``device``) chunk by chunk.

    Rows are computed on ``device``; ``progress`` (a ``rmat.Progress``) is told the rows done.
    """
    n, f = out.shape
    device = torch.device(device)
    means = centroids(num_classes, f, seed).to(device)
    key = key_int(seed, PURPOSE_FEATURES)
    rows = max(1, CHUNK_ELEMENTS["cuda" if device.type == "cuda" else "cpu"] // f)
    for u0 in range(0, n, rows):
        u1 = min(u0 + rows, n)
        keys = combine(key, torch.arange(u0, u1, device=device))
        x = (means[labels[u0:u1].to(device)] + sigma * gaussians(keys, f)).to(torch.float32)
        if isinstance(out, torch.Tensor):
            out[u0:u1] = x
        else:
            out[u0:u1] = x.cpu().numpy()
        if progress is not None:
            progress.step(u1)


def regenerate_features(meta: dict[str, Any], labels: torch.Tensor, device: torch.device | str) -> torch.Tensor:
    """The float32 feature matrix a ``regenerated`` dataset describes, computed on ``device``.

    ``device`` "meta" gives a tensor of the right shape and no storage (sizes only, nothing computed).
    """
    n, f = meta["num_nodes"], meta["num_features"]
    out = torch.empty(n, f, dtype=torch.float32, device=device)
    if out.device.type != "meta":
        fill_features(out, labels, meta["num_classes"], meta["feature_noise"], meta["seed"], out.device)
    return out
