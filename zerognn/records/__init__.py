"""What a run is (its spec and key), what it wrote (one validated JSON record), and the summary table built
from the records (``zerognn.records.summary``, not imported here: it needs pandas, which a run does not)."""

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

__all__ = [
    "SCHEMA_VERSION", "RunKey", "iter_records", "percentiles", "read_record", "upgrade_record", "validate_record",
    "write_record",
]
