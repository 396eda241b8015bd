"""The measured training run: one configuration, one variant, one run record."""

from .loop import run
from .spec import RunSpec

__all__ = ["RunSpec", "run"]
