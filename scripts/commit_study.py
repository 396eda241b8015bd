"""Bring a study's records from a GPU host into the committed reference: a stage's archive (scripts/gpu_stages.sh
packs its workspace, ``stages/<study>/``, into ``$OUT/<stage>.tgz``) or a records directory, into
``results/reference/<card>/<study>/runs/``, then its summary and figures rebuilt from them (``snakemake figures``),
so that rendering the docs is all that is left.

``<card>`` is the GPU model the records ran on (``h100`` for an NVIDIA H100, ``h200`` for an H200): a study's
records come from one model, and studies of two models are never compared. ``--card-dir <card>-<name>`` commits
into that directory instead (``h100-next``: a reference re-recorded at a new commit, beside the committed one
until it is complete). Before anything is written it checks,
with a one-line error each, that the records name one commit (``--commit``, where given, and no other), that git
did not call their tree dirty, that they ran that commit's source files (``zerognn provenance``), and that a record
already committed under the same id is the same file: nothing committed is replaced. Records are only added, each
written whole. With ``--config``, only the records whose runs that study config plans are committed: a study whose
runs another study's archive holds too (the precision study's float32 group is the trials study's) takes its own
from it. A study allowed to span machine instances (``--allow-mixed-provenance``) says so in its
``provenance.json``, with the instances (boot ids) and how many records each ran, so that whoever summarises it
again knows to pass the same flag, and the allowance is kept for records added later.

    python scripts/commit_study.py tta /path/to/tta.tgz --commit 9a534af
    python scripts/commit_study.py peers results/runs --commit 9a534af --allow-mixed-provenance
    python scripts/commit_study.py precision trials.tgz --config workflow/config/h200-precision.yaml
    python scripts/commit_study.py trials trials.tgz --commit f4db64e --card-dir h100-next
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

from round_targets import round_records

from zerognn.atomic import atomic_path
from zerognn.errors import ZeroGNNError
from zerognn.records.provenance import check_provenance
from zerognn.records.schema import iter_records

REPO = Path(__file__).resolve().parents[1]
# Where a stage's archive holds its records: its workspace's (stages/<study>/results/runs/), or, in an archive
# from before workspaces, results/runs/.
RUNS_IN_ARCHIVE = re.compile(r"(?P<runs>(?:stages/[a-z0-9][a-z0-9-]*/)?results/runs/)[^/]+\.json")
PROVENANCE = "provenance.json"  # in a study allowed to span machine instances


def machine_instances(runs: Path) -> dict[str, int]:
    """Each machine instance (``environment.boot_id``) the records under ``runs`` ran on -> how many records."""
    return dict(Counter(r["environment"].get("boot_id") or "unknown" for r in iter_records(runs)))


def allows_mixed_provenance(study: Path) -> bool:
    """Whether the committed study ``study`` is summarised with ``--allow-mixed-provenance`` (its provenance.json)."""
    path = study / PROVENANCE
    return path.is_file() and json.loads(path.read_text()).get("mixed_provenance") is True


def card(gpu_name: str) -> str:
    """A GPU model's directory name: ``NVIDIA H100 80GB HBM3`` -> ``h100``."""
    model = re.search(r"\b([A-Z]*\d{2,4}[A-Z]?)\b", gpu_name.removeprefix("NVIDIA "))
    if model is None:
        raise ZeroGNNError(f"no GPU model in the records' gpu_name {gpu_name!r}")
    return model.group(1).lower()


def read_records(source: Path, into: Path) -> tuple[dict[str, bytes], Path]:
    """Each record's file name -> bytes, from a stage's archive (extracted under ``into``) or a directory of
    records; and the directory that holds them."""
    if source.is_dir():
        return {p.name: p.read_bytes() for p in sorted(source.glob("*.json"))}, source
    if not tarfile.is_tarfile(source):
        raise ZeroGNNError(f"{source} is neither a directory of records nor a stage's archive (.tgz)")
    with tarfile.open(source) as archive:
        found = {m: RUNS_IN_ARCHIVE.fullmatch(m.name) for m in archive.getmembers() if m.isfile()}
        members = {m: match["runs"] for m, match in found.items() if match}
        runs = sorted(set(members.values()))
        if len(runs) > 1:
            raise ZeroGNNError(f"{source} holds the records of {len(runs)} workspaces ({', '.join(runs)}); "
                               f"commit a study from one")
        archive.extractall(into, members=list(members), filter="data")
    runs_dir = into / (runs[0] if runs else "results/runs/")
    return {p.name: p.read_bytes() for p in sorted(runs_dir.glob("*.json"))}, runs_dir


def planned_by(config: str, records: dict[str, bytes], into: Path) -> tuple[dict[str, bytes], Path]:
    """Of ``records``, those whose runs the study config ``config`` plans (scripts/round_targets.py), written to
    ``into``; and ``into``."""
    planned = {f"{Path(p).stem}.json" for r in round_records(config) for p in r}
    kept = {name: data for name, data in records.items() if name in planned}
    print(f"{len(kept)} of the {len(records)} records are runs {config} plans", flush=True)
    into.mkdir()
    for name, data in kept.items():
        (into / name).write_bytes(data)
    return kept, into


def environment(name: str, data: bytes) -> dict:
    """A record's ``environment`` (where it ran, at which commit), or a one-line error naming the file."""
    try:
        found = json.loads(data).get("environment")
    except (ValueError, AttributeError) as e:
        raise ZeroGNNError(f"{name} is not a run record: {e}") from None
    if not isinstance(found, dict):
        raise ZeroGNNError(f"{name} is not a run record: it has no environment")
    return found


def checked(records: dict[str, bytes], commit: str | None, runs_dir: Path, repo: Path) -> tuple[str, str]:
    """(commit, card) of a study's records, or a one-line ZeroGNNError naming what is wrong with them."""
    if not records:
        raise ZeroGNNError("no records (*.json) to commit")
    environments = {name: environment(name, data) for name, data in records.items()}
    commits = sorted({e.get("git_commit") or "none" for e in environments.values()})
    if len(commits) != 1:
        raise ZeroGNNError(f"the records name {len(commits)} commits ({', '.join(c[:7] for c in commits)}); "
                           f"a study is recorded at one commit")
    if commit and not commits[0].startswith(commit):
        raise ZeroGNNError(f"the records name commit {commits[0][:7]}, not {commit} (--commit): a tree git calls "
                           f"clean names its own commit; state another with `git reset --soft` there first")
    dirty = sorted(n for n, e in environments.items() if e.get("git_dirty") is not False)
    if dirty:
        raise ZeroGNNError(f"{len(dirty)} records ran a tree git called dirty or did not say ({dirty[0]})")
    cards = sorted({card(e.get("gpu_name") or "") for e in environments.values()})
    if len(cards) != 1:
        raise ZeroGNNError(f"the records ran on {len(cards)} GPU models ({', '.join(cards)}); a study is one model's")
    report = check_provenance(iter_records(runs_dir), repo)
    if report.unverified:
        run_id, why = next(iter(report.unverified.items()))
        raise ZeroGNNError(f"{len(report.unverified)} records did not run their commit's source files ({run_id}: "
                           f"{why})")
    return commits[0], cards[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("study", help="the study's directory name under results/reference/<card>/ (tta, peers, ...)")
    parser.add_argument("source", type=Path, help="a stage's archive (<stage>.tgz) or a directory of records")
    parser.add_argument("--commit", help="the commit every record must name (a prefix will do)")
    parser.add_argument("--repo", type=Path, default=REPO, help="the repository that commits the study and holds "
                        "the records' commit (default: this one)")
    parser.add_argument("--allow-mixed-provenance", action="store_true", help="summarise a study whose "
                        "comparison groups ran on several machines (zerognn summarize's flag)")
    parser.add_argument("--card-dir", help="the directory under results/reference/ and figures/reference/ to "
                        "commit into, <card> or <card>-<name> (default: <card>, the records' GPU model)")
    parser.add_argument("--config", help="commit only the records whose runs this study config plans (another "
                        "study's archive holding some of this one's runs: the trials study's, say)")
    args = parser.parse_args()
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", args.study):
        parser.error(f"study {args.study!r}: a directory name of lowercase letters, digits and dashes (tta, peers)")
    if args.card_dir is not None and not re.fullmatch(r"[a-z0-9]+(-[a-z0-9-]+)?", args.card_dir):
        parser.error(f"--card-dir {args.card_dir!r}: a card's directory name, <card> or <card>-<name> (h100-next)")
    if not args.source.exists():
        parser.error(f"{args.source} does not exist: give a stage's archive (<stage>.tgz) or a directory of records")

    repo = args.repo.resolve()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            records, runs_dir = read_records(args.source, Path(tmp))
            if args.config:
                records, runs_dir = planned_by(args.config, records, Path(tmp) / "planned")
            commit, gpu = checked(records, args.commit, runs_dir, repo)
        where = args.card_dir or gpu
        if where.split("-")[0] != gpu:
            raise ZeroGNNError(f"--card-dir {where} is not the records' card: they ran on {gpu}; commit them under "
                               f"{gpu} or {gpu}-<name>")
        study = repo / "results" / "reference" / where / args.study
        runs = study / "runs"
        kept = {p.name: p.read_bytes() for p in runs.glob("*.json")} if runs.is_dir() else {}
        other = sorted(n for n in records.keys() & kept.keys() if records[n] != kept[n])
        if other:
            raise ZeroGNNError(f"{len(other)} records differ from those committed under the same id in {runs} "
                               f"({other[0]}); nothing committed is replaced")
        kept_commits = {json.loads(b)["environment"].get("git_commit") for b in kept.values()}
        if kept_commits - {commit}:
            raise ZeroGNNError(f"{runs} holds records of another commit ({', '.join(sorted(kept_commits))[:40]}); "
                               f"a study's records are of one commit")
    except ZeroGNNError as e:
        print(f"commit_study: {e}", file=sys.stderr)
        return 2

    new = sorted(records.keys() - kept.keys())
    for name in new:
        with atomic_path(runs / name) as tmp:
            tmp.write_bytes(records[name])
    print(f"{runs.relative_to(repo)}: {len(new)} records added, {len(records) - len(new)} already there "
          f"(commit {commit[:7]}, {gpu})", flush=True)
    mixed = args.allow_mixed_provenance or allows_mixed_provenance(study)
    if mixed:
        instances = machine_instances(runs)
        with atomic_path(study / PROVENANCE) as tmp:
            tmp.write_text(json.dumps({"mixed_provenance": True, "machine_instances": instances}, indent=2) + "\n")
        print(f"{(study / PROVENANCE).relative_to(repo)}: the study spans {len(instances)} machine instance(s); "
              f"summarise it with --allow-mixed-provenance", flush=True)
    figures = repo / "figures" / "reference" / where / args.study
    command = [sys.executable, "-m", "snakemake", "figures", "--cores", "1", "--config",
               f"results_dir={study.relative_to(repo)}", f"figures_dir={figures.relative_to(repo)}",
               f"mixed_provenance={str(mixed).lower()}"]
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # the zerognn CLI beside it
    done = subprocess.run(command, cwd=repo, text=True, capture_output=True, env=dict(os.environ, PATH=path))
    if done.returncode != 0:
        print(f"commit_study: the summary and figures were not rebuilt (snakemake figures, rc={done.returncode}):\n"
              f"{done.stderr[-2000:]}", file=sys.stderr)
        return 1
    if where == gpu:
        after = (f"docs/templates/studies.yaml naming {where}/{args.study} for the templates that read it, then python "
                 f"scripts/render_docs.py")
    else:  # a reference recorded again: the docs read it once it is whole (docs/results.md)
        after = (f"the rest of {where}/ (python scripts/reference_status.py --card {where} --commit {commit[:7]}), "
                 f"which then takes {gpu}/'s place")
    print(f"{study.relative_to(repo)}/summary.csv and {figures.relative_to(repo)}/ rebuilt; next: {after}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
