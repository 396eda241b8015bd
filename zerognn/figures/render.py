"""Render every figure the data supports (``needs.py`` says which); say in one line why each other one
was skipped.

Each figure is written as PNG and PDF (or the formats asked for) through a temporary file in the
output directory that is renamed into place, so a killed render never leaves a half-written figure.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from ..atomic import atomic_path
from ..errors import ZeroGNNError
from . import record_figures, summary_figures
from .data import FigureData, Skip
from .draw import text_lines_height, theme
from .files import remove_figure
from .needs import FIGURES, FORMATS, NEEDS

# File stem → drawing, which takes the data and what the figure's check (``NEEDS``) returned: each
# figure's drawing is the function of its name in summary_figures or record_figures.
DRAW: dict[str, Callable[[FigureData, Any], Figure]] = {
    name: getattr(summary_figures if hasattr(summary_figures, name) else record_figures, name) for name in FIGURES
}


def draw_figure(name: str, data: FigureData) -> Figure:
    """Figure ``name`` drawn from ``data`` (at the size ``theme()`` was entered with), its title naming the
    commits its records ran; Skip if the data cannot support it."""
    return _drawn(name, data, NEEDS[name](data))


def _drawn(name: str, data: FigureData, need: Any) -> Figure:
    """Figure ``name`` drawn from what its check returned, with the commits line under its title."""
    fig = DRAW[name](data, need)  # a plain Figure, never registered with pyplot: nothing to close
    fig.suptitle(f"{fig.get_suptitle()}\n{commits_line(data)}")
    fig.set_figheight(fig.get_figheight() + text_lines_height(1))
    return fig


def commits_line(data: FigureData) -> str:
    """Which commits the summary's records ran, e.g. 'records of commit 5bd0744' (abbreviated to 7 digits)."""
    commits = sorted({str(c)[:7] for c in data.summary["git_commit"].dropna()})
    if not commits:
        return "records of an unknown commit"
    return f"records of commit{'s' if len(commits) > 1 else ''} {', '.join(commits)}"


def render_all(
    summary_csv: str | os.PathLike,
    runs_dir: str | os.PathLike | None,
    out_dir: str | os.PathLike,
    formats: Sequence[str] = FORMATS,
    only: Sequence[str] | None = None,
    size: str = "overview",
) -> list[Path]:
    """Draw each figure of ``FIGURES`` (or of ``only``) that the summary and records support; return
    the files written.

    ``runs_dir`` may be None when only a summary is at hand: the figures that need records are skipped.
    ``size`` is a key of ``SIZES``: the overview, or a paper's ``page`` (7 in) or ``column`` (3.3 in).

    A figure that cannot be drawn prints ``skipped <figure>: <reason>``, and its files from an earlier
    render are removed so that they cannot pass for current results. A figure named in ``only`` that
    the data cannot support is an error.
    """
    data = FigureData.load(summary_csv, runs_dir)
    names = list(FIGURES) if only is None else _known(only)
    out_dir = Path(out_dir)
    written: list[Path] = []
    for name in names:
        try:
            need = NEEDS[name](data)
        except Skip as reason:
            if only is not None:
                raise ZeroGNNError(f"figure {name} cannot be drawn from {summary_csv}: {reason}") from None
            print(f"skipped {name}: {reason}")
            remove_figure(out_dir, name, formats)
            continue
        with theme(size):
            written += save_figure(_drawn(name, data, need), out_dir, name, formats)
    return written


def _known(names: Sequence[str]) -> list[str]:
    unknown = [n for n in names if n not in FIGURES]
    if unknown:
        raise ZeroGNNError(f"unknown figure(s) {', '.join(unknown)}; choose from {', '.join(FIGURES)}")
    return list(names)


# No creation date in the files: the same records draw the same bytes, so re-rendering the committed
# figures leaves git clean.
_REPRODUCIBLE = {"pdf": {"CreationDate": None}, "svg": {"Date": None}}
# Raster figures at 150 dpi, compressed as tightly as Pillow can: sharp on screen at 2x, and a third smaller than
# at 200 dpi, which keeps the committed figures (PDF beside each for print) small enough to travel with the tree.
_RASTER = {"png": {"dpi": 150, "pil_kwargs": {"optimize": True}}}


def save_figure(fig: Figure, out_dir: Path, stem: str, formats: Sequence[str]) -> list[Path]:
    supported = fig.canvas.get_supported_filetypes()
    paths = []
    for fmt in formats:
        if fmt not in supported:
            raise ZeroGNNError(f"cannot write figures as {fmt!r}; choose from {', '.join(sorted(supported))}.")
        path = out_dir / f"{stem}.{fmt}"
        with atomic_path(path, suffix=f".{fmt}") as tmp:
            fig.savefig(tmp, format=fmt, metadata=_REPRODUCIBLE.get(fmt), **_RASTER.get(fmt, {"dpi": 200}))
        paths.append(path)
    return paths
