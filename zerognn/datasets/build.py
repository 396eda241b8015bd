"""Building a dataset directory safely: never over what the project did not write, only with the disk
space it needs (memory maps allocated up front, so a full disk is an error, not a SIGBUS), and only
after the result passes the full check (``zerognn.datasets.validate``).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic import atomic_dir
from ..errors import ZeroGNNError
from .store import DATASET_FILES, FORMAT_VERSION, WORKFLOW_MARKS, dataset_name_in, open_arrays
from .validate import Invalid, check_arrays, check_feature_mode, check_sizes, stored_arrays

log = logging.getLogger(__name__)

DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def check_out_dir(out_dir: Path, force: bool) -> None:
    """Refuse to build into ``out_dir`` unless it is absent, empty, or (with ``force``) a dataset of ours.

    A file, a symbolic link or a directory holding anything else is never replaced, even with ``force``.
    """
    out_dir = Path(out_dir)
    fix = "refusing to replace it: choose an empty or new --out directory"
    if out_dir.is_symlink():
        raise ZeroGNNError(f"{out_dir} is a symbolic link; {fix} (or the directory it points to).")
    if not out_dir.exists():
        return
    if not out_dir.is_dir():
        raise ZeroGNNError(f"{out_dir} is a file, not a dataset directory; {fix}.")
    try:
        entries = sorted(p.name for p in out_dir.iterdir())
    except OSError as exc:
        raise ZeroGNNError(f"{out_dir} cannot be listed ({exc.strerror}); {fix}.") from exc
    if not entries:
        return
    name = dataset_name_in(out_dir)
    foreign = [entry for entry in entries if entry not in DATASET_FILES | WORKFLOW_MARKS]
    if foreign or name is None:
        what = (
            f"{len(entries)} {'entry' if len(entries) == 1 else 'entries'}, e.g. {foreign[0]!r}" if foreign
            else f"no readable meta.json of format version {FORMAT_VERSION}"
        )
        raise ZeroGNNError(f"{out_dir} holds files that are not a zerognn dataset ({what}); {fix}.")
    if not force:
        raise ZeroGNNError(f"{out_dir} already holds the dataset {name!r}; pass --force to replace it.")


def _human(num_bytes: int) -> str:
    power = min(3, (len(str(max(int(num_bytes), 1))) - 1) // 3)
    return f"{num_bytes / 1000**power:.1f} {('B', 'KB', 'MB', 'GB')[power]}"


def check_free_space(out_dir: Path, needed: int, name: str) -> None:
    """Refuse to start a build that needs more than the free space where ``out_dir`` will be written."""
    where = Path(out_dir).absolute().parent
    while not where.exists():
        where = where.parent
    free = shutil.disk_usage(where).free
    if needed > free:
        raise ZeroGNNError(
            f"{name} needs about {_human(needed)} in {where} and only {_human(free)} is free; "
            f"free space or choose another --out."
        )


def create_npy(path: Path, dtype: Any, shape: tuple[int, ...]) -> np.memmap:
    """A new .npy file memory-mapped for writing, its disk blocks allocated up front.

    open_memmap leaves a sparse file whose pages get disk blocks only when first written; on a full
    disk that write is a SIGBUS that kills the process. Allocating first makes it an ENOSPC OSError here.
    """
    arr = np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape)
    if hasattr(os, "posix_fallocate"):
        with open(path, "r+b") as f:
            try:
                os.posix_fallocate(f.fileno(), 0, os.fstat(f.fileno()).st_size)
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                    raise
                log.debug("cannot preallocate %s (%s); writing it sparse", path, exc)
    return arr


@contextlib.contextmanager
def build_into(out_dir: Path, name: str, force: bool, if_invalid: str) -> Iterator[Path]:
    """A temporary directory for a build of ``name``, published onto ``out_dir`` after a full check.

    ``out_dir`` is checked again (``check_out_dir``) just before it is replaced. A full disk becomes a
    ZeroGNNError; on any failure the temporary directory is removed and ``out_dir`` left as it was.
    ``if_invalid`` is the fix to print when the built dataset fails the check.
    """
    out_dir = Path(out_dir)
    try:
        with atomic_dir(out_dir, before_replace=functools.partial(check_out_dir, force=force)) as tmp:
            yield tmp
            _check_built(tmp, name, out_dir, if_invalid)
    except OSError as exc:
        if exc.errno not in DISK_FULL:
            raise
        raise ZeroGNNError(
            f"the disk holding {out_dir.absolute().parent} is full ({exc.strerror}) while building {name}; "
            f"{out_dir} was left as it was: free space or choose another --out."
        ) from exc


def _check_built(directory: Path, name: str, out_dir: Path, if_invalid: str) -> None:
    try:
        meta = json.loads((directory / "meta.json").read_text())
        check_sizes(meta)
        check_feature_mode(meta)
        check_arrays(meta, open_arrays(directory, "r", stored_arrays(meta)), full=True)
    except (Invalid, OSError, ValueError) as problem:
        raise ZeroGNNError(
            f"the {name} build produced an invalid dataset ({problem}); {out_dir} was left as it was: {if_invalid}."
        ) from None
