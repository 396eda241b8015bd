"""Figures drawn from the run records themselves: step-time breakdown by phase, envelope tightness,
training-loss curves and validation accuracy over training time.

Each takes the data and what its check in ``needs.py`` returned (the frame it draws)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from ..catalog import BASELINE
from ..measure.trace import KERNEL_CLASSES, OTHER_CLASS
from .data import COMPARISON_KEYS, IDLE, RECORD_KEYS, FigureData, panels, phase_names
from .draw import EDGE, bar_handles, bars, ci_bands, legend, line_handles, lines, log_x, log_y, new_figure
from .needs import Breakdown
from .style import variant_order

# Parts of a profiled step that exceed the timed median by more than this are said to in the subtitle.
OVERRUN_NOTED = 1.1
PHASE_HATCHES = ("///", "..", "", "xx", "\\\\\\", "++", "oo", "||")
OTHER_LOOK = ("white", "")  # the unattributed rest of the step: an outlined, empty segment
STEP_MARK = {"marker": "|", "color": "black"}


def class_names(frame: pd.DataFrame) -> list[str]:
    """The kernel classes in ``KERNEL_CLASSES`` order, then any other class, then ``GPU idle``."""
    known = [cls for cls, _ in KERNEL_CLASSES] + [OTHER_CLASS]
    present = [c for c in frame.columns if c not in RECORD_KEYS and c != IDLE]
    return [c for c in known if c in present] + sorted(set(present) - set(known)) + [IDLE]


def breakdown(data: FigureData, need: Breakdown) -> Figure:
    """Each variant's step split into parts, one stacked horizontal bar per variant.

    Records with a per-class GPU time (``metrics.gpu_ms_by_class``, from the profiled trace) are split
    by kernel class, with the GPU's idle time as the rest of the median step; without any such record
    the split is by host-side phase (``metrics.phase_ms``).
    """
    frame = need.frame
    if need.by_class:
        parts = class_names(frame)
        left_out = need.left_out
        title = "Per-step GPU time by kernel class"
        subtitle = ("GPU time per step of each kernel class in the profiled trace; GPU idle = median step − GPU "
                    "time, at least 0" + (f"; {left_out} run(s) without per-class GPU time left out" if left_out
                                          else ""))
    else:
        parts = phase_names(frame)
        title = "Per-step time breakdown (host-side phases)"
        subtitle = ("phases are host-side time in the profiled window (record_function ranges); "
                    "other = median step time − phases, at least 0")
    rest = parts[-1]
    over = float((frame[parts[:-1]].sum(axis=1) / frame["step_ms_median"]).max())
    if over > OVERRUN_NOTED:  # the parts come from the profiled steps, which the profiler itself slows
        subtitle += (f"; the profiled steps' parts reach {over:.1f}x the timed median step (the profiler's "
                     f"overhead): the mark is the real step")
    # Light to mid greys: the dark hatch lines must stay visible on every shade.
    shades = [str(round(g, 3)) for g in np.linspace(0.88, 0.45, len(parts) - 1)]
    look = {p: (shades[i], PHASE_HATCHES[i % len(PHASE_HATCHES)]) for i, p in enumerate(parts[:-1])}
    look[rest] = OTHER_LOOK
    groups = list(panels(frame, COMPARISON_KEYS))
    fig, axes = new_figure(title, len(groups), subtitle=subtitle)
    for (panel, sub), (ax,) in zip(groups, axes):
        # Horizontal bars, one row per variant (first at the top): names never collide.
        sub = sub.set_index("variant").loc[variant_order(sub["variant"])[::-1]]
        left = 0.0
        for part in parts:
            color, hatch = look[part]
            ax.barh(sub.index, sub[part], left=left, color=color, hatch=hatch, edgecolor=EDGE, linewidth=0.6)
            left = left + sub[part]
        # The parts come from the profiled window, the median from the timed steps: where profiling
        # overhead makes the parts outgrow the step, this mark shows where the real step ends.
        ax.scatter(sub["step_ms_median"], sub.index, s=400, linewidths=2.5, zorder=3, **STEP_MARK)
        ax.set(title=panel, xlabel="time per step (ms)", ylabel="variant")
    handles = [Patch(facecolor=look[p][0], hatch=look[p][1], edgecolor=EDGE, label=p) for p in parts]
    step = Line2D([], [], linestyle="", markersize=15, markeredgewidth=2.5, label="median step time", **STEP_MARK)
    legend(fig, [*handles, step])
    return fig


def envelope(data: FigureData, frame: pd.DataFrame) -> Figure:
    groups = list(panels(frame, COMPARISON_KEYS))
    fig, axes = new_figure("Execution-envelope tightness", len(groups),
                           subtitle="buffer capacity per hop / mean live size (1 = no padding)")
    for (title, sub), (ax,) in zip(groups, axes):
        bars(ax, sub, "hop", "ratio", data.styles)
        log_y(ax)
        ax.axhline(1.0, color="0.2", linewidth=0.8, linestyle="--")
        ax.set(title=title, xlabel="hop", ylabel="provisioned / live (×, log)")
    legend(fig, bar_handles(data.styles, variant_order(frame["variant"])))
    return fig


def loss(data: FigureData, frame: pd.DataFrame) -> Figure:
    groups = list(panels(frame, COMPARISON_KEYS))
    with_base = [(sub["variant"] == BASELINE).any() for _, sub in groups]
    relative = f"(loss − {BASELINE}'s) / {BASELINE}'s: 0 = identical training"
    subtitle = (relative if all(with_base) else f"{relative}; the losses themselves where {BASELINE} did not run"
                if any(with_base) else f"the loss at every step (no {BASELINE} run to compare against); "
                                       f"identical curves overlap")
    fig, axes = new_figure("Training loss per step", len(groups), subtitle=subtitle)
    drawn = set()
    for (title, sub), (ax,) in zip(groups, axes):
        base = sub[sub["variant"] == BASELINE].set_index("step")["loss"]
        if base.empty:
            lines(ax, sub, "step", "loss", data.styles)
            ax.set(ylabel="loss")
        else:
            sub = sub[sub["variant"] != BASELINE]
            reference = sub["step"].map(base)
            sub = sub.assign(difference=(sub["loss"] - reference) / reference.abs())
            lines(ax, sub, "step", "difference", data.styles)
            ax.axhline(0.0, color="0.2", linewidth=0.8, linestyle="--")
            ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 2))
            ax.set(ylabel="relative difference")
        drawn.update(sub["variant"])
        ax.set(title=title, xlabel="training step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    legend(fig, line_handles(data.styles, variant_order(drawn)))
    return fig


def time_to_accuracy(data: FigureData, curves: pd.DataFrame) -> Figure:
    """Validation accuracy against training time per variant, each evaluation's medians over the configuration's
    runs (seeds × trials) with their accuracies' min–max as a band, and the dataset's target as a dashed line."""
    groups = list(panels(curves, COMPARISON_KEYS))
    runs = curves["runs"].unique()
    each = f", {runs[0]} each" if len(runs) == 1 else ""
    fig, axes = new_figure(
        "Validation accuracy over training time", len(groups),
        subtitle=f"line: each evaluation's median over a configuration's runs (seeds × trials{each}) of the training "
                 f"time so far (setup and evaluations excluded; log scale) and of the validation accuracy; band: the "
                 f"runs' min–max accuracy; dashed: the dataset's target",
    )
    for (title, sub), (ax,) in zip(groups, axes):
        lines(ax, sub, "train_s", "val_acc", data.styles)
        ci_bands(ax, sub, "train_s", "val_acc_min", "val_acc_max", data.styles)
        for target in sorted(sub["target_val_acc"].dropna().unique()):
            ax.axhline(target, color="0.2", linewidth=0.8, linestyle="--")
            ax.annotate(f"target {target:g}", (0, target), xycoords=ax.get_yaxis_transform(), xytext=(3, 2),
                        textcoords="offset points", va="bottom", color="0.2")
        log_x(ax)
        ax.set(title=title, xlabel="training time (s, log)", ylabel="validation accuracy")
    legend(fig, line_handles(data.styles, variant_order(curves["variant"])))
    return fig
