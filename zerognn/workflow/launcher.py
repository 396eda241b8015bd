"""How the pipeline starts a run on G GPUs: one process, torchrun on one node, or srun + torchrun.

A run with G > 1 is one process per GPU. Within one node torchrun's standalone rendezvous suffices;
across nodes (``gpus_per_node`` smaller than G, as on a SLURM cluster) SLURM starts one torchrun per
node with ``srun`` and they meet through torchrun's c10d rendezvous on the job's first node. The
training code is the same either way: ranks, shards and the all-reduce come from torch.distributed.

``job_resources`` is what the run job asks a cluster for, in the resource names of Snakemake's SLURM
executor plugin: ``gpu`` (its ``--gpus``, the job's total) for a run on one node; for a run spanning N
nodes ``nodes`` and ``gres="gpu:G/N"`` (``--gres`` counts per node, so every node gets its share) with
``gpu`` 0, and no ``tasks`` (the plugin turns ``tasks`` of a GPU job into ``--ntasks-per-gpu``; SLURM's
default of one task per node is what srun needs).
"""

from __future__ import annotations

from ..errors import ZeroGNNError

RENDEZVOUS_PORT = 29500


def nodes_for(gpus: int, gpus_per_node: int | None) -> int:
    """Nodes a G-GPU run spans: 1, or G / gpus_per_node when G exceeds one node."""
    if gpus < 1:
        raise ZeroGNNError(f"a run needs at least one GPU (or CPU process), got gpus={gpus}")
    if gpus_per_node is None or gpus <= gpus_per_node:
        return 1
    if gpus % gpus_per_node:
        raise ZeroGNNError(f"gpus={gpus} does not fill whole nodes of gpus_per_node={gpus_per_node}; "
                           f"use a multiple of {gpus_per_node}")
    return gpus // gpus_per_node


def run_launcher(gpus: int, gpus_per_node: int | None = None) -> str:
    """The command prefix that starts ``zerognn`` (followed by ``run ...``) on ``gpus`` GPUs."""
    nodes = nodes_for(gpus, gpus_per_node)
    if gpus == 1:
        return "zerognn"
    if nodes == 1:
        return f"torchrun --standalone --nproc-per-node {gpus} -m zerognn"
    first_node = '$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)'
    return (f"srun --nodes {nodes} --ntasks-per-node 1 torchrun --nnodes {nodes} --nproc-per-node {gpus // nodes} "
            f"--rdzv-backend c10d --rdzv-id \"$SLURM_JOB_ID\" --rdzv-endpoint {first_node}:{RENDEZVOUS_PORT} "
            f"-m zerognn")


def job_resources(gpus: int, gpus_per_node: int | None = None) -> dict[str, int | str | None]:
    """The run job's ``gpu``, ``gres`` and ``nodes`` resources for a ``gpus``-GPU run."""
    nodes = nodes_for(gpus, gpus_per_node)
    if nodes == 1:
        return {"gpu": gpus, "gres": None, "nodes": 1}
    return {"gpu": 0, "gres": f"gpu:{gpus // nodes}", "nodes": nodes}
