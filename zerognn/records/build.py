"""A run's record, built from what the run measured: the one mapping from measurements to record fields.

The run loop hands over its measurements (``Measurements``) and what it knows of the run; derived
fields (percentiles, epoch time, throughput, the execution and floor metrics) are computed here, so a
record agrees with itself by construction (``zerognn.records.schema`` checks it when it is written).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..measure.execution import execution_metrics, gpu_ms_by_class
from ..measure.floor import floor_metrics
from ..measure.trace import TraceMetrics
from .schema import SCHEMA_VERSION, percentiles
from .spec import RunSpec


@dataclass(frozen=True)
class Measurements:
    """What one run measured (see ``zerognn.train.loop`` for how)."""

    steps_per_epoch: int
    step_ms: list[float]
    trace: TraceMetrics | None  # the profiled window; None without one
    untraced_ms_per_step: float | None
    epoch_s_measured: float | None
    epoch_first_step: int | None
    peak_mem_bytes: int | None  # above what was resident before setup; None on the CPU
    cuda_graph_captures: int | None  # None on the CPU
    floor_work: tuple[float, float] | None  # the step's (dense FLOPs, bytes) at its live sizes
    peak_reserved_bytes: int | None  # the allocator's reserved peak above the resident tensors; None on the CPU
    ideal_mem_bytes: int | None  # the step's tensors at its live sizes (zerognn.measure.floor.step_memory)


def build_record(spec: RunSpec, device_type: str, dataset: dict[str, Any], measured: Measurements,
                 losses: list[float | None], accuracy: dict[str, Any], variant_info: dict[str, Any],
                 environment: dict[str, Any], phase_s: dict[str, float] | None = None,
                 training: dict[str, Any] | None = None) -> dict[str, Any]:
    """The record of run ``spec`` (its device resolved to ``device_type``), in the schema's field order;
    ``phase_s``: the run's wall seconds by phase (``zerognn.measure.phases``; the run loop sets it last);
    ``training``: a run to the target's (``zerognn.records.training``), None for any other."""
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": spec.key.run_id,
        "config": spec.to_dict() | {"device": device_type},
        "dataset": dataset,
        "metrics": metrics(spec, measured, environment.get("gpu_name")) | {"phase_s": phase_s or {}},
        "losses": losses,
        "accuracy": accuracy,
        "training": training,
        "variant_info": variant_info,
        "environment": environment,
    }


def metrics(spec: RunSpec, m: Measurements, gpu_name: str | None) -> dict[str, Any]:
    median, p10, p90 = percentiles(m.step_ms)
    trace = m.trace
    return {
        "steps_per_epoch": m.steps_per_epoch,
        "step_ms": m.step_ms,
        "step_ms_median": median,
        "step_ms_p10": p10,
        "step_ms_p90": p90,
        "epoch_s": median * m.steps_per_epoch / 1e3,
        "epoch_s_measured": m.epoch_s_measured,
        "epoch_first_step": m.epoch_first_step,
        "seeds_per_s": spec.batch_size * spec.gpus / (median / 1e3),
        **execution_metrics(median, trace, m.untraced_ms_per_step),
        "host_syncs_per_step": None if trace is None else trace.host_syncs_per_step,
        "host_launches_per_step": None if trace is None else trace.host_launches_per_step,
        "gpu_activities_per_step": None if trace is None else trace.gpu_activities_per_step,
        "gpu_ms_by_class": gpu_ms_by_class(trace, m.untraced_ms_per_step),
        **floor_metrics(median, m.floor_work, gpu_name, spec.dtype),
        "peak_mem_bytes": m.peak_mem_bytes,
        "peak_reserved_bytes": m.peak_reserved_bytes,
        "ideal_mem_bytes": m.ideal_mem_bytes,
        "cuda_graph_captures": m.cuda_graph_captures,
        "phase_ms": {} if trace is None else trace.phase_ms,
        "window_ms": None if trace is None else trace.window_ms,
    }


def dataset_fields(name: str, meta: dict[str, Any], num_nodes: int, num_edges: int, num_features: int,
                   num_classes: int) -> dict[str, Any]:
    """The record's ``dataset`` object."""
    return {"name": name, "source": meta.get("source"), "num_nodes": num_nodes, "num_edges": num_edges,
            "num_features": num_features, "num_classes": num_classes, "scale": meta.get("scale")}
