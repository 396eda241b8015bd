"""How each variant looks, so that every figure tells variants apart in grayscale too.

Each variant gets a colour plus a hatch (bars), a marker and a dash pattern (lines). The paper's
variants have fixed looks; any other name (a user's baseline) takes the next look from a fallback cycle,
in alphabetical order, so it is drawn and stays distinguishable.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

import seaborn as sns

from ..records.summary import variant_order

_PALETTE = sns.color_palette("colorblind", 10)
# (palette index, hatch, marker, dashes); dashes are seaborn's: "" solid, else (on, off, ...) in line
# widths. ZeroGNN is the solid dark-blue bar and line; its worst-case ablation the light blue.
_KNOWN_LOOKS = {
    "torch-eager": (5, "oo", "o", (1, 1)),
    "host-mediated": (1, "///", "s", (4, 1.5)),
    "cuda-graph-naive": (2, "\\\\\\", "^", (3, 1, 1, 1)),
    "dynamic-parallelism": (3, "xx", "v", (1, 2)),
    "torch-compile": (4, "..", "D", (6, 2)),
    "zerognn": (0, "", "*", ""),
    "zerognn-worstcase": (9, "++", "P", (3, 1, 1, 1, 1, 1)),
}
_FALLBACK_LOOKS = [
    (6, "**", "X", (5, 1, 1, 1)), (7, "||", "p", (2, 2)), (8, "--", "h", (8, 2, 2, 2)),
    (6, "OO", "<", (2, 1, 2, 4)), (7, "/\\", ">", (6, 1)), (8, "..//", "d", (1, 3)),
]


@dataclass(frozen=True)
class VariantStyle:
    color: tuple[float, float, float]
    hatch: str
    marker: str
    dashes: str | tuple[float, ...]


def variant_styles(variants: Iterable[str]) -> dict[str, VariantStyle]:
    """A look for every variant; unknown ones cycle through the fallback looks."""
    fallback = itertools.cycle(_FALLBACK_LOOKS)
    styles = {}
    for v in variant_order(variants):
        color, *look = _KNOWN_LOOKS[v] if v in _KNOWN_LOOKS else next(fallback)
        styles[v] = VariantStyle(_PALETTE[color], *look)
    return styles

