"""Output paths checked before the work that fills them, and one writer per output at a time.

``check_writable_file`` / ``check_writable_dir`` fail at once — before a run trains for minutes — when
an output could not be written: a directory where a file is wanted, a parent that is a file, no write
permission. ``exclusive_output`` holds an advisory lock beside an output for as long as it is being
produced, so a second process asked for the same output (a re-run started beside an orphaned one)
stops with a clear error instead of measuring on shared cores and overwriting the first one's file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from .errors import ZeroGNNError


def _existing_ancestor(path: Path) -> Path:
    for parent in path.parents:
        if parent.exists():
            return parent
    return Path(path.anchor or ".")


def _check_parent(path: Path, what: str) -> None:
    ancestor = _existing_ancestor(path.absolute())
    if not ancestor.is_dir():
        raise ZeroGNNError(f"{what} {path} cannot be created: {ancestor} is a file, not a directory; "
                           f"choose another path")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise ZeroGNNError(f"{what} {path} cannot be created: no write permission in {ancestor}; choose another path")


def check_writable_file(path: str | os.PathLike, what: str = "output file") -> Path:
    """Raise ZeroGNNError unless ``path`` can be written as a file (its directory is made if needed)."""
    path = Path(path)
    if str(path) == "" or path.name in ("", ".", ".."):
        raise ZeroGNNError(f"{what} {str(path)!r} is not a file path; give a file name")
    if path.is_dir():
        raise ZeroGNNError(f"{what} {path} is a directory; give a file path")
    _check_parent(path, what)
    return path


def check_writable_dir(path: str | os.PathLike, what: str = "output directory") -> Path:
    """Raise ZeroGNNError unless ``path`` is, or can be made, a writable directory."""
    path = Path(path)
    if path.exists():
        if not path.is_dir():
            raise ZeroGNNError(f"{what} {path} is a file, not a directory; choose a directory")
        if not os.access(path, os.W_OK | os.X_OK):
            raise ZeroGNNError(f"{what} {path} is not writable; choose another directory")
        return path
    _check_parent(path, what)
    return path


@contextlib.contextmanager
def exclusive_output(path: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive lock on ``path``'s output while the block runs; fail at once if another
    process holds it. The lock is released when the holder exits, however it exits."""
    path = Path(path)
    lock = path.with_name(f".{path.name}.lock")
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:  # a directory that says it is writable and is not (/proc, a read-only mount)
        raise ZeroGNNError(f"cannot write next to {path} ({exc.strerror}); choose another output directory") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
            raise ZeroGNNError(
                f"{path} is being written by {holder} (lock {lock}); wait for it to finish or stop it, then run again"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"zerognn pid {os.getpid()}".encode(), 0)
        try:
            yield
        finally:
            lock.unlink(missing_ok=True)
    finally:
        os.close(fd)
