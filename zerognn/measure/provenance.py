"""Where a run's code and machine came from, so that a record's provenance is read and checked, not asserted.

* The commit: read from the checkout with git when it is clean (untracked files that are not source, such as
  a study's outputs, do not count). A copy of the tree whose git metadata is
  stale or absent (a GPU host given the working tree) reports what the operator states in
  ``ZEROGNN_GIT_COMMIT`` / ``ZEROGNN_GIT_DIRTY``; ``git_source`` says which of the two a record used.
* ``source_sha256``: a hash of the source files the run executed (the package, the CUDA kernels, the
  workflow; ``is_source``), computed from the files on disk. ``commit_source_sha256`` computes the same
  hash from a commit's files in a repository, so an operator's stated commit is verified, not trusted
  (``zerognn provenance``).
* ``boot_id``: the machine instance (Linux's per-boot id), and ``call_id``: the Snakemake invocation the
  run belongs to (set once by the workflow), so "one host, one call" can be checked from records.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path, PurePosixPath

PACKAGE_DIR = Path(__file__).resolve().parents[1]
REPO_DIR = PACKAGE_DIR.parent
CALL_ID_VARIABLE = "ZEROGNN_CALL_ID"
# Top-level source directories and the file endings hashed in each (None: every file), and single files.
SOURCE_DIRS = {"zerognn": (".py", ".json"), "kernels": (".cu", ".cuh"), "workflow": None}
SOURCE_FILES = ("Snakefile", "pyproject.toml")


def is_source(path: str) -> bool:
    """Whether the repository-relative POSIX ``path`` is hashed into ``source_sha256``."""
    parts = PurePosixPath(path).parts
    if not parts or any(p.startswith(".") or p == "__pycache__" for p in parts):
        return False
    if len(parts) == 1:
        return parts[0] in SOURCE_FILES
    if parts[0] not in SOURCE_DIRS:
        return False
    endings = SOURCE_DIRS[parts[0]]
    return endings is None or parts[-1].endswith(endings)


def _digest(files: dict[str, bytes]) -> str:
    """One hash over (path, content) pairs in path order: a renamed file changes it too."""
    total = hashlib.sha256()
    for path in sorted(files):
        total.update(path.encode() + b"\0" + hashlib.sha256(files[path]).hexdigest().encode() + b"\n")
    return total.hexdigest()


def source_sha256(root: Path = REPO_DIR) -> str | None:
    """The hash of the source files under ``root`` as they are on disk; None when ``root`` is not a source tree
    (an installed package without its repository)."""
    if not (root / "Snakefile").is_file():
        return None
    files = {}
    for top in (*SOURCE_DIRS, *SOURCE_FILES):
        base = root / top
        candidates = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for path in candidates:
            relative = path.relative_to(root).as_posix()
            if is_source(relative):
                files[relative] = path.read_bytes()
    return _digest(files)


def commit_source_sha256(commit: str, repo: Path = REPO_DIR) -> str | None:
    """The same hash over ``commit``'s files in the git repository ``repo``; None when the repository does not
    hold that commit (or git is missing)."""
    listing = _git(["ls-tree", "-r", "-z", commit], repo)
    if listing is None:
        return None
    files = {}
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        kind, blob = meta.split()[1:3]
        name = path.decode()
        if kind == b"blob" and is_source(name):
            content = _git(["cat-file", "blob", blob.decode()], repo)
            if content is None:
                return None
            files[name] = content
    return _digest(files)


def git_state(repo: Path = PACKAGE_DIR) -> tuple[str | None, bool | None, str | None]:
    """(commit, dirty, source) of the checkout holding ``repo``: from git when it is clean; else from the
    environment variables when the operator set them (a copied tree whose git metadata is stale or absent);
    else git's dirty state, or nothing. ``source`` is ``"git"``, ``"environment"`` or None."""
    head = _text(["rev-parse", "HEAD"], repo)
    status = None if head is None else _changes(repo)
    if head and status == "":
        return head, False, "git"
    if stated := os.environ.get("ZEROGNN_GIT_COMMIT"):
        dirty = os.environ.get("ZEROGNN_GIT_DIRTY")
        return stated, None if dirty is None else dirty == "1", "environment"
    if head:
        return head, None if status is None else True, "git"
    return None, None, None


def _changes(repo: Path) -> str | None:
    """``git status --porcelain`` without the untracked files that are not source (a study's outputs written
    beside the tree, an operator's notes): they change nothing a run executes, so they leave it clean."""
    out = _git(["status", "--porcelain", "-z", "--untracked-files=all"], repo)
    if out is None:
        return None
    entries = [e.decode() for e in out.split(b"\0") if e]
    return "\n".join(e for e in entries if not (e.startswith("?? ") and not is_source(e[3:])))


def boot_id() -> str | None:
    """This machine instance's id (changes at every boot; Linux), or None."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def call_id() -> str | None:
    """The id of the workflow invocation that started this run (``ZEROGNN_CALL_ID``), or None."""
    return os.environ.get(CALL_ID_VARIABLE) or None


def _git(args: list[str], repo: Path) -> bytes | None:
    if shutil.which("git") is None:
        return None
    try:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _text(args: list[str], repo: Path) -> str | None:
    out = _git(args, repo)
    return None if out is None else out.decode().strip()
