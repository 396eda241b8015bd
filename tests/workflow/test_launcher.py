"""The commands that start a run on one GPU, several on one node, or several nodes (SLURM)."""

import pytest

from zerognn.errors import ZeroGNNError
from zerognn.workflow.launcher import job_resources, nodes_for, run_launcher


def test_one_process_and_one_node():
    assert run_launcher(1) == run_launcher(1, 4) == "zerognn"
    assert run_launcher(4) == run_launcher(4, 8) == "torchrun --standalone --nproc-per-node 4 -m zerognn"
    assert nodes_for(4, None) == nodes_for(4, 4) == 1


def test_runs_that_span_nodes_use_srun_and_a_c10d_rendezvous():
    command = run_launcher(16, 8)
    assert command.startswith("srun --nodes 2 --ntasks-per-node 1 torchrun --nnodes 2 --nproc-per-node 8 ")
    assert '--rdzv-backend c10d --rdzv-id "$SLURM_JOB_ID"' in command
    assert '--rdzv-endpoint $(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1):29500' in command
    assert command.endswith(" -m zerognn") and nodes_for(16, 8) == 2


def test_partial_nodes_are_a_clear_error():
    with pytest.raises(ZeroGNNError, match="multiple of 8"):
        run_launcher(12, 8)
    with pytest.raises(ZeroGNNError, match="at least one"):
        nodes_for(0, None)


def test_cluster_resources_ask_for_every_gpu_of_a_run():
    assert job_resources(1) == {"gpu": 1, "gres": None, "nodes": 1}
    assert job_resources(2, 8) == {"gpu": 2, "gres": None, "nodes": 1}
    # across nodes: --gres counts per node; no --gpus beside it, and no task count the plugin would
    # turn into --ntasks-per-gpu
    assert job_resources(16, 8) == {"gpu": 0, "gres": "gpu:8", "nodes": 2}
