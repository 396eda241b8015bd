"""Record files: writing one atomically, reading one back, and finding every record under a runs directory."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..atomic import write_json
from ..errors import ZeroGNNError
from .record_schema import DOC
from .validate import checked_record, validate_record


def write_record(path: str | os.PathLike, record: dict[str, Any]) -> None:
    """Validate ``record`` and write it atomically as JSON."""
    validate_record(record, source=path)
    write_json(path, record)


def read_record(path: str | os.PathLike) -> dict[str, Any]:
    """Read and validate one record, upgraded in memory to the current schema if it is older."""
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ZeroGNNError(f"{path}: cannot read run record: {e}. Delete the file and re-run that run.") from e
    return checked_record(record, source=path)


def record_paths(runs_dir: str | os.PathLike) -> list[Path]:
    """The record files under ``runs_dir`` (``*.json`` at any depth, hidden files skipped)."""
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        raise ZeroGNNError(f"runs directory {runs_dir} does not exist; run the pipeline first (snakemake).")
    return sorted(p for p in runs_dir.rglob("*.json") if not p.name.startswith("."))


def iter_records(runs_dir: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """Yield every record under ``runs_dir``; a bad file, a file not named ``<run_id>.json`` or a repeated
    run_id raises, naming the files."""
    seen: dict[str, Path] = {}
    for path in record_paths(runs_dir):
        record = read_record(path)
        if path.stem != record["run_id"]:
            raise ZeroGNNError(
                f"{path}: the file is named {path.stem!r} but holds run {record['run_id']!r}; a record file must "
                f"be named after its run: rename it to {record['run_id']}.json (see {DOC})."
            )
        first = seen.setdefault(record["run_id"], path)
        if first != path:
            raise ZeroGNNError(
                f"run_id {record['run_id']!r} appears in both {first} and {path}; each run must be recorded "
                f"once. Delete the stale file."
            )
        yield record
