"""Run records (one validated JSON object per run) and the summary table built from them."""

from .schema import (
    SCHEMA_VERSION,
    iter_records,
    make_run_id,
    percentiles,
    read_record,
    upgrade_record,
    validate_record,
    write_record,
)
from .summary import SUMMARY_COLUMNS, check_summary_current, read_summary, summarize, summary_row

__all__ = [
    "SCHEMA_VERSION", "SUMMARY_COLUMNS", "check_summary_current", "iter_records", "make_run_id", "percentiles",
    "read_record", "read_summary", "summarize", "summary_row", "upgrade_record", "validate_record", "write_record",
]
