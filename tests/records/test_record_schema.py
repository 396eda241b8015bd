"""The record schema as data: a valid JSON Schema with every field described, strict about numbers, and
the field tables of docs/records.md listing exactly its fields."""

import json
import re
from importlib.resources import files

import pytest
from jsonschema import Draft202012Validator

from zerognn.errors import ZeroGNNError
from zerognn.records import validate_record
from zerognn.records.record_schema import RECORD_SCHEMA, SCHEMA_VERSION
from zerognn.records.spec import RunSpec

from .factory import DOCS, make_record

PROPERTIES = RECORD_SCHEMA["properties"]


def test_the_schema_file_ships_in_the_package_and_is_a_draft_2020_12_schema():
    text = files("zerognn.records").joinpath("record.schema.json").read_text()
    on_disk = json.loads(text)
    Draft202012Validator.check_schema(on_disk)
    Draft202012Validator.check_schema(RECORD_SCHEMA)
    assert SCHEMA_VERSION == 7 and on_disk["properties"]["schema_version"]["const"] == SCHEMA_VERSION
    # the config is RunSpec's, spliced in when loading: the file only says so
    assert "properties" not in on_disk["properties"]["config"]
    assert "RunSpec.config_schema()" in on_disk["properties"]["config"]["description"]
    assert PROPERTIES["config"]["properties"].keys() == RunSpec.config_schema()["properties"].keys()
    assert PROPERTIES["config"]["required"] == RunSpec.config_schema()["required"]


def _described(schema, path=""):
    """Every property under ``schema`` with its description (nested objects and list items included)."""
    for name, sub in schema.get("properties", {}).items():
        field = f"{path}.{name}" if path else name
        yield field, sub.get("description")
        yield from _described(sub, field)
    if isinstance(schema.get("items"), dict):
        yield from _described(schema["items"], f"{path}[]")


def test_every_field_has_a_description():
    described = dict(_described(RECORD_SCHEMA))
    assert "metrics.step_ms" in described and "variant_info.envelope.hops[].hop" in described
    assert "config.eval_nodes" in described
    assert [name for name, text in described.items() if not (isinstance(text, str) and text.strip())] == []


def _section(title):
    match = re.search(rf"^### {re.escape(title)}\n(.*?)(?=^##)", DOCS.read_text(), re.S | re.M)
    assert match, f"docs/records.md has no section '### {title}'"
    return match.group(1)


def _rows(title):
    """The table rows of a section of docs/records.md, as lists of cells."""
    return [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in _section(title).splitlines() if line.startswith("| `")]


def _names(cell):
    return re.findall(r"`([^`]+)`", cell)


def _table_fields(title):
    fields = [name for row in _rows(title) for name in _names(row[0])]
    assert len(fields) == len(set(fields)), f"a field is listed twice under {title}"
    return sorted(fields)


@pytest.mark.parametrize("title, schema", [
    ("Top level", RECORD_SCHEMA),
    ("`config`", RunSpec.config_schema()),
    ("`dataset`", PROPERTIES["dataset"]),
    ("`metrics`", PROPERTIES["metrics"]),
    ("`accuracy`", PROPERTIES["accuracy"]),
])
def test_the_docs_tables_list_exactly_the_schema_fields(title, schema):
    assert _table_fields(title) == sorted(schema["properties"])


def test_the_docs_config_table_marks_exactly_the_optional_fields():
    optional = sorted(_names(row[0])[0] for row in _rows("`config`") if "optional" in row[1])
    schema = RunSpec.config_schema()
    assert optional == sorted(set(schema["properties"]) - set(schema["required"]))


def test_the_docs_variant_info_table_lists_the_checked_keys():
    known = PROPERTIES["variant_info"]["properties"]
    # an object among them is listed by its fields: envelope.hops
    flat = sorted(f"{k}.{sub}" if "properties" in v else k for k, v in known.items()
                  for sub in v.get("properties", [k]))
    assert _table_fields("`variant_info`") == flat
    (hops,) = [row for row in _rows("`variant_info`") if _names(row[0]) == ["envelope.hops"]]
    assert sorted(_names(hops[2])) == sorted(known["envelope"]["properties"]["hops"]["items"]["properties"])


def test_the_docs_name_the_required_environment_keys():
    required = re.search(r"Required: (.*?)\.", _section("`environment`"), re.S).group(1)
    environment = PROPERTIES["environment"]
    assert sorted(_names(required)) == sorted(environment["required"]) == sorted(environment["properties"])


def _invalid(edit):
    record = make_record()
    edit(record)
    with pytest.raises(ZeroGNNError) as e:
        validate_record(record, source="runs/x.json")
    return str(e.value)


@pytest.mark.parametrize("edit, field, said", [
    (lambda r: r["metrics"].update(step_ms_median=float("nan")), "metrics.step_ms_median", "got NaN"),
    (lambda r: r["metrics"]["step_ms"].__setitem__(1, float("inf")), "metrics.step_ms[1]", "got Infinity"),
    (lambda r: r["config"].update(lr=float("-inf")), "config.lr", "must be a finite number > 0"),
    (lambda r: r["losses"].__setitem__(0, float("nan")), "losses[0]", "must be a finite number or null"),
    (lambda r: r["metrics"].update(phase_ms={"sample": float("nan")}), "metrics.phase_ms.sample", "got NaN"),
    (lambda r: r["config"].update(batch_size=256.0), "config.batch_size", "must be an integer >= 1, got 256.0"),
    (lambda r: r["accuracy"].update(eval_nodes=True), "accuracy.eval_nodes", "must be an integer >= 0, got true"),
    (lambda r: r["config"].update(seed=False), "config.seed", "got false"),
    (lambda r: r["config"].update(dataset="tiny\n"), "config.dataset", "must be a name"),
    (lambda r: r["config"].update(model="a b"), "config.model", "must be a name"),
    (lambda r: r["config"].update(eval_nodes=-1), "config.eval_nodes", "must be an integer >= 0"),
    (lambda r: r["config"].update(whole_epoch=1), "config.whole_epoch", "must be true or false"),
    (lambda r: r["config"].update(host_load=None), "config.host_load", "must be an integer >= 0, got null"),
    (lambda r: r["environment"].update(gpu_name=""), "environment.gpu_name", "a non-empty string or null"),
    (lambda r: r["metrics"].update(floor_ms=0.0), "metrics.floor_ms", "must be a finite number > 0 or null"),
    (lambda r: r.update(schema_version="7"), "schema_version", "must be 7"),
])
def test_numbers_are_finite_integers_have_no_fraction_and_names_are_whole(edit, field, said):
    message = _invalid(edit)
    assert f"field '{field}' " in message and said in message, message
    assert "\n" not in message


def test_a_record_of_an_unknown_schema_names_a_broken_field_first():
    assert "field 'losses' is missing" in _invalid(lambda r: r.update(schema_version=8) or r.pop("losses"))
    assert "field 'schema_version' is 8, this version reads 1, 2, 3, 4, 5, 6, 7" in _invalid(
        lambda r: r.update(schema_version=8))
    with pytest.raises(ZeroGNNError, match="field 'record' must be a JSON object, got \\[\\]"):
        validate_record([])


def test_extra_fields_are_allowed_everywhere():
    record = make_record(variant_info={"envelope": {"hops": [
        {"hop": 1, "provisioned": 8, "live_max": 6, "live_mean": 5.5, "note": "x"}], "policy": "calibrated"}})
    for part in ("config", "dataset", "metrics", "accuracy", "environment", "variant_info"):
        record[part]["extra_field"] = {"anything": [1, None]}
    record["extra_field"] = "x"
    validate_record(record)
