"""A run's key: the fields that name a run, and the one place its id is written and read back.

``RunKey(...).run_id`` is the id every record carries and its file is named after
(``<run_id>.json``); ``RunKey.parse`` reads an id back (the workflow's run rule takes its parameters
from it); ``COMPARISON_FIELDS`` are the key's fields that runs must share to be compared side by side
(the summary's speedup groups, the figures' panels). An axis that names runs joins the key here: a
field, and where it may be left at a default, a suffix letter in ``SUFFIXES``.

``trial`` numbers the fresh processes that repeat one configuration (every other key field): the unit of
replication. ``seed`` (the model's initial parameters, the batch order and the sampler's keys) repeats it
too, as an independent training run. Seed 0 and trial 1 carry no suffix, so a single-run study's records are
the first trials of a longer one; ``configuration()`` is a key's configuration, whose id (seed 0's, trial
1's) names the summary's row.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from ..errors import ZeroGNNError
from ..precision import DEFAULT as DEFAULT_PRECISION

# Names end up in run ids and file names: no separators, no spaces, no "__".
NAME_PATTERN = r"(?!.*__)[A-Za-z0-9][A-Za-z0-9._+-]*"
SEPARATOR = "__"
# Optional fields, written as __<letter><value> after the required parts when not at their default (a flag as
# 0/1), in this order; the pattern is what the value may be.
SUFFIXES = {"host_load": "h", "deterministic": "d", "dtype": "p", "seed": "s", "trial": "t"}
_SUFFIX_VALUES = {"dtype": "[a-z0-9]+"}


def fanouts_label(fanouts: Sequence[int]) -> str:
    """[15, 10, 5] -> '15-10-5', as run ids and the summary write fanouts."""
    return "-".join(str(f) for f in fanouts)


@dataclass(frozen=True)
class RunKey:
    dataset: str
    model: str
    variant: str
    batch_size: int
    fanouts: tuple[int, ...]
    gpus: int = 1
    host_load: int = 0
    deterministic: bool = False
    dtype: str = DEFAULT_PRECISION
    seed: int = 0
    trial: int = 1

    def __post_init__(self) -> None:
        for name in ("dataset", "model", "variant", "dtype"):
            value = getattr(self, name)
            if not isinstance(value, str) or not re.fullmatch(NAME_PATTERN, value):
                raise ZeroGNNError(f"{name} name {value!r} may use only letters, digits, '.', '_', '+' and '-' and "
                                   f"no '__', because it becomes part of run ids and file names; rename it.")
        fanouts = self.fanouts
        if isinstance(fanouts, str):
            fanouts = fanouts.split("-")
        object.__setattr__(self, "fanouts", tuple(int(f) for f in fanouts))
        for name in ("batch_size", "gpus", "host_load", "seed", "trial"):
            object.__setattr__(self, name, int(getattr(self, name)))
        if self.trial < 1:
            raise ZeroGNNError(f"trial must be a positive integer, got {self.trial}")
        if self.seed < 0:
            raise ZeroGNNError(f"seed must be a non-negative integer, got {self.seed}")
        flag = self.deterministic
        if isinstance(flag, str) or (isinstance(flag, int) and not isinstance(flag, bool)):
            flag = {"0": False, "1": True}.get(str(flag), flag)  # as a run id writes it
        if not isinstance(flag, bool):
            raise ZeroGNNError(f"deterministic must be true or false, got {self.deterministic!r}")
        object.__setattr__(self, "deterministic", flag)

    @property
    def run_id(self) -> str:
        """``<dataset>__<model>__<variant>__b<batch>__f<15-10-5>__g<gpus>``, then ``__h<n>`` for a run measured
        beside ``n`` CPU-bound processes, ``__d1`` for one in deterministic mode, ``__p<precision>`` for one at a
        precision other than float32 (``zerognn.precision``), ``__s<n>`` for seed n > 0 and ``__t<k>`` for
        trial k > 1."""
        parts = [self.dataset, self.model, self.variant, f"b{self.batch_size}", f"f{fanouts_label(self.fanouts)}",
                 f"g{self.gpus}"]
        parts += [f"{letter}{_suffix_value(getattr(self, name))}" for name, letter in SUFFIXES.items()
                  if getattr(self, name) != _DEFAULTS[name]]
        return SEPARATOR.join(parts)

    @classmethod
    def parse(cls, run_id: str) -> RunKey:
        """The key a run id was written from (ZeroGNNError if it is not a run id)."""
        match = _RUN_ID.fullmatch(run_id) if isinstance(run_id, str) else None
        key = None if match is None else cls(**{k: v for k, v in match.groupdict().items() if v is not None})
        if key is None or key.run_id != run_id:
            raise ZeroGNNError(f"{run_id!r} is not a run id: expected <dataset>__<model>__<variant>__b<batch>"
                               f"__f<fanouts>__g<gpus>[__h<host load>][__d1][__p<precision>][__s<seed>][__t<trial>]")
        return key

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> RunKey:
        """The key of a record's ``config`` or a summary row (other entries are ignored; an optional field
        that is absent or empty takes its default)."""
        present = {name: values[name] for name in KEY_FIELDS if name in values and values[name] is not None}
        return cls(**present)

    def configuration(self) -> RunKey:
        """The configuration this run repeats: the same key at seed 0, trial 1."""
        return replace(self, seed=0, trial=1)

    def comparison(self) -> tuple[Any, ...]:
        """The values of ``COMPARISON_FIELDS``: equal for runs that do the same work."""
        return tuple(getattr(self, name) for name in COMPARISON_FIELDS)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _suffix_value(value: Any) -> str:
    return value if isinstance(value, str) else str(int(value))


KEY_FIELDS = tuple(f.name for f in fields(RunKey))
# name -> "str", "int", "bool" or "fanouts": how a summary (or a wildcard) holds the field
KEY_TYPES = {f.name: "fanouts" if f.name == "fanouts" else str(f.type) for f in fields(RunKey)}
_DEFAULTS = {f.name: f.default for f in fields(RunKey)}
# What repeats a configuration: each seed (model, batch order and sampler) and each trial (a fresh process) is
# one independent draw of the same run; the summary aggregates over both.
REPLICATE_FIELDS = ("seed", "trial")
# A configuration: what its seeds and trials repeat (every other key field).
CONFIGURATION_FIELDS = tuple(name for name in KEY_FIELDS if name not in REPLICATE_FIELDS)
# Configurations with equal values here do the same work (every field but the variant): their step times compare.
COMPARISON_FIELDS = tuple(name for name in CONFIGURATION_FIELDS if name != "variant")

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9.+-]|_(?!_))*"
# A run id without anchors (also a Snakemake wildcard constraint).
RUN_ID_PATTERN = (
    rf"(?P<dataset>{_NAME})__(?P<model>{_NAME})__(?P<variant>{_NAME})__b(?P<batch_size>[0-9]+)"
    rf"__f(?P<fanouts>[0-9]+(?:-[0-9]+)*)__g(?P<gpus>[0-9]+)"
    + "".join(rf"(?:__{letter}(?P<{name}>{_SUFFIX_VALUES.get(name, '[0-9]+')}))?" for name, letter in SUFFIXES.items())
)
_RUN_ID = re.compile(RUN_ID_PATTERN)
# The same without group names, for a Snakemake wildcard constraint (Snakemake names its own group).
RUN_ID_WILDCARD = re.sub(r"\(\?P<\w+>", "(?:", RUN_ID_PATTERN)
