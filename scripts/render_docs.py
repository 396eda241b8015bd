"""Write the numbers in README.md and docs/*.md from the committed run records, through the summary code.

A rendered region of a markdown file is a template's output between two comments:

    <!-- rendered from docs/templates/small-batch.md by scripts/render_docs.py: edit the template -->
    ...
    <!-- end of rendered region -->

Templates are Jinja2 (it comes with Snakemake, the pipeline extra). In a template, ``study("small-batch")``
is the committed study docs/templates/studies.yaml names for it (``study("h100/small-batch")``, a directory
under ``results/reference/``, names one directly) with its summary (``zerognn summarize``'s, read back with
``read_summary``) and its records; ``study("reference", dataset="products-like")`` only the configurations picked
(a directory holding groups of several commits). A study's methods pick runs by summary columns
(``variant="zerognn"``; a list picks any of its items):

- ``.commit``: the one commit its records name;
- ``.row(...)``: one configuration's summary row (columns as attributes); ``.rows(...)``: every row picked, as
  dicts, variants in the tables' order;
- ``.table([...], ...)``: the summary's markdown table (``zerognn.records.table``) cut to the named columns; an
  interval is read from it, whose cells are the summary table's;
- ``.trials(...)``: each trial's median step of one configuration, in trial order; ``.field(path, ...)``: each
  trial's value of a record field (dotted: ``metrics.phase_s.total``); ``.values(path, ...)``: that field in
  every run picked;
- ``.machines(...)``, ``.calls(...)``, ``.minutes(...)``: the machine instances and workflow invocations the
  runs came from, and the minutes from the first run's start to the last's; ``.run_minutes(...)``, on each
  machine to its last run's end, summed (None where records predate run timing);
- ``.groups(config)``: each comparison group a study config plans, with whether this study holds every run of it
  (a study recorded group by group renders the groups recorded so far and names the rest);
- ``.shares_records_with(other, ...)``: whether the runs picked are ``other``'s records too.

``bench_ops()`` reads the committed ``zerognn bench-ops`` output docs/templates/studies.yaml names back (its
commit, copy ceiling, operator timings and the dense layers' padding cost); ``aftereffect()`` the profiler
after-effect records it names (each process's ratio of its two windows, with the session and without).

``rounds("workflow/config/h200-tta.yaml")`` is the rounds a study's config plans, each a list of the record
paths it makes (``scripts/round_targets.py``): what a study recorded only in part is measured against.
``planned_runs(config)`` is how many runs it plans (None where it cannot be planned here). A template reads the
path of the file it is rendered into as ``document``.

Filters: ``f(value, ".2f")`` formats a number; ``ms_list(values)`` joins trial medians; ``median``;
``max_rel_diff(values, reference)`` (the largest relative difference of paired items). The test ``missing``
says a summary cell is empty (``row.time_to_target_s is missing``: None or NaN).

    python scripts/render_docs.py            # rewrite every rendered region
    python scripts/render_docs.py --check    # exit 1, naming each region the records no longer give
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

import jinja2
import pandas as pd
import yaml

from zerognn.atomic import atomic_path
from zerognn.catalog import variant_order
from zerognn.errors import ZeroGNNError
from zerognn.records import stats
from zerognn.records.files import iter_records
from zerognn.records.ids import RunKey
from zerognn.records.summary import read_summary, trial_frame
from zerognn.records.table import markdown_table

sys.path.insert(0, str(Path(__file__).resolve().parent))
import beside  # noqa: E402  (scripts/beside.py: the reference's files beside its studies)
from round_targets import group_fields, round_records  # noqa: E402

sys.path.remove(str(Path(__file__).resolve().parent))

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "results" / "reference"
# Each study the docs render -> its directory under REFERENCE: the one place a study's card and commit are chosen.
STUDIES = REPO / "docs" / "templates" / "studies.yaml"
DOCUMENTS = ("README.md", "docs/*.md", "workflow/config/h200-*.yaml")
# A region may sit inside a list item, or in a YAML file's comment: its lines then carry the start comment's indent
# (spaces, or "# "), which the body and the end comment are written with too.
REGION = re.compile(r"(?P<indent>^[ \t]*(?:# ?)?)(<!-- rendered from (\S+) by scripts/render_docs\.py: edit the "
                    r"template -->\n)(.*?)(?:^[ \t]*(?:# ?)?)?(<!-- end of rendered region -->)", re.S | re.M)


class Study:
    """A committed study: ``results/reference/<name>/`` with ``summary.csv`` and ``runs/``; with ``part`` (summary
    column=value), only the configurations it picks (a directory holding groups recorded at several commits)."""

    def __init__(self, name: str, **part):
        self.name, self.dir = name, REFERENCE / name
        self.summary = read_summary(self.dir / "summary.csv")
        records = {r["run_id"]: r for r in iter_records(self.dir / "runs")}
        self._trials = trial_frame(records.values())
        if part:
            self.name += " (" + ", ".join(f"{k}={v}" for k, v in part.items()) + ")"
            self.summary = self._where(self.summary, part).reset_index(drop=True)
            self._trials = self._where(self._trials, part)
            if self.summary.empty:
                raise ZeroGNNError(f"study {self.name} picks no configuration")
        self._records = {run_id: records[run_id] for run_id in self._trials["run_id"]}
        commits = sorted(set(self.summary["git_commit"].dropna()))
        if len(commits) != 1:
            named = ", ".join(commits) or "none"
            raise ZeroGNNError(f"study {self.name}'s records name {len(commits)} commits ({named}); a rendered "
                               f"number comes from one study at one commit")
        self.commit = commits[0][:7]

    def _where(self, frame: pd.DataFrame, where: dict) -> pd.DataFrame:
        unknown = sorted(set(where) - set(frame.columns))
        if unknown:
            raise ZeroGNNError(f"study {self.name} has no column {', '.join(unknown)}")
        mask = pd.Series(True, index=frame.index)
        for column, value in where.items():
            mask &= frame[column].isin(value) if isinstance(value, (list, tuple)) else frame[column] == value
        return frame[mask]

    def row(self, **where) -> dict:
        """The one summary row that ``where`` (column=value) picks, as a dict (a template reads ``row.column``)."""
        rows = self._where(self.summary, where)
        if len(rows) != 1:
            raise ZeroGNNError(f"study {self.name}: {where} picks {len(rows)} summary rows, not one")
        return rows.iloc[0].to_dict()

    def rows(self, **where) -> list[dict]:
        """Every summary row ``where`` picks, as dicts, its variants in the order the tables give them."""
        rows = self._where(self.summary, where)
        order = {v: i for i, v in enumerate(variant_order(rows["variant"]))}
        return rows.sort_values("variant", key=lambda v: v.map(order), kind="stable").to_dict("records")

    def table(self, columns: list[str], **where) -> str:
        """The summary's markdown table of the rows ``where`` picks, with only ``columns`` (by header)."""
        lines = markdown_table(self._where(self.summary, where)).splitlines()
        header = [c.strip() for c in lines[0].strip("|").split("|")]
        missing = [c for c in columns if c not in header]
        if missing:
            raise ZeroGNNError(f"the summary's table has no column {missing}; it has {header}")
        keep = [header.index(c) for c in columns]
        out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        for line in lines[2:]:
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            out.append("| " + " | ".join(cells[i] for i in keep) + " |")
        return "\n".join(out)

    def gpu(self) -> str:
        """The GPU model the study ran on, as its records name it (``NVIDIA H200``): one, or a one-line error."""
        names = sorted(set(self.values("environment.gpu_name")))
        if len(names) != 1:
            raise ZeroGNNError(f"study {self.name}'s records name {len(names)} GPU models ({', '.join(names)})")
        return names[0]

    def machines(self, **where) -> int:
        """How many machine instances (records' ``boot_id``) the runs ``where`` picks ran on."""
        return self._where(self._trials, where)["boot_id"].nunique()

    def per_machine(self, path: str, **where) -> list[list]:
        """A record field's distinct values (sorted) on each machine instance the runs ``where`` picks ran on,
        the machines in the order of their first run (which seeds ran where, say)."""
        rows = self._where(self._trials, where).assign(_start=lambda t: pd.to_datetime(t["started_at"], utc=True))
        machines = sorted((runs for _, runs in rows.groupby(rows["boot_id"].fillna(""))),
                          key=lambda runs: runs["_start"].min())
        return [sorted({self._field(r, path) for r in runs["run_id"]}) for runs in machines]

    def minutes(self, **where) -> float:
        """Minutes from the first to the last start of the runs ``where`` picks (records' ``started_at``)."""
        started = pd.to_datetime(self._where(self._trials, where)["started_at"], utc=True)
        return (started.max() - started.min()).total_seconds() / 60

    def run_minutes(self, **where) -> float | None:
        """Minutes the runs ``where`` picks took on their machines: on each machine (records' ``boot_id``), from
        its first run's start to its last run's end (``started_at`` plus ``metrics.phase_s.total``), summed over
        machines; no machine start, install or dataset build. None where a record predates those fields."""
        rows = self._where(self._trials, where)
        totals = self._run_totals(rows)
        if rows.empty or rows["started_at"].isna().any() or None in totals:
            return None
        start = pd.to_datetime(rows["started_at"], utc=True)
        runs = pd.DataFrame({"machine": rows["boot_id"].fillna(""), "start": start,
                             "end": start + pd.to_timedelta(totals, unit="s")})
        spans = runs.groupby("machine").agg(start=("start", "min"), end=("end", "max"))
        return (spans["end"] - spans["start"]).dt.total_seconds().sum() / 60

    def _run_totals(self, rows: pd.DataFrame) -> list[float | None]:
        """Each picked run's seconds from its start to its record (``metrics.phase_s.total``; None before it)."""
        return [self._records[r]["metrics"].get("phase_s", {}).get("total") for r in rows["run_id"]]

    def process_minutes(self, **where) -> float | None:
        """Minutes the processes ``where`` picks ran, each its own ``metrics.phase_s.total``, summed: no gaps
        between them, and none of the runs of another study that ran between them on the same machine (a study
        committed from another's archive, as small-batch is from the reference's). None where a record predates
        the field."""
        totals = self._run_totals(self._where(self._trials, where))
        return None if not totals or None in totals else sum(totals) / 60

    def minutes_among_others(self) -> float | None:
        """``process_minutes()`` where the study's own processes fill under half of ``run_minutes()`` (its runs
        were recorded among another study's, which its span then mostly counts), else None: the docs add it then."""
        span, own = self.run_minutes(), self.process_minutes()
        return own if span is not None and own is not None and own < span / 2 else None

    def _one_configuration(self, where: dict) -> pd.DataFrame:
        rows = self._where(self._trials, where)
        if rows["configuration_id"].nunique() != 1:
            raise ZeroGNNError(f"study {self.name}: {where} picks {rows['configuration_id'].nunique()} "
                               f"configurations, not one")
        return rows.sort_values("trial")

    def trials(self, **where) -> list[float]:
        """Each trial's median step (ms) of the one configuration ``where`` picks, in trial order."""
        return list(self._one_configuration(where)["step_ms_median"])

    def ratio(self, top: dict, bottom: dict) -> tuple[float, float | None, float | None]:
        """median(``top``'s trials) / median(``bottom``'s), two configurations of this study picked as ``where``
        is, with the summary's bootstrap interval (``zerognn.records.stats.ratio_ci``; None below its trials):
        how many times faster ``bottom`` steps than ``top``."""
        over, under = self.trials(**top), self.trials(**bottom)
        interval = stats.ratio_ci(over, under) or (None, None)
        return stats.median(over) / stats.median(under), *interval

    def _field(self, run_id: str, path: str):
        value = self._records[run_id]
        for key in path.split("."):
            if not isinstance(value, dict) or key not in value:
                raise ZeroGNNError(f"study {self.name}: record {run_id} has no field {path}")
            value = value[key]
        return value

    def field(self, path: str, **where) -> list:
        """Each trial's value of a record field (dotted, e.g. ``metrics.phase_s.total``) of the one configuration
        ``where`` picks, in trial order."""
        return [self._field(run_id, path) for run_id in self._one_configuration(where)["run_id"]]

    def same_losses_as_first(self, **where) -> list[bool]:
        """For each later trial of the one configuration ``where`` picks: whether its losses are trial 1's, bit for
        bit, over the steps both ran (trial 1 also trains its profiler's window)."""
        first, *later = self.field("losses", **where)
        return [loss[:len(first)] == first[:len(loss)] for loss in later]

    def shares_records_with(self, other: Study, **where) -> bool:
        """Whether every run ``where`` picks is also ``other``'s, the same record under the same run id (a group
        committed from another study's archive: the precision study's float32 group is the trials study's)."""
        runs = self._where(self._trials, where)["run_id"]
        return not runs.empty and all(other._records.get(r) == self._records[r] for r in runs)

    def groups(self, config: str) -> list[dict]:
        """Each comparison group ``config`` (a path under the repository) plans, its runs alike but for the
        variant, trial and seed, in the order the plan first reaches it: as a dict of the run-key fields the groups
        differ in (``dataset``, ``model``, ``batch_size``, ...), with ``runs``, how many runs it plans, ``missing``,
        how many of them this study lacks, and ``complete``, whether none."""
        planned = [RunKey.parse(Path(path).stem) for round_ in planned_rounds(config) for path in round_]
        differ = group_fields(planned)
        found: dict[tuple, dict] = {}
        for key in planned:
            group = found.setdefault(tuple(getattr(key, f) for f in differ),
                                     {f: getattr(key, f) for f in differ} | {"runs": 0, "missing": 0})
            group["runs"] += 1
            group["missing"] += key.run_id not in self._records
        return [group | {"complete": group["missing"] == 0} for group in found.values()]

    def values(self, path: str, **where) -> list:
        """A record field's value in every run ``where`` picks, of any configuration."""
        return [self._field(run_id, path) for run_id in self._where(self._trials, where)["run_id"]]

    def calls(self, **where) -> int:
        """How many workflow invocations (records' ``environment.call_id``) the runs ``where`` picks came from."""
        runs = self._where(self._trials, where)["run_id"]
        return len({self._records[r]["environment"].get("call_id") for r in runs})


def max_rel_diff(values: list[float], reference: list[float]) -> float:
    """The largest |value - reference| / |reference| over paired items (two runs' per-step losses, say)."""
    if len(values) != len(reference):
        raise ZeroGNNError(f"max_rel_diff pairs {len(values)} values with {len(reference)}")
    return max(abs(v - r) / abs(r) for v, r in zip(values, reference))


def planned_rounds(config: str) -> list[list[str]]:
    """The rounds ``config`` (a path under the repository) plans, each its record paths."""
    return round_records(str(REPO / config))


def planned_runs(config: str) -> int | None:
    """How many runs ``config`` plans; None where it cannot be planned here (a peer's library missing)."""
    try:
        return sum(len(round_) for round_ in planned_rounds(config))
    except ZeroGNNError:
        return None


def environment(root: Path = REPO) -> jinja2.Environment:
    """Templates named by their path under ``root``; the helpers above as its globals and filters."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(root), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, autoescape=False)
    studies: dict[str, Study] = {}
    rendered = yaml.safe_load(STUDIES.read_text())
    def study(name: str, **part) -> Study:
        key = name + repr(sorted(part.items()))
        if key not in studies:
            studies[key] = Study(rendered.get(name, name), **part)
        return studies[key]

    env.globals["study"] = study
    env.globals["rounds"] = planned_rounds
    env.globals["planned_runs"] = planned_runs
    env.globals["bench_ops"] = lambda: beside.bench_ops(REFERENCE, rendered["bench-ops"])
    env.globals["aftereffect"] = lambda: beside.aftereffect(REFERENCE, rendered["aftereffect"])
    env.filters["f"] = format
    env.filters["ms_list"] = lambda values, fmt=".2f", sep=" / ": sep.join(format(v, fmt) for v in values)
    env.filters["median"] = statistics.median
    env.filters["max_rel_diff"] = max_rel_diff
    env.tests["missing"] = lambda value: value is None or (pd.api.types.is_scalar(value) and pd.isna(value))
    return env


def render(text: str, env: jinja2.Environment, document: str = "") -> str:
    """``text`` with each rendered region's body made again from its template, which reads the path of the file it
    is rendered into (under the repository) as ``document``."""
    def body(match: re.Match) -> str:
        try:
            rendered = env.get_template(match.group(3)).render(document=document)
        except jinja2.TemplateError as e:
            raise ZeroGNNError(f"template {match.group(3)}: {type(e).__name__}: {e}") from e
        indent = match.group("indent")
        lines = (rendered + ("" if rendered.endswith("\n") else "\n")).splitlines(keepends=True)
        body = "".join(indent + line if line.strip() else indent.rstrip() + line for line in lines)
        return indent + match.group(2) + body + indent + match.group(5)
    return REGION.sub(body, text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a region is out of date")
    args = parser.parse_args()
    env, stale = environment(), []
    try:
        for path in sorted({p for pattern in DOCUMENTS for p in REPO.glob(pattern)}):
            text = path.read_text()
            new = render(text, env, path.relative_to(REPO).as_posix())
            if new != text:
                stale.append(path.relative_to(REPO).as_posix())
                if not args.check:
                    with atomic_path(path) as tmp:
                        Path(tmp).write_text(new)
    except ZeroGNNError as e:
        print(f"render_docs: {path.relative_to(REPO)}: {e}", file=sys.stderr)
        return 2
    if stale:
        print(("out of date (run python scripts/render_docs.py): " if args.check else "rewrote: ") + ", ".join(stale))
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
