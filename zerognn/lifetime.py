"""A command ends cleanly when it is told to stop, and with the pipeline that started it.

SIGTERM becomes ``SystemExit`` in the main thread, so ``finally`` blocks run: temporary files and
directories are removed and output locks released. A process started by the pipeline also watches
the Snakemake process named in ``ZEROGNN_PARENT`` (the rules set it to ``$PPID@$HOSTNAME``: the
process that started the rule's shell, on the host it runs on): if that process disappears — killed
with SIGKILL, say — the command stops itself instead of training on as an orphan beside the re-run
that ``snakemake --unlock`` would start. Ranks that srun starts on other hosts watch nothing.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time

PARENT_ENV = "ZEROGNN_PARENT"
POLL_S = 1.0
EXIT_ON_SIGTERM = 128 + signal.SIGTERM


def _stop(signum, frame) -> None:
    raise SystemExit(EXIT_ON_SIGTERM)


def end_cleanly() -> None:
    """Turn SIGTERM into SystemExit; with ``ZEROGNN_PARENT`` naming a process on this host, stop when
    that process is gone."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _stop)
    pid, _, host = os.environ.get(PARENT_ENV, "").partition("@")
    if pid.isdigit() and int(pid) > 1 and host == socket.gethostname():
        threading.Thread(target=_watch, args=(int(pid),), name="zerognn-parent-watch", daemon=True).start()


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs on this host (a zombie — killed, not yet reaped by its parent — does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _watch(pid: int) -> None:
    while process_alive(pid):
        time.sleep(POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)
