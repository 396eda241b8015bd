"""The study plan (zerognn/workflow/plan.py): the runs a config asks for and the one spec each starts with."""

from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from zerognn.errors import ZeroGNNError
from zerognn.records.ids import KEY_FIELDS, RunKey
from zerognn.records.spec import RunSpec
from zerognn.workflow.plan import LIST_AXES, plan, run_spec

REPO = Path(__file__).resolve().parents[2]
SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())


def study(**overrides):
    """The default config with the schema's defaults filled in (as Snakemake's validate does)."""
    config = yaml.safe_load((REPO / "workflow/config/default.yaml").read_text()) | overrides
    return {k: v["default"] for k, v in SCHEMA["properties"].items() if "default" in v} | config


def test_every_key_field_is_planned_by_name_or_from_a_list_in_the_config():
    spec_fields = {f.name: f for f in fields(RunSpec)}
    for name in LIST_AXES:
        assert spec_fields[name].metadata["axis"] and SCHEMA["properties"][LIST_AXES[name]]["type"] == "array"
    assert set(KEY_FIELDS) - set(LIST_AXES) == {"dataset", "model", "variant", "batch_size", "fanouts"}


def test_the_plan_is_every_combination_of_the_axes_in_order():
    runs = plan(study(gpus=[1, 2], host_load=[0, 4]), "cpu")
    assert runs.datasets == ["tiny", "arxiv-like"] and "host-mediated" not in runs.variants
    assert any("skipping variant host-mediated" in line for line in runs.left_out)
    assert len(runs.keys) == 2 * len(runs.variants) * 2 * 2 * 2
    assert runs.keys[:4] == [RunKey("tiny", "sage", runs.variants[0], 256, (15, 10, 5), g, h)
                             for g in (1, 2) for h in (0, 4)]
    assert len({k.run_id for k in runs.keys}) == len(runs.keys)


def test_a_runs_spec_is_the_keys_fields_and_the_configs_run_parameters():
    config = study(measure_steps=7, whole_epoch_variants=["torch-eager"])
    key = RunKey("tiny", "sage", "torch-eager", 256, (15, 10, 5), host_load=2)
    spec = run_spec(config, "cpu", key, {})
    assert spec.key == key and spec.measure_steps == 7 and spec.device == "cpu" and spec.whole_epoch
    assert spec.eval_nodes == config["eval_nodes"] and spec.variant_modules == []
    assert run_spec(config, "gpu", key, {"torch-eager": "mine.py"}).arguments()[-2:] == ["--variant-module", "mine.py"]


def test_unknown_variants_are_refused_before_anything_runs():
    with pytest.raises(ZeroGNNError, match=r"config names unknown variants \['nope'\]"):
        plan(study(variants=["nope"]), "cpu")
