"""Reading records of older schemas: a chain of one-schema steps (1 -> 2 -> ... -> 7), run in memory before
a record is checked, so that only the current schema is ever validated. No file on disk is changed.

Each step first checks the few fields it reads (as the current schema has them), so a malformed old record
is reported by field, not by a traceback. What an older schema did not store stays null (or ``{}``), and an
upgraded record carries ``upgraded_from_schema``: the schema it was written in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from .consistency import check_cpu_metrics_null
from .record_schema import RECORD_SCHEMA, SCHEMA_VERSION, InvalidRecord, RecordValidator, check

Record = dict[str, Any]

# Schema 3: the hardware floor (zerognn.measure.floor) and the GPU activities per step.
FIELDS_NEW_IN_V3 = ("gpu_activities_per_step", "floor_ms", "step_over_floor", "floor_gflop", "floor_gbytes")
# Schema 5: a whole epoch's measured wall time and the global step it started at (null: not run).
FIELDS_NEW_IN_V5 = ("epoch_s_measured", "epoch_first_step")
# Schema 6: memory both ways and its ideal (null: not measured); also phase_s ({}).
FIELDS_NEW_IN_V6 = ("peak_reserved_bytes", "ideal_mem_bytes")


def _reads(**objects: tuple[str, ...]) -> Draft202012Validator:
    """A validator of the fields a step reads: ``objects`` maps a top-level object to its fields, each checked
    as the current schema has it."""
    props = RECORD_SCHEMA["properties"]
    return RecordValidator({"type": "object", "required": list(objects), "properties": {
        name: {"type": "object", "required": list(keys), "properties": {k: props[name]["properties"][k] for k in keys}}
        for name, keys in objects.items()
    }})


def v1_to_v2(record: Record) -> Record:
    """Schema 1 stored the GPU execution fraction as busy time over the profiled window's wall time
    (``window_ms``), which the profiler dilates for a host-bound step. The busy time per step is recovered
    exactly from it (fraction × window / profiled steps), and the fraction is recomputed against the
    unprofiled median step as schema 2 defines it; the idle split and the capture count stay null."""
    c, m = record["config"], dict(record["metrics"])
    if c["device"] == "cpu":  # a CPU record's fraction is dropped below without a window: reject it first
        check_cpu_metrics_null(m, ("gpu_exec_fraction",))
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
    return record | {"schema_version": 2, "metrics": m}


def v2_to_v3(record: Record) -> Record:
    """Schema 3 added the hardware floor and the activity count: null."""
    return record | {"schema_version": 3, "metrics": record["metrics"] | dict.fromkeys(FIELDS_NEW_IN_V3)}


def v3_to_v4(record: Record) -> Record:
    """Schema 4 added the GPU time per kernel class: empty."""
    return record | {"schema_version": 4, "metrics": record["metrics"] | {"gpu_ms_by_class": {}}}


def v4_to_v5(record: Record) -> Record:
    """Schema 5 added the whole epoch's time and first step: null (no whole epoch was run)."""
    return record | {"schema_version": 5, "metrics": record["metrics"] | dict.fromkeys(FIELDS_NEW_IN_V5)}


def v5_to_v6(record: Record) -> Record:
    """Schema 6 added the run's wall time by phase (empty), the reserved peak and the ideal memory (null)."""
    added = {"phase_s": {}} | dict.fromkeys(FIELDS_NEW_IN_V6)
    return record | {"schema_version": 6, "metrics": record["metrics"] | added}


def v6_to_v7(record: Record) -> Record:
    """Schema 7 added a run to the target's ``training``: null (no run before it trained to a target)."""
    return record | {"schema_version": 7, "training": None}


@dataclass(frozen=True)
class Migration:
    reads: Draft202012Validator  # the fields ``apply`` reads, checked before it runs
    apply: Callable[[Record], Record]


# MIGRATIONS[n] turns a record of schema n into one of schema n + 1.
MIGRATIONS = {
    1: Migration(_reads(config=("profile_steps", "device"),
                        metrics=("step_ms_median", "window_ms", "gpu_exec_fraction")), v1_to_v2),
    2: Migration(_reads(metrics=()), v2_to_v3),
    3: Migration(_reads(metrics=()), v3_to_v4),
    4: Migration(_reads(metrics=()), v4_to_v5),
    5: Migration(_reads(metrics=()), v5_to_v6),
    6: Migration(_reads(), v6_to_v7),
}
READABLE_VERSIONS = (*MIGRATIONS, SCHEMA_VERSION)


def readable(record: Any) -> bool:
    """Whether ``record`` is an object of a schema this version reads."""
    version = record.get("schema_version") if isinstance(record, dict) else None
    return isinstance(version, int) and not isinstance(version, bool) and version in READABLE_VERSIONS


def unreadable(record: Any) -> InvalidRecord:
    version = record.get("schema_version") if isinstance(record, dict) else None
    return InvalidRecord("schema_version", f"is {version}, this version reads {', '.join(map(str, READABLE_VERSIONS))}")


def migrate(record: Record) -> Record:
    """``record`` (of a readable schema) in the current one; InvalidRecord if a step cannot read it."""
    version = record["schema_version"]
    upgraded = record
    for step in range(version, SCHEMA_VERSION):
        check(upgraded, MIGRATIONS[step].reads)
        upgraded = MIGRATIONS[step].apply(upgraded)
    return upgraded if version == SCHEMA_VERSION else upgraded | {"upgraded_from_schema": version}


def upgrade_record(record: Record) -> Record:
    """A record of an older schema in the current one (a current one is returned as it is); ZeroGNNError,
    naming the field, if it cannot be read."""
    try:
        if not readable(record):
            raise unreadable(record)
        return migrate(record)
    except InvalidRecord as e:
        raise e.error() from None
