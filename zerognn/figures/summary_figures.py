"""Figures drawn from the summary table: speedup, GPU execution fraction, step time over the hardware
floor, peak memory, batch-size sweep, multi-GPU scaling and host interference.

Each takes the data and what its check in ``needs.py`` returned (the rows or panels it draws)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ..catalog import BASELINE
from .data import COMPARISON_KEYS, FigureData, panels
from .draw import (
    bar_handles,
    bar_whiskers,
    bars,
    legend,
    line_handles,
    line_whiskers,
    lines,
    log2_batch_axis,
    log_y,
    new_figure,
)
from .needs import BAR_PANEL_KEYS, Memory, Panels
from .style import variant_order

WORST_CASE = "zerognn-worstcase"
GIB = 2**30
BATCH_LABEL = "batch size (seeds per GPU)"


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
    # The whisker is the variant's p10–p90 step time against host-mediated's median step.
    base_ms = df["speedup_vs_host_mediated"] * df["step_ms_median"]
    df = df.assign(speedup_lo=base_ms / df["step_ms_p90"], speedup_hi=base_ms / df["step_ms_p10"])
    return _batch_bars(data, df, "speedup_vs_host_mediated", "Speedup over host-mediated",
                       "host-mediated's median step time / the variant's (log scale; higher is better; "
                       "whiskers: the variant's p10–p90 step)", "speedup (×, log)", log_with_one=True,
                       whiskers=("speedup_lo", "speedup_hi"))


def gpu_exec_fraction(data: FigureData, df: pd.DataFrame) -> Figure:
    df = df.assign(gpu_busy_pct=100.0 * df["gpu_exec_fraction"])
    return _batch_bars(data, df, "gpu_busy_pct", "GPU execution fraction",
                       "GPU busy time per step (kernels, copies, memsets; profiled) / median unprofiled step time",
                       "GPU busy (% of the step)", ylim=(0, 105))


def step_over_floor(data: FigureData, df: pd.DataFrame) -> Figure:
    return _batch_bars(data, df, "step_over_floor", "Step time over the hardware floor",
                       "median step / max(dense FLOPs / fp32 peak, bytes / bandwidth) at live sizes "
                       "(1 = the floor; lower is better)", "step / floor (×, log)", log_with_one=True)


def memory(data: FigureData, need: Memory) -> Figure:
    df, ideal = need.runs, need.ideal
    df = df.assign(peak_gib=df["peak_mem_bytes"].astype(float) / GIB)
    groups = list(panels(df, BAR_PANEL_KEYS))
    fig, axes = new_figure(
        "Peak device memory", len(groups),
        subtitle=f"ideal: exact-size allocation ({BASELINE}'s peak, else the runs' estimate); "
                 f"{WORST_CASE}: worst-case envelope",
    )
    for (title, sub), (ax,) in zip(groups, axes):
        order = bars(ax, sub, "batch_size", "peak_gib", data.styles)
        for i, batch in enumerate(order):
            key = tuple(sub.loc[sub["batch_size"] == batch, COMPARISON_KEYS].iloc[0])
            if pd.notna(ideal.get(key)):
                ax.hlines(ideal[key] / GIB, i - 0.45, i + 0.45, color="black", linewidth=2.0)
        ax.set(title=title, xlabel=BATCH_LABEL, ylabel="peak memory (GiB)")
    ideal_handle = Line2D([], [], color="black", linewidth=2.0, label="ideal (exact sizes)")
    legend(fig, [*bar_handles(data.styles, variant_order(df["variant"])), ideal_handle])
    return fig


def _step_time_lines(ax, sub: pd.DataFrame, x: str, data: FigureData, title: str, xlabel: str) -> None:
    """Median step time per variant against ``x``, p10–p90 whiskers, on a log scale."""
    lines(ax, sub, x, "step_ms_median", data.styles)
    line_whiskers(ax, sub, x, "step_ms_p10", "step_ms_p90", data.styles)
    log_y(ax)
    ax.set(title=title, xlabel=xlabel, ylabel="median step time (ms, log; p10–p90)")


def batch_sweep(data: FigureData, groups: Panels) -> Figure:
    fig, axes = new_figure("Batch-size sweep", len(groups), metrics=2)
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


def interference(data: FigureData, groups: Panels) -> Figure:
    fig, axes = new_figure(
        "Step time under host load", len(groups), metrics=2,
        subtitle="CPU-bound processes on the run's cores during the timed steps; slowdown = step / the same "
                 "variant's without load",
    )
    variants = set()
    for (title, sub), (ax_time, ax_slow) in zip(groups, axes):
        variants.update(sub["variant"])
        _step_time_lines(ax_time, sub, "host_load", data, title, "host load (processes)")
        lines(ax_slow, sub, "host_load", "slowdown_vs_no_load", data.styles)
        ax_slow.axhline(1.0, color="0.2", linewidth=0.8, linestyle="--")
        ax_slow.set(xlabel="host load (processes)", ylabel="slowdown vs no load")
        for ax in (ax_time, ax_slow):
            ax.set_xticks(sorted(sub["host_load"].unique()))
    legend(fig, line_handles(data.styles, variant_order(variants)))
    return fig
