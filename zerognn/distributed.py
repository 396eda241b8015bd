"""Data-parallel runs with torch.distributed: one process per GPU (or CPU worker), started by torchrun.

Each rank trains on its own shard of every global step: with G ranks and batch size B per rank, global
step s of an epoch covers positions [s*G*B, (s+1)*G*B) of the epoch's keyed permutation and rank r takes
the r-th B of them, so a G-rank run is as reproducible as a one-process run and equals one process
with batch G*B (sampling is keyed by node, not by buffer position). Gradients are averaged with one
all-reduce over a flat buffer. NCCL on GPUs, gloo on the CPU.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

from .errors import ZeroGNNError


@dataclass(frozen=True)
class World:
    rank: int = 0
    size: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        return self.rank == 0


SINGLE = World()


def init_world(expected_size: int, device_type: str) -> World:
    """Join the process group torchrun set up (or stay single when ``expected_size`` is 1)."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if expected_size == 1 and size == 1:
        return SINGLE
    if size != expected_size:
        raise ZeroGNNError(
            f"gpus={expected_size} needs {expected_size} processes but this one sees WORLD_SIZE={size}; start it with "
            f"`torchrun --standalone --nproc-per-node {expected_size} -m zerognn run ...` "
            f"(the pipeline's run rule does)"
        )
    world = World(int(os.environ["RANK"]), size, int(os.environ.get("LOCAL_RANK", "0")))
    if device_type == "cuda":
        local = int(os.environ.get("LOCAL_WORLD_SIZE", size))  # processes on this node (torchrun sets it)
        if torch.cuda.device_count() < local:
            raise ZeroGNNError(f"{local} processes on this node but it has {torch.cuda.device_count()} CUDA GPUs")
        torch.cuda.set_device(world.local_rank)
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device_type == "cuda" else "gloo")
    return world


def average_gradients(parameters: list[torch.nn.Parameter], world: World) -> None:
    """Replace every gradient by its mean over the ranks (one all-reduce of a flat buffer)."""
    grads = [p.grad for p in parameters if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat /= world.size
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view_as(g))
        offset += g.numel()


def mean_over_ranks(tensor: torch.Tensor, world: World) -> torch.Tensor:
    if world.size > 1:
        tensor = tensor.clone()
        dist.all_reduce(tensor)
        tensor /= world.size
    return tensor


def barrier(world: World) -> None:
    """Wait for every rank, so that none tears the process group down while rank 0 still works."""
    if world.size > 1:
        dist.barrier()


def shutdown(world: World) -> None:
    if world.size > 1 and dist.is_initialized():
        dist.destroy_process_group()
