"""The study's configuration against its JSON schema: typed first, then judged in one line.

``snakemake --config batch_sizes=[64]`` parses the list with YAML's base loader, so its items arrive
as strings ('64'), and the schema would reject a valid override. ``coerce`` walks a value beside its
JSON schema and turns a string that spells an integer, a number or a boolean into one wherever the
schema asks for that type; everything else is left for the schema to judge. ``schema_problem`` says
what is wrong, if anything, as one line naming the key (jsonschema's most relevant error).
``duplicate_key_problem`` finds a key written twice in a config file, which YAML loaders silently resolve
to the last value.
"""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import yaml

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


# Config keys an older suite read, and what replaced them.
RENAMED = {"seed": "`seeds`, a list (one training run per seed, e.g. seeds: [0])"}


def schema_problem(config: dict[str, Any], schema: dict[str, Any]) -> str | None:
    """One line naming the config key that breaks ``schema`` and how, or None when it fits."""
    for old, new in RENAMED.items():
        if old in config and old not in schema.get("properties", {}):
            return f"{old}: this key is now {new}; rename it"
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(config))
    if error is None:
        return None
    where = "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p))
                    for i, p in enumerate(error.absolute_path)) or "the config"
    return f"{where}: {' '.join(error.message.split())}"


class _StrictLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a mapping that names a key twice."""


def _no_duplicates(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} appears twice (lines {seen[key]} and {key_node.start_mark.line + 1}); "
                            f"keep one", key_node.start_mark)
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def duplicate_key_problem(path: str) -> str | None:
    """None when the YAML file ``path`` names every key once, else which key it repeats and where."""
    try:
        with open(path) as text:
            yaml.load(text, Loader=_StrictLoader)
    except yaml.constructor.ConstructorError as exc:
        return f"{path}: {exc.problem}"
    except (OSError, yaml.YAMLError):
        return None  # unreadable or malformed: Snakemake's own loading reports it
    return None
