"""Checking what records say about their code: each record's source hash against its named commit's files.

A record names the commit it ran (from git, or stated by the operator for a copied tree) and carries the
hash of the source files it actually ran (``zerognn.measure.provenance``). ``check_provenance`` recomputes
that hash from the named commit's files in a repository: a record whose files differ from its commit's is
an error; one that cannot be checked (an older record without a hash, a commit this repository lacks) is
listed, not silently passed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ZeroGNNError
from ..measure.provenance import REPO_DIR, commit_source_sha256


@dataclass
class ProvenanceReport:
    verified: list[str] = field(default_factory=list)        # run ids whose files are their commit's
    unverified: dict[str, str] = field(default_factory=dict)  # run id -> why it could not be checked


def check_provenance(records: Iterable[dict[str, Any]], repo: Path = REPO_DIR) -> ProvenanceReport:
    """Verify every record's ``source_sha256`` against its ``git_commit``'s files in ``repo``; ZeroGNNError, in
    one line, for the first record whose files are not its commit's."""
    report, hashes = ProvenanceReport(), {}
    for record in records:
        env, run_id = record["environment"], record["run_id"]
        commit, ran = env.get("git_commit"), env.get("source_sha256")
        if ran is None or commit is None:
            report.unverified[run_id] = "no source hash (written before records carried one)" if ran is None \
                else "no commit named"
            continue
        if commit not in hashes:
            hashes[commit] = commit_source_sha256(commit, repo)
        if hashes[commit] is None:
            report.unverified[run_id] = f"commit {commit} is not in the repository at {repo}"
        elif hashes[commit] != ran:
            # a dirty flag alone is no error: files outside the source set (results, figures) may differ
            raise ZeroGNNError(f"record {run_id} names commit {commit} but ran other source files (source_sha256 "
                               f"{ran[:12]}, the commit's files {hashes[commit][:12]}); re-run it from a checkout of "
                               f"that commit, or state the commit it ran (ZEROGNN_GIT_COMMIT)")
        else:
            report.verified.append(run_id)
    return report
