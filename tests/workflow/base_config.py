"""The config the workflow tests start from: their own, not ``workflow/config/default.yaml``, so that what a
user puts in the shipped default (a baseline of theirs, another dataset) cannot break the tests."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

BASE_CONFIG = {
    "data_dir": "data", "results_dir": "results", "figures_dir": "figures", "logs_dir": "logs",
    "target": "auto",
    "datasets": {"tiny": {"scale": 1.0}, "arxiv-like": {"scale": 1.0},
                 "products-like": {"scale": 1.0, "needs_gpu": True}},
    "variants": "all", "variant_modules": [],
    "models": ["sage"], "batch_sizes": [256, 1024], "fanouts": [15, 10, 5], "gpus": [1],
    "hidden": 256, "lr": 0.003, "seeds": [0], "warmup_steps": 5, "measure_steps": 20, "profile_steps": 5,
    "eval_nodes": 1024,
}


def base_config(**overrides) -> dict:
    """A fresh copy of the tests' study config with ``overrides`` applied."""
    return copy.deepcopy(BASE_CONFIG) | overrides


def write_config(path: Path, **overrides) -> Path:
    path.write_text(yaml.safe_dump(base_config(**overrides), sort_keys=False))
    return path
