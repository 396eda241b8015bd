"""RunSpec is the one declaration of a run's parameters: the CLI, the workflow and the config schema agree."""

import argparse
import shlex
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from zerognn.errors import ZeroGNNError
from zerognn.records.spec import RunSpec

REPO = Path(__file__).resolve().parents[2]
CONFIG_SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())


def test_the_config_schema_gives_every_run_parameter_runspecs_default_and_bounds():
    properties = CONFIG_SCHEMA["properties"]
    numbers = 0
    for f in fields(RunSpec):
        key = f.metadata["config"]
        if key is None:
            continue
        assert key in properties, f"RunSpec.{f.name} is set by config key {key!r}, which the schema lacks"
        spec_schema, config_schema = f.metadata["schema"], properties[key]
        if key == f.name and not f.metadata["axis"] and f.name != "fanouts":  # one value for every run
            assert config_schema.get("default") == f.default, (f.name, config_schema)
        if spec_schema.get("type") == "array":  # the fanouts: a list in both
            spec_schema, config_schema = spec_schema["items"], config_schema["items"]
        elif f.metadata["axis"] and config_schema.get("type") == "array":  # one value per run
            config_schema = config_schema["items"]
        if spec_schema.get("type") in ("integer", "number"):
            numbers += 1
            for bound in ("type", "minimum", "exclusiveMinimum"):
                assert config_schema.get(bound) == spec_schema.get(bound), (f.name, bound, config_schema)
    assert numbers >= 10


def parse(argv):
    parser = argparse.ArgumentParser()
    RunSpec.add_arguments(parser)
    return RunSpec.from_arguments(parser.parse_args(argv))


def test_the_run_parser_is_generated_from_the_spec_and_gives_its_defaults():
    assert parse(["--dataset", "tiny"]) == RunSpec(dataset="tiny")


def test_a_spec_survives_its_own_arguments():
    spec = RunSpec(dataset="tiny", model="gcn", variant="zerognn", batch_size=64, fanouts=[5, 3], lr=0.01,
                   whole_epoch=True, host_load=2, variant_modules=["a b.py", "pkg.mod"], device="cpu")
    assert parse(spec.arguments()) == spec
    assert parse(shlex.split(" ".join(shlex.quote(a) for a in spec.arguments()))) == spec


@pytest.mark.parametrize("overrides, message", [
    (dict(batch_size=0), "batch_size must be a positive integer, got 0"),
    (dict(lr=float("nan")), "lr must be a finite number > 0"),
    (dict(fanouts="15,x"), "fanouts '15,x' must be positive integers"),
    (dict(model="mlp"), "model must be one of sage, gcn, gat"),
    (dict(device="tpu"), "device must be one of auto, cpu, cuda"),
    (dict(whole_epoch="yes"), "whole_epoch must be true or false"),
    (dict(host_load=-1), "host_load must be an integer >= 0"),
    (dict(variant="a__b"), "variant must be a name"),
])
def test_a_bad_spec_is_refused_naming_the_field(overrides, message):
    with pytest.raises(ZeroGNNError, match=message):
        RunSpec(**{"dataset": "tiny", **overrides})


def test_a_records_config_schema_is_the_specs():
    schema = RunSpec.config_schema()
    assert "variant_modules" not in schema["properties"]
    assert {"host_load", "whole_epoch", "eval_nodes"}.isdisjoint(schema["required"])  # older records lack them
    assert schema["properties"]["device"]["enum"] == ["cpu", "cuda"]  # a record names the device it ran on
    assert set(RunSpec(dataset="tiny").to_dict()) == set(schema["properties"])
