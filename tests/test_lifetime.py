"""Processes end cleanly: SIGTERM runs cleanup, an orphaned run stops, one writer per output."""

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from zerognn.errors import ZeroGNNError
from zerognn.outputs import check_writable_dir, check_writable_file, exclusive_output


def python(code: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kwargs)


def wait_for_line(proc: subprocess.Popen, text: str) -> None:
    line = proc.stdout.readline()
    assert text in line, line + proc.stdout.read()


def test_sigterm_runs_cleanup_and_exits_143(tmp_path):
    marker = tmp_path / "cleaned"
    proc = python(f"""
        import time
        from zerognn.lifetime import end_cleanly
        end_cleanly()
        try:
            print("ready", flush=True)
            time.sleep(60)
        finally:
            open({str(marker)!r}, "w").close()
    """)
    wait_for_line(proc, "ready")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 128 + signal.SIGTERM
    assert marker.exists()


def test_a_process_whose_parent_dies_stops_itself(tmp_path):
    parent = python("import time; print('ready', flush=True); time.sleep(60)")
    wait_for_line(parent, "ready")
    env = dict(os.environ, ZEROGNN_PARENT=f"{parent.pid}@{socket.gethostname()}")
    child = python("""
        import time
        from zerognn.lifetime import end_cleanly
        end_cleanly()
        print("ready", flush=True)
        time.sleep(60)
    """, env=env)
    wait_for_line(child, "ready")
    time.sleep(1.5)
    assert child.poll() is None  # the parent lives: the child runs on
    parent.kill()
    parent.wait()
    assert child.wait(timeout=20) == 128 + signal.SIGTERM


def test_a_parent_on_another_host_is_not_watched():
    env = dict(os.environ, ZEROGNN_PARENT="999999999@some-other-host")
    child = python("""
        import time
        from zerognn.lifetime import end_cleanly
        end_cleanly()
        time.sleep(2.5)
        print("survived", flush=True)
    """, env=env)
    assert child.wait(timeout=20) == 0 and "survived" in child.stdout.read()


def test_one_writer_per_output(tmp_path):
    out = tmp_path / "runs" / "r.json"
    holder = python(f"""
        import time
        from zerognn.outputs import exclusive_output
        with exclusive_output({str(out)!r}):
            print("ready", flush=True)
            time.sleep(60)
    """)
    wait_for_line(holder, "ready")
    with pytest.raises(ZeroGNNError, match=rf"r.json is being written by zerognn pid {holder.pid}"):
        with exclusive_output(out):
            pass
    holder.kill()  # SIGKILL: no cleanup runs, yet the lock goes with the process
    holder.wait()
    with exclusive_output(out):
        pass
    assert list((tmp_path / "runs").iterdir()) == []  # no lock file left behind


def test_output_paths_are_checked_before_any_work(tmp_path):
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "a_dir").mkdir()
    assert check_writable_file(tmp_path / "new" / "deeper" / "r.json") == tmp_path / "new" / "deeper" / "r.json"
    with pytest.raises(ZeroGNNError, match="is a directory"):
        check_writable_file(tmp_path / "a_dir")
    with pytest.raises(ZeroGNNError, match="is a file, not a directory"):
        check_writable_file(tmp_path / "a_file" / "r.json")
    with pytest.raises(ZeroGNNError, match="is a file, not a directory"):
        check_writable_dir(tmp_path / "a_file")
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(ZeroGNNError, match="no write permission"):
            check_writable_file(locked / "r.json")


def test_an_output_directory_that_refuses_the_lock_file_is_one_line(tmp_path, monkeypatch):
    import errno

    from zerognn import outputs

    def refuse(*args, **kwargs):
        raise OSError(errno.ENOENT, "No such file or directory")

    monkeypatch.setattr(outputs.os, "open", refuse)  # what /proc does, though it says it is writable
    with pytest.raises(ZeroGNNError, match=r"cannot write next to .*r\.json \(No such file or directory\); choose"):
        with exclusive_output(tmp_path / "r.json"):
            pass
