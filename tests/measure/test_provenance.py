"""Provenance read from git and checked against a commit's files, not asserted."""

import subprocess

import pytest

from zerognn.measure import provenance


def git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    """A tiny source tree in its own git repository, one commit."""
    for path, text in {"Snakefile": "rule all:\n", "zerognn/a.py": "x = 1\n", "zerognn/sub/s.json": "{}\n",
                       "kernels/k.cu": "//\n", "workflow/config/c.yaml": "a: 1\n", "docs/d.md": "text\n",
                       "zerognn/notes.txt": "not source\n"}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    return tmp_path


@pytest.mark.parametrize("path, hashed", [
    ("zerognn/a.py", True), ("zerognn/records/record.schema.json", True), ("kernels/x.cuh", True),
    ("workflow/rules/runs.smk", True), ("Snakefile", True), ("pyproject.toml", True),
    ("zerognn/__pycache__/a.pyc", False), ("zerognn/notes.txt", False), ("docs/a.md", False),
    ("results/runs/r.json", False), ("tests/t.py", False), (".git/HEAD", False),
])
def test_the_source_set(path, hashed):
    assert provenance.is_source(path) is hashed


def test_a_clean_checkout_gives_its_commit_from_git_whatever_the_environment_says(repo, monkeypatch):
    monkeypatch.setenv("ZEROGNN_GIT_COMMIT", "0123abcd")
    assert provenance.git_state(repo) == (git(repo, "rev-parse", "HEAD"), False, "git")


def test_untracked_outputs_leave_a_checkout_clean_and_an_untracked_source_file_does_not(repo, monkeypatch):
    monkeypatch.delenv("ZEROGNN_GIT_COMMIT", raising=False)
    (repo / "results/aftereffect").mkdir(parents=True)
    (repo / "results/aftereffect/zerognn-1.json").write_text("{}\n")
    (repo / "notes.txt").write_text("an operator's notes\n")
    assert provenance.git_state(repo) == (git(repo, "rev-parse", "HEAD"), False, "git")
    (repo / "zerognn/new.py").write_text("y = 1\n")  # would run, and no commit holds it
    assert provenance.git_state(repo) == (git(repo, "rev-parse", "HEAD"), True, "git")


def test_a_stale_copy_takes_the_stated_commit_and_without_one_says_dirty(repo, monkeypatch):
    (repo / "zerognn/a.py").write_text("x = 2\n")
    monkeypatch.setenv("ZEROGNN_GIT_COMMIT", "0123abcd")
    monkeypatch.setenv("ZEROGNN_GIT_DIRTY", "0")
    assert provenance.git_state(repo) == ("0123abcd", False, "environment")
    monkeypatch.delenv("ZEROGNN_GIT_COMMIT")
    assert provenance.git_state(repo) == (git(repo, "rev-parse", "HEAD"), True, "git")


def test_without_git_only_the_environment_can_name_the_commit(tmp_path, monkeypatch):
    monkeypatch.delenv("ZEROGNN_GIT_COMMIT", raising=False)
    assert provenance.git_state(tmp_path) == (None, None, None)
    monkeypatch.setenv("ZEROGNN_GIT_COMMIT", "0123abcd")
    assert provenance.git_state(tmp_path) == ("0123abcd", None, "environment")


def test_the_files_on_disk_hash_like_their_commits_files_until_a_source_file_changes(repo):
    head = git(repo, "rev-parse", "HEAD")
    assert provenance.source_sha256(repo) == provenance.commit_source_sha256(head, repo) is not None
    (repo / "docs/d.md").write_text("edited\n")
    (repo / "zerognn/notes.txt").write_text("edited\n")
    assert provenance.source_sha256(repo) == provenance.commit_source_sha256(head, repo)  # not source files
    (repo / "zerognn/a.py").write_text("x = 2\n")
    assert provenance.source_sha256(repo) != provenance.commit_source_sha256(head, repo)
    (repo / "zerognn/a.py").write_text("x = 1\n")
    (repo / "zerognn/a.py").rename(repo / "zerognn/b.py")
    assert provenance.source_sha256(repo) != provenance.commit_source_sha256(head, repo)  # a rename counts
    assert provenance.commit_source_sha256("f" * 40, repo) is None


def test_this_checkouts_source_hash_and_machine(monkeypatch):
    assert provenance.source_sha256() is not None and len(provenance.source_sha256()) == 64
    monkeypatch.setenv(provenance.CALL_ID_VARIABLE, "call-1")
    assert provenance.call_id() == "call-1" and (provenance.boot_id() is None or len(provenance.boot_id()) >= 8)
