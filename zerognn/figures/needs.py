"""What each figure needs from the data, checked without drawing (pandas only: no matplotlib, no seaborn).

Each check takes a :class:`FigureData` and returns what its figure draws from, or raises :class:`Skip`
with the reason the data cannot support it. ``supported_figures`` runs every check: it is what
``zerognn summarize --figures`` writes, what the workflow plans the figure jobs from, and what a render
skips by, so that all three agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..catalog import BASELINE
from ..records.summary import trial_frame
from .data import (
    COMPARISON_KEYS,
    FigureData,
    Skip,
    class_frame,
    envelope_frame,
    evaluation_frame,
    ideal_memory,
    loss_frame,
    panels,
    phase_frame,
    phase_names,
)

FORMATS = ("png", "pdf")


def _panel_keys(across: str) -> list[str]:
    """A figure with ``across`` on each panel's x axis has a panel per value of the other comparison keys."""
    return [k for k in COMPARISON_KEYS if k != across]


# Bar figures put batch sizes on the x axis of each panel.
BAR_PANEL_KEYS = _panel_keys("batch_size")
SCALING_PANEL_KEYS = _panel_keys("gpus")
INTERFERENCE_PANEL_KEYS = _panel_keys("host_load")
PRECISION_PANEL_KEYS = _panel_keys("dtype")
Panels = list[tuple[str, pd.DataFrame]]


def speedup(data: FigureData) -> pd.DataFrame:
    if not (data.summary["variant"] == BASELINE).any():
        raise Skip(f"no {BASELINE} runs to compare against")
    return data.summary.dropna(subset=["speedup_vs_host_mediated"])


# The summary's columns a configuration's trials are drawn against, as the trials figure names them.
CONFIGURATION_STEP = {"step_ms_median": "configuration_ms", "step_ms_median_ci_low": "configuration_ci_low",
                      "step_ms_median_ci_high": "configuration_ci_high"}


def trials(data: FigureData) -> pd.DataFrame:
    """Every record's median step (``trial_frame``), with its configuration's median and 95 % interval from the
    summary (``CONFIGURATION_STEP``); Skip unless some configuration has 2 or more trials."""
    data.require_records()  # Skip without records; the figure draws every trial, not only the first ones
    frame = trial_frame(data.records)
    if frame.groupby("configuration_id").size().max() < 2:
        raise Skip("needs 2 or more trials of a configuration (config key `trials`); every configuration here has "
                   "one")
    by_id = data.summary.set_index("run_id")
    return frame.assign(**{name: frame["configuration_id"].map(by_id[column])
                           for column, name in CONFIGURATION_STEP.items()})


def _non_empty(data: FigureData, column: str, reason: str) -> pd.DataFrame:
    df = data.summary.dropna(subset=[column])
    if df.empty:
        raise Skip(reason)
    return df


def gpu_exec_fraction(data: FigureData) -> pd.DataFrame:
    return _non_empty(data, "gpu_exec_fraction", "no GPU runs (gpu_exec_fraction is empty)")


def step_over_floor(data: FigureData) -> pd.DataFrame:
    return _non_empty(data, "step_over_floor", "no floor to compare against (step_over_floor is empty: no GPU "
                                               "runs on a GPU with known peaks)")


@dataclass(frozen=True)
class Memory:
    runs: pd.DataFrame   # the runs with a measured peak
    ideal: pd.Series     # ideal peak bytes per comparison group (COMPARISON_KEYS)
    computed: bool       # every group's ideal is the step's own tensors (ideal_mem_bytes), not a stand-in


def memory(data: FigureData) -> Memory:
    df = _non_empty(data, "peak_mem_bytes", "no device memory measured (peak_mem_bytes is empty)")
    computed = df.groupby(COMPARISON_KEYS)["ideal_mem_bytes"].min().astype(float)
    ideal = computed.combine_first(_ideal_peak(df, ideal_memory(data.records)))
    if ideal.isna().all():
        raise Skip(f"no ideal to compare against (no ideal_mem_bytes, no {BASELINE} runs and no "
                   f"variant_info.ideal_peak_mem_bytes)")
    return Memory(df, ideal, bool(computed.notna().all()))


def _ideal_peak(df: pd.DataFrame, estimates: dict[str, int]) -> pd.Series:
    """Ideal peak bytes per comparison group for records without ``ideal_mem_bytes`` (older schemas):
    host-mediated's measured peak, else a run's estimate."""
    measured = df[df["variant"] == BASELINE].set_index(COMPARISON_KEYS)["peak_mem_bytes"].astype(float)
    estimated = df.assign(estimate=df["run_id"].map(estimates)).groupby(COMPARISON_KEYS)["estimate"].max()
    return measured.combine_first(estimated.astype(float))


@dataclass(frozen=True)
class Breakdown:
    frame: pd.DataFrame  # class_frame (by_class) or phase_frame
    by_class: bool       # split by kernel class (else by host-side phase)
    left_out: int        # records without per-class GPU time, left out of a split by class


def breakdown(data: FigureData) -> Breakdown:
    """By kernel class for the records with a per-class GPU time; without any such record, by phase."""
    records = data.require_records()
    with_classes = [r for r in records if r["metrics"].get("gpu_ms_by_class")]
    if with_classes:
        return Breakdown(class_frame(with_classes), True, len(records) - len(with_classes))
    frame = phase_frame(records)
    if phase_names(frame) == ["other"]:
        raise Skip("no phase timings (metrics.phase_ms is empty in every record)")
    return Breakdown(frame, False, 0)


def _panels_along(data: FigureData, keys: list[str], axis: str) -> Panels:
    """The panels (by ``keys``) whose runs take 2 or more values of ``axis``."""
    return [(t, s) for t, s in panels(data.summary, keys) if s[axis].nunique() >= 2]


def _found(data: FigureData, axis: str) -> str:
    return ", ".join(str(v) for v in sorted(data.summary[axis].unique()))


def batch_sweep(data: FigureData) -> Panels:
    groups = _panels_along(data, BAR_PANEL_KEYS, "batch_size")
    if not groups:
        raise Skip(f"needs runs at 2 or more batch sizes of one dataset (found B={_found(data, 'batch_size')})")
    return groups


def scaling(data: FigureData) -> Panels:
    groups = _panels_along(data, SCALING_PANEL_KEYS, "gpus")
    if not groups:
        raise Skip(f"needs runs at 2 or more GPU counts of one configuration (found {_found(data, 'gpus')})")
    return groups


def interference(data: FigureData) -> Panels:
    groups = _panels_along(data, INTERFERENCE_PANEL_KEYS, "host_load")
    if not groups:
        raise Skip("needs runs of one configuration at 2 or more host loads")
    return groups


def precision(data: FigureData) -> Panels:
    groups = _panels_along(data, PRECISION_PANEL_KEYS, "dtype")
    if not groups:
        raise Skip(f"needs runs of one configuration at 2 or more precisions (found {_found(data, 'dtype')})")
    return groups


def envelope(data: FigureData) -> pd.DataFrame:
    """Per record and hop: provisioned / mean live size (``ratio``), for hops with live nodes."""
    frame = envelope_frame(data.require_records())
    if frame.empty:
        raise Skip("no records with variant_info.envelope")
    frame = frame[frame["live_mean"] > 0]
    if frame.empty:
        raise Skip("every envelope hop has live_mean 0")
    return frame.assign(ratio=frame["provisioned"] / frame["live_mean"])


def loss(data: FigureData) -> pd.DataFrame:
    frame = loss_frame(data.require_records())
    if frame.empty:
        raise Skip("no losses recorded")
    return frame


def time_to_target(data: FigureData) -> pd.DataFrame:
    return _non_empty(data, "targets_reached", "no runs to a target (targets_reached is empty: no record trained to "
                                               "a dataset's target; zerognn run --epochs)")


# What the time-to-accuracy figure draws at each evaluation of a configuration, over its runs (seeds × trials).
CURVE = {"train_s": ("train_s", "median"), "val_acc": ("val_acc", "median"), "val_acc_min": ("val_acc", "min"),
         "val_acc_max": ("val_acc", "max"), "runs": ("run_id", "nunique"), "target_val_acc": ("target_val_acc", "max")}


def time_to_accuracy(data: FigureData) -> pd.DataFrame:
    """Per configuration and evaluation (numbered in order, so the k-th evaluations of its runs pool): ``CURVE``,
    the medians of the training seconds and the validation accuracy, the accuracies' spread and the target."""
    data.require_records()  # Skip without records; the figure pools every run, not only the first ones
    frame = evaluation_frame(data.records)
    if frame.empty:
        raise Skip("no runs to a target (record `training` is null in every record; zerognn run --epochs)")
    return frame.groupby([*COMPARISON_KEYS, "variant", "evaluation"], sort=True).agg(**CURVE).reset_index()


# File stem → check, in the order the paper tells its story.
NEEDS: dict[str, Callable[[FigureData], Any]] = {
    "speedup": speedup,
    "trials": trials,
    "time_to_target": time_to_target,
    "gpu_exec_fraction": gpu_exec_fraction,
    "step_over_floor": step_over_floor,
    "memory": memory,
    "breakdown": breakdown,
    "batch_sweep": batch_sweep,
    "scaling": scaling,
    "interference": interference,
    "precision": precision,
    "envelope": envelope,
    "loss": loss,
    "time_to_accuracy": time_to_accuracy,
}
FIGURES = tuple(NEEDS)


def supported_figures(data: FigureData) -> dict[str, str | None]:
    """Figure name -> None where the data supports it, else the reason it cannot be drawn."""
    reasons: dict[str, str | None] = {}
    for name, check in NEEDS.items():
        try:
            check(data)
            reasons[name] = None
        except Skip as reason:
            reasons[name] = str(reason)
    return reasons
