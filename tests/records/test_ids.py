"""The run key: the one place a run id is written and read back."""

import re

import pytest

from zerognn.errors import ZeroGNNError
from zerognn.records.ids import COMPARISON_FIELDS, CONFIGURATION_FIELDS, KEY_FIELDS, RUN_ID_WILDCARD, RunKey


def test_run_id_rule():
    assert RunKey("products-like", "sage", "zerognn", 1024, [15, 10, 5], 1).run_id == (
        "products-like__sage__zerognn__b1024__f15-10-5__g1"
    )
    assert RunKey("tiny", "gat", "host-mediated", 64, (5, 3), 2, host_load=16).run_id == (
        "tiny__gat__host-mediated__b64__f5-3__g2__h16"
    )


@pytest.mark.parametrize("key", [
    RunKey("products-like", "sage", "zerognn", 1024, (15, 10, 5)),
    RunKey("ogbn-arxiv", "gcn", "my_baseline+v2", 7, (1,), 16, 3),
    RunKey("a.b", "x", "y-z", 1, (2, 2, 2, 2), 1, 0),
    RunKey("tiny", "sage", "zerognn", 64, (5, 3), host_load=2, deterministic=True, trial=10),
    RunKey("tiny", "sage", "zerognn", 64, (5, 3), dtype="tf32", seed=4, trial=2),
])
def test_a_run_id_parses_back_to_its_key(key):
    assert RunKey.parse(key.run_id) == key
    assert re.fullmatch(RUN_ID_WILDCARD, key.run_id)  # the workflow's run rule matches it


@pytest.mark.parametrize("text", [
    "tiny__sage__zerognn__b64__f5-3", "tiny__sage__zerognn__b64__f5-3__g1__h0", "tiny__sage__zerognn__b064__f5__g1",
    "tiny__sage__zerognn__b64__f5__g1.json", "tiny__sage__a__b__b64__f5__g1", "",
])
def test_what_is_not_a_run_id_is_refused(text):
    with pytest.raises(ZeroGNNError, match="is not a run id"):
        RunKey.parse(text)


@pytest.mark.parametrize("bad", ["a__b", "with space", "a/b", ""])
def test_names_that_break_ids_or_paths_are_refused(bad):
    with pytest.raises(ZeroGNNError, match="variant name"):
        RunKey("tiny", "sage", bad, 256, [5], 1)


def test_a_key_from_a_record_config_or_a_summary_row():
    config = {"dataset": "tiny", "model": "sage", "variant": "v", "batch_size": 8, "fanouts": [5, 3], "gpus": 1,
              "hidden": 64}
    assert RunKey.of(config) == RunKey("tiny", "sage", "v", 8, (5, 3))  # no host_load: 0
    row = dict(config, fanouts="5-3", host_load=4)
    assert RunKey.of(row).run_id == "tiny__sage__v__b8__f5-3__g1__h4"


def test_runs_compare_on_every_key_field_but_the_variant_the_seed_and_the_trial():
    assert set(KEY_FIELDS) - set(CONFIGURATION_FIELDS) == {"seed", "trial"}
    assert set(KEY_FIELDS) - set(COMPARISON_FIELDS) == {"variant", "seed", "trial"}
    one, other = RunKey("tiny", "sage", "a", 8, (5,)), RunKey("tiny", "sage", "b", 8, (5,))
    assert one.comparison() == other.comparison() != RunKey("tiny", "sage", "a", 8, (5,), host_load=1).comparison()


def test_trials_of_a_configuration_share_its_id_but_for_the_suffix_of_trial_k_above_1():
    first = RunKey("tiny", "sage", "zerognn", 64, (5, 3))
    tenth = RunKey("tiny", "sage", "zerognn", 64, (5, 3), trial=10)
    assert first.run_id == "tiny__sage__zerognn__b64__f5-3__g1" and tenth.run_id == first.run_id + "__t10"
    assert tenth.configuration() == first and tenth.comparison() == first.comparison()
    with pytest.raises(ZeroGNNError, match="trial must be a positive integer, got 0"):
        RunKey("tiny", "sage", "zerognn", 64, (5, 3), trial=0)


def test_seeds_repeat_a_configuration_like_trials_with_their_own_suffix():
    first = RunKey("tiny", "sage", "zerognn", 64, (5, 3))
    seeded = RunKey("tiny", "sage", "zerognn", 64, (5, 3), seed=3, trial=2)
    assert seeded.run_id == first.run_id + "__s3__t2" and RunKey.parse(seeded.run_id) == seeded
    assert seeded.configuration() == first and seeded.comparison() == first.comparison()
    with pytest.raises(ZeroGNNError, match="seed must be a non-negative integer, got -1"):
        RunKey("tiny", "sage", "zerognn", 64, (5, 3), seed=-1)
