"""The naive variant's graph cache: evicted graphs' pools handed to the driver once per ``capacity``
evictions, before a capture and never during one (counted on the CPU with a stand-in capture, measured
on the GPU)."""

import contextlib

import pytest
import torch

from zerognn.cuda import segment_graphs
from zerognn.cuda.segment_graphs import SegmentGraphs


class _Clock:
    """perf_counter for segment_graphs: a capture takes 1 s and a release 10 s, nothing else any time."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


@pytest.fixture
def fake_capture(monkeypatch):
    """Captures on the CPU: ``fn`` runs once, in the stand-in capture; replays do nothing."""
    events = []
    clock = _Clock()
    state = {"capturing": False}

    class Graph:
        def replay(self):
            pass

    @contextlib.contextmanager
    def capturing(graph, stream):
        state["capturing"] = True
        events.append("capture")
        try:
            yield
        finally:
            state["capturing"] = False

    def release():
        assert not state["capturing"], "a release during a capture"
        events.append("release")
        clock.now += 10.0

    def fn(x):
        clock.now += 1.0
        return x + 1

    monkeypatch.setattr(torch.cuda, "CUDAGraph", Graph)
    monkeypatch.setattr(torch.cuda, "Stream", lambda: None)
    monkeypatch.setattr(segment_graphs, "capturing", capturing)
    monkeypatch.setattr(segment_graphs, "time", clock)
    return events, release, fn


def test_pools_are_released_once_per_capacity_evictions_before_the_next_capture(fake_capture):
    events, release, fn = fake_capture
    graphs = SegmentGraphs(2, release=release)
    for key in range(7):
        assert torch.equal(graphs.run(key, fn, (torch.full((3,), float(key)),)), torch.full((3,), key + 1.0))
    # evictions 1..5 come with captures 3..7; the 2nd and 4th cross a multiple of 2
    assert events == ["capture"] * 3 + ["release"] + ["capture"] * 2 + ["release"] + ["capture"] * 2
    graphs.run(6, fn, (torch.zeros(3),))  # a hit: no eviction, no release
    info = graphs.info()
    assert (info["captures"], info["graph_hits"], info["evictions"], info["pool_releases"]) == (7, 1, 5, 2)
    assert info["release_s"] == 20.0
    assert info["capture_s"] == 7.0  # the releases' seconds are not capture time


@pytest.mark.parametrize("capacity", [1, 2, 3, 5])
def test_every_capacity_releases_once_per_cache_full_of_evictions(fake_capture, capacity):
    _, release, fn = fake_capture
    graphs = SegmentGraphs(capacity, release=release)
    for key in range(17):
        graphs.run(key, fn, (torch.zeros(1),))
    info = graphs.info()
    assert info["evictions"] == 17 - capacity
    assert info["pool_releases"] == info["evictions"] // capacity
    assert info["release_s"] == 10.0 * info["pool_releases"]


def test_the_cache_releases_with_empty_cache_by_default():
    assert SegmentGraphs(2)._release is torch.cuda.empty_cache


@pytest.mark.gpu
def test_releases_leave_the_cached_graphs_replaying_correctly():
    graphs = SegmentGraphs(2)
    for n in range(1000, 1007):  # 7 shapes: 5 evictions
        x = torch.arange(n, device="cuda", dtype=torch.float32)
        assert torch.equal(graphs.run(n, lambda t: t * 2, (x,)), x * 2)
    info = graphs.info()
    assert (info["evictions"], info["pool_releases"]) == (5, 5 // 2)
    assert info["release_s"] > 0
    for n in (1005, 1006):  # the two cached graphs survived the releases: their pools are intact
        x = torch.rand(n, device="cuda")
        assert torch.equal(graphs.run(n, lambda t: t * 2, (x,)), x * 2)
    assert graphs.info()["graph_hits"] == 2


@pytest.mark.gpu
def test_reserved_memory_stays_bounded_over_many_captures():
    n = 4 * 2**20  # 16 MiB of float32: each output takes a 16 MiB segment of its graph's pool
    source = torch.ones(n, device="cuda")
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    baseline = torch.cuda.memory_reserved()
    graphs = SegmentGraphs(2)
    growth = []
    for key in range(50):  # a distinct shape every time, as in a long run: all misses
        x = source[: n - 256 * key]
        doubled, plus_one = graphs.run(x.shape, lambda t: (t * 2, t + 1), (x,))
        growth.append(torch.cuda.memory_reserved() - baseline)
    torch.cuda.synchronize()
    assert torch.equal(doubled, x * 2) and torch.equal(plus_one, x + 1)
    info = graphs.info()
    assert (info["captures"], info["evictions"], info["pool_releases"]) == (50, 48, 24)
    # After the first cache-full (2 graphs): 2 pools of 2 x 16 MiB and 2 static inputs of 16 MiB, 96 MiB.
    # With a release every 2 evictions it peaks near 176 MiB: the 2 cached graphs (one just captured), an
    # evicted graph's pool and input awaiting the next release, and a pool the last release could not free
    # because its outputs were still held then. Without releases every capture would add a 32 MiB pool for
    # good: past 1.5 GiB by the 50th.
    full = growth[1]
    assert full > 0
    assert max(growth) <= 3 * full, [g // 2**20 for g in growth]
