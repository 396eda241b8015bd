"""Checking a run record: upgraded to the current schema (``migrations``), checked against the schema
(``record_schema``), then checked for agreement with itself (``consistency``)."""

from __future__ import annotations

import os
from typing import Any

from .consistency import check_consistency
from .migrations import migrate, readable, unreadable
from .record_schema import InvalidRecord, check


def validate_record(record: Any, source: str | os.PathLike | None = None) -> None:
    """Raise ZeroGNNError naming ``source``, the field and the fix if ``record`` is not a valid record."""
    checked_record(record, source)


def checked_record(record: Any, source: str | os.PathLike | None = None) -> dict[str, Any]:
    """``record`` in the current schema, upgraded in memory if it is older; ZeroGNNError as validate_record."""
    try:
        if not readable(record):
            # a missing or mistyped field is named first, if that is the problem
            check(record, skip=lambda e: list(e.absolute_path) == ["schema_version"] and e.validator == "const")
            raise unreadable(record)
        upgraded = migrate(record)
        check(upgraded)
        check_consistency(upgraded)
    except InvalidRecord as e:
        raise e.error(source) from None
    return upgraded
