"""The measured training run: one configuration, one variant, one run record."""

from ..records.spec import RunSpec
from .loop import run

__all__ = ["RunSpec", "run"]
