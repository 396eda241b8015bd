"""Older records upgraded by a chain of one-schema steps before they are checked: exact, in memory only,
and a malformed old record reported by field in one line."""

import copy
import json
from pathlib import Path

import pytest

from zerognn.errors import ZeroGNNError
from zerognn.records import SCHEMA_VERSION, read_record, upgrade_record, validate_record
from zerognn.records.migrations import FIELDS_NEW_IN_V3, FIELDS_NEW_IN_V5, MIGRATIONS, READABLE_VERSIONS

from .factory import make_record

REFERENCE = Path(__file__).resolve().parents[2] / "results" / "reference"
# The metrics each schema added (a record of schema n has none of those of the schemas after n).
ADDED = {
    2: ("gpu_busy_ms_per_step", "gpu_untraced_ms_per_step", "profiler_dilation", "gpu_gap_in_graph_ms_per_step",
        "gpu_wait_host_ms_per_step", "cuda_graph_captures"),
    3: FIELDS_NEW_IN_V3,
    4: ("gpu_ms_by_class",),
    5: FIELDS_NEW_IN_V5,
    6: ("phase_s", "peak_reserved_bytes", "ideal_mem_bytes"),
    7: (),
}
# The top-level fields each schema added.
ADDED_TOP = {7: ("training",)}


def older(record, version):
    """``record`` as schema ``version`` wrote it (its newer fields left out)."""
    for newer in range(version + 1, SCHEMA_VERSION + 1):
        for key in ADDED[newer]:
            record["metrics"].pop(key)
        for key in ADDED_TOP.get(newer, ()):
            record.pop(key)
    record["schema_version"] = version
    return record


def test_the_chain_has_one_step_per_schema_each_adding_that_schemas_fields():
    assert sorted(MIGRATIONS) == [1, 2, 3, 4, 5, 6] and READABLE_VERSIONS == (1, 2, 3, 4, 5, 6, 7)
    for version, step in MIGRATIONS.items():
        out = step.apply(older(make_record(), version))
        assert out["schema_version"] == version + 1
        assert out["metrics"].keys() == older(make_record(), version + 1)["metrics"].keys()
        assert out.keys() == older(make_record(), version + 1).keys()


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5, 6])
def test_an_upgrade_changes_nothing_it_was_given(version, tmp_path):
    record = older(make_record(), version)
    before = copy.deepcopy(record)
    upgraded = upgrade_record(record)
    assert record == before and upgraded["upgraded_from_schema"] == version
    assert upgraded["schema_version"] == SCHEMA_VERSION and list(upgraded)[-1] == "upgraded_from_schema"
    validate_record(record)
    assert record == before
    path = tmp_path / "old.json"
    path.write_text(json.dumps(record))
    assert read_record(path) == upgraded and json.loads(path.read_text()) == before


def test_what_an_older_schema_lacked_is_null_even_if_it_wrote_something_there():
    record = older(make_record(), 4)
    record["metrics"]["epoch_s_measured"] = "not a schema 4 field"
    upgraded = upgrade_record(record)
    assert upgraded["metrics"]["epoch_s_measured"] is None and upgraded["metrics"]["epoch_first_step"] is None


@pytest.mark.parametrize("version, edit, field", [
    (1, lambda r: r["metrics"].update(window_ms="66"), "metrics.window_ms"),
    (1, lambda r: r["metrics"].update(gpu_exec_fraction=1.5), "metrics.gpu_exec_fraction"),
    (1, lambda r: r["metrics"].pop("step_ms_median"), "metrics.step_ms_median"),
    (1, lambda r: r["config"].pop("profile_steps"), "config.profile_steps"),
    (1, lambda r: r["config"].update(profile_steps=2.5), "config.profile_steps"),
    (1, lambda r: r.pop("config"), "config"),
    (2, lambda r: r.update(metrics=None), "metrics"),
    (3, lambda r: r.pop("metrics"), "metrics"),
    (4, lambda r: r.update(metrics=[1]), "metrics"),
])
def test_a_malformed_old_record_is_reported_by_field_in_one_line(version, edit, field):
    record = older(make_record(), version)
    edit(record)
    for call in (lambda: validate_record(record, source="runs/old.json"), lambda: upgrade_record(record)):
        with pytest.raises(ZeroGNNError) as e:
            call()
        message = str(e.value)
        assert f"invalid run record: field '{field}' " in message and "\n" not in message, message


def test_a_schema_1_cpu_record_with_an_execution_fraction_is_invalid_even_without_a_window():
    record = older(make_record(), 1)
    record["metrics"]["gpu_exec_fraction"] = 0.5
    with pytest.raises(ZeroGNNError, match="field 'metrics.gpu_exec_fraction' is 0.5 but must be null for a CPU run"):
        validate_record(record)


def test_upgrade_record_refuses_a_schema_it_does_not_read():
    with pytest.raises(ZeroGNNError, match="field 'schema_version' is 8, this version reads 1, 2, 3, 4, 5, 6, 7"):
        upgrade_record(make_record() | {"schema_version": 8})


def test_every_committed_reference_record_reads_and_says_what_it_was_upgraded_from():
    paths = sorted(REFERENCE.glob("**/runs/**/*.json"))
    assert paths
    for path in paths:
        written = json.loads(path.read_text())["schema_version"]
        record = read_record(path)
        assert record["schema_version"] == SCHEMA_VERSION
        assert record.get("upgraded_from_schema") == (None if written == SCHEMA_VERSION else written), path
