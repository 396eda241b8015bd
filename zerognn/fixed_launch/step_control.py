"""The ZeroGNN step's device-resident control block and its two kernels (``kernels/step_control.cu``).

``StepControl`` owns every piece of metadata a fixed-launch step keeps on the device: the committed
step counter, the rollback count, the epoch permutations the next batch is cut from, the hop keys,
the per-record overflow flags and needed sizes, the per-hop live sizes, and a snapshot of the training
state. ``begin``/``end`` launch the kernels that open and close a step; ``mirror`` is a pinned host copy
of (committed, rolled back) that ``end`` writes, so the host can follow progress without an API call.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np
import torch

from .. import rng
from ..cuda.launch import grid_for, launch
from ..sampling.reference import SAMPLING_PURPOSE


@dataclass
class StepControl:
    """Device metadata of a fixed-launch training step (allocated once, reused by every capture)."""

    device: torch.device
    num_train: int
    steps_per_epoch: int
    batch_size: int
    num_hops: int
    num_records: int
    seed: int
    world_size: int = 1
    rank: int = 0
    state: torch.Tensor = field(init=False)          # int64 [2]: committed steps, rolled-back steps
    permutations: torch.Tensor = field(init=False)   # int64 [2, num_train]: epoch e's order in row e % 2
    seeds: torch.Tensor = field(init=False)          # int64 [batch_size]
    hop_keys: torch.Tensor = field(init=False)       # int64 [num_hops]
    overflow: torch.Tensor = field(init=False)       # int64 [num_records, 2]: flag, needed size
    need_max: torch.Tensor = field(init=False)       # int64 [num_records]: largest size ever needed
    live: torch.Tensor = field(init=False)           # int32 [num_hops + 1]: live frontier sizes this step
    live_max: torch.Tensor = field(init=False)       # int64 [num_hops + 1] over committed steps
    live_sum: torch.Tensor = field(init=False)       # int64 [num_hops + 1] over committed steps
    mirror: torch.Tensor = field(init=False)         # pinned int64 [2]: the host's copy of ``state``

    def __post_init__(self) -> None:
        dev = self.device

        def zeros64(*shape: int) -> torch.Tensor:
            return torch.zeros(*shape, dtype=torch.int64, device=dev)

        self.state = zeros64(2)
        self.permutations = zeros64(2, self.num_train)
        self.seeds = zeros64(self.batch_size)
        self.hop_keys = zeros64(self.num_hops)
        self.overflow = zeros64(self.num_records, 2)
        self.need_max = zeros64(self.num_records)
        self.live = torch.zeros(self.num_hops + 1, dtype=torch.int32, device=dev)
        self.live[0] = self.batch_size
        self.live_max = zeros64(self.num_hops + 1)
        self.live_sum = zeros64(self.num_hops + 1)
        self.mirror = torch.zeros(2, dtype=torch.int64, pin_memory=True)
        self._mirror_view = self.mirror.numpy()
        self._sampling_key = np.uint64(rng.key_int(self.seed, SAMPLING_PURPOSE))

    def tensors(self) -> list[torch.Tensor]:
        """Every tensor of the block, the pinned mirror among them."""
        return [getattr(self, f.name) for f in fields(self) if isinstance(getattr(self, f.name), torch.Tensor)]

    def read_mirror(self) -> tuple[int, int]:
        """(committed, rolled back) as of the last step the GPU finished: a host memory read, no API call."""
        return int(self._mirror_view[0]), int(self._mirror_view[1])

    def begin(self, params: torch.Tensor, snapshot: torch.Tensor) -> None:
        launch("step_begin", grid_for(max(self.batch_size, params.numel())), self.state, self.permutations,
               np.int64(self.num_train), np.int64(self.steps_per_epoch), np.int32(self.batch_size),
               np.int32(self.world_size), np.int32(self.rank), self._sampling_key, np.int32(self.num_hops),
               self.seeds, self.hop_keys, self.overflow, np.int32(self.num_records), params, snapshot,
               np.int64(params.numel()))

    def end(self, params: torch.Tensor, snapshot: torch.Tensor, loss: torch.Tensor, loss_log: torch.Tensor,
            force_rollback: bool = False) -> None:
        launch("step_end", grid_for(params.numel()), self.state, self.overflow, np.int32(self.num_records),
               self.need_max, params, snapshot, np.int64(params.numel()), loss, loss_log, np.int64(loss_log.numel()),
               self.live, np.int32(self.num_hops + 1), self.live_max, self.live_sum, np.int32(force_rollback),
               self.mirror)  # pinned host memory, written by the kernel through unified addressing
