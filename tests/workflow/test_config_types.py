"""Command-line config values typed as the workflow's schema says."""

from pathlib import Path

import yaml

from zerognn.workflow.config_types import coerce

SCHEMA = yaml.safe_load((Path(__file__).resolve().parents[2] / "workflow/schemas/config.schema.yaml").read_text())


def test_strings_become_what_the_schema_asks_for():
    given = {"batch_sizes": ["64", "128"], "fanouts": ["15", "10"], "lr": "0.01", "seeds": ["3"],
             "gpus_per_node": "8", "datasets": {"tiny": {"scale": "0.5", "needs_gpu": "true"}},
             "batch_sizes_by_model": {"gcn": ["1024"]}, "variants": ["zerognn"], "data_dir": "123",
             "target": "gpu"}
    assert coerce(given, SCHEMA) == {
        "batch_sizes": [64, 128], "fanouts": [15, 10], "lr": 0.01, "seeds": [3], "gpus_per_node": 8,
        "datasets": {"tiny": {"scale": 0.5, "needs_gpu": True}}, "batch_sizes_by_model": {"gcn": [1024]},
        "variants": ["zerognn"], "data_dir": "123", "target": "gpu"}


def test_what_does_not_fit_is_left_for_the_schema_to_reject():
    assert coerce({"batch_sizes": ["many", "0"], "lr": "fast", "hidden": 7.5}, SCHEMA) == {
        "batch_sizes": ["many", 0], "lr": "fast", "hidden": 7.5}


def test_a_key_written_twice_is_found_with_both_lines(tmp_path):
    from zerognn.workflow.config_types import duplicate_key_problem

    path = tmp_path / "c.yaml"
    path.write_text("models: [sage]\nbatch_sizes: [256]\nmodels: [gcn]\n")
    assert duplicate_key_problem(str(path)) == f"{path}: key 'models' appears twice (lines 1 and 3); keep one"
    path.write_text("datasets:\n  tiny: {scale: 1.0}\n  tiny: {scale: 0.5}\n")
    assert "key 'tiny' appears twice (lines 2 and 3)" in duplicate_key_problem(str(path))
    path.write_text("models: [sage]\nbatch_sizes: [256]\n")
    assert duplicate_key_problem(str(path)) is None


def test_a_renamed_key_says_what_replaced_it():
    from zerognn.workflow.config_types import schema_problem

    assert schema_problem({"seed": 0}, SCHEMA) == "seed: this key is now `seeds`, a list (one training run per " \
                                                  "seed, e.g. seeds: [0]); rename it"
