"""The run record's names in one place, for the modules that import them from here.

The record is described for people in ``docs/records.md`` and for machines in ``record.schema.json``
(loaded by ``record_schema``); older schemas are upgraded by ``migrations``, cross-field rules live in
``consistency``, ``validate_record`` (``validate``) runs the three, and ``files`` reads and writes records.
"""

from .consistency import GPU_ONLY_METRICS, percentiles
from .files import iter_records, read_record, record_paths, write_record
from .migrations import READABLE_VERSIONS, upgrade_record
from .record_schema import DOC, SCHEMA_VERSION
from .validate import validate_record

__all__ = [
    "DOC", "GPU_ONLY_METRICS", "READABLE_VERSIONS", "SCHEMA_VERSION", "iter_records", "percentiles", "read_record",
    "record_paths", "upgrade_record", "validate_record", "write_record",
]
