import json
from datetime import datetime

import pytest
import torch

from zerognn.measure import collect_environment, environment


def test_environment_on_cpu():
    env = collect_environment("cpu")
    json.dumps(env, allow_nan=False)
    assert env["device"] == "cpu" and env["gpu_name"] is None
    assert env["torch"] == str(torch.__version__) and env["python"]
    assert set(env) >= {"cuda", "numpy", "cuda_core", "cuda_bindings", "snakemake", "ogb", "driver_version"}
    assert env["git_dirty"] in (True, False, None)
    assert env["cpu_count"] >= 1 and env["hostname"]
    assert datetime.fromisoformat(env["utc_time"]).utcoffset().total_seconds() == 0


def test_missing_tools_give_nulls(monkeypatch):
    monkeypatch.delenv("ZEROGNN_GIT_COMMIT", raising=False)
    monkeypatch.delenv("ZEROGNN_GIT_DIRTY", raising=False)
    monkeypatch.setattr(environment.shutil, "which", lambda name: None)
    monkeypatch.setattr(environment, "_version", lambda name: None)
    monkeypatch.setattr(environment, "_nvml_driver_version", lambda: None)
    env = collect_environment("cpu")
    assert env["git_commit"] is None and env["git_dirty"] is None and env["git_source"] is None
    assert env["snakemake"] is None
    assert env["driver_version"] is None


@pytest.mark.gpu
def test_environment_on_cuda():
    env = collect_environment("cuda")
    assert env["gpu_name"] and env["gpu_count"] >= 1 and env["driver_version"] and env["cuda"]


def test_commit_can_be_stated_for_a_tree_without_git(monkeypatch):
    from zerognn.measure import provenance

    monkeypatch.setenv("ZEROGNN_GIT_COMMIT", "0123abcd")
    monkeypatch.setenv("ZEROGNN_GIT_DIRTY", "0")
    monkeypatch.setattr(provenance, "_text", lambda args, repo: None)  # no usable git metadata
    env = collect_environment("cpu")
    assert (env["git_commit"], env["git_dirty"], env["git_source"]) == ("0123abcd", False, "environment")
    assert len(env["source_sha256"]) == 64
