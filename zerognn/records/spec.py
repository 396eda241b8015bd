"""``RunSpec``: the one declaration of a run's parameters, checked before any work starts.

Each field carries its help text, its JSON Schema (type and bounds), whether a run record's ``config``
must hold it, and the study config key that sets it. Everything else derives from these: the
``zerognn run`` parser (``add_arguments`` / ``from_arguments``), the arguments the workflow starts a run
with (``arguments``), the schema of a record's ``config`` (``config_schema``) and the checks a spec
passes at construction. A test holds the study config schema's defaults and bounds to the same fields.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import MISSING, Field, asdict, dataclass, field, fields
from typing import Any

from ..errors import ZeroGNNError
from ..precision import DEFAULT as DEFAULT_PRECISION
from ..precision import PRECISIONS, precision_problem
from .ids import NAME_PATTERN, RunKey, fanouts_label

NAME = {"type": "string", "pattern": NAME_PATTERN}
POSITIVE_INT = {"type": "integer", "minimum": 1}
NON_NEGATIVE_INT = {"type": "integer", "minimum": 0}
POSITIVE_NUMBER = {"type": "number", "exclusiveMinimum": 0}
FANOUTS = {"type": "array", "minItems": 1, "items": POSITIVE_INT}


def parse_fanouts(text: str | Sequence[int]) -> list[int]:
    """'15,10,5' or '15-10-5' or [15, 10, 5] -> [15, 10, 5]; every fanout a positive integer.

    One separator throughout: '15,-1' is a negative fanout and an error, not [15, 1].
    """
    example = "e.g. 15,10,5 or 15-10-5"
    if isinstance(text, str):
        stripped = text.strip()
        parts = stripped.split("," if "," in stripped else "-")
        if not all(p.strip().isdigit() for p in parts):
            raise ZeroGNNError(f"fanouts {text!r} must be positive integers separated by ',' or '-', {example}")
        values = [int(p) for p in parts]
    else:
        values = list(text)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise ZeroGNNError(f"fanouts {text!r} must be a list of positive integers, {example}")
    if not values or any(v <= 0 for v in values):
        raise ZeroGNNError(f"fanouts {text!r} must be one or more positive integers, {example}")
    return values


def _model_names() -> tuple[str, ...]:
    from ..models import MODELS

    return tuple(MODELS)


def param(default: Any = MISSING, *, help: str, schema: dict[str, Any], record: str = "required",
          record_schema: dict[str, Any] | None = None, config: str | None = None, axis: bool = False,
          flag: str | None = None, choices: Callable[[], Sequence[str]] | None = None) -> Any:
    """A RunSpec field and what derives from it.

    ``schema``: the JSON Schema a run's value must meet; ``record``: whether a record's ``config`` holds the
    field (``required``, ``optional`` — older records lack it — or ``absent``), with ``record_schema`` where a
    record's value is checked differently (a resolved device, any dtype name); ``config``: the study config
    key that sets it, ``axis`` when that key lists values (one run each) rather than giving one; ``flag``: the
    ``zerognn run`` option when it is not ``--<name>``; ``choices``: the names a run may use (not checked in
    a record, which another tool may write).
    """
    metadata = {"help": help, "schema": schema, "record": record, "record_schema": record_schema or schema,
                "config": config, "axis": axis, "flag": flag, "choices": choices}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass
class RunSpec:
    dataset: str = param(help="dataset name, as `zerognn dataset make` wrote it", schema=NAME, config="datasets",
                         axis=True)
    model: str = param("sage", help="GNN model", schema=NAME, choices=_model_names, config="models", axis=True)
    variant: str = param("torch-eager", help="execution variant (`zerognn variants` lists them)", schema=NAME,
                         config="variants", axis=True)
    batch_size: int = param(1024, help="seeds per step per GPU", schema=POSITIVE_INT, config="batch_sizes", axis=True)
    fanouts: list[int] = param([15, 10, 5], help="per-hop fanouts, e.g. 15,10,5 (one layer per hop)",
                               schema=FANOUTS, config="fanouts")
    hidden: int = param(256, help="hidden width", schema=POSITIVE_INT, config="hidden")
    lr: float = param(3e-3, help="Adam's learning rate", schema=POSITIVE_NUMBER, config="lr")
    seed: int = param(0, help="seed of the model, the batch order and the sampler (each seed an independent "
                              "training run; a seed n > 0 has the run id suffix __s<n>)", schema=NON_NEGATIVE_INT,
                      config="seeds", axis=True)
    warmup_steps: int = param(5, help="steps before the timed ones (compilation, capture, warm-up)",
                              schema=NON_NEGATIVE_INT, config="warmup_steps")
    measure_steps: int = param(20, help="steps timed one by one", schema=POSITIVE_INT, config="measure_steps")
    profile_steps: int = param(5, help="steps under the profiler, last in the run, after one lead-in step "
                                       "(0: no trace)",
                               schema=NON_NEGATIVE_INT, config="profile_steps")
    eval_nodes: int = param(2048, help="val/test nodes used for accuracy (0 skips it)", schema=NON_NEGATIVE_INT,
                            record="optional", config="eval_nodes")
    gpus: int = param(1, help="GPUs (processes) of a data-parallel run", schema=POSITIVE_INT, config="gpus",
                      axis=True)
    device: str = param("auto", help="where to train (auto: the GPU if there is one)",
                        schema={"enum": ["auto", "cpu", "cuda"]}, record_schema={"enum": ["cpu", "cuda"]},
                        config="target")
    dtype: str = param(DEFAULT_PRECISION, help="training precision: float32; tf32 (fp32 storage, GEMMs on TF32 "
                                               "tensor cores; CUDA); bfloat16 (GEMMs on bf16 operands, fp32 "
                                               "storage); neither with --deterministic",
                       schema={"enum": list(PRECISIONS)}, record_schema={"type": "string", "minLength": 1},
                       config="precisions", axis=True)
    whole_epoch: bool = param(False, help="after the measured steps, train and time one whole epoch (every "
                                          "training batch)", schema={"type": "boolean"}, record="optional",
                              config="whole_epoch_variants")
    epochs: int = param(0, help="train to the dataset's target accuracy: this many whole epochs from step 0, "
                                "evaluated on the first eval_nodes validation nodes every eval_every epochs and "
                                "timed to each evaluation (the record's `training`; a dataset without a target "
                                "records the curve alone; 0: off)",
                        schema=NON_NEGATIVE_INT, record="optional", config="epochs")
    eval_every: int = param(1, help="epochs between evaluations when training to the target (epochs must be a "
                                    "multiple)", schema=POSITIVE_INT, record="optional", config="eval_every")
    host_load: int = param(0, help="CPU-bound processes to run on this run's cores during the timed and profiled "
                                   "steps", schema=NON_NEGATIVE_INT, record="optional", config="host_load", axis=True)
    deterministic: bool = param(False, help="fixed-order kernels (aggregation backwards, dense GEMMs): every CUDA "
                                            "variant trains bit for bit alike, at a cost in step time",
                                schema={"type": "boolean"}, record="optional", config="deterministic", axis=True)
    trial: int = param(1, help="which fresh process of this configuration this run is: the unit of replication "
                               "(a trial k > 1 has the run id suffix __t<k>)", schema=POSITIVE_INT,
                       record="optional", config="trials")
    variant_modules: list[str] = param([], help="out-of-package variant: a .py file or module (repeatable)",
                                       schema={"type": "array", "items": {"type": "string"}}, record="absent",
                                       config="variant_modules", axis=True, flag="--variant-module")

    def __post_init__(self) -> None:
        self.fanouts = parse_fanouts(self.fanouts)
        self.variant_modules = list(self.variant_modules)
        for f in fields(self):
            value = getattr(self, f.name)
            problem = value_problem(value, f.metadata["schema"])
            if problem is None and f.metadata["choices"] is not None and value not in f.metadata["choices"]():
                problem = f"one of {', '.join(f.metadata['choices']())}"
            if problem is not None:
                raise ZeroGNNError(f"{f.name} must be {problem}, got {value!r}")
        problem = precision_problem(self.dtype, self.device, self.deterministic)
        if problem is not None:
            raise ZeroGNNError(problem)
        if self.epochs:
            self._check_training()

    def _check_training(self) -> None:
        """A run to the target trains and evaluates whole epochs: what it cannot be combined with, in one line."""
        if self.epochs % self.eval_every:
            raise ZeroGNNError(f"epochs {self.epochs} is not a multiple of eval_every {self.eval_every}; "
                               f"evaluate every epoch or every divisor of {self.epochs}")
        if not self.eval_nodes:
            raise ZeroGNNError("training to a target (epochs > 0) evaluates on validation nodes; set eval_nodes > 0")
        if self.whole_epoch:
            raise ZeroGNNError("epochs > 0 already times every epoch it trains; leave whole_epoch off")

    @property
    def key(self) -> RunKey:
        return RunKey.of(asdict(self))

    @property
    def timed_steps_end(self) -> int:
        """The global step after the timed ones (warm-up, then timed steps)."""
        return self.warmup_steps + self.measure_steps

    def evaluation_steps(self, steps_per_epoch: int) -> list[int]:
        """The global steps after which a run to the target evaluates: every ``eval_every`` epochs, up to
        ``epochs`` (none when it is off); ZeroGNNError when the first comes before the timed steps end."""
        every = self.eval_every * steps_per_epoch
        if self.epochs and every < self.timed_steps_end:
            raise ZeroGNNError(f"the first evaluation (after step {every}: {self.eval_every} epoch(s) of "
                               f"{steps_per_epoch} steps) would come before the {self.timed_steps_end} warm-up and "
                               f"timed steps end; evaluate less often or time fewer steps")
        return list(range(every, self.epochs * steps_per_epoch + 1, every)) if self.epochs else []

    def whole_epoch_first_step(self, steps_per_epoch: int) -> int | None:
        """The global step the timed whole epoch starts at: the first epoch boundary after the timed steps."""
        return -(-self.timed_steps_end // steps_per_epoch) * steps_per_epoch if self.whole_epoch else None

    def profile_first_step(self, steps_per_epoch: int) -> int:
        """The global step the profiler's lead-in starts at: after the timed steps and the whole epoch (or the
        training to the target), so that no timed step or epoch ever follows a profiler session."""
        if self.epochs:
            return self.epochs * steps_per_epoch
        first = self.whole_epoch_first_step(steps_per_epoch)
        return self.timed_steps_end if first is None else first + steps_per_epoch

    def steps_run(self, steps_per_epoch: int) -> int:
        """Every step the run trains: warm-up, timed, the whole epoch and the steps up to it (or the epochs to
        the target), profiled."""
        from ..measure.trace import PROFILER_LEAD_IN_STEPS  # torch: imported only where a run is planned

        lead_in = PROFILER_LEAD_IN_STEPS if self.profile_steps else 0
        return self.profile_first_step(steps_per_epoch) + lead_in + self.profile_steps

    def to_dict(self) -> dict[str, Any]:
        """The fields a record's ``config`` holds."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata["record"] != "absent"}

    def arguments(self) -> list[str]:
        """The ``zerognn run`` arguments that give this spec (every field, defaults included)."""
        args: list[str] = []
        for f in fields(self):
            value, flag = getattr(self, f.name), option(f)
            if isinstance(value, bool):
                args += [flag] if value else []
            elif _counts(f):
                args += [flag, fanouts_label(value)]
            elif isinstance(value, list):
                args += [x for item in value for x in (flag, str(item))]
            else:
                args += [flag, str(value)]
        return args

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """One ``zerognn run`` option per field: its type and bounds checked as the option is parsed."""
        for f in fields(cls):
            schema, default = f.metadata["schema"], _default(f)
            shown = fanouts_label(default) if _counts(f) else default
            quiet = default is MISSING or default is False or default == []  # nothing worth saying
            help_text = f.metadata["help"] + ("" if quiet else f" (default {shown})")
            if schema.get("type") == "boolean":
                parser.add_argument(option(f), action="store_true", help=help_text)
            elif schema.get("type") == "array" and schema["items"].get("type") == "string":
                parser.add_argument(option(f), dest=f.name, action="append", default=[], metavar="MODULE",
                                    help=help_text)
            elif _counts(f):  # parsed by RunSpec (parse_fanouts), whose error names the value
                parser.add_argument(option(f), default=shown, help=help_text)
            else:
                choices = schema.get("enum") or (f.metadata["choices"]() if f.metadata["choices"] else None)
                parser.add_argument(option(f), type=argument_type(schema), choices=choices,
                                    required=default is MISSING, default=None if default is MISSING else default,
                                    help=help_text)

    @classmethod
    def from_arguments(cls, args: argparse.Namespace) -> RunSpec:
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls)})

    @classmethod
    def config_schema(cls) -> dict[str, Any]:
        """The JSON Schema of a record's ``config``: its fields' types and bounds (extra fields allowed)."""
        recorded = [f for f in fields(cls) if f.metadata["record"] != "absent"]
        return {
            "type": "object",
            "properties": {f.name: {"description": f.metadata["help"], **f.metadata["record_schema"]}
                           for f in recorded},
            "required": [f.name for f in recorded if f.metadata["record"] == "required"],
        }


def option(f: Field) -> str:
    return f.metadata["flag"] or f"--{f.name.replace('_', '-')}"


def _counts(f: Field) -> bool:
    """A list of counts (the fanouts): one option whose text is '15,10,5' or '15-10-5'."""
    schema = f.metadata["schema"]
    return schema.get("type") == "array" and schema["items"].get("type") == "integer"


def _default(f: Field) -> Any:
    if f.default is not MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not MISSING else MISSING


def describe(schema: dict[str, Any]) -> str:
    """What a value meeting ``schema`` is, in words ('a positive integer', 'a finite number > 0')."""
    if "enum" in schema:
        return "one of " + ", ".join(str(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "integer":
        low = schema.get("minimum")
        return {None: "an integer", 1: "a positive integer"}.get(low, f"an integer >= {low}")
    if kind == "number":
        if "exclusiveMinimum" in schema:
            return f"a finite number > {schema['exclusiveMinimum']:g}"
        return "a finite number" + (f" >= {schema['minimum']:g}" if "minimum" in schema else "")
    if kind == "boolean":
        return "true or false"
    if kind == "array":
        return f"a list of {describe(schema['items'])}s" + (" (at least one)" if schema.get("minItems") else "")
    if "pattern" in schema:
        return "a name of letters, digits, '.', '_', '+' and '-' without '__'"
    return "a non-empty string"


def value_problem(value: Any, schema: dict[str, Any]) -> str | None:
    """None when ``value`` meets ``schema`` (the subset RunSpec uses), else what it should be."""
    kind = schema.get("type")
    if "enum" in schema:
        ok = value in schema["enum"]
    elif kind == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= schema.get("minimum", -math.inf)
    elif kind == "number":
        ok = (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
              and value > schema.get("exclusiveMinimum", -math.inf) and value >= schema.get("minimum", -math.inf))
    elif kind == "boolean":
        ok = isinstance(value, bool)
    elif kind == "array":
        ok = (isinstance(value, (list, tuple)) and len(value) >= schema.get("minItems", 0)
              and all(value_problem(v, schema["items"]) is None for v in value))
    else:
        ok = (isinstance(value, str) and len(value) >= schema.get("minLength", 0)
              and ("pattern" not in schema or re.fullmatch(schema["pattern"], value) is not None))
    return None if ok else describe(schema)


def argument_type(schema: dict[str, Any]) -> Callable[[str], Any]:
    """An argparse type: the option's text as the schema's type, rejected in one line unless it meets it."""
    kind = {"integer": int, "number": float}.get(schema.get("type"), str)

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = text
        problem = value_problem(value, schema) if kind is not str or "enum" not in schema else None
        if problem is not None:
            raise argparse.ArgumentTypeError(f"must be {problem}, got {text!r}")
        return value

    return parse
