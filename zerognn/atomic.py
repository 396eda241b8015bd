"""Atomic file and directory writes: a killed run never leaves a half-written output behind.

Everything is written to a temporary sibling first and renamed into place, which is atomic on POSIX
file systems when source and target share a directory. Temporary directories carry an owner marker
(host and pid), so the temporaries of a killed build can be told from those of a running one and are
removed by the next build of the same target.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .lifetime import process_alive

log = logging.getLogger(__name__)

OWNER_MARKER = ".zerognn-owner"


def _umask() -> int:
    """The process umask, read without changing it where Linux allows (os.umask is process-wide)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary file path next to ``target``; rename it onto ``target`` on success."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp" + suffix, dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        # mkstemp makes the file private (0600); give it the permissions a plain open() would.
        os.chmod(tmp_path, 0o666 & ~_umask())
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_text(target: str | os.PathLike, text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text)


def write_json(target: str | os.PathLike, obj: Any) -> None:
    write_text(target, json.dumps(obj, indent=2, sort_keys=False, allow_nan=False) + "\n")


@contextlib.contextmanager
def atomic_dir(
    target: str | os.PathLike, before_replace: Callable[[Path], None] | None = None
) -> Iterator[Path]:
    """Yield a temporary directory next to ``target``; it replaces ``target`` only on success.

    An existing ``target`` is removed just before the rename, so a failure while building (any
    exception, KeyboardInterrupt included) leaves the old contents untouched and the temporary
    directory removed. ``before_replace(target)`` runs right before that removal and may raise to
    keep ``target``. Temporaries of earlier builds of ``target`` killed on this host are removed first.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(target)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        _write_owner(tmp, target)
        yield tmp
        (tmp / OWNER_MARKER).unlink(missing_ok=True)
        # mkdtemp makes the directory private (0700); give it the permissions a plain mkdir would.
        os.chmod(tmp, 0o777 & ~_umask())
        if before_replace is not None:
            before_replace(target)
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _write_owner(tmp: Path, target: Path) -> None:
    owner = {"host": socket.gethostname(), "pid": os.getpid(), "target": target.name}
    (tmp / OWNER_MARKER).write_text(json.dumps(owner) + "\n")


def _read_owner(tmp: Path) -> dict[str, Any] | None:
    try:
        owner = json.loads((tmp / OWNER_MARKER).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(owner, dict) or type(owner.get("pid")) is not int or owner["pid"] <= 0:
        return None
    return owner


def remove_stale_temporaries(target: Path) -> list[Path]:
    """Remove ``.TARGET.*.tmp`` siblings left by builds of ``target`` killed on this host; return them.

    Only directories whose owner marker names this host, ``target`` and a pid that no longer exists
    are removed: a directory without our marker, or of a live (concurrent) build, is never touched.
    """
    target = Path(target)
    prefix, host, removed = f".{target.name}.", socket.gethostname(), []
    try:
        siblings = sorted(target.parent.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return removed
    for path in siblings:
        if not (path.name.startswith(prefix) and path.name.endswith(".tmp")) or path.is_symlink() or not path.is_dir():
            continue
        owner = _read_owner(path)
        if (owner is None or owner.get("host") != host or owner.get("target") != target.name
                or process_alive(owner["pid"])):
            continue
        size = _tree_bytes(path)
        try:
            shutil.rmtree(path)
        except OSError as exc:
            log.warning("could not remove %s, left by killed build (pid %d): %s", path, owner["pid"], exc)
            continue
        log.info("removed %s (%.1f MB) left by a killed build (pid %d)", path, size / 1e6, owner["pid"])
        removed.append(path)
    return removed


def _tree_bytes(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total
