"""The summary table: one row per run record, plus speedup over host-mediated, written as CSV.

This is what the figures read. ``summary_row`` is the whole record→row mapping (``docs/records.md``
describes it for people); ``read_summary`` reads the CSV back with the same column types and rejects a
file that is empty, truncated, damaged or lists a run twice; ``check_summary_current`` says whether a
summary still matches the records it was built from.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from ..atomic import atomic_path
from ..catalog import BASELINE
from ..errors import ZeroGNNError, one_line
from .ids import COMPARISON_FIELDS, KEY_FIELDS, KEY_TYPES, RunKey, fanouts_label
from .schema import iter_records

# Runs that do the same work, so their step times compare; speedup is taken within such a group.
GROUP_KEYS = list(COMPARISON_FIELDS)
SORT_KEYS = ["dataset", "model", "batch_size", "host_load", "variant", "gpus"]
FINAL_LOSS_STEPS = 5

# Column → dtype, in output order. "str" columns may be empty (NaN); "Int64" is a nullable integer. The
# key's fields come first (fanouts as a label, '15-10-5'), so an axis added to the key is a column.
KEY_COLUMNS: dict[str, str] = {name: {"int": "int64", "bool": "bool"}.get(kind, "str")
                               for name, kind in KEY_TYPES.items()}
COLUMNS: dict[str, str] = {
    **KEY_COLUMNS, "device": "str", "hidden": "int64",
    "step_ms_median": "float64", "step_ms_p10": "float64", "step_ms_p90": "float64",
    "seeds_per_s": "float64", "epoch_s": "float64", "epoch_s_measured": "float64", "gpu_exec_fraction": "float64",
    "gpu_busy_ms_per_step": "float64", "profiler_dilation": "float64", "gpu_gap_in_graph_ms_per_step": "float64",
    "gpu_wait_host_ms_per_step": "float64", "host_syncs_per_step": "float64", "host_launches_per_step": "float64",
    "peak_mem_bytes": "Int64",
    "gpu_activities_per_step": "float64", "floor_ms": "float64", "step_over_floor": "float64",
    "final_loss": "float64", "val_acc": "float64", "test_acc": "float64",
    "speedup_vs_host_mediated": "float64", "slowdown_vs_no_load": "float64", "gpu_name": "str", "git_commit": "str",
    "run_id": "str",
}
SUMMARY_COLUMNS = list(COLUMNS)
# Columns every row has a value in (the rest may be empty: nulls). An empty one means a damaged file.
REQUIRED_COLUMNS = [
    *KEY_COLUMNS, "device", "hidden", "step_ms_median", "step_ms_p10", "step_ms_p90", "seeds_per_s", "epoch_s",
    "run_id",
]
# Relative difference between a row's step_ms_median and its record's that says the row is stale
# (the CSV holds full floats; only parsing may differ in the last bit).
STALE_RELATIVE = 1e-9
REBUILD = ("rebuild it from the run records with `zerognn summarize --runs RUNS_DIR --out {path}` "
           "(or `snakemake figures`)")


def final_loss(losses: list[float | None]) -> float:
    """Mean of the last few losses; NaN when there are none or one of them is null (non-finite)."""
    last = losses[-FINAL_LOSS_STEPS:]
    if not last or any(x is None for x in last):
        return math.nan
    return sum(last) / len(last)


def summary_row(record: dict[str, Any]) -> dict[str, Any]:
    """The summary columns of one record, without ``speedup_vs_host_mediated`` (needs the group)."""
    c, m, env = record["config"], record["metrics"], record["environment"]
    key = RunKey.of(c).as_dict()
    return {
        **key, "fanouts": fanouts_label(key["fanouts"]), "device": c["device"], "hidden": c["hidden"],
        **{k: m[k] for k in ("step_ms_median", "step_ms_p10", "step_ms_p90", "seeds_per_s", "epoch_s",
                             "epoch_s_measured", "gpu_exec_fraction", "gpu_busy_ms_per_step", "profiler_dilation",
                             "gpu_gap_in_graph_ms_per_step", "gpu_wait_host_ms_per_step", "host_syncs_per_step",
                             "host_launches_per_step", "peak_mem_bytes", "gpu_activities_per_step", "floor_ms",
                             "step_over_floor")},
        "final_loss": final_loss(record["losses"]),
        "val_acc": record["accuracy"]["val"], "test_acc": record["accuracy"]["test"],
        "gpu_name": env["gpu_name"], "git_commit": env["git_commit"], "run_id": record["run_id"],
    }


def add_speedup(df: pd.DataFrame) -> pd.DataFrame:
    """Host-mediated's median step time over each row's, within its group; NaN without a baseline."""
    base = df.loc[df["variant"] == BASELINE, GROUP_KEYS + ["step_ms_median"]]
    base = base.rename(columns={"step_ms_median": "_base_ms"})
    merged = df.merge(base, on=GROUP_KEYS, how="left")
    return df.assign(speedup_vs_host_mediated=(merged["_base_ms"] / merged["step_ms_median"]).to_numpy())


def add_slowdown(df: pd.DataFrame) -> pd.DataFrame:
    """Each row's median step over the same variant's in the same group without host load; NaN without one."""
    keys = [k for k in GROUP_KEYS if k != "host_load"] + ["variant"]
    base = df.loc[df["host_load"] == 0, keys + ["step_ms_median"]].rename(columns={"step_ms_median": "_quiet_ms"})
    merged = df.merge(base, on=keys, how="left")
    return df.assign(slowdown_vs_no_load=(merged["step_ms_median"] / merged["_quiet_ms"]).to_numpy())


def summarize(runs_dir: str | os.PathLike, out_csv: str | os.PathLike) -> pd.DataFrame:
    """Build the summary of every record under ``runs_dir``, write it to ``out_csv``, return it."""
    rows = [summary_row(r) for r in iter_records(runs_dir)]
    if not rows:
        raise ZeroGNNError(
            f"no run records (*.json) under {runs_dir}; run the pipeline first (snakemake) or point to the "
            f"directory that holds the records."
        )
    df = add_slowdown(add_speedup(pd.DataFrame(rows)))
    df = df.sort_values(SORT_KEYS, kind="stable").reset_index(drop=True)
    df = df[SUMMARY_COLUMNS].astype(COLUMNS)
    with atomic_path(out_csv) as tmp:
        df.to_csv(tmp, index=False)
    return df


def read_summary(path: str | os.PathLike) -> pd.DataFrame:
    """Read a summary CSV written by :func:`summarize`, with its column types.

    Raises ZeroGNNError, naming the file and saying to rebuild it, when the file is missing or empty,
    has no rows, was cut short (no final newline, a row with too few fields or an empty required
    column), holds a value of the wrong type, lists a run twice, or a row's run_id does not match its
    key columns.
    """
    rebuild = REBUILD.format(path=path)
    if not Path(path).is_file():
        raise ZeroGNNError(f"summary {path} does not exist; build it from the run records with `zerognn summarize "
                           f"--runs RUNS_DIR --out {path}` (or `snakemake figures`).")
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ZeroGNNError(f"cannot read summary {path}: {one_line(e)}; {rebuild}.") from e
    if not text.strip():
        raise ZeroGNNError(f"summary {path} is empty; {rebuild}.")
    header, rows = _csv_rows(text, path, rebuild)
    missing = [c for c in SUMMARY_COLUMNS if c not in header]
    if missing:
        raise ZeroGNNError(
            f"summary {path} lacks columns {', '.join(missing)}; it was written by another version or damaged. "
            f"{rebuild[0].upper()}{rebuild[1:]}."
        )
    if not rows:
        raise ZeroGNNError(f"summary {path} has a header but no rows; {rebuild}.")
    if not text.endswith("\n"):
        raise ZeroGNNError(f"summary {path} is truncated: its last line (line {rows[-1][0]}) does not end with a "
                           f"newline; {rebuild}.")
    position = {c: header.index(c) for c in SUMMARY_COLUMNS}
    for line, values in rows:
        if len(values) != len(header):
            raise ZeroGNNError(f"summary {path} is truncated or damaged: line {line} has {len(values)} fields but "
                               f"the header has {len(header)}; {rebuild}.")
        empty = [c for c in REQUIRED_COLUMNS if values[position[c]] == ""]
        if empty:
            raise ZeroGNNError(f"summary {path} is truncated or damaged: line {line} has no value for "
                               f"{', '.join(empty)}; {rebuild}.")
        for column, dtype in COLUMNS.items():
            problem = _type_problem(values[position[column]], dtype)
            if problem:
                raise ZeroGNNError(f"summary {path}: line {line}, column {column} holds "
                                   f"{values[position[column]][:40]!r}, {problem}; {rebuild}.")
    try:
        df = pd.read_csv(io.StringIO(text), dtype=COLUMNS, keep_default_na=False, na_values=[""])
    except (OSError, ValueError, TypeError, OverflowError) as e:
        raise ZeroGNNError(f"cannot read summary {path}: {one_line(e)}; {rebuild}.") from e
    if len(df) != len(rows):
        raise ZeroGNNError(f"summary {path} is damaged: {len(rows)} rows but pandas reads {len(df)}; {rebuild}.")
    lines = [line for line, _ in rows]
    first_line: dict[str, int] = {}
    for line, run_id in zip(lines, df["run_id"]):
        if run_id in first_line:
            raise ZeroGNNError(f"summary {path} lists run {run_id} twice (lines {first_line[run_id]} and {line}); "
                               f"{rebuild}.")
        first_line[run_id] = line
    for line, row in zip(lines, df.itertuples(index=False)):
        try:
            expected = repr(RunKey.of(row._asdict()).run_id)
        except (ZeroGNNError, ValueError):
            expected = "no valid run id"
        if repr(row.run_id) != expected:
            raise ZeroGNNError(f"summary {path} is damaged: line {line} has run_id {row.run_id!r} but its "
                               f"{', '.join(KEY_FIELDS)} give {expected}; {rebuild}.")
    return df


def check_summary_current(summary: pd.DataFrame, records: Iterable[dict[str, Any]],
                          summary_path: str | os.PathLike, runs_dir: str | os.PathLike) -> None:
    """Raise ZeroGNNError unless ``summary`` (read from ``summary_path``) has exactly one row per record
    of ``runs_dir`` and each row's step_ms_median is its record's."""
    rebuild = (f"rebuild it with `zerognn summarize --runs {runs_dir} --out {summary_path}` "
               f"(or `snakemake figures`)")
    by_id = {r["run_id"]: r for r in records}
    gone = [run_id for run_id in summary["run_id"] if run_id not in by_id]
    if gone:
        raise ZeroGNNError(f"summary {summary_path} is out of date: it names run {gone[0]}{_more(gone)} whose record "
                           f"is missing from {runs_dir}; {rebuild}.")
    listed = set(summary["run_id"])
    new = [run_id for run_id in by_id if run_id not in listed]
    if new:
        raise ZeroGNNError(f"record {new[0]}{_more(new)} in {runs_dir} is not in summary {summary_path}; {rebuild}.")
    for run_id, row_ms in zip(summary["run_id"], summary["step_ms_median"]):
        record_ms = by_id[run_id]["metrics"]["step_ms_median"]
        if abs(row_ms - record_ms) > STALE_RELATIVE * abs(record_ms):
            raise ZeroGNNError(f"summary {summary_path} is out of date: run {run_id} has step_ms_median {row_ms!r} "
                               f"there but {record_ms!r} in its record in {runs_dir}; {rebuild}.")


def _csv_rows(text: str, path: str | os.PathLike, rebuild: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the non-blank rows, each with the line it ends on (blank lines are skipped, as pandas
    does)."""
    reader = csv.reader(io.StringIO(text, newline="\n"), strict=True)
    rows: list[tuple[int, list[str]]] = []
    try:
        for values in reader:
            if values:
                rows.append((reader.line_num, values))
    except csv.Error as e:
        raise ZeroGNNError(f"summary {path} is damaged: line {reader.line_num}: {one_line(e)}; {rebuild}.") from e
    if not rows:
        raise ZeroGNNError(f"summary {path} is empty; {rebuild}.")
    return rows[0][1], rows[1:]


def _type_problem(value: str, dtype: str) -> str | None:
    """Why ``value`` (a CSV cell) does not fit the column type, or None; an empty cell is a null."""
    if value == "" or dtype == "str":
        return None
    if dtype == "bool":
        return None if value in ("True", "False") else "not True or False"
    try:
        number = float(value)
    except ValueError:
        return "not a number" if dtype == "float64" else "not an integer"
    if dtype in ("int64", "Int64") and not (math.isfinite(number) and number.is_integer()):
        return "not an integer"
    return None


def _more(items: list[str]) -> str:
    return f" (and {len(items) - 1} more)" if len(items) > 1 else ""
