"""The paper's figures, rendered from the summary table and the run records (seaborn, grayscale-safe).

Importing this package loads neither matplotlib nor seaborn: which figures the data supports
(``needs``) and their files (``files``) are known without drawing; ``render`` draws them.
"""

from .needs import FIGURES, FORMATS, supported_figures

__all__ = ["FIGURES", "FORMATS", "supported_figures"]
