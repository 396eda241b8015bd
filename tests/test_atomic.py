"""Atomic writes: normal permissions, cleanup on every failure, and removal of killed builds' temporaries."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from zerognn.atomic import OWNER_MARKER, atomic_dir, atomic_path, remove_stale_temporaries, write_text


@pytest.fixture
def umask():
    """Set the process umask for one test and restore it afterwards."""
    saved = os.umask(0o022)
    yield os.umask
    os.umask(saved)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def _fake_temporary(parent: Path, target: str, tag: str, owner: dict | None) -> Path:
    tmp = parent / f".{target}.{tag}.tmp"
    tmp.mkdir(parents=True)
    (tmp / "col.npy").write_bytes(b"\0" * 4096)
    if owner is not None:
        (tmp / OWNER_MARKER).write_text(json.dumps(owner))
    return tmp


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_path_gives_the_permissions_of_a_plain_open(tmp_path, umask, mask, expected):
    umask(mask)
    write_text(tmp_path / "out.txt", "hello\n")
    with open(tmp_path / "plain.txt", "w") as f:
        f.write("hello\n")
    assert _mode(tmp_path / "out.txt") == expected == _mode(tmp_path / "plain.txt")


def test_atomic_path_leaves_nothing_on_failure(tmp_path):
    with pytest.raises(KeyboardInterrupt), atomic_path(tmp_path / "out.csv") as tmp:
        tmp.write_text("half")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit, RuntimeError])
def test_atomic_dir_removes_its_temporary_on_any_failure(tmp_path, exc):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "old").write_text("old")
    with pytest.raises(exc), atomic_dir(tmp_path / "data") as tmp:
        (tmp / "new").write_text("new")
        raise exc
    assert [p.name for p in tmp_path.iterdir()] == ["data"]
    assert [p.name for p in (tmp_path / "data").iterdir()] == ["old"]


def test_atomic_dir_publishes_without_its_marker_and_with_mkdir_permissions(tmp_path, umask):
    umask(0o022)
    with atomic_dir(tmp_path / "data") as tmp:
        assert (tmp / OWNER_MARKER).is_file()
        (tmp / "x").write_text("x")
    assert [p.name for p in (tmp_path / "data").iterdir()] == ["x"]
    assert _mode(tmp_path / "data") == 0o755


def test_before_replace_can_keep_the_target(tmp_path):
    (tmp_path / "data").mkdir()

    def refuse(target):
        raise RuntimeError(f"keep {target.name}")

    with pytest.raises(RuntimeError, match="keep data"), atomic_dir(tmp_path / "data", before_replace=refuse):
        pass
    assert [p.name for p in tmp_path.iterdir()] == ["data"]


def test_stale_temporaries_of_dead_builds_are_removed_and_no_others(tmp_path):
    host = socket.gethostname()
    dead, alive = _dead_pid(), os.getpid()
    stale = _fake_temporary(tmp_path, "data", "dead", {"host": host, "pid": dead, "target": "data"})
    keep = [
        _fake_temporary(tmp_path, "data", "live", {"host": host, "pid": alive, "target": "data"}),
        _fake_temporary(tmp_path, "data", "nomarker", None),
        _fake_temporary(tmp_path, "data", "elsewhere", {"host": host + "-other", "pid": dead, "target": "data"}),
        _fake_temporary(tmp_path, "data", "garbled", None),
        # ".data.x.<random>.tmp" is a temporary of the target "data.x", not of "data".
        _fake_temporary(tmp_path, "data.x", "dead", {"host": host, "pid": dead, "target": "data.x"}),
        _fake_temporary(tmp_path / "unrelated", "data", "dead", {"host": host, "pid": dead, "target": "data"}),
    ]
    (keep[3] / OWNER_MARKER).write_text("{not json")
    (tmp_path / ".data.file.tmp").write_text("a file, not a directory")

    with atomic_dir(tmp_path / "data") as tmp:
        (tmp / "x").write_text("x")

    assert not stale.exists()
    assert all(path.is_dir() for path in keep)
    assert (tmp_path / ".data.file.tmp").is_file() and (tmp_path / "data" / "x").is_file()


def test_a_build_killed_by_sigkill_is_cleaned_up_by_the_next(tmp_path):
    script = (
        "import os, signal, sys\n"
        "from zerognn.atomic import atomic_dir\n"
        "with atomic_dir(sys.argv[1]) as tmp:\n"
        "    (tmp / 'half.npy').write_bytes(b'0' * 1000)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    killed = subprocess.run([sys.executable, "-c", script, str(tmp_path / "data")], check=False)
    assert killed.returncode == -signal.SIGKILL
    left = list(tmp_path.glob(".data.*.tmp"))
    assert len(left) == 1 and (left[0] / OWNER_MARKER).is_file()

    assert remove_stale_temporaries(tmp_path / "data") == left
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_the_temporary_of_a_killed_but_unreaped_build_is_stale(tmp_path):
    zombie = subprocess.Popen(["true"])
    try:
        for _ in range(200):
            if Path(f"/proc/{zombie.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                break
            time.sleep(0.005)
        else:
            pytest.skip("the child did not become a zombie")
        owner = {"host": socket.gethostname(), "pid": zombie.pid, "target": "data"}
        stale = _fake_temporary(tmp_path, "data", "zombie", owner)
        assert remove_stale_temporaries(tmp_path / "data") == [stale]
    finally:
        zombie.wait()
