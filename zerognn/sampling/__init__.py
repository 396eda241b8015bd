"""The reference neighbour sampler and the epoch's batch order (docs/design.md, Sampling semantics)."""

from .batches import batch_seeds, epoch_permutation, steps_per_epoch
from .reference import Hop, SampledSubgraph, hop_key, sample_hop, sample_subgraph

__all__ = [
    "Hop", "SampledSubgraph", "batch_seeds", "epoch_permutation", "hop_key", "sample_hop",
    "sample_subgraph", "steps_per_epoch",
]
