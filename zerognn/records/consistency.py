"""A record must agree with itself: the fields computed from others, checked on a record of the current
schema whose types the schema has already checked."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ZeroGNNError
from .ids import RunKey
from .record_schema import InvalidRecord

# gpu_exec_fraction, profiler_dilation and step_over_floor are ratios of other fields, checked to 1 %.
RATIO_TOLERANCE = 0.01
# Fields computed exactly from others (percentiles, epoch time, throughput) agree to this: records store
# full floats, so only rounding separates a correct writer from the recomputed value.
EXACT_RELATIVE = 1e-6
EXACT_ABSOLUTE = 1e-9
# Metrics only a GPU run can have (the run loop writes them null on the CPU: no allocator to measure,
# no GPU activity or CUDA API calls in a CPU-only trace, no CUDA Graphs). profiler_dilation is not
# among them: it is meaningful for any profiled run.
GPU_ONLY_METRICS = (
    "gpu_busy_ms_per_step", "gpu_untraced_ms_per_step", "gpu_exec_fraction", "gpu_gap_in_graph_ms_per_step",
    "gpu_wait_host_ms_per_step", "host_syncs_per_step", "host_launches_per_step", "peak_mem_bytes",
    "peak_reserved_bytes", "cuda_graph_captures", "gpu_activities_per_step", "floor_ms", "step_over_floor",
)


def percentiles(step_ms: Sequence[float]) -> tuple[float, float, float]:
    """(median, p10, p90) of step times, numpy's default linear interpolation."""
    if len(step_ms) == 0:
        raise ZeroGNNError("no measured step times; set measure_steps to at least 1.")
    median, p10, p90 = np.percentile(np.asarray(step_ms, dtype=float), [50, 10, 90])
    return float(median), float(p10), float(p90)


def check_consistency(record: dict[str, Any]) -> None:
    """Raise InvalidRecord for the first field that disagrees with what it is computed from."""
    c, m = record["config"], record["metrics"]
    expected = RunKey.of(c).run_id
    if record["run_id"] != expected:
        raise InvalidRecord("run_id", f"is {record['run_id']!r} but the config gives {expected!r}")
    if record["dataset"]["name"] != c["dataset"]:
        raise InvalidRecord("dataset.name", f"is {record['dataset']['name']!r} but config.dataset is "
                                            f"{c['dataset']!r}; they must be equal")
    _check_step_times(c, m)
    if c["device"] == "cpu":
        check_cpu_metrics_null(m, GPU_ONLY_METRICS)
        if m["gpu_ms_by_class"]:
            raise InvalidRecord("metrics.gpu_ms_by_class", "must be {} for a CPU run (config.device is 'cpu')")
    _check_ratios(c, m)
    _check_whole_epoch(m)
    _check_floor(m)
    _check_memory(m)
    _check_training(c, m["steps_per_epoch"], record["training"])


def _check_memory(m: dict[str, Any]) -> None:
    """The allocator's reserved peak holds its allocated one (graph-held bytes sit in reserved pools)."""
    allocated, reserved = m["peak_mem_bytes"], m["peak_reserved_bytes"]
    if allocated is not None and reserved is not None and reserved < allocated:
        raise InvalidRecord("metrics.peak_reserved_bytes", f"is {reserved} but must be at least peak_mem_bytes "
                                                            f"({allocated})")


def check_cpu_metrics_null(metrics: dict[str, Any], keys: Sequence[str]) -> None:
    """A CPU run's GPU-only metrics ``keys`` are null."""
    for key in keys:
        if metrics.get(key) is not None:
            raise InvalidRecord(f"metrics.{key}", f"is {json.dumps(metrics[key])[:30]} but must be null for a CPU "
                                                  f"run (config.device is 'cpu')")


def _check_step_times(c: dict[str, Any], m: dict[str, Any]) -> None:
    """The step times' count, their percentiles, and the epoch time and throughput computed from the median."""
    if len(m["step_ms"]) != c["measure_steps"]:
        raise InvalidRecord("metrics.step_ms", f"holds {len(m['step_ms'])} step time(s) but config.measure_steps "
                                               f"is {c['measure_steps']}; it must hold one per measured step")
    if not m["step_ms_p10"] <= m["step_ms_median"] <= m["step_ms_p90"]:
        raise InvalidRecord("metrics.step_ms_median", "must lie between step_ms_p10 and step_ms_p90")
    percentile_fields = zip(("step_ms_median", "step_ms_p10", "step_ms_p90"), (50, 10, 90), percentiles(m["step_ms"]))
    for key, q, value in percentile_fields:
        _check_exact(f"metrics.{key}", m[key], value, f"numpy.percentile(step_ms, {q}) (linear)")
    median = m["step_ms_median"]
    if median <= 0:
        raise InvalidRecord("metrics.step_ms_median", "is 0 but must be > 0 (seeds_per_s = batch_size * gpus * "
                                                      "1000 / step_ms_median)")
    _check_exact("metrics.epoch_s", m["epoch_s"], median * m["steps_per_epoch"] / 1e3,
                 "step_ms_median * steps_per_epoch / 1000")
    _check_exact("metrics.seeds_per_s", m["seeds_per_s"], c["batch_size"] * c["gpus"] * 1e3 / median,
                 "batch_size * gpus * 1000 / step_ms_median")


def _check_ratios(c: dict[str, Any], m: dict[str, Any]) -> None:
    """The GPU execution fraction and the profiler's dilation against what they are ratios of."""
    median, busy, fraction = m["step_ms_median"], m["gpu_busy_ms_per_step"], m["gpu_exec_fraction"]
    if (busy is None) != (fraction is None):
        raise InvalidRecord("metrics.gpu_exec_fraction", "and gpu_busy_ms_per_step must both be null or both be set")
    if fraction is not None:
        _check_ratio("metrics.gpu_exec_fraction", fraction, min(1.0, busy / median),
                     "min(1, gpu_busy_ms_per_step / step_ms_median)")
    dilation = m["profiler_dilation"]
    if dilation is not None and m["window_ms"] is not None and c["profile_steps"]:
        _check_ratio("metrics.profiler_dilation", dilation, m["window_ms"] / c["profile_steps"] / median,
                     "window_ms / profile_steps / step_ms_median")


def _check_whole_epoch(m: dict[str, Any]) -> None:
    first, spe = m["epoch_first_step"], m["steps_per_epoch"]
    if (first is None) != (m["epoch_s_measured"] is None):
        raise InvalidRecord("metrics.epoch_s_measured", "and epoch_first_step must both be null or both be set")
    if first is not None and first % spe:
        raise InvalidRecord("metrics.epoch_first_step", f"is {first}, not an epoch boundary (a multiple of "
                                                        f"steps_per_epoch = {spe})")


def _check_training(c: dict[str, Any], spe: int, training: dict[str, Any] | None) -> None:
    """A run to the target's evaluations follow its schedule, its training time only grows, and its time to the
    target is the first evaluation at or above the target."""
    epochs = c.get("epochs") or 0
    if (training is None) != (epochs == 0):
        raise InvalidRecord("training", "must be set exactly when config.epochs > 0 (a run to the target)")
    if training is None:
        return
    steps = [e["step"] for e in training["evaluations"]]
    every = training["eval_every"] * spe
    if steps != list(range(every, epochs * spe + 1, every)):
        raise InvalidRecord("training.evaluations", f"are after steps {steps[:4]}..., not every {every} steps "
                                                    f"(eval_every epochs of {spe}) up to {epochs} epochs")
    times = [e["train_s"] for e in training["evaluations"]]
    if any(b < a for a, b in zip(times, times[1:])):
        raise InvalidRecord("training.evaluations", "have a train_s that decreases; training time only grows")
    target = training["target_val_acc"]
    reached = next((e for e in training["evaluations"] if target is not None and e["val_acc"] is not None
                    and e["val_acc"] >= target), None)
    expected = None if reached is None else reached["train_s"]
    if training["time_to_target_s"] != expected or (training["not_reached"] is None) != (reached is not None):
        raise InvalidRecord("training.time_to_target_s", f"is {training['time_to_target_s']!r} but the first "
                                                         f"evaluation at or above {target} gives {expected!r}")
    if reached is not None:
        _check_exact("training.time_to_target_with_setup_s", training["time_to_target_with_setup_s"],
                     expected + training["setup_s"], "time_to_target_s + setup_s")


def _check_floor(m: dict[str, Any]) -> None:
    floor, over = m["floor_ms"], m["step_over_floor"]
    if (floor is None) != (over is None):
        raise InvalidRecord("metrics.step_over_floor", "and floor_ms must both be null or both be set")
    if floor is not None:
        _check_ratio("metrics.step_over_floor", over, m["step_ms_median"] / floor, "step_ms_median / floor_ms")


def _check_exact(field: str, value: float, expected: float, formula: str) -> None:
    if abs(value - expected) > max(EXACT_RELATIVE * abs(expected), EXACT_ABSOLUTE):
        raise InvalidRecord(field, f"is {value!r} but {formula} is {expected!r}; they must agree to "
                                   f"{EXACT_RELATIVE:g} relative")


def _check_ratio(field: str, value: float, expected: float, formula: str) -> None:
    if abs(value - expected) > RATIO_TOLERANCE * max(abs(expected), 1e-12):
        raise InvalidRecord(field, f"is {value:.6g} but {formula} is {expected:.6g}")
