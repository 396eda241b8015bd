"""Where one card's committed reference stands: for each study under ``results/reference/<card>/``, its records'
commits, and the runs its config (``workflow/config/h200-<study>.yaml``) plans that are not committed yet.

The reference is complete when every study the reference needs (``NEEDED``: every study the docs render,
``docs/templates/studies.yaml``, but ``scaling/``) is committed, every study holds every run its config plans, and every
record under the card's directory, outside ``scaling/`` (two GPUs), names one commit (``--commit``, where given). A
config's ``trials`` and ``seeds`` say how many processes each configuration needs, so a complete study has them all (ten
for the headline group, ``h200-trials.yaml``). Records no config of the card's studies plans (a directory without a
config) are listed, to be re-recorded or retired. A study that compares a configuration with itself across one field
(``ONE_MACHINE_ACROSS``: host load, deterministic mode) is complete only where the runs that differ just in that field
ran on one machine instance. A variant whose module cannot be imported here (a peer whose library is missing) is
planned as ``STAND_IN``'s runs under its own name. Beside the studies the card holds what the docs read from stages of
their own (``BESIDE``): the operator benchmark's output, whose header names its commit, and the profiler after-effect's
records, which count among the card's commits. Under a study with runs missing, each comparison group it lacks runs of
is named as ``scripts/gpu_stages.sh``'s ``ONLY=`` selects it (the key fields its groups differ in, but
``ONE_MACHINE_ACROSS``'s), with how many runs, so the next stage is that line (and where some of the group's runs are
committed, the scripts/carry_records.py line that carries them to go on from them elsewhere). That each committed
summary is what ``zerognn summarize`` makes of its records is tests/records/test_reference_summaries.py's check, not
this one's. Exit status 0 when complete, 1 otherwise.

    python scripts/reference_status.py --card h200 --commit 9a534af
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml
from beside import BESIDE
from beside import commits as commits_of
from round_targets import group_fields, only_value, planned_keys, round_records

from zerognn.errors import ZeroGNNError
from zerognn.records.files import iter_records
from zerognn.records.ids import CONFIGURATION_FIELDS, RunKey
from zerognn.variants import load_external, study_variants

REPO = Path(__file__).resolve().parents[1]
TWO_GPUS = "scaling"  # recorded on a two-GPU host, apart from the one card's commit
# The studies the reference needs, by directory name: every study the docs render (docs/templates/studies.yaml) but
# the two-GPU one and what the card holds beside its studies; each recorded from workflow/config/h200-<name>.yaml.
RENDERED = yaml.safe_load((REPO / "docs" / "templates" / "studies.yaml").read_text())
NEEDED = tuple(name for name in RENDERED if name != TWO_GPUS and Path(RENDERED[name]).name not in BESIDE)
# Variants whose rows in a study must carry an execution fraction (the loop body's GPU time, from its replay).
FRACTION_NEEDED = {"epoch": ("zerognn-epoch",)}
# Whose runs a variant that cannot be imported here (a peer whose library is missing) is planned as, under its name.
STAND_IN = "host-mediated"
# The field across which a study's docs compare a configuration with itself (a variant's step under host load over
# its step alone, in deterministic mode over default): runs that differ only in it (and in trial and seed) must come
# from one machine instance, since another host of the same GPU moves a host-bound step by as much as the effect.
# Such a study's groups that differ in the field are recorded together, so its missing runs are named without it.
ONE_MACHINE_ACROSS = {"interference": "host_load", "determinism": "deterministic"}


@dataclass
class Study:
    name: str
    records: list[dict] = field(default_factory=list)
    planned: set[str] | None = None  # the config's run ids; None where it has no config or cannot be planned here
    why_unplanned: str = ""
    note: str = ""  # said after the status: how the config was planned, where not as it is
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
        differ in, but ``ONE_MACHINE_ACROSS``'s; a variant and its trials and seeds are one group's), with its count:
        one line each; one line for the whole study where its groups do not differ in another field."""
        planned = [RunKey.parse(run_id) for run_id in sorted(self.planned or ())]
        differ = [f for f in group_fields(planned) if f != ONE_MACHINE_ACROSS.get(self.name)]
        if not differ:  # one stage records the study
            n = len(self.missing())
            return [f"the whole study, with no ONLY=: {n} run{'s' * (n != 1)}"] if n else []

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
        found += self._split_across_machines()
        for variant in FRACTION_NEEDED.get(self.name, ()) if self.records else ():
            profiled = [r for r in self.records if r["config"]["variant"] == variant and r["config"]["profile_steps"]]
            if not profiled or any(r["metrics"].get("gpu_exec_fraction") is None for r in profiled):
                found.append(f"{variant}'s profiled runs do not all carry an execution fraction")
        return found

    def _split_across_machines(self) -> list[str]:
        """Where the study compares configurations across ``ONE_MACHINE_ACROSS``'s field: the first set of runs
        that differ only in it yet ran on more than one machine instance (``environment.boot_id``)."""
        across = ONE_MACHINE_ACROSS.get(self.name)
        if across is None:
            return []
        boots: dict[tuple, set[str]] = {}
        names: dict[tuple, str] = {}
        for r in self.records:
            key = RunKey.parse(r["run_id"])
            others = tuple(getattr(key, f) for f in CONFIGURATION_FIELDS if f != across)
            boots.setdefault(others, set()).add(r["environment"].get("boot_id") or "unknown")
            names.setdefault(others, key.configuration().run_id)
        split = sorted((names[key], n) for key, b in boots.items() if (n := len(b)) > 1)
        if not split:
            return []
        return [f"its runs that differ only in {across} are compared, yet {len(split)} such set"
                f"{'s' * (len(split) != 1)} ran on more than one machine ({split[0][0]} on {split[0][1]}): "
                f"re-record the study with them together on one machine (git rm -r its records and figures, then "
                f"the stage without ONLY={across}=)"]

    def _short_configurations(self) -> list[str]:
        """Where the config cannot be planned here (a peer's library is missing): the committed configurations
        that lack some of their replicates; which configurations the config plans is not checked."""
        counts = Counter(RunKey.parse(run_id).configuration().run_id for run_id in self.run_ids)
        short = sorted(c for c, n in counts.items() if n < self.replicates)
        return [f"{len(short)} of its {len(counts)} configurations have fewer than the {self.replicates} processes its "
                f"config asks for ({short[0]})"] if short else []


def plan(study: Study) -> None:
    """The run ids ``h200-<study>.yaml`` plans (a variant whose module cannot be imported here planned as
    ``STAND_IN``'s runs under its name), or, where it cannot be planned even so, how many processes each of its
    configurations needs; or why neither."""
    config = REPO / "workflow" / "config" / f"h200-{study.name}.yaml"
    if not config.is_file():
        study.why_unplanned = f"no config {config.relative_to(REPO)}: re-record it from a config or retire it"
        return
    try:
        study.planned = {Path(p).stem for r in round_records(str(config)) for p in r}
    except ZeroGNNError as e:
        given = yaml.safe_load(config.read_text())
        stood_in = plan_standing_in(given)
        if stood_in is not None:
            study.planned, absent = stood_in
            study.note = (f"{', '.join(absent)} planned as {STAND_IN} is, on every model and precision the config "
                          f"names, since {e}")
            return
        study.replicates = given.get("trials", 1) * len(given.get("seeds", [0]))
        study.why_unplanned = study.note = f"which configurations its config plans is not checked here: {e}"


def plan_standing_in(given: dict) -> tuple[set[str], list[str]] | None:
    """The run ids of the config ``given`` where the variants its ``variant_modules`` define cannot all be imported
    here (a peer whose library is not installed), with those variants' runs planned as ``STAND_IN``'s under their
    names, and those variants; None where it does not plan even so."""
    if not isinstance(given.get("variants"), list):
        return None
    importable = []
    for spec in given.get("variant_modules", []):
        try:
            load_external(spec)
            importable.append(spec)
        except ZeroGNNError:
            continue
    known = study_variants(importable)
    absent = [v for v in given["variants"] if v not in known]
    if not absent:
        return None
    stand_in = given | {"variant_modules": importable,
                        "variants": [v for v in given["variants"] if v in known and v != STAND_IN] + [STAND_IN]}
    try:
        _, keys = planned_keys(stand_in, "the config with a stand-in")
    except ZeroGNNError:
        return None
    planned = {k.run_id for k in keys if k.variant != STAND_IN or STAND_IN in given["variants"]}
    planned |= {replace(k, variant=v).run_id for k in keys if k.variant == STAND_IN for v in absent}
    return planned, absent


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
        if study.note and study.records:
            status += f" ({study.note})"
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
