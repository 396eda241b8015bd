"""Figures drawn from the summary table: speedup, GPU execution fraction, step time over the hardware
floor, peak memory, batch-size sweep, multi-GPU scaling and host interference."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ..catalog import BASELINE
from .data import COMPARISON_KEYS, FigureData, Skip, ideal_memory, panels
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
from .style import variant_order

# Bar figures put batch sizes on the x axis of each panel.
BAR_PANEL_KEYS = ["dataset", "model", "fanouts", "gpus", "host_load"]
SCALING_PANEL_KEYS = ["dataset", "model", "batch_size", "fanouts", "host_load"]
INTERFERENCE_PANEL_KEYS = ["dataset", "model", "batch_size", "fanouts", "gpus"]
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


def speedup(data: FigureData) -> Figure:
    if not (data.summary["variant"] == BASELINE).any():
        raise Skip(f"no {BASELINE} runs to compare against")
    df = data.summary.dropna(subset=["speedup_vs_host_mediated"])
    # The whisker is the variant's p10–p90 step time against host-mediated's median step.
    base_ms = df["speedup_vs_host_mediated"] * df["step_ms_median"]
    df = df.assign(speedup_lo=base_ms / df["step_ms_p90"], speedup_hi=base_ms / df["step_ms_p10"])
    return _batch_bars(data, df, "speedup_vs_host_mediated", "Speedup over host-mediated",
                       "host-mediated's median step time / the variant's (log scale; higher is better; "
                       "whiskers: the variant's p10–p90 step)", "speedup (×, log)", log_with_one=True,
                       whiskers=("speedup_lo", "speedup_hi"))


def gpu_exec_fraction(data: FigureData) -> Figure:
    df = data.summary.dropna(subset=["gpu_exec_fraction"])
    if df.empty:
        raise Skip("no GPU runs (gpu_exec_fraction is empty)")
    df = df.assign(gpu_busy_pct=100.0 * df["gpu_exec_fraction"])
    return _batch_bars(data, df, "gpu_busy_pct", "GPU execution fraction",
                       "GPU busy time per step (kernels, copies, memsets; profiled) / median unprofiled step time",
                       "GPU busy (% of the step)", ylim=(0, 105))


def step_over_floor(data: FigureData) -> Figure:
    df = data.summary.dropna(subset=["step_over_floor"])
    if df.empty:
        raise Skip("no floor to compare against (step_over_floor is empty: no GPU runs on a GPU with known peaks)")
    return _batch_bars(data, df, "step_over_floor", "Step time over the hardware floor",
                       "median step / max(dense FLOPs / fp32 peak, bytes / bandwidth) at live sizes "
                       "(1 = the floor; lower is better)", "step / floor (×, log)", log_with_one=True)


def memory(data: FigureData) -> Figure:
    df = data.summary.dropna(subset=["peak_mem_bytes"])
    if df.empty:
        raise Skip("no device memory measured (peak_mem_bytes is empty)")
    ideal = _ideal_peak(df, ideal_memory(data.records))
    if ideal.isna().all():
        raise Skip(f"no ideal to compare against (no {BASELINE} runs and no variant_info.ideal_peak_mem_bytes)")
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


def _ideal_peak(df: pd.DataFrame, estimates: dict[str, int]) -> pd.Series:
    """Ideal peak bytes per comparison group: host-mediated's measured peak, else a run's estimate."""
    measured = df[df["variant"] == BASELINE].set_index(COMPARISON_KEYS)["peak_mem_bytes"].astype(float)
    estimated = df.assign(estimate=df["run_id"].map(estimates)).groupby(COMPARISON_KEYS)["estimate"].max()
    return measured.combine_first(estimated.astype(float))


def _step_time_lines(ax, sub: pd.DataFrame, x: str, data: FigureData, title: str, xlabel: str) -> None:
    """Median step time per variant against ``x``, p10–p90 whiskers, on a log scale."""
    lines(ax, sub, x, "step_ms_median", data.styles)
    line_whiskers(ax, sub, x, "step_ms_p10", "step_ms_p90", data.styles)
    log_y(ax)
    ax.set(title=title, xlabel=xlabel, ylabel="median step time (ms, log; p10–p90)")


def batch_sweep(data: FigureData) -> Figure:
    groups = [(t, s) for t, s in panels(data.summary, BAR_PANEL_KEYS) if s["batch_size"].nunique() >= 2]
    if not groups:
        found = ", ".join(str(b) for b in sorted(data.summary["batch_size"].unique()))
        raise Skip(f"needs runs at 2 or more batch sizes of one dataset (found B={found})")
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


def scaling(data: FigureData) -> Figure:
    groups = [(t, s) for t, s in panels(data.summary, SCALING_PANEL_KEYS) if s["gpus"].nunique() >= 2]
    if not groups:
        found = ", ".join(str(g) for g in sorted(data.summary["gpus"].unique()))
        raise Skip(f"needs runs at 2 or more GPU counts of one configuration (found {found})")
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


def interference(data: FigureData) -> Figure:
    groups = [(t, s) for t, s in panels(data.summary, INTERFERENCE_PANEL_KEYS) if s["host_load"].nunique() >= 2]
    if not groups:
        raise Skip("needs runs of one configuration at 2 or more host loads")
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
