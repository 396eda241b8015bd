"""A profiled window leaves the run's log free of kineto's lines and keeps everything else, in order."""

import subprocess
import sys
import textwrap

from zerognn.measure.profiler_noise import KINETO_LINE


def test_kineto_lines_are_recognised_and_nothing_else():
    assert KINETO_LINE.match(b"USDT:2026-12-02 10:04:46 1120:1120 SyncActivityProfilerHandler.cpp:52] profiler_start\n")
    assert KINETO_LINE.match(b"STAGE:2026-12-02 10:04:54 1140:1140 SyncActivityProfilerHandler.cpp:51] Completed\n")
    assert not KINETO_LINE.match(b"[run] profiling 5 steps\n")
    assert not KINETO_LINE.match(b"USDT: something a user printed\n")


def test_a_profiled_window_writes_only_its_own_lines_to_stderr():
    script = textwrap.dedent("""
        import sys
        import torch
        from zerognn.measure.trace import profile_window
        print("before", file=sys.stderr)
        def step(i):
            torch.ones(8) + i
            if i == 1:
                print("inside", file=sys.stderr)
        profile_window(step, 3, "cpu")
        print("after", file=sys.stderr)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == ["before", "inside", "after"], done.stderr
