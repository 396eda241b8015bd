"""scripts/whole_rounds.py's invocations run in a process group of their own, which is stopped whole (SIGTERM,
then SIGKILL after a grace period) when an invocation outlasts its timeout or the script is told to stop: no run
outlives it. The invocations here are small Python programs that start a child of their own, as Snakemake does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
from whole_rounds import run_in_group  # noqa: E402

sys.path.remove(str(REPO / "scripts"))

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")


def leader(pid_file: Path, ignore_term: bool = False) -> list[str]:
    """A program that starts a long child, writes the child's pid, says so and waits (ignoring SIGTERM if told)."""
    code = (
        "import signal, subprocess, sys, time\n"
        + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_term else "")
        + f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(120)\n")
    return [sys.executable, "-c", code]


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended but not yet reaped by whoever adopted it, does not)."""
    if not Path("/proc").is_dir():  # no process table to read: whether it can be signalled
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def gone(pid: int, within: float = 10.0) -> bool:
    end = time.monotonic() + within
    while alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    return not alive(pid)


def child_pid(pid_file: Path, within: float = 30.0) -> int:
    end = time.monotonic() + within
    while not (pid_file.is_file() and pid_file.read_text()) and time.monotonic() < end:
        time.sleep(0.05)
    return int(pid_file.read_text())


def test_a_finished_command_gives_its_output_and_status():
    done = run_in_group([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"])
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")


@pytest.mark.parametrize("ignore_term", [False, True], ids=["ends on SIGTERM", "ignores SIGTERM"])
def test_a_timeout_stops_the_whole_group_and_keeps_what_it_wrote(tmp_path, ignore_term):
    began = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as stopped:
        run_in_group(leader(tmp_path / "pid", ignore_term), timeout=3, grace=1)
    assert time.monotonic() - began < 30
    assert gone(child_pid(tmp_path / "pid"))  # the leader's own child too, not only the leader
    assert stopped.value.partial_output == "started\n"


def test_a_stop_of_the_script_stops_the_running_group(tmp_path):
    script = (f"import sys; sys.path.insert(0, {str(REPO / 'scripts')!r})\n"
              "from whole_rounds import Stopped, run_in_group, stop_on_signals\n"
              "stop_on_signals()\n"
              "try:\n"
              f"    run_in_group({leader(tmp_path / 'pid')!r}, grace=5)\n"
              "except Stopped as e:\n"
              "    print('stopped by', e, flush=True); sys.exit(143)\n")
    outer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    child = child_pid(tmp_path / "pid")
    outer.send_signal(signal.SIGTERM)
    out, _ = outer.communicate(timeout=60)
    assert (outer.returncode, out) == (143, "stopped by SIGTERM\n")
    assert gone(child)
