"""The committed determinism study the docs render (docs/templates/studies.yaml) shows what docs/determinism.md and
the README say: in deterministic mode zerognn and host-mediated lose exactly the same at every step of
every configuration, a whole epoch included, and so does every trial (a fresh process, on either machine) of
each; in the default mode they do not."""

import itertools
import json

import pytest

from tests.records.rendered import study_dir
from zerognn.records import RunKey

RUNS = study_dir("determinism") / "runs"
CONFIGS = [("sage", 256), ("sage", 1024), ("sage", 4096), ("gcn", 1024), ("gat", 1024)]


def record(model: str, variant: str, batch: int, deterministic: bool, trial: int = 1) -> dict:
    key = RunKey("products-like", model, variant, batch, (15, 10, 5), deterministic=deterministic, trial=trial)
    r = json.loads((RUNS / f"{key.run_id}.json").read_text())
    assert r["config"].get("deterministic", False) is deterministic
    return r


@pytest.mark.parametrize("model, batch", CONFIGS)
def test_deterministic_zerognn_and_host_mediated_lose_the_same_at_every_step(model, batch):
    zero, mediated = (record(model, v, batch, True) for v in ("zerognn", "host-mediated"))
    assert zero["losses"] == mediated["losses"]  # floats from JSON: equal values are equal bits
    assert zero["accuracy"] == mediated["accuracy"]
    epoch = zero["metrics"]["steps_per_epoch"]
    assert zero["metrics"]["epoch_s_measured"] and len(zero["losses"]) >= 2 * epoch  # a whole epoch among them
    assert zero["environment"]["git_commit"] == mediated["environment"]["git_commit"]


@pytest.mark.parametrize("model, batch", CONFIGS)
def test_in_the_default_mode_they_do_not(model, batch):
    zero, mediated = (record(model, v, batch, False) for v in ("zerognn", "host-mediated"))
    assert zero["losses"] != mediated["losses"]


def trials(model: str, variant: str, batch: int, deterministic: bool) -> list[dict]:
    """Every trial of one configuration, trial 1 first (the config plans six)."""
    found = []
    for trial in itertools.count(1):
        key = RunKey("products-like", model, variant, batch, (15, 10, 5), deterministic=deterministic, trial=trial)
        if not (RUNS / f"{key.run_id}.json").exists():
            break
        found.append(record(model, variant, batch, deterministic, trial))
    assert len(found) >= 6, f"{len(found)} trials"
    return found


@pytest.mark.parametrize("variant", ["zerognn", "host-mediated"])
@pytest.mark.parametrize("model, batch", CONFIGS)
def test_every_deterministic_trial_loses_the_same_as_the_first(model, batch, variant):
    runs = trials(model, variant, batch, True)
    shared = min(len(r["losses"]) for r in runs)
    assert shared >= 2 * runs[0]["metrics"]["steps_per_epoch"]
    assert all(r["losses"][:shared] == runs[0]["losses"][:shared] for r in runs[1:])


@pytest.mark.parametrize("variant", ["zerognn", "host-mediated"])
@pytest.mark.parametrize("model, batch", CONFIGS)
def test_every_default_trial_loses_differently_from_the_first(model, batch, variant):
    runs = trials(model, variant, batch, False)
    shared = min(len(r["losses"]) for r in runs)
    assert all(r["losses"][:shared] != runs[0]["losses"][:shared] for r in runs[1:])
