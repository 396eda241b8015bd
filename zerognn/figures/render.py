"""Render every figure the data supports; say in one line why each other one was skipped.

Each figure is written as PNG and PDF (or the formats asked for) through a temporary file in the
output directory that is renamed into place, so a killed render never leaves a half-written figure.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from matplotlib.figure import Figure

from ..atomic import atomic_path
from ..errors import ZeroGNNError
from .data import FigureData, Skip
from .draw import theme
from .record_figures import breakdown, envelope, loss
from .summary_figures import (
    batch_sweep,
    gpu_exec_fraction,
    interference,
    memory,
    scaling,
    speedup,
    step_over_floor,
)

FORMATS = ("png", "pdf")
# File stem → figure function, in the order the paper tells its story.
FIGURES: dict[str, Callable[[FigureData], Figure]] = {
    "speedup": speedup,
    "gpu_exec_fraction": gpu_exec_fraction,
    "step_over_floor": step_over_floor,
    "memory": memory,
    "breakdown": breakdown,
    "batch_sweep": batch_sweep,
    "scaling": scaling,
    "interference": interference,
    "envelope": envelope,
    "loss": loss,
}


def supported_figures(data: FigureData) -> dict[str, str | None]:
    """Figure name -> None where the data supports it, else the reason it cannot be drawn."""
    reasons: dict[str, str | None] = {}
    for name, draw in FIGURES.items():
        with theme():
            try:
                draw(data)  # a plain Figure, never registered with pyplot: nothing to close
                reasons[name] = None
            except Skip as reason:
                reasons[name] = str(reason)
    return reasons


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
        with theme(size):
            try:
                fig = FIGURES[name](data)
            except Skip as reason:
                if only is not None:
                    raise ZeroGNNError(f"figure {name} cannot be drawn from {summary_csv}: {reason}") from None
                print(f"skipped {name}: {reason}")
                remove_figure(out_dir, name, formats)
                continue
            written += save_figure(fig, out_dir, name, formats)
    return written


def figure_files(summary_csv: str | os.PathLike, runs_dir: str | os.PathLike | None, out_dir: str | os.PathLike,
                 formats: Sequence[str] = FORMATS) -> list[Path]:
    """The files the data's supported figures are written to (what a full render writes)."""
    supported = supported_figures(FigureData.load(summary_csv, runs_dir))
    return [Path(out_dir) / f"{name}.{fmt}" for name, reason in supported.items() if reason is None for fmt in formats]


def remove_figure(out_dir: Path, name: str, formats: Sequence[str] = FORMATS) -> None:
    for fmt in formats:
        (out_dir / f"{name}.{fmt}").unlink(missing_ok=True)


def _known(names: Sequence[str]) -> list[str]:
    unknown = [n for n in names if n not in FIGURES]
    if unknown:
        raise ZeroGNNError(f"unknown figure(s) {', '.join(unknown)}; choose from {', '.join(FIGURES)}")
    return list(names)


def save_figure(fig: Figure, out_dir: Path, stem: str, formats: Sequence[str]) -> list[Path]:
    supported = fig.canvas.get_supported_filetypes()
    paths = []
    for fmt in formats:
        if fmt not in supported:
            raise ZeroGNNError(f"cannot write figures as {fmt!r}; choose from {', '.join(sorted(supported))}.")
        path = out_dir / f"{stem}.{fmt}"
        with atomic_path(path, suffix=f".{fmt}") as tmp:
            fig.savefig(tmp, format=fmt, dpi=200)
        paths.append(path)
    return paths
