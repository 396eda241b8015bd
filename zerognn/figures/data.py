"""The data every figure draws from: the summary table, the records, and tidy frames built from them.

Pandas only (no matplotlib, no seaborn): what a figure needs is checked from this data before anything
is drawn (``needs.py``); a check raises :class:`Skip` with the reason when the data cannot support the
figure, so no figure is ever drawn empty.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..precision import PRECISIONS
from ..records import iter_records
from ..records.ids import COMPARISON_FIELDS, RunKey
from ..records.summary import check_summary_current, read_summary, trial_row

if TYPE_CHECKING:
    from .style import VariantStyle

# Runs with equal values here do the same work and are compared side by side.
COMPARISON_KEYS = list(COMPARISON_FIELDS)
# The columns that place a record in the figures (the rest of a per-record frame is its data).
RECORD_KEYS = [*COMPARISON_KEYS, "variant", "step_ms_median", "run_id"]
PHASES = ("sample", "gather", "forward", "backward", "optimizer")


class Skip(Exception):
    """The data cannot support this figure; the message says why."""


@dataclass
class FigureData:
    summary: pd.DataFrame          # one row per configuration
    records: list[dict[str, Any]]  # every trial's record

    @cached_property
    def first_trials(self) -> list[dict[str, Any]]:
        """One record per configuration, its lowest seed's first trial: one profiled and evaluated (figures
        drawn from a record's trace, envelope or losses draw each configuration once)."""
        first: dict[str, dict[str, Any]] = {}
        for record in self.records:
            key = RunKey.of(record["config"])
            held = first.get(key.configuration().run_id)
            if held is None or _replicate(key) < _replicate(RunKey.of(held["config"])):
                first[key.configuration().run_id] = record
        return list(first.values())

    @cached_property
    def styles(self) -> dict[str, VariantStyle]:
        """Every variant's look, over the summary and the records (the same in every figure); a peer's label
        names its library, from its records' ``variant_info.peer`` (with a summary alone, no label says so)."""
        from .style import variant_styles  # seaborn: loaded only to draw, never to check or list figures

        peers = {r["config"]["variant"]: _peer_label(r["variant_info"]) for r in self.records
                 if (r.get("variant_info") or {}).get("peer")}
        return variant_styles(set(self.summary["variant"]) | {r["config"]["variant"] for r in self.records}, peers)

    @classmethod
    def load(cls, summary_csv: str | os.PathLike, runs_dir: str | os.PathLike | None) -> FigureData:
        """The summary and the records of ``runs_dir``, which it must match row for record (else
        ZeroGNNError: rebuild the summary). Without ``runs_dir`` (only a summary at hand) the figures
        drawn from records are skipped."""
        summary = read_summary(summary_csv)
        if runs_dir is None:
            return cls(summary, [])
        records = list(iter_records(runs_dir))
        check_summary_current(summary, records, summary_csv, runs_dir)
        return cls(summary, records)

    def require_records(self) -> list[dict[str, Any]]:
        """Each configuration's first trial (``first_trials``); Skip without records."""
        if not self.records:
            raise Skip("no run records (runs_dir not given or empty)")
        return self.first_trials


def _peer_label(info: dict[str, Any]) -> str:
    """A peer's library, and whether its samples are other than the suite's (``sample_identical``)."""
    return info["peer"] + (", other samples" if info.get("sample_identical") is False else "")


def panels(df: pd.DataFrame, keys: list[str]) -> Iterator[tuple[str, pd.DataFrame]]:
    """Split ``df`` into panels by ``keys``; titles name the dataset and whichever other keys vary."""
    shown = [k for k in keys if k == "dataset" or df[k].nunique() > 1]
    groups = sorted(df.groupby(keys, sort=False), key=lambda group: tuple(map(_panel_order, keys, group[0])))
    for values, sub in groups:
        yield " · ".join(_key_label(k, v) for k, v in zip(keys, values) if k in shown), sub


# Precisions in their declared order (zerognn.precision), float32 first: panels and the precision figure's x.
PRECISION_INDEX = {name: i for i, name in enumerate(PRECISIONS)}


def _panel_order(key: str, value: Any) -> Any:
    """Where a panel's key value sorts: precisions in their declared order, the rest by value."""
    if key != "dtype":
        return value
    return (PRECISION_INDEX[value], "") if value in PRECISION_INDEX else (len(PRECISION_INDEX), value)


def _key_label(key: str, value: Any) -> str:
    if key == "batch_size":
        return f"B={value}"
    if key == "fanouts":
        return f"fanouts {value}"
    if key == "gpus":
        return f"{value} GPU" + ("" if value == 1 else "s")
    if key == "host_load":
        return f"host load {value}"
    if key == "deterministic":
        return "deterministic" if value else "default mode"
    return str(value)


def _keys(record: dict[str, Any]) -> dict[str, Any]:
    row = trial_row(record)
    return {k: row[k] for k in RECORD_KEYS}


def phase_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Per record: its keys, each phase's ms/step (0 where not reported) and ``other`` (the rest, ≥ 0)."""
    df = pd.DataFrame([{**_keys(r), **r["metrics"]["phase_ms"]} for r in records])
    phases = [c for c in df.columns if c not in RECORD_KEYS]
    df[phases] = df[phases].fillna(0.0)
    df["other"] = (df["step_ms_median"] - df[phases].sum(axis=1)).clip(lower=0.0)
    return df


IDLE = "GPU idle"


def class_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Per record: its keys, each kernel class's GPU ms/step (0 where absent) and ``GPU idle`` (the rest
    of the median step, ≥ 0)."""
    df = pd.DataFrame([{**_keys(r), **r["metrics"]["gpu_ms_by_class"]} for r in records])
    classes = [c for c in df.columns if c not in RECORD_KEYS]
    df[classes] = df[classes].fillna(0.0)
    df[IDLE] = (df["step_ms_median"] - df[classes].sum(axis=1)).clip(lower=0.0)
    return df


def phase_names(frame: pd.DataFrame) -> list[str]:
    """The standard phases first, then any other phase a variant reported, then ``other``."""
    extra = sorted(set(frame.columns) - set(RECORD_KEYS) - set(PHASES) - {"other"})
    return [p for p in PHASES if p in frame.columns] + extra + ["other"]


def envelope_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Per record and hop of ``variant_info.envelope``: provisioned, live_max, live_mean."""
    return pd.DataFrame([
        {**_keys(r), **hop}
        for r in records
        for hop in r["variant_info"].get("envelope", {}).get("hops", [])
    ])


def loss_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Per record and training step: the loss (NaN where it was not finite)."""
    return pd.DataFrame([
        {**_keys(r), "step": i, "loss": float("nan") if loss is None else loss}
        for r in records
        for i, loss in enumerate(r["losses"])
    ])


def evaluation_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Per record of a run to the target (``training`` set) and each of its evaluations, numbered from 0 in
    order: the training seconds before it, the validation accuracy (NaN where null) and the target (NaN for a
    dataset without one)."""
    return pd.DataFrame([
        {**_keys(r), "evaluation": i, "train_s": e["train_s"], "val_acc": _number(e["val_acc"]),
         "target_val_acc": _number(r["training"]["target_val_acc"])}
        for r in records if r.get("training")
        for i, e in enumerate(r["training"]["evaluations"])
    ])


def _number(value: float | None) -> float:
    return float("nan") if value is None else float(value)


def ideal_memory(records: list[dict[str, Any]]) -> dict[str, int]:
    """Configuration id (the summary's run_id) → ``variant_info.ideal_peak_mem_bytes``, for the records that
    report one."""
    return {
        RunKey.of(r["config"]).configuration().run_id: r["variant_info"]["ideal_peak_mem_bytes"]
        for r in records
        if r["variant_info"].get("ideal_peak_mem_bytes") is not None
    }


def _replicate(key: RunKey) -> tuple[int, int]:
    """Which repeat of its configuration a run is: its seed, then its trial."""
    return key.seed, key.trial
