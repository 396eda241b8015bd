"""The synthetic dataset table (sizes modelled on the OGB graphs) and the OGB names we load."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from ..errors import ZeroGNNError

MIN_NODES = 64


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

    def __post_init__(self) -> None:
        fracs = (self.train_frac, self.val_frac, self.test_frac)
        if min(fracs) <= 0 or sum(fracs) > 1 + 1e-9:
            raise ZeroGNNError(
                f"{self.name}: split fractions {fracs} must be positive and sum to at most 1."
            )
        if self.num_classes < 2 or self.num_features < 1:
            raise ZeroGNNError(f"{self.name}: needs at least 2 classes and 1 feature.")


SYNTHETIC: dict[str, SyntheticSpec] = {
    spec.name: spec
    for spec in (
        SyntheticSpec("tiny", 2_000, 20_000, 16, 4, 0.6, 0.2, 0.2),
        SyntheticSpec("arxiv-like", 169_343, 2_315_598, 128, 40, 0.54, 0.18, 0.28),
        SyntheticSpec("products-like", 2_449_029, 123_718_280, 100, 47, 0.08, 0.02, 0.90),
        SyntheticSpec("papers100M-like", 111_059_956, 3_231_371_744, 128, 172, 0.011, 0.001, 0.002),
    )
}

OGB_NAMES = ("ogbn-arxiv", "ogbn-products", "ogbn-papers100M")


def scaled(spec: SyntheticSpec, scale: float) -> SyntheticSpec:
    """``spec`` with nodes and edges multiplied by ``scale`` (at least 64 nodes, edges >= nodes)."""
    if not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise ZeroGNNError(f"scale must be a positive number, got {scale!r}; use e.g. --scale 0.1.")
    if scale == 1:
        return spec
    num_nodes = max(MIN_NODES, round(spec.num_nodes * scale))
    num_edges = max(num_nodes, round(spec.num_edges * scale))
    return dataclasses.replace(spec, num_nodes=num_nodes, num_edges=num_edges)
