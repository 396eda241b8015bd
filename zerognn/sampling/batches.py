"""The epoch's batch order: a keyed shuffle of the train ids, cut into batches (last partial dropped).

The shuffle is an argsort of hashed positions, so it is the same on every device and for every
variant, and a device-side implementation can reproduce it from (seed, epoch) alone.
"""

from __future__ import annotations

import torch

from .. import rng
from ..errors import ZeroGNNError

PERMUTATION_PURPOSE = 1


def steps_per_epoch(num_train: int, batch_size: int) -> int:
    if batch_size <= 0:
        raise ZeroGNNError(f"batch size must be positive, got {batch_size}")
    steps = num_train // batch_size
    if steps == 0:
        raise ZeroGNNError(
            f"batch size {batch_size} exceeds the {num_train} train nodes, so an epoch has no full "
            f"batch; use a batch size of at most {num_train} or a larger dataset."
        )
    return steps


def epoch_permutation(train_idx: torch.Tensor, seed: int, epoch: int) -> torch.Tensor:
    """The train ids in this epoch's order."""
    key = rng.key_int(seed, PERMUTATION_PURPOSE, epoch)
    positions = torch.arange(train_idx.numel(), device=train_idx.device)
    order = torch.argsort(rng.combine(key, positions), stable=True)
    return train_idx[order]


def batch_seeds(permutation: torch.Tensor, step: int, batch_size: int) -> torch.Tensor:
    """The seeds of step ``step``: a contiguous slice of the epoch's permutation."""
    start = step * batch_size
    if start + batch_size > permutation.numel():
        raise ZeroGNNError(
            f"step {step} with batch size {batch_size} runs past the epoch's {permutation.numel()} train nodes"
        )
    return permutation[start:start + batch_size]
