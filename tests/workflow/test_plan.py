"""The study plan (zerognn/workflow/plan.py): the runs a config asks for and the one spec each starts with."""

import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from zerognn.errors import ZeroGNNError
from zerognn.records.ids import COMPARISON_FIELDS, KEY_FIELDS, RunKey
from zerognn.records.spec import RunSpec
from zerognn.workflow.plan import LIST_AXES, plan, run_spec

from .base_config import base_config

REPO = Path(__file__).resolve().parents[2]
SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())


def study(**overrides):
    """The tests' study config with the schema's defaults filled in (as Snakemake's validate does)."""
    config = base_config(**overrides)
    return {k: v["default"] for k, v in SCHEMA["properties"].items() if "default" in v} | config


def test_every_key_field_is_planned_by_name_or_from_a_list_in_the_config():
    spec_fields = {f.name: f for f in fields(RunSpec)}
    for name in LIST_AXES:
        assert spec_fields[name].metadata["axis"] and SCHEMA["properties"][LIST_AXES[name]]["type"] == "array"
    assert set(KEY_FIELDS) - set(LIST_AXES) == {"dataset", "model", "variant", "batch_size", "fanouts", "trial"}


def test_the_plan_is_every_combination_of_the_axes_in_order():
    runs = plan(study(gpus=[1, 2], host_load=[0, 4]), "cpu")
    assert runs.datasets == ["tiny", "arxiv-like"] and "host-mediated" not in runs.variants
    assert any("skipping variant host-mediated" in line for line in runs.left_out)
    assert len(runs.keys) == 2 * len(runs.variants) * 2 * 2 * 2
    assert runs.keys[:4] == [RunKey("tiny", "sage", runs.variants[0], 256, (15, 10, 5), g, h)
                             for g in (1, 2) for h in (0, 4)]
    assert len({k.run_id for k in runs.keys}) == len(runs.keys)


def test_precisions_are_an_axis_left_out_where_they_cannot_run():
    gpu = plan(study(variants=["torch-eager", "zerognn"], precisions=["float32", "tf32"],
                     deterministic=[False, True]), "gpu")
    assert {(k.dtype, k.deterministic) for k in gpu.keys} == {("float32", False), ("float32", True), ("tf32", False)}
    assert [line for line in gpu.left_out if "tf32" in line] == [
        "skipping tf32 runs: precision tf32 does not apply in deterministic mode: its fixed-order GEMMs are fp32 "
        "FFMA; run tf32 without --deterministic"]
    assert {k.run_id for k in gpu.keys if k.dtype == "tf32"} >= {"tiny__sage__zerognn__b256__f15-10-5__g1__ptf32"}
    cpu = plan(study(variants=["torch-eager"], precisions=["float32", "tf32"]), "cpu")
    assert {k.dtype for k in cpu.keys} == {"float32"}
    assert ("skipping tf32 runs: precision tf32 needs a CUDA GPU (its GEMMs run on tensor cores); use float32 on "
            "the CPU") in cpu.left_out
    key = next(k for k in gpu.keys if k.dtype == "tf32")
    assert "--dtype tf32" in " ".join(run_spec(study(), "gpu", key, {}).arguments())


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


def test_trials_run_in_rounds_with_the_variant_order_rotating_and_each_run_after_the_one_before():
    config = study(variants=["torch-eager", "host-mediated", "zerognn"], batch_sizes=[256], trials=4,
                   datasets={"tiny": {}})
    runs = plan(config, "gpu")
    order = [(k.variant, k.trial) for k in runs.keys]
    assert order == [("torch-eager", 1), ("host-mediated", 1), ("zerognn", 1),
                     ("host-mediated", 2), ("zerognn", 2), ("torch-eager", 2),
                     ("zerognn", 3), ("torch-eager", 3), ("host-mediated", 3),
                     ("torch-eager", 4), ("host-mediated", 4), ("zerognn", 4)]
    ids = [k.run_id for k in runs.keys]
    assert runs.previous == dict(zip(ids[1:], ids[:-1])) and ids[0] not in runs.previous
    assert ids[3].endswith("__host-mediated__b256__f15-10-5__g1__t2")


def test_groups_are_chained_apart_and_one_trial_chains_nothing():
    config = study(variants=["torch-eager", "zerognn"], batch_sizes=[256, 1024], trials=2, datasets={"tiny": {}})
    runs = plan(config, "gpu")
    for later, earlier in runs.previous.items():
        assert RunKey.parse(later).comparison() == RunKey.parse(earlier).comparison()
    assert len(runs.previous) == len(runs.keys) - 2  # one chain per batch size
    assert plan(study(), "cpu").previous == {}


def test_only_the_first_trial_is_profiled_and_evaluated_and_every_trial_is_timed_alike():
    config = study(trials=3)
    first, third = (run_spec(config, "cpu", RunKey("tiny", "sage", "torch-eager", 256, (15, 10, 5), trial=t), {})
                    for t in (1, 3))
    assert first.profile_steps == config["profile_steps"] and first.eval_nodes == config["eval_nodes"]
    assert third.profile_steps == 0 and third.eval_nodes == 0 and third.trial == 3
    timed = ("warmup_steps", "measure_steps", "whole_epoch", "seed", "batch_size")
    assert [getattr(first, f) for f in timed] == [getattr(third, f) for f in timed]
    assert "--trial" in third.arguments() and third.key.run_id.endswith("__t3")


def test_the_run_counts_the_docs_give_are_the_plans():
    import re

    running = " ".join((REPO / "docs" / "running.md").read_text().split())
    said = dict((name, int(n)) for name, n in re.findall(r"`([\w.-]+\.yaml)`,? \(?(\d+) runs", running))
    assert said, "docs/running.md names no config's run count"
    # in a fresh interpreter: other tests register variants of their own in this one
    script = ("import sys, yaml; from zerognn.workflow.plan import plan; s = yaml.safe_load(open(sys.argv[1])); "
              "c = {k: v['default'] for k, v in s['properties'].items() if 'default' in v} | "
              "yaml.safe_load(open(sys.argv[2])); print(len(plan(c, 'gpu').keys))")
    for name, count in said.items():
        out = subprocess.run([sys.executable, "-c", script, str(REPO / "workflow/schemas/config.schema.yaml"),
                              str(REPO / "workflow/config" / name)], capture_output=True, text=True, check=True)
        assert int(out.stdout) == count, name


def test_the_precision_study_compares_the_seven_variants_at_each_precision():
    config = {k: v["default"] for k, v in SCHEMA["properties"].items() if "default" in v} | yaml.safe_load(
        (REPO / "workflow/config/h200-precision.yaml").read_text())
    runs = plan(config, "gpu")
    assert len(runs.keys) == 7 * 3 * 6 and not runs.left_out
    groups = {}
    for key in runs.keys:
        groups.setdefault(key.comparison(), set()).add(key.variant)
    assert {g[COMPARISON_FIELDS.index("dtype")] for g in groups} == {"float32", "tf32", "bfloat16"}
    assert all(len(variants) == 7 and "host-mediated" in variants for variants in groups.values())


def test_every_seed_and_trial_of_a_run_to_the_target_evaluates_and_only_trial_1_is_profiled():
    config = study(trials=2, seeds=[0, 3], epochs=4, eval_every=2, datasets={"tiny": {"scale": 1.0}})
    keys = plan(config, "cpu").keys
    assert sorted({(k.seed, k.trial) for k in keys}) == [(0, 1), (0, 2), (3, 1), (3, 2)]
    specs = {(k.seed, k.trial): run_spec(config, "cpu", k, {}) for k in keys if k.variant == "torch-eager"}
    assert all(s.epochs == 4 and s.eval_every == 2 and s.eval_nodes == config["eval_nodes"] for s in specs.values())
    assert [specs[r].profile_steps for r in sorted(specs)] == [config["profile_steps"], 0] * 2
    assert specs[(3, 2)].key.run_id.endswith("__s3__t2") and "--epochs" in specs[(3, 2)].arguments()


def test_seeds_run_in_rounds_of_every_variant_like_trials():
    config = study(seeds=[0, 1, 2], variants=["torch-eager", "host-mediated"], datasets={"tiny": {"scale": 1.0}},
                   batch_sizes=[256])
    p = plan(config, "gpu")
    order = [(k.seed, k.variant) for k in p.keys]
    assert order == [(0, "torch-eager"), (0, "host-mediated"), (1, "host-mediated"), (1, "torch-eager"),
                     (2, "torch-eager"), (2, "host-mediated")]
    assert all(p.previous[b.run_id] == a.run_id for a, b in zip(p.keys, p.keys[1:]))


def test_a_slow_variant_may_train_a_subset_of_the_seeds():
    config = study(seeds=[0, 1, 2], seeds_by_variant={"torch-eager": [0]}, variants=["torch-eager", "host-mediated"],
                   datasets={"tiny": {"scale": 1.0}}, batch_sizes=[256])
    keys = plan(config, "gpu").keys
    assert sorted((k.variant, k.seed) for k in keys) == [("host-mediated", 0), ("host-mediated", 1),
                                                         ("host-mediated", 2), ("torch-eager", 0)]
    with pytest.raises(ZeroGNNError, match=r"seeds_by_variant gives torch-eager seeds \[5\] that `seeds` does not"):
        plan(study(seeds=[0], seeds_by_variant={"torch-eager": [0, 5]}), "gpu")
    with pytest.raises(ZeroGNNError, match="seeds_by_variant names unknown variants"):
        plan(study(seeds_by_variant={"no-such-variant": [0]}), "gpu")
