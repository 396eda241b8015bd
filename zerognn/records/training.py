"""A run to the target's record (``training``): its evaluations with the training time before each, and the
time to the target, derived here from what the run measured (``zerognn.train.to_target``).

Training time counts from the first timed step: the timed steps' wall time, then each block's (each from
an idle GPU to its last update done); evaluations are timed apart and never count. The variant's setup
(its own setup and the warm-up steps, where compilation and the first captures happen) is a field of its
own: time to the target is given without it and with it, so a reader sees what the one-off cost buys.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from .spec import RunSpec

# Steps whose mean loss is an evaluation's training loss: the last few before it.
TRAIN_LOSS_STEPS = 5
# The phases of a run (metrics.phase_s) that are its one-off setup, before anything is timed.
SETUP_PHASES = ("setup", "warm-up")


def setup_seconds(phase_s: dict[str, float]) -> float:
    """A run's one-off cost before its timed steps: the variant's setup (kernel loading, calibration, capture,
    compilation where it compiles up front) and the warm-up steps (compilation on first call, the first
    captures); NaN for a record without phases (older than schema 6)."""
    if not any(phase in phase_s for phase in SETUP_PHASES):
        return math.nan
    return sum(phase_s.get(phase, 0.0) for phase in SETUP_PHASES)


@dataclass(frozen=True)
class Evaluation:
    step: int  # the global step after which it evaluated (a multiple of the epoch length)
    block_s: float  # the training block that ended at ``step``, in seconds
    eval_s: float
    val_acc: float | None


def training_fields(spec: RunSpec, target: float | None, steps_per_epoch: int, setup_s: float, timed_s: float,
                    evaluations: list[Evaluation], losses: list[float | None]) -> dict[str, Any]:
    """The record's ``training`` object for a run to ``target`` (validation accuracy; None for a dataset without
    one, whose run records the curve alone: how a target is chosen)."""
    rows, trained = [], timed_s
    for e in evaluations:
        trained += e.block_s
        last = losses[max(0, e.step - TRAIN_LOSS_STEPS):e.step]
        loss = None if not last or any(x is None for x in last) else statistics.fmean(last)
        rows.append({"step": e.step, "epoch": e.step // steps_per_epoch, "train_s": trained, "eval_s": e.eval_s,
                     "val_acc": e.val_acc, "train_loss": loss})
    reached = next((row for row in rows if target is not None and row["val_acc"] is not None
                    and row["val_acc"] >= target), None)
    if target is None:
        why = f"no target fixed for {spec.dataset} (zerognn.datasets.specs.TARGETS): the curve alone"
    elif reached is None:
        best = max((row["val_acc"] for row in rows if row["val_acc"] is not None), default=None)
        peak = "no evaluation" if best is None else f"val accuracy peaked at {best:.4f}"
        why = f"{peak}, below the target {target:g}, within {spec.epochs} epochs"
    return {
        "target_val_acc": target,
        "epochs": spec.epochs,
        "eval_every": spec.eval_every,
        "eval_nodes": spec.eval_nodes,
        "setup_s": setup_s,
        "evaluations": rows,
        "time_to_target_s": None if reached is None else reached["train_s"],
        "time_to_target_with_setup_s": None if reached is None else reached["train_s"] + setup_s,
        "epochs_to_target": None if reached is None else reached["epoch"],
        "not_reached": None if reached is not None else why,
    }
