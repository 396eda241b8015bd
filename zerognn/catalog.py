"""The built-in execution variants in one table: name, module, the order tables and figures list them
in, and the look figures draw them with.

Everything else derives from ``BUILTIN_VARIANTS``: the registry imports the modules it names
(``zerognn.variants``), the summary and its markdown table sort by it (``variant_order``), and the
figures give each built-in its look (``zerognn.figures.style``). A variant outside the table (a user's
baseline) sorts after the built-ins, alphabetically, and takes the next of ``FALLBACK_LOOKS``.

A look is plain data so that this module imports nothing: a palette index into seaborn's
``colorblind`` palette, a bar hatch, a line marker and a dash pattern (seaborn's: ``""`` solid, else
(on, off, ...) in line widths), so that variants stay apart in grayscale too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# The variant every speedup is taken against (the summary's speedup_vs_host_mediated, the figures).
BASELINE = "host-mediated"


@dataclass(frozen=True)
class Look:
    palette: int
    hatch: str
    marker: str
    dashes: str | tuple[float, ...]


@dataclass(frozen=True)
class BuiltinVariant:
    name: str
    module: str  # under zerognn.variants
    look: Look


# In the paper's order. ZeroGNN is the solid dark-blue bar and line; its worst-case ablation the light
# blue; the device-driven epoch the same blue, hatched.
BUILTIN_VARIANTS: tuple[BuiltinVariant, ...] = (
    BuiltinVariant("torch-eager", "torch_eager", Look(5, "oo", "o", (1, 1))),
    BuiltinVariant("host-mediated", "host_mediated", Look(1, "///", "s", (4, 1.5))),
    BuiltinVariant("cuda-graph-naive", "cuda_graph_naive", Look(2, "\\\\\\", "^", (3, 1, 1, 1))),
    BuiltinVariant("dynamic-parallelism", "dynamic_parallelism", Look(3, "xx", "v", (1, 2))),
    BuiltinVariant("torch-compile", "torch_compile", Look(4, "..", "D", (6, 2))),
    BuiltinVariant("zerognn", "zerognn", Look(0, "", "*", "")),
    BuiltinVariant("zerognn-worstcase", "zerognn_worstcase", Look(9, "++", "P", (3, 1, 1, 1, 1, 1))),
    BuiltinVariant("zerognn-epoch", "zerognn_epoch", Look(0, "|", "8", (2, 1))),
)
BUILTIN_NAMES = tuple(v.name for v in BUILTIN_VARIANTS)
LOOKS = {v.name: v.look for v in BUILTIN_VARIANTS}
FALLBACK_LOOKS: tuple[Look, ...] = (
    Look(6, "**", "X", (5, 1, 1, 1)), Look(7, "||", "p", (2, 2)), Look(8, "--", "h", (8, 2, 2, 2)),
    Look(6, "OO", "<", (2, 1, 2, 4)), Look(7, "/\\", ">", (6, 1)), Look(8, "..//", "d", (1, 3)),
)


def variant_order(variants: Iterable[str]) -> list[str]:
    """The built-ins in the table's order, then the others alphabetically."""
    names = set(variants)
    return [v for v in BUILTIN_NAMES if v in names] + sorted(names - set(BUILTIN_NAMES))
