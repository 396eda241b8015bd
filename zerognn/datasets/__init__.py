"""Datasets: synthetic R-MAT stand-ins and real OGB graphs, built into the versioned store format.

``make_dataset`` builds a dataset directory (see ``store``) and returns it loaded; ``load_dataset``
opens one built earlier.
"""

from __future__ import annotations

from pathlib import Path

import torch

from ..errors import ZeroGNNError
from .ogb_loader import load_ogb
from .specs import OGB_NAMES, SYNTHETIC, SyntheticSpec, check_scale, check_seed
from .store import Dataset, load_dataset
from .synthetic import make_synthetic

KNOWN_DATASETS = (*SYNTHETIC, *OGB_NAMES)

__all__ = ["KNOWN_DATASETS", "OGB_NAMES", "SYNTHETIC", "Dataset", "SyntheticSpec", "load_dataset", "make_dataset"]


def make_dataset(
    name: str, out_dir: str | Path, scale: float = 1.0, seed: int = 0,
    device: torch.device | str | None = None, ogb_root: str | Path | None = None, force: bool = False,
    features_on: torch.device | str | None = None,
) -> Dataset:
    """Build dataset ``name`` into ``out_dir`` and return it loaded.

    Synthetic names are generated from (scale, seed); OGB names are read through ``ogb`` from
    ``ogb_root`` (default: an ``ogb`` directory next to ``out_dir``), downloading them there if absent,
    and take neither scale nor seed. ``device`` runs the heavy work (default: CUDA when available).
    Arguments, ``out_dir`` and free space are checked before any work; the result is fully checked
    before it is published. ``out_dir`` must be absent or empty, or hold a dataset of ours that
    ``force`` allows to replace (atomically); anything else is never replaced. Regenerated features
    of the returned dataset are computed on ``features_on`` (default: ``device``; see ``load_dataset``).
    """
    if name not in KNOWN_DATASETS:
        raise ZeroGNNError(f"unknown dataset {name!r}; choose one of {', '.join(KNOWN_DATASETS)}.")
    scale, seed = check_scale(scale), check_seed(seed)
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if name in SYNTHETIC:
        return make_synthetic(name, scale=scale, seed=seed, device=device, out_dir=out_dir, force=force,
                              features_on=features_on)
    if scale != 1.0:
        raise ZeroGNNError(f"{name} is a real dataset and cannot be scaled; drop the scale or use a synthetic one.")
    root = Path(ogb_root) if ogb_root is not None else Path(out_dir).parent / "ogb"
    return load_ogb(name, root, out_dir, device=device, force=force)
