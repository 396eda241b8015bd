"""What a run is (its spec and key), what it wrote (one validated JSON record), and the summary table built
from the records."""

from .ids import RunKey
from .schema import (
    SCHEMA_VERSION,
    iter_records,
    percentiles,
    read_record,
    upgrade_record,
    validate_record,
    write_record,
)
from .summary import SUMMARY_COLUMNS, check_summary_current, read_summary, summarize, summary_row

__all__ = [
    "SCHEMA_VERSION", "SUMMARY_COLUMNS", "RunKey", "check_summary_current", "iter_records", "percentiles",
    "read_record", "read_summary", "summarize", "summary_row", "upgrade_record", "validate_record", "write_record",
]
