"""Carry a study's committed records to the next GPU host, so that a stage one machine could not finish goes on
on another (``CARRIED=1`` in scripts/gpu_stages.sh): the records under ``results/reference/<card>/<study>/runs/``
of the runs the study's config plans with ``--only``'s values are copied into ``stages/<study>/results/runs/``,
the stage's workspace, which the call then names in its carry. Nothing there is overwritten: a record the
workspace already holds must be the committed one, byte for byte.

    python scripts/carry_records.py reference --card h100 --only dataset=products-like,model=sage,batch_size=256
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from round_targets import parse_only, round_records

from zerognn.atomic import atomic_path
from zerognn.errors import ZeroGNNError
from zerognn.records.files import read_record

REPO = Path(__file__).resolve().parents[1]


def carry(study: str, card: str, only: str, repo: Path = REPO) -> list[str]:
    """Copy the committed records of ``study``'s runs that ``only`` selects into its stage workspace; the lines
    to print. A one-line ZeroGNNError, before anything is copied, where there is nothing to carry or a record in
    the workspace differs from the committed one."""
    config = repo / "workflow" / "config" / f"h200-{study}.yaml"
    committed = repo / "results" / "reference" / card / study / "runs"
    if not config.is_file():
        raise ZeroGNNError(f"no config {config.relative_to(repo)}: give a study recorded from "
                           "workflow/config/h200-<study>.yaml (reference, precision, ...)")
    if not committed.is_dir():
        raise ZeroGNNError(f"no {committed.relative_to(repo)}/: give the card and study the records were committed "
                           "under (scripts/reference_status.py lists them)")
    planned = [Path(p).name for r in round_records(str(config), only=parse_only(only)) for p in r]
    found = [committed / name for name in planned if (committed / name).is_file()]
    if not found:
        raise ZeroGNNError(f"none of the {len(planned)} runs --only {only} selects is committed under "
                           f"{committed.relative_to(repo)}/: record them anew, without CARRIED=1")
    commits = sorted({read_record(p)["environment"]["git_commit"] for p in found})
    if len(commits) != 1:
        raise ZeroGNNError(f"the records to carry name {len(commits)} commits ({', '.join(c[:7] for c in commits)}): "
                           "a study goes on only at the commit its earlier rounds were recorded at")
    workspace = repo / "stages" / study / "results" / "runs"
    differing = [p.name for p in found
                 if (workspace / p.name).is_file() and (workspace / p.name).read_bytes() != p.read_bytes()]
    if differing:
        raise ZeroGNNError(f"{workspace.relative_to(repo)}/ already holds {len(differing)} of these records, not as "
                           f"committed ({differing[0]}): move them away (they may be another machine's rounds) and "
                           "carry again")
    workspace.mkdir(parents=True, exist_ok=True)
    copied = 0
    for path in found:
        target = workspace / path.name
        if target.is_file():
            continue
        with atomic_path(target) as tmp:  # a killed copy leaves no half-written record for the stage to read
            shutil.copyfile(path, tmp)
        copied += 1
    where = workspace.relative_to(repo)
    return [f"{copied} records copied into {where}/ ({len(found) - copied} there already) of the {len(planned)} runs "
            f"--only {only} selects, at commit {commits[0][:7]}; {len(planned) - len(found)} still to record",
            f"next, on a GPU host with the same GPU model: carry {where} with the tree and run "
            f"STAGE={study} ONLY={only} CARRIED=1 bash scripts/gpu_stages.sh from the tree at that commit "
            "(docs/results.md, Recording the reference)"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("study", help="the study's directory under results/reference/<card>/ (reference, precision)")
    parser.add_argument("--card", required=True, help="the card the study is committed under (h100, h200)")
    parser.add_argument("--only", required=True, help="the runs to carry, as the stage's ONLY= selects them "
                                                      "(dataset=products-like,model=sage,batch_size=256)")
    args = parser.parse_args()
    try:
        lines = carry(args.study, args.card, args.only)
    except ZeroGNNError as e:
        parser.exit(2, f"carry_records: {e}\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
