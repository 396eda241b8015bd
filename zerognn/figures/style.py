"""How each variant looks, so that every figure tells variants apart in grayscale too.

Each variant gets a colour plus a hatch (bars), a marker and a dash pattern (lines), and its legend label.
The built-in variants have the looks of their table (``zerognn.catalog``); any other name (a user's
baseline, a peer) takes the next look from a fallback cycle, in alphabetical order, so it is drawn and
stays distinguishable. A peer (a baseline on another library, ``zerognn.peers``) says so in its label:
``pyg (peer: torch_geometric 2.8.1)``, and a peer whose samples are not the suite's (``sample_identical: false``) says
that too.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
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
    label: str


def variant_styles(variants: Iterable[str], peers: Mapping[str, str] | None = None) -> dict[str, VariantStyle]:
    """A look for every variant; unknown ones cycle through the fallback looks. ``peers``: a peer variant ->
    its library, named in its label."""
    fallback = itertools.cycle(FALLBACK_LOOKS)
    peers = peers or {}
    styles = {}
    for v in variant_order(variants):
        look = LOOKS[v] if v in LOOKS else next(fallback)
        label = f"{v} (peer: {peers[v]})" if v in peers else v
        styles[v] = VariantStyle(_PALETTE[look.palette], look.hatch, look.marker, look.dashes, label)
    return styles

