"""Record a study in whole rounds, as many as end within a time budget (scripts/gpu_stages.sh's trials and
time-to-target stages).

Round r of a study is every comparison group's r-th (seed, trial) pair, each variant once
(scripts/round_targets.py). Each round is its own Snakemake invocation with that round's records as targets,
started only if it would end within ``--budget`` seconds of this script's start, so a GPU call never ends inside
a round. A round's length is foreseen as the longest so far of the same configurations (a study whose slow
variants train fewer seeds has shorter later rounds), else the longest so far.

First, one invocation builds what the runs read (datasets, the kernel manifest) and nothing else, so that no
round's timing includes a build; then one dry run over every round says which records Snakemake would make:
a round none of whose records it would make is recorded already
(a record of the same id but other parameters, left by another study, is not).

It stops with a one-line error rather than let a round pass unnoticed:

- where Snakemake would re-make a record because an input is newer than it (a dataset rebuilt on a fresh
  machine, say), which it does whatever ``--rerun-triggers`` says; and a record's ``previous`` input is
  ``ancient``, which Snakemake 9 then mis-schedules (it re-made such records and left the round's own
  undone, with exit status 0). A study's rounds are made on one machine in calls back to back, or, with
  ``--carried``, go on on another machine from the records of the earlier rounds brought with the tree: those
  are then dated after the build, so the rebuilt dataset does not make them stale (``zerognn provenance``
  checks their source files; the study's groups then span machines, which its summary allows only when told);
- where a round's invocation ends without having made every record it was to make.

Where ``ZEROGNN_GIT_COMMIT`` states the commit the records will name, it first checks that the tree's source
files are that commit's (``zerognn provenance`` would reject the records otherwise), and says how to restore them.

With ``--workspace DIR`` the study's results, logs and figures go to ``DIR/results``, ``DIR/logs`` and ``DIR/figures``
(Snakemake's ``--config``) instead of the config's directories, so that studies recorded one after another on one
machine keep their records apart: two studies' runs may share an id (the training axes are not part of it), and in
one results directory the second would re-make the first's record with its own parameters, over it.

Each invocation runs in a process group of its own. When it outlasts ``--timeout``, or this script is told to stop
(SIGTERM, as ``timeout`` or a GPU call's limit sends it, or SIGINT), the whole group gets SIGTERM (Snakemake then
stops its jobs and marks their records incomplete), and SIGKILL what is left of it after a grace period: no run
outlives the script.

    python scripts/whole_rounds.py workflow/config/h200-trials.yaml --budget 480 --log /tmp/out/trials.log
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from round_targets import parse_only, round_records

from zerognn.errors import ZeroGNNError
from zerognn.measure.provenance import REPO_DIR, SOURCE_DIRS, SOURCE_FILES, commit_source_sha256, source_sha256
from zerognn.records.ids import RunKey

TRIGGERS = ["--rerun-triggers", "params", "input", "code"]  # not mtime: every call copies the tree anew
NEWER_INPUT = "Updated input files"  # Snakemake's reason for a record older than an input


GRACE_S = 30.0  # how long a stopped invocation's group has to end after SIGTERM, before SIGKILL


class Stopped(Exception):
    """This script was told to stop (SIGTERM or SIGINT)."""


def stop_on_signals() -> None:
    """SIGTERM and SIGINT raise Stopped, so that a running invocation's group is stopped before the script ends."""
    def stop(signum, _frame):
        raise Stopped(signal.Signals(signum).name)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)


def run_in_group(command: list[str], timeout: float | None = None, grace: float = GRACE_S
                 ) -> subprocess.CompletedProcess:
    """``command`` in a process group of its own, its output captured. On a timeout, or any exception while it
    runs (Stopped, say), the group gets SIGTERM, then SIGKILL for what is left after ``grace`` seconds, and the
    exception is raised again once the group is gone, with what the command wrote as its ``partial_output``."""
    process = subprocess.Popen(command, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
    except BaseException as e:
        # a second stop (timeout signals its whole process group as well as its child) must not cut this short
        previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in (signal.SIGTERM, signal.SIGINT)}
        try:
            e.partial_output = stop_group(process, grace)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        raise
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def stop_group(process: subprocess.Popen, grace: float) -> str:
    """SIGTERM to ``process``'s group; SIGKILL to the group after ``grace`` seconds or once its leader is gone
    (a job that outlived its Snakemake); then reap the leader. What it wrote, stdout then stderr."""
    def signal_group(signum: int) -> None:
        try:
            os.killpg(process.pid, signum)
        except ProcessLookupError:
            pass
    signal_group(signal.SIGTERM)
    try:
        process.communicate(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    signal_group(signal.SIGKILL)
    out, err = process.communicate()  # everything it wrote: Popen keeps what an interrupted communicate read
    return (out or "") + (err or "")


def workspace_dirs(workspace: Path | None) -> dict[str, str]:
    """The config's directories for a study recorded in ``workspace`` (none: the config's own)."""
    if workspace is None:
        return {}
    return {f"{name}_dir": str(workspace / name) for name in ("results", "logs", "figures")}


def workspace_config(workspace: Path | None) -> list[str]:
    """Snakemake's ``--config`` for a study recorded in ``workspace`` (none for the config's own directories)."""
    dirs = workspace_dirs(workspace)
    return ["--config", *(f"{key}={value}" for key, value in dirs.items())] if dirs else []


def snakemake(targets: list[str], config: str, log, *args: str, workspace: Path | None = None,
              timeout: float | None = None) -> subprocess.CompletedProcess:
    """One Snakemake invocation (the targets first: --config and --rerun-triggers take every word after them)."""
    command = [sys.executable, "-m", "snakemake", *targets, "--cores", "all", "--configfile", config,
               *workspace_config(workspace), *TRIGGERS, *args]
    try:
        result = run_in_group(command, timeout=timeout)
    except BaseException as e:
        log.write(getattr(e, "partial_output", ""))
        log.flush()
        raise
    log.write(result.stdout + result.stderr)
    log.flush()
    return result


def configurations(targets: list[str]) -> frozenset[str]:
    """What a round runs, whatever its seed and trial: the configurations of its records."""
    return frozenset(RunKey.parse(Path(t).stem).configuration().run_id for t in targets)


def planned_outputs(dry_run: str) -> dict[str, str]:
    """The record each job of a dry run would make, with Snakemake's reason for it."""
    jobs = re.findall(r"^\s+output: (\S+\.json)\s*$(?:.*\n)*?^\s+reason: (.*)$", dry_run, flags=re.M)
    return dict(jobs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config")
    parser.add_argument("--rounds", type=int, default=0, help="record rounds 1 to ROUNDS (default: all)")
    parser.add_argument("--budget", type=float, default=480, help="seconds from the start within which every "
                        "started round must end (default 480)")
    parser.add_argument("--timeout", type=float, default=560, help="seconds one round's invocation may take")
    parser.add_argument("--log", type=Path, required=True, help="Snakemake's output goes here (appended)")
    parser.add_argument("--carried", action="store_true", help="the study's records already in the results "
                        "directory were made on another machine and brought here: date them after the build")
    parser.add_argument("--only", default="", help="field=value[,field=value]: only the runs whose key has these "
                        "(scripts/round_targets.py): a study's comparison groups recorded a few at a time")
    parser.add_argument("--workspace", type=Path, help="record into WORKSPACE/results (logs and figures beside it) "
                        "instead of the config's directories: a study of its own, apart from other studies' records")
    args = parser.parse_args()

    try:
        rounds = round_records(args.config, parse_only(args.only), workspace_dirs(args.workspace).get("results_dir"))
    except ZeroGNNError as e:
        print(f"whole_rounds: {e}")
        return 2
    if args.rounds:
        rounds = rounds[:args.rounds]
    stated = os.environ.get("ZEROGNN_GIT_COMMIT")
    if stated and (problem := source_mismatch(stated)):
        print(f"whole_rounds: {problem}")
        return 2
    stop_on_signals()
    try:
        return record(rounds, args)
    except Stopped as e:
        print(f"whole_rounds: stopped by {e} (Snakemake and its runs were stopped; a round under way is incomplete, "
              f"its records marked so); run the same command again")
        return 143


def source_mismatch(commit: str, repo: Path = REPO_DIR) -> str | None:
    """Why records made from ``repo``'s tree could not name ``commit`` (its source files are another commit's, or
    the repository does not hold it); None when the tree's source files are that commit's."""
    expected = commit_source_sha256(commit, repo)
    if expected is None:
        return (f"ZEROGNN_GIT_COMMIT={commit}: the repository at {repo} does not hold that commit, so the tree's "
                f"source files cannot be checked against it; bring the tree with its git metadata")
    if source_sha256(repo) != expected:
        named = ", ".join([*(f"{d}/" for d in SOURCE_DIRS), *SOURCE_FILES])
        return (f"the tree's source files ({named}) are not {commit}'s, which ZEROGNN_GIT_COMMIT says its records "
                f"are (`zerognn provenance` would reject them): restore them with `git checkout {commit} -- "
                f"{' '.join([*SOURCE_DIRS, *SOURCE_FILES])}` first")
    return None


def record(rounds: list[list[str]], args: argparse.Namespace) -> int:
    """Build, dry-run, then record ``rounds`` in whole rounds within the budget; the exit status."""
    start = time.monotonic()
    longest: dict[frozenset[str], float] = {}  # the longest round so far, by the configurations it ran
    with args.log.open("a") as log:
        every = [p for r in rounds for p in r]
        if snakemake(every, args.config, log, "--omit-from", "run", workspace=args.workspace).returncode != 0:
            print(f"building the study's datasets and kernels failed (Snakemake's output: {args.log})")
            return 1
        if args.carried:
            carried = [Path(p) for p in every if Path(p).is_file()]
            for path in carried:
                os.utime(path)
            print(f"{len(carried)} records carried from another machine, dated after this machine's build")
        dry = snakemake(every, args.config, log, "--dry-run", workspace=args.workspace)
        planned = planned_outputs(dry.stdout + dry.stderr)
        stale = {p: why for p, why in planned.items() if why.startswith(NEWER_INPUT) and Path(p).is_file()}
        if dry.returncode != 0 or stale:
            example = next(iter(stale.items()), None)
            print("stopped before the first round: " + (
                f"Snakemake would re-make {len(stale)} records already made ({example[0]}: {example[1]}); a "
                "study's rounds are made on one machine in calls back to back, from the first round (here: in a "
                "fresh results directory), or go on from records carried from another machine with --carried "
                "(CARRIED=1 in scripts/gpu_stages.sh)"
                if stale else f"its dry run failed (see {args.log})"))
            return 1
        for number, targets in enumerate(rounds, 1):
            label = f"round {number} of {len(rounds)}"
            to_make = [t for t in targets if t in planned]
            if not to_make:
                print(f"{label}: recorded already")
                continue
            shape = configurations(targets)
            foreseen = longest.get(shape, max(longest.values(), default=0.0))
            if time.monotonic() - start + foreseen > args.budget:
                like = "like it " if shape in longest else ""
                print(f"stopped before {label}: the longest round so far {like}({foreseen:.0f} s) would not end "
                      f"within {args.budget:.0f} s of the start; run the same command again")
                return 0
            began, wall = time.monotonic(), time.time()
            try:
                result = snakemake(targets, args.config, log, workspace=args.workspace, timeout=args.timeout)
            except subprocess.TimeoutExpired:
                print(f"{label}: stopped after {args.timeout:.0f} s (--timeout); its records are incomplete")
                return 1
            took = time.monotonic() - began
            print(f"{label}: snakemake rc={result.returncode} in {took:.0f} s")
            unmade = [t for t in to_make if not Path(t).is_file() or Path(t).stat().st_mtime < wall]
            if result.returncode != 0 or unmade:
                if unmade:
                    print(f"{label} ended without making {len(unmade)} of its {len(to_make)} records ({unmade[0]}); "
                          f"see {args.log}")
                return 1
            longest[shape] = max(longest.get(shape, 0.0), took)
    return 0


if __name__ == "__main__":
    sys.exit(main())
