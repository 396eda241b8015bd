"""Where a run's wall time goes, from process start to its record: ``phase_s`` in the record.

A run names its phases as it enters them (``clock.phase("dataset load")``); each phase is wall time
between two points where the device is idle (the phase synchronises it on the way out), so the phases
and the time before the first of them (``start``: interpreter start-up and imports, from the process's
start time in ``/proc``) add up to the run's wall time until the record is built. Writing the record
comes after and is logged, not recorded.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import Any

START = "start"


def process_age_s() -> float | None:
    """Seconds since this process started (Linux ``/proc``; None elsewhere), to 10 ms."""
    try:
        with open("/proc/self/stat") as stat:
            # Field 22, after the parenthesised command name (which may hold spaces): start time in clock ticks.
            started = int(stat.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
        with open("/proc/uptime") as uptime:
            return max(0.0, float(uptime.read().split()[0]) - started)
    except (OSError, ValueError, IndexError):
        return None


class PhaseClock:
    """Wall seconds per named phase of this process, in the order first entered."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._started = time.perf_counter()
        self._age_at_start = process_age_s()

    @contextlib.contextmanager
    def phase(self, name: str, device: Any = None) -> Iterator[None]:
        """Time the block as phase ``name`` (added to it if entered again); with a CUDA ``device`` the block's
        GPU work is waited for, so it is counted here and not in the next phase."""
        begin = time.perf_counter()
        try:
            yield
        finally:
            if device is not None and getattr(device, "type", None) == "cuda":
                import torch

                torch.cuda.synchronize(device)
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - begin

    def elapsed_s(self) -> float | None:
        """Seconds since the process started (None where that is unknown)."""
        if self._age_at_start is None:
            return None
        return self._age_at_start + time.perf_counter() - self._started

    def record(self) -> dict[str, float]:
        """``start`` (process start to this clock's creation, when known), then each phase, then ``total``."""
        out = {} if self._age_at_start is None else {START: self._age_at_start}
        out.update(self.seconds)
        total = self.elapsed_s()
        if total is not None:
            out["total"] = total
        return {name: round(seconds, 4) for name, seconds in out.items()}
