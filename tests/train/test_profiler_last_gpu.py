"""No timed step follows a profiler session on the GPU either: a profiler session can leave the process's CUDA
API calls slower (CUPTI stays attached; docs/measurement.md gives what the after-effect records measured), so a
run profiles last, after its timed steps, its whole epoch and its training to a target."""

import pytest

from zerognn.train import RunSpec, run

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("overrides, timed", [
    (dict(whole_epoch=True), ["timed steps", "whole epoch"]),
    (dict(epochs=3), ["timed steps", "training to target"]),
])
def test_the_profiled_window_is_the_last_thing_a_gpu_run_times(tiny_dataset_dir, tmp_path, overrides, timed):
    spec = RunSpec(dataset="tiny", model="sage", variant="host-mediated", batch_size=128, fanouts=[15, 10, 5],
                   hidden=64, warmup_steps=2, measure_steps=4, profile_steps=2, eval_nodes=400, device="cuda",
                   **overrides)
    record = run(spec, tiny_dataset_dir, tmp_path / "r.json", progress=lambda m: None)
    phases = list(record["metrics"]["phase_s"])
    profiled = phases.index("profiled steps")
    assert all(phases.index(name) < profiled for name in timed)
    assert not {"timed steps", "whole epoch", "training to target"} & set(phases[profiled:])
    assert record["metrics"]["host_syncs_per_step"] is not None  # the window ran and was traced
    # every step trained before the profiler's lead-in: 9 steps an epoch, the whole epoch or the 3 epochs
    spe = record["metrics"]["steps_per_epoch"]
    assert spec.profile_first_step(spe) == (2 * spe if "whole_epoch" in overrides else 3 * spe)
