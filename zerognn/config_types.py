"""Type the study's configuration as its schema says, before the schema checks it.

``snakemake --config batch_sizes=[64]`` parses the list with YAML's base loader, so its items arrive
as strings ('64'), and the schema would reject a valid override. ``coerce`` walks a value beside its
JSON schema and turns a string that spells an integer, a number or a boolean into one wherever the
schema asks for that type; everything else is left for the schema to judge.
"""

from __future__ import annotations

import re
from typing import Any

_INTEGER = re.compile(r"[+-]?\d+")
_BOOLEANS = {"true": True, "false": False}


def coerce(value: Any, schema: dict[str, Any]) -> Any:
    """``value`` with the strings the schema wants as integers, numbers or booleans converted."""
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        return {k: coerce(v, properties.get(k, extra if isinstance(extra, dict) else {})) for k, v in value.items()}
    if isinstance(value, list):
        items = schema.get("items")
        if items is None:
            items = next((s["items"] for s in schema.get("oneOf", []) if "items" in s), {})
        return [coerce(v, items) for v in value]
    if isinstance(value, str):
        return _scalar(value, _types(schema))
    return value


def _types(schema: dict[str, Any]) -> set[str]:
    declared = schema.get("type", [])
    types = {declared} if isinstance(declared, str) else set(declared)
    for alternative in schema.get("oneOf", []):
        types |= _types(alternative)
    return types


def _scalar(text: str, types: set[str]) -> Any:
    if "string" in types:
        return text
    if types & {"integer", "number"} and _INTEGER.fullmatch(text.strip()):
        return int(text)
    if "number" in types:
        try:
            return float(text)
        except ValueError:
            return text
    if "boolean" in types and text.lower() in _BOOLEANS:
        return _BOOLEANS[text.lower()]
    return text
