"""The peak-memory meter: the window's peak survives local measurements and counts held graph memory."""

import pytest
import torch

from zerognn.measure.memory import PeakMemory


class FakeAllocator:
    """PyTorch's allocator counters, driven by hand."""

    def __init__(self):
        self.live = self.peak = self.cached = self.reserved_peak = 0
        self.emptied = 0

    def alloc(self, n):
        self.live += n
        self.peak = max(self.peak, self.live)
        self.reserved_peak = max(self.reserved_peak, self.reserved())

    def free(self, n):
        self.live -= n

    def allocated(self):
        return self.live

    def max_allocated(self):
        return self.peak

    def reset_peak(self):
        self.peak = self.live
        self.reserved_peak = self.reserved()

    def reserved(self):
        return self.live + self.cached

    def max_reserved(self):
        return self.reserved_peak

    def empty_cache(self):
        self.emptied += 1


def test_a_capture_inside_the_window_does_not_hide_the_steps_before_it():
    alloc = FakeAllocator()
    meter = PeakMemory("cuda", alloc)
    alloc.alloc(100)                  # resident
    meter.hold(40)                    # a graph whose replays use 40 hidden bytes
    meter.start_window()
    alloc.alloc(500)                  # a step before the overflow: a 500-byte temporary
    alloc.free(500)
    meter.hold(0)                     # the old graph is released for a re-capture
    with meter.capture() as capture:
        alloc.alloc(60)               # the new graph's step tensors...
        alloc.free(60)                # ...freed for the allocator when capture ends
    meter.hold(capture.working_set_bytes)
    assert capture.working_set_bytes == 60 and alloc.emptied == 1
    # the step before the capture (resident + temporary + the old graph's held bytes), not the capture's 160
    assert meter.peak_bytes() == 640
    alloc.alloc(5)
    assert meter.peak_bytes() == 640


def test_held_bytes_count_while_held():
    alloc = FakeAllocator()
    meter = PeakMemory("cuda", alloc)
    alloc.alloc(100)
    meter.hold(300)
    meter.start_window()
    assert meter.peak_bytes() == 400  # steady replays: allocated + the graph's working set
    meter.hold(50)
    alloc.alloc(20)
    assert meter.peak_bytes() == 400
    meter.start_window()
    assert meter.peak_bytes() == 170  # a new window forgets the old peak, keeps what is held


def test_capture_pool_growth_and_peak():
    alloc = FakeAllocator()
    meter = PeakMemory("cuda", alloc)
    meter.start_window()
    with meter.capture() as capture:
        alloc.alloc(80)
        alloc.cached += 48            # the pool keeps blocks beyond the live ones
        alloc.free(30)
    assert (capture.working_set_bytes, capture.pool_bytes) == (30, 98)
    assert meter.peak_bytes() == 80


def test_the_cpu_meter_measures_nothing():
    meter = PeakMemory(torch.device("cpu"))
    meter.start_window()
    meter.hold(10)
    with meter.capture() as capture:
        pass
    assert meter.peak_bytes() is None and meter.allocated() is None and not meter.enabled
    assert capture.working_set_bytes == 0


def test_captures_are_counted_and_the_patch_always_undone():
    from zerognn.measure.captures import counting_cuda_graph_captures

    original = torch.cuda.CUDAGraph.capture_begin
    with pytest.raises(RuntimeError, match="boom"):
        with counting_cuda_graph_captures() as count:
            assert torch.cuda.CUDAGraph.capture_begin is not original
            raise RuntimeError("boom")
    assert torch.cuda.CUDAGraph.capture_begin is original and count.count == 0


def test_the_reserved_peak_covers_cached_blocks_and_never_falls_below_the_allocated_one():
    alloc = FakeAllocator()
    meter = PeakMemory("cuda", alloc)
    alloc.alloc(100)                 # resident
    meter.start_window()
    alloc.alloc(300)                 # a step's temporaries...
    alloc.free(300)
    alloc.cached += 300              # ...freed into the cache: still held from the device
    assert meter.peak_bytes() == 400 and meter.peak_reserved_bytes() == 400
    alloc.cached -= 250              # a graph's pool takes 250 of the cached bytes: its working set is held
    meter.hold(250)
    alloc.cached += 250
    assert meter.peak_bytes() == 400 and meter.peak_reserved_bytes() == 400
    alloc.cached += 500              # the cache grows (another graph pool): reserved only
    alloc.alloc(0)
    assert meter.peak_bytes() == 400 and meter.peak_reserved_bytes() == 900
