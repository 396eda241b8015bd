"""Keeps the profiler's own chatter out of a run's log.

Kineto (torch.profiler's backend) writes ``USDT:`` and ``STAGE:`` lines from C++ straight to the process's
standard error at every profiler start and stop, whatever its log level, and torch.profiler warns that it
"clears events at the end of each cycle" (a one-cycle window has nothing to clear). ``quiet_profiler``
holds standard error in a temporary file for the block and writes everything else back afterwards, in
order, so a run's log says what the run did and nothing the profiler did.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import warnings
from collections.abc import Iterator

# Kineto's log lines: a tag, a date and time, pid:tid, then the source file.
KINETO_LINE = re.compile(rb"^(USDT|STAGE|INFO|WARNING):\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \d+:\d+ \S+\.cpp:\d+\]")


@contextlib.contextmanager
def quiet_profiler() -> Iterator[None]:
    """Run the block with kineto's log lines and torch.profiler's cycle warning filtered from standard error."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Profiler clears events at the end of each cycle")
        try:
            fd = sys.stderr.fileno()
        except (AttributeError, OSError, ValueError):  # no real stderr (a notebook, pytest's capture)
            yield
            return
        sys.stderr.flush()
        saved = os.dup(fd)
        with tempfile.TemporaryFile() as held:
            os.dup2(held.fileno(), fd)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, fd)
                os.close(saved)
                held.seek(0)
                kept = memoryview(b"".join(line for line in held if not KINETO_LINE.match(line)))
                while kept:
                    kept = kept[os.write(fd, kept):]
