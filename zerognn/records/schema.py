"""The run record: one JSON object per run, its validator, and reading/writing it.

``docs/records.md`` is the human description of the same schema (for tools outside this package that
write records); the field tables below are the machine one. Unknown extra fields are allowed so that
a newer writer does not break an older reader; every field listed here is required.

Records of schemas 1 to 4 are still read: ``read_record`` upgrades them in memory (``upgrade_record``),
deriving the GPU busy time from what schema 1 stored; fields an older schema lacked are null.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic import write_json
from ..errors import ZeroGNNError
from .ids import NAME_PATTERN, RunKey

SCHEMA_VERSION = 5
READABLE_VERSIONS = (1, 2, 3, 4, 5)
DOC = "docs/records.md"

# A checker is called with (value, field path) and raises _Invalid when the value does not fit.
Check = Callable[[Any, str], None]


class _Invalid(Exception):
    def __init__(self, field: str, problem: str):
        super().__init__(f"field '{field}' {problem}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return (_is_int(v) or isinstance(v, float)) and math.isfinite(v)


def _fail(field: str, expected: str, value: Any) -> None:
    raise _Invalid(field, f"must be {expected}, got {json.dumps(value, default=repr)[:60]}")


def integer(minimum: int | None = None) -> Check:
    def check(v: Any, field: str) -> None:
        if not _is_int(v) or (minimum is not None and v < minimum):
            _fail(field, "an integer" + (f" >= {minimum}" if minimum is not None else ""), v)
    return check


def number(low: float = -math.inf, high: float = math.inf, low_open: bool = False) -> Check:
    bounds = "" if (low, high) == (-math.inf, math.inf) else (
        f" in {'(' if low_open else '['}{low:g}, {high:g}{']' if high < math.inf else ')'}")

    def check(v: Any, field: str) -> None:
        if not (_is_number(v) and (v > low if low_open else v >= low) and v <= high):
            _fail(field, "a finite number" + bounds, v)
    return check


def string(pattern: str | None = None, choices: Sequence[str] | None = None) -> Check:
    def check(v: Any, field: str) -> None:
        if not isinstance(v, str) or not v:
            _fail(field, "a non-empty string", v)
        if choices is not None and v not in choices:
            _fail(field, f"one of {', '.join(repr(c) for c in choices)}", v)
        if pattern is not None and not re.fullmatch(pattern, v):
            _fail(field, f"a string matching {pattern}", v)
    return check


def nullable(check: Check) -> Check:
    def wrapped(v: Any, field: str) -> None:
        if v is not None:
            check(v, field)
    return wrapped


def scalar(v: Any, field: str) -> None:
    if not (v is None or isinstance(v, (str, bool)) or _is_number(v)):
        _fail(field, "a string, number or null", v)


def obj(fields: dict[str, Check]) -> Check:
    """A JSON object that has every one of ``fields`` (extra keys are allowed)."""
    def check(v: Any, field: str) -> None:
        if not isinstance(v, dict):
            _fail(field or "record", "a JSON object", v)
        for key, sub in fields.items():
            path = f"{field}.{key}" if field else key
            if key not in v:
                raise _Invalid(path, "is missing")
            sub(v[key], path)
    return check


def list_of(item: Check, min_len: int = 0) -> Check:
    def check(v: Any, field: str) -> None:
        if not isinstance(v, list) or len(v) < min_len:
            _fail(field, f"a list of at least {min_len} item(s)", v)
        for i, x in enumerate(v):
            item(x, f"{field}[{i}]")
    return check


def map_of(value: Check) -> Check:
    def check(v: Any, field: str) -> None:
        if not isinstance(v, dict):
            _fail(field, "a JSON object", v)
        for k, x in v.items():
            value(x, f"{field}.{k}")
    return check


NAME = string(pattern=NAME_PATTERN)

CONFIG = obj({
    "dataset": NAME, "model": NAME, "variant": NAME,
    "batch_size": integer(1), "fanouts": list_of(integer(1), 1),
    "hidden": integer(1), "lr": number(0, low_open=True), "seed": integer(),
    "warmup_steps": integer(0), "measure_steps": integer(1), "profile_steps": integer(0),
    "gpus": integer(1), "device": string(choices=("cpu", "cuda")), "dtype": string(),
})
DATASET = obj({
    "name": string(), "source": string(), "num_nodes": integer(0), "num_edges": integer(0),
    "num_features": integer(0), "num_classes": integer(0), "scale": scalar,
})
METRICS_FIELDS_V1: dict[str, Check] = {
    "steps_per_epoch": integer(1), "step_ms": list_of(number(0), 1),
    "step_ms_median": number(0), "step_ms_p10": number(0), "step_ms_p90": number(0),
    "epoch_s": number(0), "seeds_per_s": number(0),
    "gpu_exec_fraction": nullable(number(0, 1)), "host_syncs_per_step": nullable(number(0)),
    "host_launches_per_step": nullable(number(0)), "peak_mem_bytes": nullable(integer(0)),
    "phase_ms": map_of(number(0)), "window_ms": nullable(number(0)),
}
METRICS_V1 = obj(METRICS_FIELDS_V1)
METRICS_FIELDS_V2 = METRICS_FIELDS_V1 | {
    "gpu_busy_ms_per_step": nullable(number(0)), "gpu_untraced_ms_per_step": nullable(number(0)),
    "profiler_dilation": nullable(number(0, low_open=True)), "gpu_gap_in_graph_ms_per_step": nullable(number(0)),
    "gpu_wait_host_ms_per_step": nullable(number(0)), "cuda_graph_captures": nullable(integer(0)),
}
METRICS_V2 = obj(METRICS_FIELDS_V2)
# Schema 3: the hardware floor (zerognn.measure.floor) and the GPU activities per step.
FIELDS_NEW_IN_V3 = ("gpu_activities_per_step", "floor_ms", "step_over_floor", "floor_gflop", "floor_gbytes")
METRICS_FIELDS_V3 = METRICS_FIELDS_V2 | {
    "gpu_activities_per_step": nullable(number(0)), "floor_ms": nullable(number(0, low_open=True)),
    "step_over_floor": nullable(number(0)), "floor_gflop": nullable(number(0)), "floor_gbytes": nullable(number(0)),
}
METRICS_V3 = obj(METRICS_FIELDS_V3)
# Schema 4: the step's GPU time per kernel class (zerognn.measure.trace.KERNEL_CLASSES); {} without one.
METRICS_FIELDS_V4 = METRICS_FIELDS_V3 | {"gpu_ms_by_class": map_of(number(0))}
METRICS_V4 = obj(METRICS_FIELDS_V4)
# Schema 5: a whole epoch's measured wall time and the global step it started at (null: not run).
FIELDS_NEW_IN_V5 = ("epoch_s_measured", "epoch_first_step")
METRICS = obj(METRICS_FIELDS_V4 | {
    "epoch_s_measured": nullable(number(0, low_open=True)), "epoch_first_step": nullable(integer(0)),
})
# gpu_exec_fraction and profiler_dilation are ratios of other fields; a record must agree with itself.
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
    "cuda_graph_captures", "gpu_activities_per_step", "floor_ms", "step_over_floor",
)
ACCURACY = obj({"val": nullable(number(0, 1)), "test": nullable(number(0, 1)), "eval_nodes": integer(0)})
ENVELOPE = obj({"hops": list_of(
    obj({"hop": integer(1), "provisioned": integer(0), "live_max": integer(0), "live_mean": number(0)}), 1)})
# variant_info is free-form; these keys are checked when present because the figures read them.
VARIANT_INFO_KNOWN = {
    "envelope": ENVELOPE,
    "overflow_count": integer(0),
    "ideal_peak_mem_bytes": nullable(integer(0)),
}
# environment is collect_environment()'s output; the summary reads these two keys.
ENVIRONMENT = obj({"git_commit": nullable(string()), "gpu_name": nullable(string())})
RECORD_FIELDS: dict[str, Check] = {
    "schema_version": integer(1), "run_id": string(), "config": CONFIG, "dataset": DATASET,
    "metrics": METRICS, "losses": list_of(nullable(number())), "accuracy": ACCURACY,
    "variant_info": obj({}), "environment": ENVIRONMENT,
}
RECORD = obj(RECORD_FIELDS)
RECORD_V1 = obj(RECORD_FIELDS | {"metrics": METRICS_V1})
RECORD_V2 = obj(RECORD_FIELDS | {"metrics": METRICS_V2})
RECORD_V3 = obj(RECORD_FIELDS | {"metrics": METRICS_V3})
RECORD_V4 = obj(RECORD_FIELDS | {"metrics": METRICS_V4})


def percentiles(step_ms: Sequence[float]) -> tuple[float, float, float]:
    """(median, p10, p90) of step times, numpy's default linear interpolation."""
    if len(step_ms) == 0:
        raise ZeroGNNError("no measured step times; set measure_steps to at least 1.")
    median, p10, p90 = np.percentile(np.asarray(step_ms, dtype=float), [50, 10, 90])
    return float(median), float(p10), float(p90)


def validate_record(record: Any, source: str | os.PathLike | None = None) -> None:
    """Raise ZeroGNNError naming ``source``, the field and the fix if ``record`` is not a valid record."""
    try:
        version = record.get("schema_version") if isinstance(record, dict) else None
        if version not in READABLE_VERSIONS:
            RECORD(record, "")  # names a missing or mistyped field first, if that is the problem
            raise _Invalid("schema_version",
                           f"is {version}, this version reads {', '.join(map(str, READABLE_VERSIONS))}")
        {1: RECORD_V1, 2: RECORD_V2, 3: RECORD_V3, 4: RECORD_V4}.get(version, RECORD)(record, "")
        for key, check in VARIANT_INFO_KNOWN.items():
            if key in record["variant_info"]:
                check(record["variant_info"][key], f"variant_info.{key}")
        _check_consistency(record)
    except _Invalid as e:
        where = f"{source}: " if source is not None else ""
        raise ZeroGNNError(
            f"{where}invalid run record: {e}. Fix the code that wrote it to follow {DOC} (or delete the "
            f"file and re-run that run)."
        ) from None


def write_record(path: str | os.PathLike, record: dict[str, Any]) -> None:
    """Validate ``record`` and write it atomically as JSON."""
    validate_record(record, source=path)
    write_json(path, record)


def read_record(path: str | os.PathLike) -> dict[str, Any]:
    """Read, validate and (schema 1) upgrade one record."""
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ZeroGNNError(f"{path}: cannot read run record: {e}. Delete the file and re-run that run.") from e
    validate_record(record, source=path)
    return upgrade_record(record)


def upgrade_record(record: dict[str, Any]) -> dict[str, Any]:
    """A record of an older schema in the current one (current ones are returned as they are).

    Schema 1 stored the GPU execution fraction as busy time over the profiled window's wall time
    (``window_ms``), where the profiler dilates a host-bound step. The busy time per step is recovered
    exactly from it (fraction × window / profiled steps), and the fraction is recomputed against the
    unprofiled median step as schema 2 defines it. What an older schema did not store stays null (the
    idle split, the capture count, the floor, the activity count) or empty (the GPU time per kernel
    class); ``upgraded_from_schema`` says the record was upgraded and from which schema.
    """
    version = record["schema_version"]
    if version == SCHEMA_VERSION:
        return record
    c, m = record["config"], dict(record["metrics"])
    if version == 1:
        median = m["step_ms_median"]
        profiled_step = (m["window_ms"] / c["profile_steps"]
                         if m["window_ms"] is not None and c["profile_steps"] else None)
        busy = None
        if m["gpu_exec_fraction"] is not None and profiled_step is not None:
            busy = m["gpu_exec_fraction"] * profiled_step
        m.update(
            gpu_busy_ms_per_step=busy,
            gpu_untraced_ms_per_step=m.get("gpu_untraced_ms_per_step"),
            gpu_exec_fraction=None if busy is None or median <= 0 else min(1.0, busy / median),
            profiler_dilation=None if busy is None or median <= 0 else profiled_step / median,
            gpu_gap_in_graph_ms_per_step=None, gpu_wait_host_ms_per_step=None, cuda_graph_captures=None,
        )
    if version < 3:
        m.update(dict.fromkeys(FIELDS_NEW_IN_V3))
    if version < 4:
        m["gpu_ms_by_class"] = {}
    m.update(dict.fromkeys(FIELDS_NEW_IN_V5))
    return record | {"schema_version": SCHEMA_VERSION, "metrics": m, "upgraded_from_schema": version}


def record_paths(runs_dir: str | os.PathLike) -> list[Path]:
    """The record files under ``runs_dir`` (``*.json`` at any depth, hidden files skipped)."""
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        raise ZeroGNNError(f"runs directory {runs_dir} does not exist; run the pipeline first (snakemake).")
    return sorted(p for p in runs_dir.rglob("*.json") if not p.name.startswith("."))


def iter_records(runs_dir: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """Yield every record under ``runs_dir``; a bad file, a file not named ``<run_id>.json`` or a repeated
    run_id raises, naming the files."""
    seen: dict[str, Path] = {}
    for path in record_paths(runs_dir):
        record = read_record(path)
        if path.stem != record["run_id"]:
            raise ZeroGNNError(
                f"{path}: the file is named {path.stem!r} but holds run {record['run_id']!r}; a record file must "
                f"be named after its run: rename it to {record['run_id']}.json (see {DOC})."
            )
        first = seen.setdefault(record["run_id"], path)
        if first != path:
            raise ZeroGNNError(
                f"run_id {record['run_id']!r} appears in both {first} and {path}; each run must be recorded "
                f"once. Delete the stale file."
            )
        yield record


def _check_consistency(record: dict[str, Any]) -> None:
    """A record must agree with itself: every field that is computed from others (schema 1 and 2)."""
    c, m = record["config"], record["metrics"]
    load = c.get("host_load", 0)
    if not (_is_int(load) and load >= 0):
        raise _Invalid("config.host_load", f"must be an integer >= 0, got {json.dumps(load)[:30]}")
    expected = RunKey.of(c).run_id
    if record["run_id"] != expected:
        raise _Invalid("run_id", f"is {record['run_id']!r} but the config gives {expected!r}")
    if record["dataset"]["name"] != c["dataset"]:
        raise _Invalid("dataset.name", f"is {record['dataset']['name']!r} but config.dataset is {c['dataset']!r}; "
                                       f"they must be equal")
    if len(m["step_ms"]) != c["measure_steps"]:
        raise _Invalid("metrics.step_ms", f"holds {len(m['step_ms'])} step time(s) but config.measure_steps is "
                                          f"{c['measure_steps']}; it must hold one per measured step")
    if not m["step_ms_p10"] <= m["step_ms_median"] <= m["step_ms_p90"]:
        raise _Invalid("metrics.step_ms_median", "must lie between step_ms_p10 and step_ms_p90")
    percentile_fields = zip(("step_ms_median", "step_ms_p10", "step_ms_p90"), (50, 10, 90), percentiles(m["step_ms"]))
    for key, q, value in percentile_fields:
        _check_exact(f"metrics.{key}", m[key], value, f"numpy.percentile(step_ms, {q}) (linear)")
    median = m["step_ms_median"]
    if median <= 0:
        raise _Invalid("metrics.step_ms_median", "is 0 but must be > 0 (seeds_per_s = batch_size * gpus * 1000 / "
                                                 "step_ms_median)")
    _check_exact("metrics.epoch_s", m["epoch_s"], median * m["steps_per_epoch"] / 1e3,
                 "step_ms_median * steps_per_epoch / 1000")
    _check_exact("metrics.seeds_per_s", m["seeds_per_s"], c["batch_size"] * c["gpus"] * 1e3 / median,
                 "batch_size * gpus * 1000 / step_ms_median")
    if c["device"] == "cpu":
        for key in GPU_ONLY_METRICS:
            if m.get(key) is not None:
                raise _Invalid(f"metrics.{key}", f"is {json.dumps(m[key])[:30]} but must be null for a CPU run "
                                                 f"(config.device is 'cpu')")
    if c["device"] == "cpu" and m.get("gpu_ms_by_class"):
        raise _Invalid("metrics.gpu_ms_by_class", "must be {} for a CPU run (config.device is 'cpu')")
    if record["schema_version"] == 1:
        return
    median, busy, fraction = m["step_ms_median"], m["gpu_busy_ms_per_step"], m["gpu_exec_fraction"]
    if (busy is None) != (fraction is None):
        raise _Invalid("metrics.gpu_exec_fraction", "and gpu_busy_ms_per_step must both be null or both be set")
    if fraction is not None and median > 0:
        _check_ratio("metrics.gpu_exec_fraction", fraction, min(1.0, busy / median),
                     "min(1, gpu_busy_ms_per_step / step_ms_median)")
    dilation = m["profiler_dilation"]
    if dilation is not None and m["window_ms"] is not None and c["profile_steps"] and median > 0:
        _check_ratio("metrics.profiler_dilation", dilation, m["window_ms"] / c["profile_steps"] / median,
                     "window_ms / profile_steps / step_ms_median")
    if record["schema_version"] == 2:
        return
    if record["schema_version"] >= 5:
        first, spe = m["epoch_first_step"], m["steps_per_epoch"]
        if (first is None) != (m["epoch_s_measured"] is None):
            raise _Invalid("metrics.epoch_s_measured", "and epoch_first_step must both be null or both be set")
        if first is not None and first % spe:
            raise _Invalid("metrics.epoch_first_step", f"is {first}, not an epoch boundary (a multiple of "
                                                       f"steps_per_epoch = {spe})")
    floor, over = m["floor_ms"], m["step_over_floor"]
    if (floor is None) != (over is None):
        raise _Invalid("metrics.step_over_floor", "and floor_ms must both be null or both be set")
    if floor is not None:
        _check_ratio("metrics.step_over_floor", over, median / floor, "step_ms_median / floor_ms")


def _check_exact(field: str, value: float, expected: float, formula: str) -> None:
    if abs(value - expected) > max(EXACT_RELATIVE * abs(expected), EXACT_ABSOLUTE):
        raise _Invalid(field, f"is {value!r} but {formula} is {expected!r}; they must agree to "
                              f"{EXACT_RELATIVE:g} relative")


def _check_ratio(field: str, value: float, expected: float, formula: str) -> None:
    if abs(value - expected) > RATIO_TOLERANCE * max(abs(expected), 1e-12):
        raise _Invalid(field, f"is {value:.6g} but {formula} is {expected:.6g}")
