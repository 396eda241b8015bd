"""Where one card's committed reference stands: for each study under ``results/reference/<card>/``, its records'
commits, and the runs its config (``workflow/config/h200-<study>.yaml``) plans that are not committed yet.

The reference is complete when every study the reference needs (``NEEDED``: every study the docs render,
``docs/templates/studies.yaml``, but ``scaling/``) is committed, every study holds every run its config plans, and every
record under the card's directory, outside ``scaling/`` (two GPUs), names one commit (``--commit``, where given). A
config's ``trials`` and ``seeds`` say how many processes each configuration needs, so a complete study has them all (ten
for the headline group, ``h200-trials.yaml``). Records no config of the card's studies plans (a directory without a
config) are listed, to be re-recorded or retired. Beside the studies the card holds what the docs read from stages of
their own (``BESIDE``): the operator benchmark's output, whose header names its commit, and the profiler after-effect's
records, which count among the card's commits. Under a study with runs missing, each comparison group it lacks runs of
is named as ``scripts/gpu_stages.sh``'s ``ONLY=`` selects it (the key fields its groups differ in), with how many runs,
so the next stage is that line (and where some of the group's runs are committed, the scripts/carry_records.py line that
carries them to go on from them elsewhere). That each committed summary is what ``zerognn summarize`` makes of its
records is tests/records/test_reference_summaries.py's check, not this one's. Exit status 0 when complete, 1 otherwise.

    python scripts/reference_status.py --card h200 --commit 9a534af
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from beside import BESIDE
from beside import commits as commits_of
from round_targets import group_fields, only_value, round_records

from zerognn.errors import ZeroGNNError
from zerognn.records.files import iter_records
from zerognn.records.ids import RunKey

REPO = Path(__file__).resolve().parents[1]
TWO_GPUS = "scaling"  # recorded on a two-GPU host, apart from the one card's commit
# The studies the reference needs, by directory name: every study the docs render (docs/templates/studies.yaml) but
# the two-GPU one and what the card holds beside its studies; each recorded from workflow/config/h200-<name>.yaml.
RENDERED = yaml.safe_load((REPO / "docs" / "templates" / "studies.yaml").read_text())
NEEDED = tuple(name for name in RENDERED if name != TWO_GPUS and Path(RENDERED[name]).name not in BESIDE)
# Variants whose rows in a study must carry an execution fraction (the loop body's GPU time, from its replay).
FRACTION_NEEDED = {"epoch": ("zerognn-epoch",)}


@dataclass
class Study:
    name: str
    records: list[dict] = field(default_factory=list)
    planned: set[str] | None = None  # the config's run ids; None where it has no config or cannot be planned here
    why_unplanned: str = ""
    replicates: int | None = None  # where the config cannot be planned here: its trials times its seeds

    @property
    def commits(self) -> Counter:
        return Counter((r["environment"].get("git_commit") or "none")[:7] for r in self.records)

    @property
    def run_ids(self) -> set[str]:
        return {r["run_id"] for r in self.records}

    def missing(self) -> list[str]:
        return sorted((self.planned or set()) - self.run_ids)

    def missing_groups(self, card: str) -> list[str]:
        """Each comparison group with runs missing, as ``ONLY=field=value,...`` (the fields the planned groups
        differ in; a variant and its trials and seeds are one group's), with its count: one line each."""
        planned = [RunKey.parse(run_id) for run_id in sorted(self.planned or ())]
        differ = group_fields(planned)
        if not differ:
            return []
        def group(run_id: str) -> str:
            return ",".join(f"{f}={only_value(RunKey.parse(run_id), f)}" for f in differ)

        counts = Counter(group(run_id) for run_id in self.missing())
        held = Counter(group(run_id) for run_id in (self.planned or set()) & self.run_ids)
        return [f"ONLY={g}: {n} run{'s' * (n != 1)}" + (
                f" ({held[g]} committed: to go on from them on another machine, "
                f"scripts/carry_records.py {self.name} --card {card} --only {g}, then CARRIED=1)" if held[g] else "")
                for g, n in sorted(counts.items())]

    def problems(self) -> list[str]:
        """What keeps this study from being complete, one line each."""
        found = []
        if not self.records:
            found.append("not recorded")
        elif self.planned is None and self.replicates is None:
            found.append(self.why_unplanned)
        elif self.planned is None:
            found += self._short_configurations()
        elif missing := self.missing():
            found.append(f"{len(missing)} of the {len(self.planned)} runs its config plans are missing ({missing[0]})")
        for variant in FRACTION_NEEDED.get(self.name, ()) if self.records else ():
            profiled = [r for r in self.records if r["config"]["variant"] == variant and r["config"]["profile_steps"]]
            if not profiled or any(r["metrics"].get("gpu_exec_fraction") is None for r in profiled):
                found.append(f"{variant}'s profiled runs do not all carry an execution fraction")
        return found

    def _short_configurations(self) -> list[str]:
        """Where the config cannot be planned here (a peer's library is missing): the committed configurations
        that lack some of their replicates; which configurations the config plans is not checked."""
        counts = Counter(RunKey.parse(run_id).configuration().run_id for run_id in self.run_ids)
        short = sorted(c for c, n in counts.items() if n < self.replicates)
        return [f"{len(short)} of its {len(counts)} configurations have fewer than the {self.replicates} processes its "
                f"config asks for ({short[0]})"] if short else []


def plan(study: Study) -> None:
    """The run ids ``h200-<study>.yaml`` plans, or, where it cannot be planned here, how many processes each of
    its configurations needs; or why neither."""
    config = REPO / "workflow" / "config" / f"h200-{study.name}.yaml"
    if not config.is_file():
        study.why_unplanned = f"no config {config.relative_to(REPO)}: re-record it from a config or retire it"
        return
    try:
        study.planned = {Path(p).stem for r in round_records(str(config)) for p in r}
    except ZeroGNNError as e:
        given = yaml.safe_load(config.read_text())
        study.replicates = given.get("trials", 1) * len(given.get("seeds", [0]))
        study.why_unplanned = f"which configurations its config plans is not checked here: {e}"


def studies(card: Path) -> dict[str, Study]:
    """Every study committed under ``card`` and every needed one, by name ("" for records at the card's top)."""
    found = {name: Study(name) for name in NEEDED}
    for runs in sorted(card.rglob("runs")):
        name = runs.parent.relative_to(card).as_posix() if runs.parent != card else ""
        if name.split("/")[0] != TWO_GPUS:
            found.setdefault(name, Study(name)).records = list(iter_records(runs))
    for study in found.values():
        if study.name:
            plan(study)
        else:
            study.why_unplanned = "records at the card's top, of no study: retire them once reference/ holds its own"
    return found


def report(card: Path, commit: str | None) -> tuple[list[str], bool]:
    """The status lines and whether the reference is complete."""
    found = studies(card)
    commits = sum((s.commits for s in found.values()), Counter())
    lines, complete = [], True
    for study in sorted(found.values(), key=lambda s: (s.name not in NEEDED, s.name)):
        problems = study.problems()
        complete &= not problems
        label = study.name or "(top)"
        held = ", ".join(f"{c} x{n}" for c, n in study.commits.most_common()) or "-"
        status = "; ".join(problems) or "complete"
        if study.replicates is not None and study.records:
            status += f" ({study.why_unplanned})"
        lines.append(f"{label:<14} {len(study.records):>4} records ({held}): {status}")
        lines += [f"{'':<15}{group}" for group in study.missing_groups(card.name)]
    others = sorted(p.name for p in card.iterdir() if p.is_dir() and not (p / "runs").is_dir()
                    and any(p.glob("*.json")) and p.name not in BESIDE)
    for name in [*BESIDE, *others]:
        held = commits_of(card / name)
        commits += held
        if name not in BESIDE:
            status = f"no stage writes it here: re-record it into aftereffect/ ({BESIDE['aftereffect']}) or retire it"
        else:
            status = "complete" if held else f"not recorded: {BESIDE[name]} makes it"
            complete &= bool(held)
        commit_list = ", ".join(f"{c} x{n}" for c, n in held.most_common()) or "-"
        lines.append(f"{name:<14} {sum(held.values()):>4} records ({commit_list}): {status}")
    if len(commits) != 1:
        complete = False
        lines.append(f"the records name {len(commits)} commits ({', '.join(sorted(commits))}), not one")
    elif commit and not next(iter(commits)).startswith(commit[:7]):
        complete = False
        lines.append(f"the records name commit {next(iter(commits))}, not {commit} (--commit)")
    where = card.relative_to(REPO) if card.is_relative_to(REPO) else card
    lines.append(f"{where}: " + ("complete, at one commit" if complete else "not complete"))
    return lines, complete


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--card", default="h200", help="the card's directory under results/reference/ (h200, h100)")
    parser.add_argument("--commit", help="the commit every record must name (a prefix will do)")
    args = parser.parse_args()
    card = REPO / "results" / "reference" / args.card
    if not card.is_dir():
        parser.exit(2, f"reference_status: no {card.relative_to(REPO)}/: give the card a study was committed under "
                       f"({', '.join(sorted(p.name for p in card.parent.iterdir() if p.is_dir()))})\n")
    try:
        lines, complete = report(card, args.commit)
    except ZeroGNNError as e:
        parser.exit(2, f"reference_status: {e}\n")
    print("\n".join(lines))
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
