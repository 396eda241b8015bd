"""How each variant looks, so that every figure tells variants apart in grayscale too.

Each variant gets a colour plus a hatch (bars), a marker and a dash pattern (lines). The built-in
variants have the looks of their table (``zerognn.catalog``); any other name (a user's baseline) takes
the next look from a fallback cycle, in alphabetical order, so it is drawn and stays distinguishable.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

import seaborn as sns

from ..catalog import FALLBACK_LOOKS, LOOKS, variant_order

_PALETTE = sns.color_palette("colorblind", 10)


@dataclass(frozen=True)
class VariantStyle:
    color: tuple[float, float, float]
    hatch: str
    marker: str
    dashes: str | tuple[float, ...]


def variant_styles(variants: Iterable[str]) -> dict[str, VariantStyle]:
    """A look for every variant; unknown ones cycle through the fallback looks."""
    fallback = itertools.cycle(FALLBACK_LOOKS)
    styles = {}
    for v in variant_order(variants):
        look = LOOKS[v] if v in LOOKS else next(fallback)
        styles[v] = VariantStyle(_PALETTE[look.palette], look.hatch, look.marker, look.dashes)
    return styles

