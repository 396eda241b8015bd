"""Host interference: CPU-bound processes that share the training process's cores while it is measured.

``host_load(n)`` starts ``n`` processes that spin on the CPU, on the cores the run itself may use (its
own affinity, which they are pinned to), and stops them on exit — on every exit path, and if the run
is killed outright they die with it (Linux's parent-death signal). They model what a shared GPU node
runs beside a training job: data loading, other jobs' host threads, a busy login shell. A variant
whose host launches every step waits for a core; one whose GPU drives its own steps should not.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Iterator

from ..errors import ZeroGNNError

SPIN = "while True:\n    pass\n"
PR_SET_PDEATHSIG = 1


def run_affinity() -> set[int]:
    """The cores this process may run on (all of them where the platform cannot say)."""
    if hasattr(os, "sched_getaffinity"):
        return set(os.sched_getaffinity(0))
    return set(range(os.cpu_count() or 1))


def _pinned_and_tied_to_parent(cores: set[int]):
    def prepare() -> None:
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, cores)
        if sys.platform.startswith("linux"):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    return prepare


@contextlib.contextmanager
def host_load(processes: int) -> Iterator[list[int]]:
    """Keep ``processes`` CPU-bound processes running on this process's cores; yields their pids."""
    if processes < 0:
        raise ZeroGNNError(f"host_load must be a number of processes >= 0, got {processes}")
    started: list[subprocess.Popen] = []
    try:
        prepare = _pinned_and_tied_to_parent(run_affinity())
        for _ in range(processes):
            started.append(subprocess.Popen([sys.executable, "-c", SPIN], stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                            preexec_fn=prepare))
        yield [p.pid for p in started]
    finally:
        for p in started:
            p.kill()
        for p in started:
            p.wait()
