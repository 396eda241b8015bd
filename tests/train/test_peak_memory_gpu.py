"""A run's peak memory is its own when it is not the first run of its process: device memory that only a
reference cycle still holds (an earlier run's, or the caller's) when the run starts neither counts in its
peak nor takes from it, wherever the garbage collector happens to free it."""

import gc

import pytest
import torch

from zerognn.train import RunSpec, run

pytestmark = pytest.mark.gpu

GARBAGE_BYTES = 64 * 2**20


class Cycle:
    """A device tensor that only a reference cycle holds: the garbage collector frees it, not a refcount."""

    def __init__(self):
        self.tensor = torch.empty(GARBAGE_BYTES, dtype=torch.uint8, device="cuda")
        self.cycle = self


def collector_at_warm_up(collected: list[int]):
    """A progress callback that runs the collector when the run says its warm-up begins: during setup, after
    the run has read what was resident before it."""
    def progress(message: str) -> None:
        if "warm-up:" in message:
            collected.append(gc.collect())
    return progress


@pytest.mark.parametrize("variant", ["host-mediated", "zerognn"])
def test_garbage_freed_during_a_run_leaves_its_peak_as_a_clean_runs(tiny_dataset_dir, tmp_path, variant):
    spec = RunSpec(dataset="tiny", model="sage", variant=variant, batch_size=100, fanouts=[5, 3], hidden=32,
                   warmup_steps=2, measure_steps=4, profile_steps=0, eval_nodes=0, device="cuda",
                   deterministic=True)
    gc.collect()
    clean = run(spec, tiny_dataset_dir, tmp_path / "clean.json", progress=lambda m: None)["metrics"]
    collected = []
    gc.disable()  # the cycle outlives every automatic collection until the run's own
    try:
        Cycle()
        assert torch.cuda.memory_allocated() >= GARBAGE_BYTES
        beside = run(spec, tiny_dataset_dir, tmp_path / "beside.json",
                     progress=collector_at_warm_up(collected))["metrics"]
    finally:
        gc.enable()
    assert collected, "the run never said its warm-up began, so nothing collected garbage during it"
    assert beside["peak_mem_bytes"] == pytest.approx(clean["peak_mem_bytes"], abs=2**20)
