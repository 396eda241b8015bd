"""Figures drawn from the summary table: speedup, the trials behind each configuration's median step, time to
the target accuracy, GPU execution fraction, step time over the hardware floor, peak memory, batch-size sweep,
multi-GPU scaling, host interference and precision.

Each takes the data and what its check in ``needs.py`` returned (the rows or panels it draws)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..catalog import BASELINE
from ..precision import PRECISIONS
from ..records.stats import MIN_TRIALS
from .data import COMPARISON_KEYS, PRECISION_INDEX, FigureData, panels
from .draw import (
    ADDED_LOOK,
    EDGE,
    RESERVED_MARK,
    bar_additions,
    bar_handles,
    bar_marks,
    bar_notes,
    bar_whiskers,
    bars,
    ci_bands,
    legend,
    line_handles,
    line_whiskers,
    lines,
    log2_batch_axis,
    log_y,
    new_figure,
    point_handles,
    upright_height,
)
from .needs import BAR_PANEL_KEYS, Memory, Panels
from .style import variant_order

GIB = 2**30
BATCH_LABEL = "batch size (seeds per GPU)"
STEP_CI = ("step_ms_median_ci_low", "step_ms_median_ci_high")
SPEEDUP_CI = ("speedup_vs_host_mediated_ci_low", "speedup_vs_host_mediated_ci_high")
TARGET_CI = ("time_to_target_s_ci_low", "time_to_target_s_ci_high")
NOT_REACHED = "not reached by every seed"
# The trials figure: a configuration's points spread over [slot - POINTS_AT - SPREAD, slot - POINTS_AT + SPREAD]
# in trial order; its median tick and interval stand at slot + SUMMARY_AT.
POINTS_AT, SPREAD, SUMMARY_AT, TICK = 0.1, 0.2, 0.25, 0.1


def _batch_bars(data: FigureData, df: pd.DataFrame, y: str, title: str, subtitle: str, ylabel: str,
                log_with_one: bool = False, whiskers: tuple[str, str] | None = None,
                ylim: tuple[float, float] | None = None) -> Figure:
    """One panel per dataset and model: a bar per variant and batch size of ``y``; optionally on a log
    scale with a 1x line, with whiskers from two other columns, or with fixed limits."""
    groups = list(panels(df, BAR_PANEL_KEYS))
    fig, axes = new_figure(title, len(groups), subtitle=subtitle)
    for (panel, sub), (ax,) in zip(groups, axes):
        order = bars(ax, sub, "batch_size", y, data.styles)
        if whiskers is not None:
            bar_whiskers(ax, sub, "batch_size", *whiskers, order)
        if log_with_one:
            log_y(ax)
            ax.axhline(1.0, color="0.2", linewidth=0.8, linestyle="--")
        ax.set(title=panel, xlabel=BATCH_LABEL, ylabel=ylabel)
        if ylim is not None:
            ax.set_ylim(ylim)
    legend(fig, bar_handles(data.styles, variant_order(df["variant"])))
    return fig


def speedup(data: FigureData, df: pd.DataFrame) -> Figure:
    """Host-mediated's median step over each variant's, per batch size, with the ratio's bootstrap interval."""
    return _batch_bars(data, df, "speedup_vs_host_mediated", "Speedup over host-mediated",
                       "host-mediated's median step time / the variant's (log scale; higher is better; "
                       f"whiskers: 95 % CI over trials, bootstrap; none where n < {MIN_TRIALS})", "speedup (×, log)",
                       log_with_one=True, whiskers=SPEEDUP_CI)


def trials(data: FigureData, frame: pd.DataFrame) -> Figure:
    """Every trial's median step, one point per trial beside its configuration's median and 95 % interval, a
    slot per variant, a panel per comparison group, on a log scale."""
    groups = list(panels(frame, COMPARISON_KEYS))
    fig, axes = new_figure(
        "Every trial's median step", len(groups), label_height=upright_height(frame["variant"].unique()),
        subtitle=f"one point per trial (a fresh process), left to right in trial order; bar: the configuration's "
                 f"median over trials with its 95 % CI (order statistics; none where n < {MIN_TRIALS})",
    )
    for (title, sub), (ax,) in zip(groups, axes):
        variants = variant_order(sub["variant"])
        for slot, variant in enumerate(variants):
            _trial_points(ax, slot, sub[sub["variant"] == variant], data)
        ax.set_xticks(range(len(variants)), variants, rotation=90)  # upright names never collide
        ax.set_xlim(-0.6, len(variants) - 0.4)
        ax.grid(False, axis="x")
        log_y(ax)
        ax.set(title=title, xlabel="variant", ylabel="median step (ms, log)")
    summary = [Line2D([], [], color="black", marker="_", markersize=12, markeredgewidth=2.0, linestyle="",
                      label="median over trials"),
               Line2D([], [], color="black", marker="|", markersize=12, linestyle="", label="its 95 % CI")]
    legend(fig, [*point_handles(data.styles, variant_order(frame["variant"])), *summary])
    return fig


def _trial_points(ax, slot: int, config: pd.DataFrame, data: FigureData) -> None:
    """One configuration's trials as points in its variant's look, and its median tick and interval bar."""
    config = config.sort_values("trial")
    style = data.styles[config["variant"].iloc[0]]
    offsets = np.linspace(-SPREAD, SPREAD, len(config)) if len(config) > 1 else np.zeros(1)
    ax.scatter(slot - POINTS_AT + offsets, config["step_ms_median"], color=style.color, marker=style.marker,
               edgecolors=EDGE, linewidths=0.5, alpha=0.85, zorder=2)
    first = config.iloc[0]
    at = slot + SUMMARY_AT
    ax.hlines(first["configuration_ms"], at - TICK, at + TICK, color="black", linewidth=2.0, zorder=3)
    if pd.notna(first["configuration_ci_low"]) and pd.notna(first["configuration_ci_high"]):
        ax.vlines(at, first["configuration_ci_low"], first["configuration_ci_high"], color="black", linewidth=1.2,
                  zorder=3)


def time_to_target(data: FigureData, df: pd.DataFrame) -> Figure:
    """Each variant's median training time to the target per batch size, with its interval, and the time with
    setup as an outlined bar on top; a configuration whose runs did not all reach the target is labelled instead."""
    not_reached = df["time_to_target_s"].isna()
    df = df.assign(note=(NOT_REACHED + " (" + df["targets_reached"].astype(str) + " of " + df["trials"].astype(str)
                         + " did)").where(not_reached))
    groups = list(panels(df, BAR_PANEL_KEYS))
    fig, axes = new_figure(
        "Time to the target accuracy", len(groups),
        subtitle=f"bars: the median over seeds and trials of the training time until the first evaluation at or "
                 f"above the dataset's target (log scale; whiskers: its 95 % CI, none where n < {MIN_TRIALS}); "
                 f"outlined on top: the time with the variant's setup added",
    )
    for (panel, sub), (ax,) in zip(groups, axes):
        order = bars(ax, sub, "batch_size", "time_to_target_s", data.styles)
        bar_whiskers(ax, sub, "batch_size", *TARGET_CI, order)
        bar_additions(ax, sub, "batch_size", "time_to_target_s", "time_to_target_with_setup_s", order)
        bar_notes(ax, sub, "batch_size", "note", order)
        shown = sub[["time_to_target_s", TARGET_CI[0]]].stack()
        shown = shown[shown > 0]
        if shown.empty:  # no configuration here reached the target: no time to scale
            ax.set_yticks([])
        else:
            log_y(ax)
            ax.set_ylim(bottom=shown.min() / 2)  # bars start at 0, which a log axis leaves out
        ax.set(title=panel, xlabel=BATCH_LABEL, ylabel="time to target (s, log)")
    added = Patch(**ADDED_LOOK, label="with setup")
    legend(fig, [*bar_handles(data.styles, variant_order(df["variant"])), added])
    return fig


def gpu_exec_fraction(data: FigureData, df: pd.DataFrame) -> Figure:
    """The share of each variant's step the GPU is busy, per batch size."""
    df = df.assign(gpu_busy_pct=100.0 * df["gpu_exec_fraction"])
    return _batch_bars(data, df, "gpu_busy_pct", "GPU execution fraction",
                       "GPU busy time per step (kernels, copies, memsets; profiled) / median unprofiled step time",
                       "GPU busy (% of the step)", ylim=(0, 105))


def step_over_floor(data: FigureData, df: pd.DataFrame) -> Figure:
    """Each variant's median step over the hardware floor, per batch size."""
    return _batch_bars(data, df, "step_over_floor", "Step time over the hardware floor",
                       "median step / max(dense FLOPs / the precision's peak, bytes / bandwidth) at live sizes "
                       "(1 = the floor; lower is better)", "step / floor (×, log)", log_with_one=True)


def memory(data: FigureData, need: Memory) -> Figure:
    """Each variant's peak device memory per batch size, with the ideal (exact-size) peak as a line."""
    df, ideal = need.runs, need.ideal
    df = df.assign(peak_gib=df["peak_mem_bytes"].astype(float) / GIB,
                   reserved_gib=df["peak_reserved_bytes"].astype(float) / GIB)
    groups = list(panels(df, BAR_PANEL_KEYS))
    source = "the step's tensors" if need.computed else f"the step's tensors, else {BASELINE}'s peak"
    fig, axes = new_figure(
        "Peak device memory", len(groups),
        subtitle=f"bars: allocated; ticks: reserved (graph pools, cache); line: ideal ({source}); log scale",
    )
    for (title, sub), (ax,) in zip(groups, axes):
        order = bars(ax, sub, "batch_size", "peak_gib", data.styles)
        bar_marks(ax, sub, "batch_size", "reserved_gib", order)
        for i, batch in enumerate(order):
            key = tuple(sub.loc[sub["batch_size"] == batch, COMPARISON_KEYS].iloc[0])
            if pd.notna(ideal.get(key)):
                ax.hlines(ideal[key] / GIB, i - 0.45, i + 0.45, color="black", linewidth=2.0)
        log_y(ax)  # a cache of graph pools can hold ten times what a step's tensors need
        ax.set(title=title, xlabel=BATCH_LABEL, ylabel="peak memory (GiB, log)")
    ideal_handle = Line2D([], [], color="black", linewidth=2.0, label="ideal (exact sizes)")
    handles = [*bar_handles(data.styles, variant_order(df["variant"])), ideal_handle]
    if df["reserved_gib"].notna().any():
        handles.append(Line2D([], [], linestyle="", **RESERVED_MARK, label="reserved peak"))
    legend(fig, handles)
    return fig


def _step_time_lines(ax, sub: pd.DataFrame, x: str, data: FigureData, title: str, xlabel: str) -> None:
    """Median step time per variant against ``x`` on a log scale: a shaded band for the 95 % CI where the
    configuration has one, p10–p90 whiskers where it has not (fewer than ``MIN_TRIALS`` trials)."""
    lines(ax, sub, x, "step_ms_median", data.styles)
    ci_bands(ax, sub, x, *STEP_CI, data.styles)
    line_whiskers(ax, sub[~_has_step_ci(sub)], x, "step_ms_p10", "step_ms_p90", data.styles)
    log_y(ax)
    ax.set(title=title, xlabel=xlabel, ylabel="median step time (ms, log)")


def _has_step_ci(df: pd.DataFrame) -> pd.Series:
    """Which rows have both ends of the median step's interval (6 or more trials)."""
    return df[STEP_CI[0]].notna() & df[STEP_CI[1]].notna()


def _step_spread(groups: Panels) -> str:
    """What the step-time panels' bands and whiskers show, for the subtitle."""
    has_ci = pd.concat([_has_step_ci(sub) for _, sub in groups])
    band = "band: 95 % CI of the median over trials"
    whiskers = "p10–p90 of a trial's steps (median over trials)"
    if has_ci.all():
        return f"step time {band}"
    if not has_ci.any():
        return f"step time whiskers: {whiskers}; no CI below {MIN_TRIALS} trials"
    return f"step time {band}; whiskers where n < {MIN_TRIALS}: {whiskers}"


def batch_sweep(data: FigureData, groups: Panels) -> Figure:
    """Median step time and throughput per variant against the batch size, a panel per comparison group."""
    fig, axes = new_figure("Batch-size sweep", len(groups), metrics=2, subtitle=_step_spread(groups))
    variants = set()
    for (title, sub), (ax_time, ax_rate) in zip(groups, axes):
        variants.update(sub["variant"])
        _step_time_lines(ax_time, sub, "batch_size", data, title, BATCH_LABEL)
        lines(ax_rate, sub, "batch_size", "seeds_per_s", data.styles)
        ax_rate.set(xlabel=BATCH_LABEL, ylabel="throughput (seeds/s)")
        for ax in (ax_time, ax_rate):
            log2_batch_axis(ax, sub["batch_size"])
    legend(fig, line_handles(data.styles, variant_order(variants)))
    return fig


def scaling(data: FigureData, groups: Panels) -> Figure:
    """Throughput and weak-scaling efficiency per variant against the GPU count."""
    fig, axes = new_figure(
        "Multi-GPU scaling", len(groups), metrics=2,
        subtitle="weak scaling: fixed batch per GPU; efficiency = per-GPU throughput / the smallest run's",
    )
    variants = set()
    for (title, sub), (ax_rate, ax_eff) in zip(groups, axes):
        variants.update(sub["variant"])
        sub = sub.assign(efficiency=_weak_scaling_efficiency(sub))
        lines(ax_rate, sub, "gpus", "seeds_per_s", data.styles)
        ax_rate.set(title=title, xlabel="GPUs", ylabel="throughput (seeds/s)")
        lines(ax_eff, sub, "gpus", "efficiency", data.styles)
        ax_eff.axhline(1.0, color="0.2", linewidth=0.8, linestyle="--")
        ax_eff.set(xlabel="GPUs", ylabel="weak-scaling efficiency")
        ax_eff.set_ylim(bottom=0)
        for ax in (ax_rate, ax_eff):
            ax.set_xticks(sorted(sub["gpus"].unique()))
    legend(fig, line_handles(data.styles, variant_order(variants)))
    return fig


def _weak_scaling_efficiency(df: pd.DataFrame) -> pd.Series:
    per_gpu = df["seeds_per_s"] / df["gpus"]
    smallest = df.loc[df.groupby("variant")["gpus"].idxmin()].set_index("variant")
    return per_gpu / df["variant"].map(smallest["seeds_per_s"] / smallest["gpus"])


def _step_time_and_ratio(data: FigureData, groups: Panels, title: str, subtitle: str, x: str, xlabel: str,
                         ratio: str, ratio_label: str, tick_labels=str, log_ratio: bool = False) -> Figure:
    """Per panel: the median step time per variant against ``x`` (``_step_time_lines``), and below it the
    column ``ratio`` (with its 95 % interval as whiskers where the summary has one) against a 1x line."""
    fig, axes = new_figure(title, len(groups), metrics=2, subtitle=f"{subtitle}; {_step_spread(groups)}")
    variants = set()
    for (panel, sub), (ax_time, ax_ratio) in zip(groups, axes):
        variants.update(sub["variant"])
        _step_time_lines(ax_time, sub, x, data, panel, xlabel)
        ratios = sub.dropna(subset=[ratio])
        if not ratios.empty:
            lines(ax_ratio, ratios, x, ratio, data.styles)
            if f"{ratio}_ci_low" in sub:
                line_whiskers(ax_ratio, ratios, x, f"{ratio}_ci_low", f"{ratio}_ci_high", data.styles)
        ax_ratio.axhline(1.0, color="0.2", linewidth=0.8, linestyle="--")
        if log_ratio:
            log_y(ax_ratio)
        ax_ratio.set(xlabel=xlabel, ylabel=ratio_label)
        shown = sorted(sub[x].unique())
        for ax in (ax_time, ax_ratio):
            ax.set_xticks(shown, [tick_labels(v) for v in shown])
    legend(fig, line_handles(data.styles, variant_order(variants)))
    return fig


def interference(data: FigureData, groups: Panels) -> Figure:
    """Median step time and slowdown per variant against the number of CPU-bound processes beside the run."""
    return _step_time_and_ratio(
        data, groups, "Step time under host load",
        "CPU-bound processes on the run's cores during the timed steps; slowdown = step / the same variant's "
        "without load", "host_load", "host load (processes)", "slowdown_vs_no_load", "slowdown vs no load")


def precision(data: FigureData, groups: Panels) -> Figure:
    """Median step time and speedup over host-mediated per variant against the training precision."""
    names = list(PRECISIONS)
    groups = [(title, sub.assign(precision_index=sub["dtype"].map(PRECISION_INDEX))) for title, sub in groups]
    return _step_time_and_ratio(
        data, groups, "Step time by precision",
        "speedup against host-mediated at the same precision, whiskers its 95 % interval", "precision_index",
        "precision", "speedup_vs_host_mediated", "speedup vs host-mediated (log)", tick_labels=lambda i: names[i],
        log_ratio=True)
