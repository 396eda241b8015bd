"""The data-parallel path: G gloo processes started by torchrun equal one process with G times the batch
(sampling is keyed by node, so sharding a global batch changes no sample); on two GPUs, per variant."""

import json
import os
import subprocess
import sys

import pytest

from zerognn.errors import ZeroGNNError
from zerognn.train import RunSpec, run

ARGS = ["--dataset", "tiny", "--model", "sage", "--fanouts", "5,3", "--hidden", "32",
        "--warmup-steps", "3", "--measure-steps", "3", "--profile-steps", "0", "--eval-nodes", "0", "--device", "cpu"]


@pytest.mark.slow
@pytest.mark.parametrize("ranks", [2, 4])
def test_gloo_ranks_equal_one_process_with_the_global_batch(tiny_dataset_dir, tmp_path, ranks):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    batch = 128 // ranks
    many = tmp_path / "many"
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(ranks), "-m", "zerognn",
         "run", *ARGS, "--variant", "torch-eager", "--dataset-dir", str(tiny_dataset_dir), "--batch-size", str(batch),
         "--gpus", str(ranks), "--out", f"{many}/"],
        env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    (written,) = many.glob("*.json")  # named by its run id
    record = json.loads(written.read_text())
    assert record["config"]["gpus"] == ranks and record["run_id"].endswith(f"__b{batch}__f5-3__g{ranks}")
    assert record["metrics"]["seeds_per_s"] == pytest.approx(128 * 1000 / record["metrics"]["step_ms_median"])

    one = tmp_path / "one.json"
    single = RunSpec(dataset="tiny", model="sage", variant="torch-eager", batch_size=128, fanouts=[5, 3], hidden=32,
                     warmup_steps=3, measure_steps=3, profile_steps=0, eval_nodes=0, device="cpu")
    reference = run(single, tiny_dataset_dir, one, progress=lambda m: None)
    assert record["metrics"]["steps_per_epoch"] == reference["metrics"]["steps_per_epoch"]
    for a, b in zip(record["losses"], reference["losses"]):
        assert a == pytest.approx(b, rel=1e-5)


def test_gpus_above_one_need_torchrun(tiny_dataset_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    spec = RunSpec(dataset="tiny", model="sage", variant="torch-eager", batch_size=64, fanouts=[5], gpus=2,
                   device="cpu")
    with pytest.raises(ZeroGNNError, match="torchrun --standalone --nproc-per-node 2"):
        run(spec, tiny_dataset_dir, tmp_path / "r.json", progress=lambda m: None)


@pytest.mark.gpu
@pytest.mark.parametrize("variant", ["torch-eager", "host-mediated", "zerognn"])
def test_two_gpu_ranks_are_deterministic_and_equal_one_gpu_with_the_global_batch(tiny_dataset_dir, tmp_path, variant):
    import torch

    if torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA GPUs")
    records = []
    for attempt in range(2):
        out = tmp_path / f"two{attempt}"
        args = [a if a != "cpu" else "cuda" for a in ARGS] + ["--variant", variant]
        result = subprocess.run(
            [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", "-m", "zerognn",
             "run", *args, "--dataset-dir", str(tiny_dataset_dir), "--batch-size", "64", "--gpus", "2",
             "--out", f"{out}/"],
            capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stdout + result.stderr
        (written,) = out.glob("*.json")
        records.append(json.loads(written.read_text()))
    single = RunSpec(dataset="tiny", model="sage", variant=variant, batch_size=128, fanouts=[5, 3], hidden=32,
                     warmup_steps=3, measure_steps=3, profile_steps=0, eval_nodes=0, device="cuda")
    reference = run(single, tiny_dataset_dir, tmp_path / "one.json", progress=lambda m: None)
    for a, b, c in zip(records[0]["losses"], records[1]["losses"], reference["losses"]):
        assert a == pytest.approx(b, rel=1e-5)  # same samples and shards; float atomics may reorder sums
        assert a == pytest.approx(c, rel=1e-4)
