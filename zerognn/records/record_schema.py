"""The current record schema as data: ``record.schema.json`` with the ``config`` schema spliced in from
``RunSpec``, and checking a value against it (or any part of it) in one-line messages that name the field."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from importlib.resources import files
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match

from ..errors import ZeroGNNError
from .spec import RunSpec
from .spec import describe as describe_name

DOC = "docs/records.md"
SCHEMA_FILE = "record.schema.json"


class InvalidRecord(Exception):
    """What is wrong with a record: the field (a dotted path such as ``metrics.step_ms[3]``) and the problem."""

    def __init__(self, field: str, problem: str):
        super().__init__(f"field '{field}' {problem}")

    def error(self, source: Any = None) -> ZeroGNNError:
        """The one-line error a user sees: where, what, and the fix."""
        where = f"{source}: " if source is not None else ""
        return ZeroGNNError(f"{where}invalid run record: {self}. Fix the code that wrote it to follow {DOC} (or "
                            f"delete the file and re-run that run).")


def _is_int(_: Any, v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_finite_number(_: Any, v: Any) -> bool:
    return _is_int(None, v) or (isinstance(v, float) and math.isfinite(v))


# JSON cannot hold NaN or infinities (json.loads reads them all the same) and JSON Schema counts 1.0 as an
# integer: a record's numbers are finite and its integers are written without a fraction (docs/records.md).
RecordValidator = validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine_many({"integer": _is_int, "number": _is_finite_number}),
)


def _whole_string(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its patterns matching whole strings, as RunSpec means them (JSON Schema searches).

    ``\\Z``, not ``$``: Python's ``$`` also matches before a final newline.
    """
    out = {k: _whole_string(v) if isinstance(v, dict) else v for k, v in schema.items()}
    if isinstance(schema.get("pattern"), str):
        out["pattern"] = rf"^(?:{schema['pattern']})\Z"
    return out


def load_schema() -> dict[str, Any]:
    """The record schema: the package's ``record.schema.json`` with ``RunSpec.config_schema()`` as ``config``."""
    schema = json.loads(files(__package__).joinpath(SCHEMA_FILE).read_text())
    config = schema["properties"]["config"]
    schema["properties"]["config"] = config | _whole_string(RunSpec.config_schema())
    return schema


RECORD_SCHEMA = load_schema()
SCHEMA_VERSION: int = RECORD_SCHEMA["properties"]["schema_version"]["const"]
_RECORD = RecordValidator(RECORD_SCHEMA)


def check(instance: Any, validator: Draft202012Validator = _RECORD,
          skip: Callable[[ValidationError], bool] | None = None) -> None:
    """Raise InvalidRecord for the most relevant way ``instance`` fails ``validator`` (the record schema unless
    told), leaving out the errors ``skip`` is true for."""
    errors = validator.iter_errors(instance)
    error = best_match(e for e in errors if skip is None or not skip(e))
    if error is not None:
        raise _invalid(error)


def _invalid(error: ValidationError) -> InvalidRecord:
    path = list(error.absolute_path)
    if error.validator == "required":
        missing = next(k for k in error.validator_value if k not in error.instance)
        return InvalidRecord(field_name([*path, missing]), "is missing")
    expected = describe(error.schema) if isinstance(error.schema, dict) else ""
    if not expected:
        return InvalidRecord(field_name(path), f"is invalid: {error.message}")
    return InvalidRecord(field_name(path), f"must be {expected}, got {json.dumps(error.instance, default=repr)[:60]}")


def field_name(path: list[str | int]) -> str:
    """``['metrics', 'step_ms', 3]`` -> ``metrics.step_ms[3]``; the empty path is the record itself."""
    name = ""
    for part in path:
        name += f"[{part}]" if isinstance(part, int) else f".{part}" if name else str(part)
    return name or "record"


def describe(schema: dict[str, Any]) -> str:
    """What a value meeting ``schema`` is, in words ('a finite number in [0, 1] or null')."""
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return "one of " + ", ".join(repr(v) for v in schema["enum"])
    kinds = schema.get("type", [])
    return " or ".join(_describe_type(schema, kind) for kind in ([kinds] if isinstance(kinds, str) else kinds))


def _describe_type(schema: dict[str, Any], kind: str) -> str:
    if kind in ("integer", "number"):
        words = "an integer" if kind == "integer" else "a finite number"
        if "maximum" in schema:
            return f"{words} in [{schema.get('minimum', -math.inf):g}, {schema['maximum']:g}]"
        if "exclusiveMinimum" in schema:
            return f"{words} > {schema['exclusiveMinimum']:g}"
        return words + (f" >= {schema['minimum']:g}" if "minimum" in schema else "")
    if kind == "string" and "pattern" in schema:
        return describe_name(schema)  # the only pattern is RunSpec's for names: its words
    return {
        "string": "a non-empty string" if schema.get("minLength") else "a string",
        "array": "a non-empty list" if schema.get("minItems") else "a list",
        "object": "a JSON object", "boolean": "true or false", "null": "null",
    }[kind]
