"""Drawing helpers shared by the figures: figure grids, grayscale-safe bars and lines, legends.

Figures are plain ``matplotlib.figure.Figure`` objects on an Agg canvas, never registered with pyplot:
nothing global changes, nothing interactive opens, and nothing is left open after saving.
"""

from __future__ import annotations

import contextlib
import math
import textwrap
from collections.abc import Iterable, Sequence

import matplotlib
import pandas as pd
import seaborn as sns
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from .style import VariantStyle, variant_order

PANEL_SIZE = (4.2, 3.0)
MAX_COLS = 3
EDGE = "0.15"
# Rough text widths at the theme's font sizes, for wrapping subtitles and sizing legends.
TITLE_CHARS_PER_INCH = 9
LEGEND_ENTRY_INCHES = 2.0
# Theme applied while a figure is built (seaborn's whitegrid, hatches drawn with dark thin lines).
RC = {
    **sns.axes_style("whitegrid"),
    **sns.plotting_context("paper", font_scale=1.1),
    "hatch.color": EDGE,
    "hatch.linewidth": 0.6,
    "lines.linewidth": 1.6,
    "lines.markersize": 7,
    # TrueType (Type 42) fonts in PDF and PostScript: publishers' checks reject Type 3 bitmap fonts.
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
}


def new_figure(title: str, n_panels: int, metrics: int = 1,
               subtitle: str | None = None) -> tuple[Figure, list[list[Axes]]]:
    """A figure with ``axes[panel][metric]``.

    One metric: panels wrap into rows of up to ``MAX_COLS``. Several: one column per panel, one row per
    metric. Call inside ``theme()`` so that the axes take the theme.
    """
    if metrics == 1:
        cols, rows = min(n_panels, MAX_COLS), math.ceil(n_panels / MAX_COLS)
    else:
        cols, rows = n_panels, metrics
    fig = Figure(figsize=(PANEL_SIZE[0] * cols, PANEL_SIZE[1] * rows + 1.0), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.subplots(rows, cols, squeeze=False)
    if metrics == 1:
        flat = list(grid.flat)
        for ax in flat[n_panels:]:
            ax.set_visible(False)
        axes = [[ax] for ax in flat[:n_panels]]
    else:
        axes = [list(grid[:, c]) for c in range(cols)]
    if subtitle is not None:
        title += "\n" + textwrap.fill(subtitle, int(fig.get_figwidth() * TITLE_CHARS_PER_INCH))
    fig.suptitle(title)
    return fig, axes


def theme() -> contextlib.AbstractContextManager:
    return matplotlib.rc_context(RC)


def bars(ax: Axes, df: pd.DataFrame, x: str, y: str, styles: dict[str, VariantStyle]) -> list:
    """Grouped bars of ``y`` per ``x`` category, one hatched bar per variant; returns the x order."""
    order = sorted(df[x].unique())
    variants = variant_order(df["variant"])
    sns.barplot(
        df, x=x, y=y, hue="variant", order=order, hue_order=variants,
        palette={v: styles[v].color for v in variants}, errorbar=None, legend=False,
        edgecolor=EDGE, linewidth=0.6, ax=ax,
    )
    for container, variant in zip(ax.containers, variants):
        for bar in container:
            bar.set_hatch(styles[variant].hatch)
    return order


def bar_whiskers(ax: Axes, df: pd.DataFrame, x: str, lo: str, hi: str, order: list) -> None:
    """A whisker from ``lo`` to ``hi`` on each bar ``bars`` drew (same ``df``, ``x`` and order)."""
    variants = variant_order(df["variant"])
    spans = df.set_index(["variant", x])[[lo, hi]]
    for container, variant in zip(ax.containers, variants):
        for bar in container:
            center = bar.get_x() + bar.get_width() / 2
            key = (variant, order[int(round(center))])
            if key in spans.index and bar.get_height() == bar.get_height():
                low, high = spans.loc[key]
                ax.vlines(center, low, high, color="black", linewidth=0.9, zorder=3)


def line_whiskers(ax: Axes, df: pd.DataFrame, x: str, lo: str, hi: str, styles: dict[str, VariantStyle]) -> None:
    """A vertical whisker from ``lo`` to ``hi`` at each point of every variant's line."""
    for variant, sub in df.groupby("variant"):
        ax.vlines(sub[x], sub[lo], sub[hi], color=styles[variant].color, linewidth=1.0, alpha=0.8)


def lines(ax: Axes, df: pd.DataFrame, x: str, y: str, styles: dict[str, VariantStyle]) -> None:
    """One line per variant, each with its marker and dash pattern."""
    variants = variant_order(df["variant"])
    sns.lineplot(
        df, x=x, y=y, hue="variant", style="variant", hue_order=variants, style_order=variants,
        palette={v: styles[v].color for v in variants}, markers={v: styles[v].marker for v in variants},
        dashes={v: styles[v].dashes for v in variants}, errorbar=None, legend=False, ax=ax,
    )
    for line in ax.get_lines():
        line.set_markevery(max(1, len(line.get_xdata()) // 10))


def bar_handles(styles: dict[str, VariantStyle], variants: Iterable[str]) -> list[Patch]:
    return [Patch(facecolor=styles[v].color, hatch=styles[v].hatch, edgecolor=EDGE, label=v) for v in variants]


def line_handles(styles: dict[str, VariantStyle], variants: Iterable[str]) -> list[Line2D]:
    return [
        Line2D([], [], color=styles[v].color, marker=styles[v].marker, label=v,
               linestyle=(0, styles[v].dashes) if styles[v].dashes else "-")
        for v in variants
    ]


def legend(fig: Figure, handles: Sequence[Artist]) -> None:
    ncols = max(1, min(len(handles), int(fig.get_figwidth() / LEGEND_ENTRY_INCHES)))
    fig.legend(handles=handles, loc="outside lower center", ncols=ncols, frameon=False)


def log_y(ax: Axes) -> None:
    """Log y axis labelled 1, 2, 5, 10, ... in plain numbers (a short log axis gets readable ticks)."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def log2_batch_axis(ax: Axes, batch_sizes: Sequence[int]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(set(batch_sizes)), [str(b) for b in sorted(set(batch_sizes))])
    ax.minorticks_off()
