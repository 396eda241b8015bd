"""Render every figure the data supports; say in one line why each other one was skipped.

Each figure is written as PNG and PDF (or the formats asked for) through a temporary file in the
output directory that is renamed into place, so a killed render never leaves a half-written figure.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence

from matplotlib.figure import Figure

from ..atomic import atomic_path
from ..errors import ZeroGNNError
from .data import FigureData, Skip
from .draw import theme
from .record_figures import breakdown, envelope, loss
from .summary_figures import batch_sweep, gpu_exec_fraction, memory, scaling, speedup

# File stem → figure function, in the order the paper tells its story.
FIGURES: dict[str, Callable[[FigureData], Figure]] = {
    "speedup": speedup,
    "gpu_exec_fraction": gpu_exec_fraction,
    "memory": memory,
    "breakdown": breakdown,
    "batch_sweep": batch_sweep,
    "scaling": scaling,
    "envelope": envelope,
    "loss": loss,
}


def render_all(
    summary_csv: str | os.PathLike,
    runs_dir: str | os.PathLike | None,
    out_dir: str | os.PathLike,
    formats: Sequence[str] = ("png", "pdf"),
) -> list[Path]:
    """Draw each figure of ``FIGURES`` that the summary and records support; return the files written.

    ``runs_dir`` may be None when only a summary is at hand: the figures that need records are skipped.

    A figure that cannot be drawn prints ``skipped <figure>: <reason>``, and its files from an earlier
    render are removed so that they cannot pass for current results.
    """
    data = FigureData.load(summary_csv, runs_dir)
    out_dir = Path(out_dir)
    written: list[Path] = []
    for name, draw in FIGURES.items():
        with theme():
            try:
                fig = draw(data)
            except Skip as reason:
                print(f"skipped {name}: {reason}")
                for fmt in formats:
                    (out_dir / f"{name}.{fmt}").unlink(missing_ok=True)
                continue
            written += save_figure(fig, out_dir, name, formats)
    return written


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
