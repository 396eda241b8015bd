"""The synthetic dataset table (sizes modelled on the OGB graphs, and whether features are stored or
regenerated), the OGB names we load, input checks for (scale, seed) and the disk-space estimate of a build."""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass

import torch

from ..errors import ZeroGNNError
from ..graph import col_dtype_for
from .features import FEATURE_MODES, FEATURES_REGENERATED, FEATURES_STORED

MIN_NODES = 64
# R-MAT repeats pairs: the raw (pre-dedup) symmetrised col file, written before it is shrunk, held
# 1.2-1.8x the final edge count on graphs of 10^4 nodes and more, and less the larger the graph.
RAW_EDGE_ALLOWANCE = 2
# .npy headers and meta.json.
FIXED_BYTES = 1 << 20


@dataclass(frozen=True)
class SyntheticSpec:
    """Sizes of one synthetic stand-in; ``num_edges`` counts directed edges after symmetrising."""

    name: str
    num_nodes: int
    num_edges: int
    num_features: int
    num_classes: int
    train_frac: float
    val_frac: float
    test_frac: float
    features: str = FEATURES_STORED  # or FEATURES_REGENERATED: computed where the dataset is loaded

    def __post_init__(self) -> None:
        fracs = (self.train_frac, self.val_frac, self.test_frac)
        if min(fracs) <= 0 or sum(fracs) > 1 + 1e-9:
            raise ZeroGNNError(
                f"{self.name}: split fractions {fracs} must be positive and sum to at most 1."
            )
        if self.features not in FEATURE_MODES:
            raise ZeroGNNError(f"{self.name}: features must be one of {FEATURE_MODES}, got {self.features!r}.")
        if self.num_classes < 2 or self.num_features < 1:
            raise ZeroGNNError(f"{self.name}: needs at least 2 classes and 1 feature.")
        if self.num_nodes < 2 or self.num_edges < 2:
            raise ZeroGNNError(
                f"{self.name}: {self.num_nodes} nodes and {self.num_edges} edges are too few; "
                f"a graph needs at least 2 nodes and 2 (one undirected) edges."
            )
        if sum(self.split_sizes()) > self.num_nodes:
            raise ZeroGNNError(
                f"{self.name}: splits of {self.split_sizes()} nodes do not fit {self.num_nodes} nodes; "
                f"use more nodes or smaller split fractions."
            )

    def split_sizes(self) -> tuple[int, int, int]:
        """Train/val/test sizes: each fraction of the nodes, rounded down, at least one node."""
        n = self.num_nodes
        return tuple(max(1, int(n * frac)) for frac in (self.train_frac, self.val_frac, self.test_frac))

    def disk_bytes(self) -> int:
        """Generous estimate of the disk space a build of this spec needs (see ``dataset_bytes``)."""
        stored = self.num_features if self.features == FEATURES_STORED else 0
        return dataset_bytes(self.num_nodes, RAW_EDGE_ALLOWANCE * self.num_edges, stored, sum(self.split_sizes()))


def dataset_bytes(num_nodes: int, raw_col_entries: int, stored_features: int, num_split_ids: int) -> int:
    """Disk bytes of a dataset directory, counting col at its raw (pre-dedup) length as it is built;
    ``stored_features`` float32 features per node go to disk (0 when they are regenerated)."""
    col_itemsize = 4 if col_dtype_for(num_nodes) == torch.int32 else 8
    return (
        (num_nodes + 1) * 8 + raw_col_entries * col_itemsize + num_nodes * stored_features * 4
        + num_nodes * 8 + num_split_ids * 8 + FIXED_BYTES
    )


SYNTHETIC: dict[str, SyntheticSpec] = {
    spec.name: spec
    for spec in (
        SyntheticSpec("tiny", 2_000, 20_000, 16, 4, 0.6, 0.2, 0.2),
        SyntheticSpec("arxiv-like", 169_343, 2_315_598, 128, 40, 0.54, 0.18, 0.28),
        SyntheticSpec("products-like", 2_449_029, 123_718_280, 100, 47, 0.08, 0.02, 0.90),
        # float32 features would take 57 GB of disk at full scale: they are regenerated at load instead.
        SyntheticSpec("papers100M-like", 111_059_956, 3_231_371_744, 128, 172, 0.011, 0.001, 0.002,
                      FEATURES_REGENERATED),
    )
}

OGB_NAMES = ("ogbn-arxiv", "ogbn-products", "ogbn-papers100M")

# Validation accuracy a run to the target (``zerognn run --epochs``) must reach, per dataset at scale 1 with
# the default seed, fixed before any variant is compared (docs/measurement.md says how each was chosen).
TARGETS: dict[str, float] = {
    "tiny": 0.68,
    "arxiv-like": 0.735,
    "products-like": 0.82,
}


def check_scale(scale: object) -> float:
    """``scale`` as a float, or a ZeroGNNError unless it is a finite number > 0."""
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not math.isfinite(scale) or scale <= 0:
        raise ZeroGNNError(f"scale must be a positive finite number, got {scale!r}; use e.g. --scale 0.1.")
    return float(scale)


def check_seed(seed: object) -> int:
    """``seed`` as an int, or a ZeroGNNError unless it is an integer in [0, 2^63)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**63:
        raise ZeroGNNError(f"seed must be an integer in [0, 2^63), got {seed!r}; use e.g. --seed 0.")
    return int(seed)


def scaled(spec: SyntheticSpec, scale: float) -> SyntheticSpec:
    """``spec`` with nodes and edges multiplied by ``scale`` (at least 64 nodes, edges >= nodes)."""
    scale = check_scale(scale)
    if scale == 1:
        return spec
    if not math.isfinite(spec.num_edges * scale):
        raise ZeroGNNError(f"scale {scale!r} makes {spec.name} larger than any graph can be; use a smaller --scale.")
    num_nodes = max(MIN_NODES, round(spec.num_nodes * scale))
    num_edges = max(num_nodes, round(spec.num_edges * scale))
    return dataclasses.replace(spec, num_nodes=num_nodes, num_edges=num_edges)
