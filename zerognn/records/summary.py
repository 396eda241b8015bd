"""The summary table: one row per run record, plus speedup over host-mediated, written as CSV.

This is what the figures read. ``summary_row`` is the whole record→row mapping (``docs/records.md``
describes it for people); ``read_summary`` reads the CSV back with the same column types.
"""

from __future__ import annotations

import math
import os
from typing import Any

import pandas as pd

from ..atomic import atomic_path
from ..errors import ZeroGNNError
from .schema import iter_records

BASELINE = "host-mediated"
# Runs that do the same work, so their step times compare; speedup is taken within such a group.
GROUP_KEYS = ["dataset", "model", "batch_size", "fanouts", "gpus"]
SORT_KEYS = ["dataset", "model", "batch_size", "variant", "gpus"]
FINAL_LOSS_STEPS = 5

# Column → dtype, in output order. "str" columns may be empty (NaN); "Int64" is a nullable integer.
COLUMNS: dict[str, str] = {
    "dataset": "str", "model": "str", "variant": "str", "batch_size": "int64", "fanouts": "str",
    "gpus": "int64", "device": "str", "hidden": "int64",
    "step_ms_median": "float64", "step_ms_p10": "float64", "step_ms_p90": "float64",
    "seeds_per_s": "float64", "epoch_s": "float64", "gpu_exec_fraction": "float64",
    "gpu_busy_ms_per_step": "float64", "profiler_dilation": "float64", "gpu_gap_in_graph_ms_per_step": "float64",
    "gpu_wait_host_ms_per_step": "float64", "host_syncs_per_step": "float64", "host_launches_per_step": "float64", "peak_mem_bytes": "Int64",
    "final_loss": "float64", "val_acc": "float64", "test_acc": "float64",
    "speedup_vs_host_mediated": "float64", "gpu_name": "str", "git_commit": "str", "run_id": "str",
}
SUMMARY_COLUMNS = list(COLUMNS)


def fanouts_label(fanouts: list[int]) -> str:
    return "-".join(str(f) for f in fanouts)


def final_loss(losses: list[float | None]) -> float:
    """Mean of the last few losses; NaN when there are none or one of them is null (non-finite)."""
    last = losses[-FINAL_LOSS_STEPS:]
    if not last or any(x is None for x in last):
        return math.nan
    return sum(last) / len(last)


def summary_row(record: dict[str, Any]) -> dict[str, Any]:
    """The summary columns of one record, without ``speedup_vs_host_mediated`` (needs the group)."""
    c, m, env = record["config"], record["metrics"], record["environment"]
    return {
        "dataset": c["dataset"], "model": c["model"], "variant": c["variant"],
        "batch_size": c["batch_size"], "fanouts": fanouts_label(c["fanouts"]), "gpus": c["gpus"],
        "device": c["device"], "hidden": c["hidden"],
        **{k: m[k] for k in ("step_ms_median", "step_ms_p10", "step_ms_p90", "seeds_per_s", "epoch_s",
                             "gpu_exec_fraction", "gpu_busy_ms_per_step", "profiler_dilation",
                             "gpu_gap_in_graph_ms_per_step", "gpu_wait_host_ms_per_step", "host_syncs_per_step",
                             "host_launches_per_step", "peak_mem_bytes")},
        "final_loss": final_loss(record["losses"]),
        "val_acc": record["accuracy"]["val"], "test_acc": record["accuracy"]["test"],
        "gpu_name": env["gpu_name"], "git_commit": env["git_commit"], "run_id": record["run_id"],
    }


def add_speedup(df: pd.DataFrame) -> pd.DataFrame:
    """Host-mediated's median step time over each row's, within its group; NaN without a baseline."""
    base = df.loc[df["variant"] == BASELINE, GROUP_KEYS + ["step_ms_median"]]
    base = base.rename(columns={"step_ms_median": "_base_ms"})
    merged = df.merge(base, on=GROUP_KEYS, how="left")
    return df.assign(speedup_vs_host_mediated=(merged["_base_ms"] / merged["step_ms_median"]).to_numpy())


def summarize(runs_dir: str | os.PathLike, out_csv: str | os.PathLike) -> pd.DataFrame:
    """Build the summary of every record under ``runs_dir``, write it to ``out_csv``, return it."""
    rows = [summary_row(r) for r in iter_records(runs_dir)]
    if not rows:
        raise ZeroGNNError(
            f"no run records (*.json) under {runs_dir}; run the pipeline first (snakemake) or point to the "
            f"directory that holds the records."
        )
    df = add_speedup(pd.DataFrame(rows))
    df = df.sort_values(SORT_KEYS, kind="stable").reset_index(drop=True)
    df = df[SUMMARY_COLUMNS].astype(COLUMNS)
    with atomic_path(out_csv) as tmp:
        df.to_csv(tmp, index=False)
    return df


def read_summary(path: str | os.PathLike) -> pd.DataFrame:
    """Read a summary CSV written by :func:`summarize`, with its column types."""
    try:
        df = pd.read_csv(path, dtype=COLUMNS)
    except (OSError, ValueError) as e:
        raise ZeroGNNError(
            f"cannot read summary {path}: {e}. Rebuild it from the run records with zerognn.records.summarize."
        ) from e
    missing = [c for c in SUMMARY_COLUMNS if c not in df.columns]
    if missing:
        raise ZeroGNNError(
            f"summary {path} lacks columns {', '.join(missing)}; it was written by another version. Rebuild "
            f"it from the run records with zerognn.records.summarize."
        )
    return df
