"""scripts/whole_rounds.py refuses, before any run, to record under a stated commit whose source files the tree
does not hold: its records would name that commit and fail `zerognn provenance` afterwards."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .test_workflow import REPO

sys.path.insert(0, str(REPO / "scripts"))
from whole_rounds import source_mismatch  # noqa: E402

sys.path.remove(str(REPO / "scripts"))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    """A source tree in a git repository of two commits; the second changes a source file."""
    (tmp_path / "zerognn").mkdir()
    (tmp_path / "Snakefile").write_text("rule all:\n")
    (tmp_path / "zerognn/draw.py").write_text("LEGEND = 1\n")
    git(tmp_path, "init", "-q")
    commit(tmp_path, "one")
    (tmp_path / "zerognn/draw.py").write_text("LEGEND = 2\n")
    commit(tmp_path, "two")
    return tmp_path


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)


def test_a_tree_whose_source_files_are_the_stated_commits_passes(repo):
    assert source_mismatch(git(repo, "rev-parse", "HEAD"), repo) is None


def test_a_later_tree_stating_an_earlier_commit_is_told_how_to_restore_its_source_files(repo):
    first = git(repo, "rev-parse", "HEAD~1")
    problem = source_mismatch(first, repo)
    assert problem and f"git checkout {first} -- zerognn kernels workflow Snakefile pyproject.toml" in problem
    git(repo, "checkout", "-q", first, "--", "zerognn", "Snakefile")  # what the message says to do
    git(repo, "reset", "-q", "--soft", first)
    assert source_mismatch(first, repo) is None


def test_a_commit_the_repository_lacks_is_named(repo):
    problem = source_mismatch("0" * 40, repo)
    assert problem and "does not hold that commit" in problem
