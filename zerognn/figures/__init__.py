"""The paper's figures, rendered from the summary table and the run records (seaborn, grayscale-safe)."""

from .render import FIGURES, FORMATS, figure_files, render_all, supported_figures

__all__ = ["FIGURES", "FORMATS", "figure_files", "render_all", "supported_figures"]
