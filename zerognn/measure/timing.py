"""Step time, the suite's main number, measured the same way for every variant.

* ``time_steps``: each step of a block. A host-issued step is timed by CUDA events recorded around it
  on the GPU (a host clock on the CPU). A device-driven variant runs the block as one launch, and each
  step's time comes from the GPU clock it stamps as the step begins, checked against CUDA events around
  the whole block: the stamps may not exceed the events, and must cover most of them.
* ``time_block_s``: the wall time of a block, from an idle GPU to the last update done (the variant's
  deferred work included): a whole epoch.
* ``micro_time_us``: the median of repeated CUDA-event timings of one operator call (``zerognn.bench``).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Protocol

import torch

from ..errors import ZeroGNNError

# The device's clock may not exceed the wall clock around a block; it may miss a little of it (the launch
# and the loop's first kernel come before the first stamp), not most of it.
DEVICE_CLOCK_SLACK_MS = 0.02
DEVICE_CLOCK_MIN_SHARE = 0.8


class Steps(Protocol):
    """What timing needs of a variant (``zerognn.variants.Variant``)."""

    name: str
    device_driven: bool

    def run_steps(self, first: int, count: int) -> None: ...
    def step_stamps_ns(self, first: int, count: int) -> list[int]: ...
    def finish(self) -> None: ...


class Counter(Protocol):
    count: int


def time_steps(steps: Steps, first: int, count: int, device: torch.device, captures: Counter | None) -> list[float]:
    """Run global steps ``first`` .. ``first + count - 1``; each one's time in ms. ``captures`` counts the CUDA
    Graph captures (a re-capture inside a device-driven block is host time its clock does not see)."""
    if steps.device_driven:
        return _device_clock_steps(steps, first, count, device, captures)
    if device.type == "cuda":
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(count)]
        for i, (start, end) in enumerate(events):
            start.record()
            steps.run_steps(first + i, 1)
            end.record()
        torch.cuda.synchronize(device)
        return [start.elapsed_time(end) for start, end in events]
    times = []
    for i in range(count):
        started = time.perf_counter()
        steps.run_steps(first + i, 1)
        times.append((time.perf_counter() - started) * 1e3)
    return times


def _device_clock_steps(steps: Steps, first: int, count: int, device: torch.device,
                        captures: Counter | None) -> list[float]:
    steps.run_steps(first, 0)  # the previous block has ended: the events time this block alone
    captured = None if captures is None else captures.count
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    steps.run_steps(first, count)
    end.record()
    torch.cuda.synchronize(device)
    stamps = steps.step_stamps_ns(first, count)
    step_ms = [(b - a) / 1e6 for a, b in zip(stamps, stamps[1:])]
    device_ms, event_ms = sum(step_ms), start.elapsed_time(end)
    recaptured = captures is not None and captures.count != captured
    too_little = device_ms < DEVICE_CLOCK_MIN_SHARE * event_ms and not recaptured
    if min(step_ms) <= 0 or device_ms > event_ms + DEVICE_CLOCK_SLACK_MS or too_little:
        raise ZeroGNNError(f"{steps.name}: its device clock gives {device_ms:.3f} ms for steps {first}.."
                           f"{first + count - 1} (shortest {min(step_ms):.4f} ms) and CUDA events {event_ms:.3f} ms "
                           f"around them; the stamps are wrong: this is a bug")
    return step_ms


def time_block_s(steps: Steps, first: int, count: int, device: torch.device) -> float:
    """Seconds from an idle GPU to the last of steps ``first`` .. ``first + count - 1`` done, deferred work
    (a rolled-back step's re-run) included."""
    steps.finish()
    synchronize(device)
    started = time.perf_counter()
    steps.run_steps(first, count)
    steps.finish()
    synchronize(device)
    return time.perf_counter() - started


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def micro_time_us(fn: Callable[[], object], warmup: int, repeats: int) -> float:
    """The median over ``repeats`` calls of ``fn`` (after ``warmup`` calls) of its CUDA-event time, in µs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def queued_gpu_time_us(fn: Callable[[], object], calls: int, repeats: int, sleep_cycles: int = 5_000_000) -> float:
    """The GPU time of one call of ``fn`` in µs: the median over ``repeats`` batches of ``calls`` calls, each batch
    queued behind ``torch.cuda._sleep(sleep_cycles)`` (5M cycles: ~2.5 ms on an H200) so that the host's launch
    cost never shows while the host stays ahead, CUDA events around the batch; one call first to warm up."""
    fn()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(sleep_cycles)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / calls)
    return statistics.median(times)
