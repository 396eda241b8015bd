"""Host load: spinning processes on the run's own cores, always stopped."""

import os

import pytest

from zerognn.errors import ZeroGNNError
from zerognn.lifetime import process_alive
from zerognn.measure.host_load import host_load, run_affinity


def test_the_load_runs_on_the_runs_cores_and_stops():
    with host_load(2) as pids:
        assert len(pids) == 2 and all(process_alive(p) for p in pids)
        if hasattr(os, "sched_getaffinity"):
            assert all(os.sched_getaffinity(p) == run_affinity() for p in pids)
    assert not any(process_alive(p) for p in pids)


def test_the_load_stops_when_the_measured_code_fails():
    with pytest.raises(RuntimeError), host_load(1) as pids:
        raise RuntimeError("a failing step")
    assert not process_alive(pids[0])


def test_no_load_starts_nothing_and_a_negative_one_is_an_error():
    with host_load(0) as pids:
        assert pids == []
    with pytest.raises(ZeroGNNError, match="host_load"):
        with host_load(-1):
            pass
