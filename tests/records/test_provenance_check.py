"""A record's source hash checked against the files of the commit it names."""

import pytest

from zerognn.cli import main
from zerognn.errors import ZeroGNNError
from zerognn.measure.provenance import REPO_DIR, commit_source_sha256, source_sha256
from zerognn.records.provenance import check_provenance

from ..measure.test_provenance import git, repo  # noqa: F401  (the fixture)
from .factory import make_record, write_records


def _record(variant, commit, sha):
    record = make_record(variant)
    record["environment"] |= {"git_commit": commit, "source_sha256": sha}
    return record


def test_a_record_that_ran_its_commits_files_is_verified_and_one_that_did_not_is_rejected(repo):  # noqa: F811
    head = git(repo, "rev-parse", "HEAD")
    good = _record("zerognn", head, source_sha256(repo))
    report = check_provenance([good], repo)
    assert report.verified == [good["run_id"]] and report.unverified == {}
    (repo / "zerognn/a.py").write_text("x = 2\n")  # the run's files differ from the commit it names
    bad = _record("host-mediated", head, source_sha256(repo))
    with pytest.raises(ZeroGNNError, match=f"record {bad['run_id']} names commit {head} but ran other source "
                                           "files"):
        check_provenance([good, bad], repo)


def test_records_that_cannot_be_checked_are_listed_with_the_reason(repo):  # noqa: F811
    old = _record("a", "abc", None)
    unknown = _record("b", "f" * 40, "0" * 64)
    report = check_provenance([old, unknown], repo)
    assert report.verified == []
    assert report.unverified == {old["run_id"]: "no source hash (written before records carried one)",
                                 unknown["run_id"]: f"commit {'f' * 40} is not in the repository at {repo}"}


def test_the_command_checks_a_runs_directory(repo, tmp_path, capsys):  # noqa: F811
    head = git(repo, "rev-parse", "HEAD")
    write_records(tmp_path / "runs", [_record("zerognn", head, source_sha256(repo)), _record("x", None, "0" * 64)])
    assert main(["provenance", "--runs", str(tmp_path / "runs"), "--repo", str(repo)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("1 record(s) ran exactly their commit's source files")
    assert out[1].startswith("unverified: tiny__sage__x__") and out[1].endswith("no commit named")
    write_records(tmp_path / "runs", [_record("y", head, "0" * 64)])
    assert main(["provenance", "--runs", str(tmp_path / "runs"), "--repo", str(repo)]) == 2
    assert "ran other source files" in capsys.readouterr().err


def test_this_repositorys_head_hashes_like_its_files_when_they_are_committed():
    head = git(REPO_DIR, "rev-parse", "HEAD")
    dirty = git(REPO_DIR, "status", "--porcelain")
    if dirty:
        pytest.skip("the checkout has uncommitted changes")
    assert commit_source_sha256(head) == source_sha256()
