"""The summary as a markdown table: every configuration, one row each, as docs/results.md shows the reference.

Rows: SAGE by batch size, then the other models; within a batch size, dataset, then the variants in
the paper's order. Brackets hold 95 % confidence intervals over trials (absent below 6 trials); a
between-trial CV at or above 10 % is bold, and so are epochs to the target that are not host-mediated's.
Empty cells are values no record has (an older schema, a CPU run).
"""

from __future__ import annotations

import pandas as pd

from ..catalog import variant_order
from ..precision import DEFAULT as DEFAULT_PRECISION
from .stats import CV_FLAG

COLUMNS = ("dataset", "model", "variant", "batch", "GPUs", "trials", "step ms, median [95 % CI]", "CV",
           "epoch s, from median (measured)", "setup s", "× host-mediated [95 % CI]", "GPU busy ms", "exec fraction",
           "GPU activities/step", "step / floor", "syncs/step", "launches/step", "peak MiB", "final loss", "commit")
# With runs under host load: after GPUs, the load; after the speedup, the slowdown against the run alone.
LOAD_COLUMNS = {"GPUs": "host load", "× host-mediated [95 % CI]": "× alone"}
# With deterministic runs: after GPUs, the mode; with runs at another precision than float32: the precision.
MODE_COLUMNS = {"GPUs": "deterministic"}
PRECISION_COLUMNS = {"GPUs": "precision"}
# With runs to the target: after the speedup, the time to the target, its ratio to host-mediated's, the epochs
# it took (a flag where they are not host-mediated's) and the last evaluation's accuracy over the trials.
TARGET_COLUMNS = {"× host-mediated [95 % CI]": ("reached", "time to target s [95 % CI]", "with setup s",
                                                "× host-mediated to target [95 % CI]", "epochs to target",
                                                "final val acc, mean ± std")}


def _cell(value, fmt: str) -> str:
    return "" if pd.isna(value) else format(value, fmt)


def _with_ci(value: float, low: float, high: float, fmt: str = ".2f") -> str:
    """``value [low–high]``, or the value alone without an interval."""
    if pd.isna(value):
        return ""
    return format(value, fmt) + ("" if pd.isna(low) else f" [{low:{fmt}}–{high:{fmt}}]")


def _cv(value: float) -> str:
    if pd.isna(value):
        return ""
    text = f"{100 * value:.1f} %"
    return f"**{text}**" if value >= CV_FLAG else text


def _epoch(extrapolated: float, measured: float) -> str:
    return f"{extrapolated:.2f}" + ("" if pd.isna(measured) else f" ({measured:.2f})")


def _epochs(median: float, low, high, flag) -> str:
    """Epochs to the target: the median and the range over trials, bold with the flag where they are not
    host-mediated's."""
    if pd.isna(median):
        return ""
    text = f"{median:g} ({low}–{high})"
    return f"**{text}: {flag}**" if isinstance(flag, str) and flag else text


def _per_step(value) -> str:
    """A count per step: whole numbers as such, a fraction of one (a launch per block) to 3 places."""
    return "" if pd.isna(value) else f"{value:.0f}" if value >= 1 or value == 0 else f"{value:.3f}"


def markdown_table(df: pd.DataFrame) -> str:
    """The summary ``df`` (``zerognn.records.summary``'s columns) as a markdown table."""
    order = {v: i for i, v in enumerate(variant_order(df["variant"]))}
    df = df.assign(_model=df["model"].map(lambda m: (m != "sage", m)), _variant=df["variant"].map(order))
    df = df.sort_values(["_model", "batch_size", "dataset", "host_load", "deterministic", "dtype", "_variant",
                         "gpus"])
    extra = {name: [] for name in COLUMNS}
    for shown, added in ((bool(df["deterministic"].any()), MODE_COLUMNS),
                         (bool((df["dtype"] != DEFAULT_PRECISION).any()), PRECISION_COLUMNS),
                         (bool((df["host_load"] > 0).any()), LOAD_COLUMNS),
                         (bool(df["targets_reached"].notna().any()), TARGET_COLUMNS)):
        for name, column in added.items():
            extra[name] += (list(column) if isinstance(column, tuple) else [column]) if shown else []
    columns = [c for name in COLUMNS for c in (name, *extra[name])]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in df.itertuples():
        peak = None if pd.isna(r.peak_mem_bytes) else r.peak_mem_bytes / 2**20
        cells = {
            "dataset": r.dataset, "model": r.model.upper(), "variant": r.variant, "batch": r.batch_size,
            "GPUs": r.gpus, "host load": r.host_load, "deterministic": "yes" if r.deterministic else "no",
            "precision": r.dtype,
            "trials": r.trials,
            "step ms, median [95 % CI]": _with_ci(r.step_ms_median, r.step_ms_median_ci_low,
                                                  r.step_ms_median_ci_high),
            "CV": _cv(r.step_ms_cv),
            "epoch s, from median (measured)": _epoch(r.epoch_s, r.epoch_s_measured),
            "setup s": _cell(r.setup_s, ".2f"),
            "× host-mediated [95 % CI]": _with_ci(r.speedup_vs_host_mediated, r.speedup_vs_host_mediated_ci_low,
                                                  r.speedup_vs_host_mediated_ci_high),
            "× alone": _cell(r.slowdown_vs_no_load, ".2f"),
            "reached": "" if pd.isna(r.targets_reached) else f"{r.targets_reached}/{r.trials}",
            "time to target s [95 % CI]": _with_ci(r.time_to_target_s, r.time_to_target_s_ci_low,
                                                   r.time_to_target_s_ci_high),
            "with setup s": _with_ci(r.time_to_target_with_setup_s, r.time_to_target_with_setup_s_ci_low,
                                     r.time_to_target_with_setup_s_ci_high),
            "× host-mediated to target [95 % CI]": _with_ci(r.tta_speedup_vs_host_mediated,
                                                            r.tta_speedup_vs_host_mediated_ci_low,
                                                            r.tta_speedup_vs_host_mediated_ci_high),
            "epochs to target": _epochs(r.epochs_to_target, r.epochs_to_target_min, r.epochs_to_target_max,
                                        r.convergence_flag),
            "final val acc, mean ± std": "" if pd.isna(r.final_val_acc_mean) else (
                f"{r.final_val_acc_mean:.4f}" + ("" if pd.isna(r.final_val_acc_std) else
                                                 f" ± {r.final_val_acc_std:.4f}")),
            "GPU busy ms": _cell(r.gpu_busy_ms_per_step, ".2f"), "exec fraction": _cell(r.gpu_exec_fraction, ".3f"),
            "GPU activities/step": _cell(r.gpu_activities_per_step, ".0f"),
            "step / floor": _cell(r.step_over_floor, ".1f"), "syncs/step": _per_step(r.host_syncs_per_step),
            "launches/step": _per_step(r.host_launches_per_step), "peak MiB": _cell(peak, ".0f"),
            "final loss": _cell(r.final_loss, ".4f"), "commit": "" if pd.isna(r.git_commit) else r.git_commit,
        }
        lines.append("| " + " | ".join(str(cells[c]) for c in columns) + " |")
    return "\n".join(lines) + "\n"
