"""Drawing helpers shared by the figures: figure grids, grayscale-safe bars, lines and points, whiskers and
bands, legends.

Figures are plain ``matplotlib.figure.Figure`` objects on an Agg canvas, never registered with pyplot:
nothing global changes, nothing interactive opens, and nothing is left open after saving.
"""

from __future__ import annotations

import contextlib
import math
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import matplotlib
import pandas as pd
import seaborn as sns
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.textpath import TextPath
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from .style import VariantStyle, variant_order

EDGE = "0.15"


@dataclass(frozen=True)
class FigureSize:
    """How large a figure is drawn: the overview (a panel 4.2 in wide, for screens and reports), or
    a paper's page or column width, where the panels share the width and the text is smaller."""

    name: str
    width: float | None        # total width in inches; None: PANEL_WIDTH per panel
    max_cols: int
    panel_height: float
    font_scale: float

    def panel_width(self, cols: int) -> float:
        return PANEL_WIDTH if self.width is None else self.width / cols


PANEL_WIDTH = 4.2
SIZES = {
    "overview": FigureSize("overview", None, 3, 3.0, 1.1),
    "page": FigureSize("page", 7.0, 3, 2.3, 0.8),
    "column": FigureSize("column", 3.3, 1, 2.2, 0.8),
}
_size = SIZES["overview"]
# Rough text widths at font scale 1.1, for wrapping subtitles and sizing legends.
TITLE_CHARS_PER_INCH = 9
LEGEND_ENTRY_INCHES = 2.0
LINE_INCHES = 0.26  # a line of title or legend text at font scale 1


def _rc(size: FigureSize) -> dict:
    """The theme while a figure is built: seaborn's whitegrid at the size's font scale, hatches drawn
    with dark thin lines, TrueType (Type 42) fonts in PDF and PostScript (publishers' checks reject
    Type 3 bitmap fonts)."""
    return {
        **sns.axes_style("whitegrid"),
        **sns.plotting_context("paper", font_scale=size.font_scale),
        "hatch.color": EDGE,
        "hatch.linewidth": 0.6,
        "lines.linewidth": 1.6 * size.font_scale / 1.1,
        "lines.markersize": 7 * size.font_scale / 1.1,
        "pdf.fonttype": 42,
        "ps.fonttype": 42,
    }


def new_figure(title: str, n_panels: int, metrics: int = 1, subtitle: str | None = None,
               label_height: float = 0.0) -> tuple[Figure, list[list[Axes]]]:
    """A figure with ``axes[panel][metric]``, at the size ``theme()`` was entered with.

    Panels wrap into rows of up to the size's ``max_cols``; with several metrics each panel is a column
    of ``metrics`` axes. ``label_height`` (inches) is added to each row for tall x tick labels
    (``upright_height``), so that they do not squash the axes. Call inside ``theme()`` so that the axes take
    the theme.
    """
    size = _size
    cols = min(n_panels, size.max_cols)
    panel_rows = math.ceil(n_panels / cols)
    rows = panel_rows * metrics
    height = (size.panel_height + label_height) * rows + 1.0
    fig = Figure(figsize=(size.panel_width(cols) * cols, height), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.subplots(rows, cols, squeeze=False)
    axes = [[grid[(i // cols) * metrics + m, i % cols] for m in range(metrics)] for i in range(n_panels)]
    used = {id(ax) for panel in axes for ax in panel}
    for ax in grid.flat:
        if id(ax) not in used:
            ax.set_visible(False)
    scale = 1.1 / size.font_scale
    if subtitle is not None:
        title += "\n" + textwrap.fill(subtitle, int(fig.get_figwidth() * TITLE_CHARS_PER_INCH * scale),
                                       break_on_hyphens=False)  # never "zerognn-" / "worstcase"
    fig.suptitle(title)
    fig.set_figheight(height + text_lines_height(title.count("\n")))  # the panels keep their height
    return fig, axes


def upright_height(labels: Iterable[str]) -> float:
    """How tall (inches) the longest of ``labels`` stands as an x tick label turned upright, at the theme's
    tick size."""
    font = FontProperties(size=matplotlib.rcParams["xtick.labelsize"])
    return max((_text_inches(label, font) for label in labels), default=0.0)


@contextlib.contextmanager
def theme(size: str = "overview") -> Iterator[None]:
    """Build figures at ``size`` (a key of ``SIZES``) with the theme for it."""
    global _size
    previous, _size = _size, SIZES[size]
    try:
        with matplotlib.rc_context(_rc(_size)):
            yield
    finally:
        _size = previous


# The share of an x category's width its bars take together: one slot per variant, drawn or not.
BAR_WIDTH = 0.8


def bars(ax: Axes, df: pd.DataFrame, x: str, y: str, styles: dict[str, VariantStyle]) -> list:
    """Grouped bars of ``y`` per ``x`` category, one hatched bar per variant; returns the x order."""
    order = sorted(df[x].unique())
    variants = variant_order(df["variant"])
    sns.barplot(
        df, x=x, y=y, hue="variant", order=order, hue_order=variants,
        palette={v: styles[v].color for v in variants}, errorbar=None, legend=False,
        edgecolor=EDGE, linewidth=0.6, width=BAR_WIDTH, ax=ax,
    )
    for container, variant in zip(ax.containers, variants):
        for bar in container:
            bar.set_hatch(styles[variant].hatch)
    return order


def bar_whiskers(ax: Axes, df: pd.DataFrame, x: str, lo: str, hi: str, order: list) -> None:
    """A whisker from ``lo`` to ``hi`` on each bar ``bars`` drew (same ``df``, ``x`` and order); none on a bar
    whose ends are NaN (no interval)."""
    variants = variant_order(df["variant"])
    spans = df.set_index(["variant", x])[[lo, hi]]
    for container, variant in zip(ax.containers, variants):
        for bar in container:
            center = bar.get_x() + bar.get_width() / 2
            key = (variant, order[int(round(center))])
            if key in spans.index and bar.get_height() == bar.get_height():
                low, high = spans.loc[key]
                if pd.notna(low) and pd.notna(high):
                    ax.vlines(center, low, high, color="black", linewidth=0.9, zorder=3)


# A short thick tick across a bar: a second value of the same bar (memory's reserved peak over its allocated one).
RESERVED_MARK = {"marker": "_", "markersize": 14, "markeredgewidth": 2.2, "color": "0.1"}


def bar_marks(ax: Axes, df: pd.DataFrame, x: str, y: str, order: list) -> None:
    """A tick at ``y`` across each bar ``bars`` drew (same ``df``, ``x`` and order); none where ``y`` is NaN."""
    variants = variant_order(df["variant"])
    values = df.set_index(["variant", x])[y]
    for container, variant in zip(ax.containers, variants):
        for bar in container:
            center = bar.get_x() + bar.get_width() / 2
            key = (variant, order[int(round(center))])
            if key in values.index and pd.notna(values.loc[key]):
                ax.plot([center], [values.loc[key]], linestyle="", zorder=3, **RESERVED_MARK)


def bar_slot(df: pd.DataFrame, x: str, order: list, variant: str, at: object) -> tuple[float, float]:
    """The centre and width of ``variant``'s bar at ``at`` (an ``x`` value) as ``bars`` lays them out (same ``df``
    and order): seaborn splits each category's ``BAR_WIDTH`` into a slot per variant, kept where no bar is drawn."""
    variants = variant_order(df["variant"])
    width = BAR_WIDTH / len(variants)
    return order.index(at) - BAR_WIDTH / 2 + width * (variants.index(variant) + 0.5), width


# An outlined, empty bar stacked on a bar: the part a larger value of the same bar adds (a run's setup).
ADDED_LOOK = {"fill": False, "edgecolor": EDGE, "linestyle": "--", "linewidth": 0.9}


def bar_additions(ax: Axes, df: pd.DataFrame, x: str, y: str, total: str, order: list) -> None:
    """On each bar of ``y`` that ``bars`` drew (same ``df``, ``x`` and order), an outlined bar up to ``total``;
    none where either is NaN."""
    for _, row in df.dropna(subset=[y, total]).iterrows():
        center, width = bar_slot(df, x, order, row["variant"], row[x])
        ax.add_patch(Rectangle((center - width / 2, row[y]), width, row[total] - row[y], zorder=2, **ADDED_LOOK))


def bar_notes(ax: Axes, df: pd.DataFrame, x: str, note: str, order: list) -> None:
    """The text of ``note``, upright from the axis bottom, in the slot of each row that has one (where ``bars``
    drew no bar: same ``df``, ``x`` and order)."""
    for _, row in df.dropna(subset=[note]).iterrows():
        center, _ = bar_slot(df, x, order, row["variant"], row[x])
        ax.text(center, 0.03, row[note], transform=ax.get_xaxis_transform(), rotation=90, ha="center",
                va="bottom", color="0.2")


def line_whiskers(ax: Axes, df: pd.DataFrame, x: str, lo: str, hi: str, styles: dict[str, VariantStyle]) -> None:
    """A vertical whisker from ``lo`` to ``hi`` at each point of every variant's line that has both ends."""
    for variant, sub in df.dropna(subset=[lo, hi]).groupby("variant"):
        ax.vlines(sub[x], sub[lo], sub[hi], color=styles[variant].color, linewidth=1.0, alpha=0.8)


BAND_ALPHA = 0.2


def ci_bands(ax: Axes, df: pd.DataFrame, x: str, lo: str, hi: str, styles: dict[str, VariantStyle]) -> None:
    """A shaded band from ``lo`` to ``hi`` in each variant's colour along its line, over the runs of
    neighbouring points that have both ends; a lone such point gets a wide bar of the same shade (a band
    needs two points)."""
    for variant, sub in df.sort_values(x).groupby("variant"):
        present = sub[lo].notna() & sub[hi].notna()
        stretch = (present != present.shift()).cumsum()  # numbers each run of neighbours alike
        for _, run in sub[present].groupby(stretch[present]):
            if len(run) > 1:
                ax.fill_between(run[x], run[lo], run[hi], color=styles[variant].color, alpha=BAND_ALPHA,
                                linewidth=0)
            else:
                ax.vlines(run[x], run[lo], run[hi], color=styles[variant].color, alpha=BAND_ALPHA, linewidth=6)


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
    return [Patch(facecolor=styles[v].color, hatch=styles[v].hatch, edgecolor=EDGE, label=styles[v].label)
            for v in variants]


def line_handles(styles: dict[str, VariantStyle], variants: Iterable[str]) -> list[Line2D]:
    return [
        Line2D([], [], color=styles[v].color, marker=styles[v].marker, label=styles[v].label,
               linestyle=(0, styles[v].dashes) if styles[v].dashes else "-")
        for v in variants
    ]


def point_handles(styles: dict[str, VariantStyle], variants: Iterable[str]) -> list[Line2D]:
    return [Line2D([], [], color=styles[v].color, marker=styles[v].marker, markeredgecolor=EDGE, linestyle="",
                   label=styles[v].label) for v in variants]


def legend(fig: Figure, handles: Sequence[Artist]) -> None:
    """The legend below the panels, in as many columns as fit the figure's width; a label wider than the figure
    wraps (a peer's label names its library and version). The figure grows by the legend's lines, so a narrow
    figure's panels keep their height."""
    rc = matplotlib.rcParams
    font = FontProperties(size=rc["legend.fontsize"])
    em = font.get_size_in_points() / 72
    handle = (rc["legend.handlelength"] + rc["legend.handletextpad"]) * em  # the key and its gap to the text
    spacing = rc["legend.columnspacing"] * em
    width = fig.get_figwidth()
    room = width - 2 * (rc["legend.borderpad"] + rc["legend.borderaxespad"]) * em
    labels = [_wrap(h.get_label(), room - handle, font) for h in handles]
    widths = [max(_text_inches(line, font) for line in label.split("\n")) for label in labels]
    heights = [label.count("\n") + 1 for label in labels]
    ncols = max(1, min(len(handles), int(width / (LEGEND_ENTRY_INCHES * _size.font_scale / 1.1))))
    while ncols > 1 and sum(handle + max(widths[a:b]) for a, b in _columns(len(labels), ncols)) \
            + (ncols - 1) * spacing > room:
        ncols -= 1
    lines = max((sum(heights[a:b]) for a, b in _columns(len(labels), ncols)), default=1)
    fig.legend(handles=handles, labels=labels, loc="outside lower center", ncols=ncols, frameon=False)
    fig.set_figheight(fig.get_figheight() + text_lines_height(lines - 1))


def _columns(n: int, ncols: int) -> list[tuple[int, int]]:
    """The [start, end) entries of each legend column: matplotlib fills them in order, the first ``n % ncols``
    one entry longer (``np.array_split``)."""
    per_column, longer = divmod(n, ncols)
    starts = [c * per_column + min(c, longer) for c in range(ncols + 1)]
    return [(a, b) for a, b in zip(starts, starts[1:]) if b > a]


def _text_inches(text: str, font: FontProperties) -> float:
    if not text.strip():
        return 0.0
    return TextPath((0, 0), text, prop=font).get_extents().width / 72


def _wrap(label: str, inches: float, font: FontProperties) -> str:
    """``label`` broken at spaces into lines of at most ``inches`` (a single word longer than that stays whole)."""
    lines: list[str] = []
    for word in label.split(" "):
        if lines and _text_inches(f"{lines[-1]} {word}", font) <= inches:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return "\n".join(lines)


def text_lines_height(lines: int) -> float:
    """Inches that ``lines`` more lines of figure text (title, legend) take at the theme's size."""
    return max(0, lines) * LINE_INCHES * _size.font_scale


def log_y(ax: Axes) -> None:
    """Log y axis labelled 1, 2, 5, 10, ... in plain numbers (a short log axis gets readable ticks)."""
    _plain_log(ax.yaxis, ax.set_yscale)


def log_x(ax: Axes) -> None:
    """Log x axis labelled 1, 2, 5, 10, ... in plain numbers, as ``log_y``."""
    _plain_log(ax.xaxis, ax.set_xscale)


def _plain_log(axis, set_scale) -> None:
    set_scale("log")
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def log2_batch_axis(ax: Axes, batch_sizes: Sequence[int]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(set(batch_sizes)), [str(b) for b in sorted(set(batch_sizes))])
    ax.minorticks_off()
