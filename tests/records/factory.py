"""Hand-built, valid run records for the records and figures tests."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from zerognn.records import RunKey, percentiles, write_record

DOCS = Path(__file__).resolve().parents[2] / "docs" / "records.md"


def doc_example() -> dict[str, Any]:
    """The example record in docs/records.md."""
    block = re.search(r"```json\n(.*?)```", DOCS.read_text(), re.S)
    return json.loads(block.group(1))


def make_record(
    variant: str = "torch-eager",
    *,
    dataset: str = "tiny",
    model: str = "sage",
    batch_size: int = 256,
    fanouts: tuple[int, ...] = (15, 10, 5),
    gpus: int = 1,
    step_ms: tuple[float, ...] = (10.0, 11.0, 12.0),
    device: str = "cpu",
    gpu_exec_fraction: float | None = None,
    host_syncs_per_step: float | None = None,
    host_launches_per_step: float | None = None,
    peak_mem_bytes: int | None = None,
    phase_ms: dict[str, float] | None = None,
    losses: list[float | None] | None = None,
    variant_info: dict[str, Any] | None = None,
    gpu_name: str | None = None,
    floor_ms: float | None = None,
    gpu_activities_per_step: float | None = None,
    gpu_ms_by_class: dict[str, float] | None = None,
    epoch_s_measured: float | None = None,
    epoch_first_step: int | None = None,
    host_load: int = 0,
    trial: int = 1,
    phase_s: dict[str, float] | None = None,
    peak_reserved_bytes: int | None = None,
    ideal_mem_bytes: int | None = None,
    dtype: str = "float32",
) -> dict[str, Any]:
    median, p10, p90 = percentiles(step_ms)
    steps_per_epoch = 10
    return {
        "schema_version": 7,
        "run_id": RunKey(dataset, model, variant, batch_size, fanouts, gpus, host_load, dtype=dtype,
                         trial=trial).run_id,
        "config": {
            "dataset": dataset, "model": model, "variant": variant, "batch_size": batch_size,
            "fanouts": list(fanouts), "hidden": 64, "lr": 0.01, "seed": 0, "warmup_steps": 2,
            "measure_steps": len(step_ms), "profile_steps": 0, "gpus": gpus, "device": device,
            "dtype": dtype, "host_load": host_load, "trial": trial,
        },
        "dataset": {"name": dataset, "source": "rmat", "num_nodes": 1000, "num_edges": 8000,
                    "num_features": 16, "num_classes": 4, "scale": None},
        "metrics": {
            "steps_per_epoch": steps_per_epoch, "step_ms": list(step_ms), "step_ms_median": median,
            "step_ms_p10": p10, "step_ms_p90": p90, "epoch_s": median * steps_per_epoch / 1e3,
            "seeds_per_s": batch_size * gpus * 1e3 / median, "gpu_exec_fraction": gpu_exec_fraction,
            "gpu_busy_ms_per_step": None if gpu_exec_fraction is None else gpu_exec_fraction * median,
            "gpu_untraced_ms_per_step": None, "profiler_dilation": None, "gpu_gap_in_graph_ms_per_step": None,
            "gpu_wait_host_ms_per_step": None, "cuda_graph_captures": None,
            "host_syncs_per_step": host_syncs_per_step, "host_launches_per_step": host_launches_per_step,
            "peak_mem_bytes": peak_mem_bytes, "phase_ms": phase_ms or {}, "window_ms": None,
            "gpu_activities_per_step": gpu_activities_per_step, "floor_ms": floor_ms,
            "step_over_floor": None if floor_ms is None else median / floor_ms, "floor_gflop": 1.0,
            "floor_gbytes": 0.1, "gpu_ms_by_class": gpu_ms_by_class or {},
            "epoch_s_measured": epoch_s_measured, "epoch_first_step": epoch_first_step,
            "phase_s": phase_s or {}, "peak_reserved_bytes": peak_reserved_bytes, "ideal_mem_bytes": ideal_mem_bytes,
        },
        "losses": [1.5, 1.2, 1.0, 0.9, 0.8, 0.7, 0.6] if losses is None else losses,
        "accuracy": {"val": 0.5, "test": 0.45, "eval_nodes": 100},
        "training": None,
        "variant_info": variant_info or {},
        "environment": {"git_commit": "abc123", "git_dirty": False, "gpu_name": gpu_name},
    }


def write_records(runs_dir: Path, records: list[dict[str, Any]]) -> None:
    for record in records:
        write_record(runs_dir / f"{record['run_id']}.json", record)
