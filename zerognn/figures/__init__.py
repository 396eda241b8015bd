"""The paper's figures, rendered from the summary table and the run records (seaborn, grayscale-safe)."""

from .render import FIGURES, render_all

__all__ = ["FIGURES", "render_all"]
