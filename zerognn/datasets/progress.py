"""Progress lines for long dataset builds: phase, amount done of the total, rate, elapsed time."""

from __future__ import annotations

import logging
import resource
import sys
import time

log = logging.getLogger(__name__)


def _count(value: float) -> str:
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:.2f}{suffix}"
    return f"{value:.0f}"


class Progress:
    """Logs 'phase: done/total unit (pct), rate unit/s, elapsed' at most every ``every_s`` seconds, and at
    the end (``done == total``)."""

    def __init__(self, phase: str, total: int | None, unit: str, every_s: float = 10.0) -> None:
        self.phase, self.total, self.unit, self.every_s = phase, total, unit, every_s
        self.start = self.last = time.monotonic()

    def step(self, done: int) -> None:
        now = time.monotonic()
        if now - self.last < self.every_s and done != self.total:
            return
        self.last = now
        elapsed = now - self.start
        share = f" ({100 * done / self.total:.0f}%)" if self.total else ""
        rate = f", {_count(done / elapsed)} {self.unit}/s" if elapsed > 0 else ""
        log.info("%s: %s/%s %s%s%s, %.1f s", self.phase, _count(done), _count(self.total) if self.total else "?",
                 self.unit, share, rate, elapsed)


def peak_host_memory_bytes() -> int:
    """This process's peak resident set so far (file pages it mapped count too)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024
