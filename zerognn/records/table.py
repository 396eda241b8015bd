"""The summary as a markdown table: every run, one row each, as docs/results.md shows the reference.

Rows: SAGE by batch size, then the other models; within a batch size, dataset, then the variants in
the paper's order. Empty cells are values a record does not have (an older schema, a CPU run).
"""

from __future__ import annotations

import pandas as pd

from .summary import variant_order

HEADER = ("| dataset | model | variant | batch | GPUs | step ms, median (p10–p90) | epoch s, from median (measured) "
          "| × host-mediated | GPU busy ms "
          "| exec fraction | GPU activities/step | step / floor | syncs/step | launches/step | peak MiB | final loss "
          "| commit |")


def _cell(value, fmt: str) -> str:
    return "" if pd.isna(value) else format(value, fmt)


def _epoch(extrapolated: float, measured: float) -> str:
    return f"{extrapolated:.2f}" + ("" if pd.isna(measured) else f" ({measured:.2f})")


def markdown_table(df: pd.DataFrame) -> str:
    """The summary ``df`` (``zerognn.records.summary``'s columns) as a markdown table."""
    order = {v: i for i, v in enumerate(variant_order(df["variant"]))}
    df = df.assign(_model=df["model"].map(lambda m: (m != "sage", m)), _variant=df["variant"].map(order))
    df = df.sort_values(["_model", "batch_size", "dataset", "_variant", "gpus"])
    lines = [HEADER, "|" + "---|" * (HEADER.count(" | ") + 1)]
    for r in df.itertuples():
        peak = None if pd.isna(r.peak_mem_bytes) else r.peak_mem_bytes / 2**20
        lines.append(
            f"| {r.dataset} | {r.model.upper()} | {r.variant} | {r.batch_size} | {r.gpus} | {r.step_ms_median:.2f} "
            f"({r.step_ms_p10:.2f}–{r.step_ms_p90:.2f}) | {_epoch(r.epoch_s, r.epoch_s_measured)} | "
            f"{_cell(r.speedup_vs_host_mediated, '.2f')} | "
            f"{_cell(r.gpu_busy_ms_per_step, '.2f')} | {_cell(r.gpu_exec_fraction, '.3f')} | "
            f"{_cell(r.gpu_activities_per_step, '.0f')} | {_cell(r.step_over_floor, '.1f')} | "
            f"{_cell(r.host_syncs_per_step, '.0f')} | {_cell(r.host_launches_per_step, '.0f')} | {_cell(peak, '.0f')} "
            f"| {_cell(r.final_loss, '.4f')} | {'' if pd.isna(r.git_commit) else r.git_commit} |")
    return "\n".join(lines) + "\n"
