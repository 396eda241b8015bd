"""The summary table: one row per configuration, its trials (fresh processes) aggregated, written as CSV.

This is what the figures read. ``trial_row`` maps one record to its trial's values; ``configuration_rows``
aggregates a configuration's trials (``zerognn.records.stats``): the median over trials of each trial's
median step with its 95 % interval and the between-trial CV, the medians of the other metrics over the
trials that have them (only the first trial is profiled and evaluated), and within each comparison group
the ratios to host-mediated (speedup, whole-epoch speedup, peak memory) with bootstrap intervals. A
configuration's trials must agree on everything that is not measured (commit, GPU, hidden width), and a
comparison group's records must come from one commit and one machine instance unless a study across
machines allows it (``check_one_provenance``); old one-trial records summarise as n = 1 without
intervals. ``read_summary`` reads the CSV back with the same column types and rejects a file that is
empty, truncated, damaged or lists a configuration twice; ``check_summary_current`` says whether a
summary still matches the records it was built from.
"""

from __future__ import annotations

import csv
import io
import math
import os
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from ..atomic import atomic_path
from ..catalog import BASELINE
from ..errors import ZeroGNNError, one_line
from . import stats
from .ids import COMPARISON_FIELDS, CONFIGURATION_FIELDS, KEY_TYPES, RunKey, fanouts_label
from .schema import iter_records
from .training import setup_seconds

# Configurations that do the same work, so their step times compare; ratios are taken within such a group.
GROUP_KEYS = list(COMPARISON_FIELDS)
CONFIGURATION_KEYS = list(CONFIGURATION_FIELDS)
SORT_KEYS = ["dataset", "model", "batch_size", "host_load", "variant", "gpus"]
FINAL_LOSS_STEPS = 5
# What a configuration's trials must share: they repeat one run, so only measurements may differ.
SHARED = ("device", "hidden", "gpu_name", "git_commit")
# Metrics copied from a record's metrics as they are.
RECORD_METRICS = (
    "gpu_exec_fraction", "gpu_busy_ms_per_step", "profiler_dilation", "gpu_gap_in_graph_ms_per_step",
    "gpu_wait_host_ms_per_step", "host_syncs_per_step", "host_launches_per_step", "gpu_activities_per_step",
    "floor_ms",
)
# Per-trial values summarised as the median over the trials that have one (only the first trial is
# profiled and evaluated).
MEDIAN_METRICS = (*RECORD_METRICS, "final_loss", "val_acc", "test_acc", "setup_s")
# Byte counts, summarised as the median over trials rounded to a whole byte.
MEMORY_METRICS = ("peak_mem_bytes", "peak_reserved_bytes", "ideal_mem_bytes")
# Ratios to host-mediated within a comparison group: column -> (the trials' metric, whether the baseline's
# value is the numerator), each with a bootstrap interval.
RATIOS = {
    "speedup_vs_host_mediated": ("step_ms_median", True),
    "epoch_speedup_vs_host_mediated": ("epoch_s_measured", True),
    "peak_mem_vs_host_mediated": ("peak_mem_bytes", False),
    "tta_speedup_vs_host_mediated": ("time_to_target_s", True),
}
# A run to the target's times, summarised with the median's interval, only where every trial reached it.
TARGET_TIMES = ("time_to_target_s", "time_to_target_with_setup_s")


def _with_ci(name: str) -> dict[str, str]:
    return {name: "float64", f"{name}_ci_low": "float64", f"{name}_ci_high": "float64"}


# Column → dtype, in output order. "str" columns may be empty (NaN); "Int64" is a nullable integer. The
# configuration's key fields come first (fanouts as a label, '15-10-5'), so an axis added to the key is a
# column.
KEY_COLUMNS: dict[str, str] = {name: {"int": "int64", "bool": "bool"}.get(kind, "str")
                               for name, kind in KEY_TYPES.items() if name in CONFIGURATION_FIELDS}
COLUMNS: dict[str, str] = {
    **KEY_COLUMNS, "device": "str", "hidden": "int64", "trials": "int64",
    **_with_ci("step_ms_median"), "step_ms_cv": "float64", "step_ms_p10": "float64", "step_ms_p90": "float64",
    "seeds_per_s": "float64", "epoch_s": "float64", **_with_ci("epoch_s_measured"), "setup_s": "float64",
    "gpu_exec_fraction": "float64", "gpu_exec_fraction_raw": "float64", "gpu_busy_ms_per_step": "float64",
    "profiler_dilation": "float64",
    "gpu_gap_in_graph_ms_per_step": "float64", "gpu_wait_host_ms_per_step": "float64",
    "host_syncs_per_step": "float64", "host_launches_per_step": "float64", "peak_mem_bytes": "Int64",
    "peak_reserved_bytes": "Int64", "ideal_mem_bytes": "Int64",
    "gpu_activities_per_step": "float64", "floor_ms": "float64", "step_over_floor": "float64",
    "final_loss": "float64", "val_acc": "float64", "test_acc": "float64",
    "targets_reached": "Int64", **{column: kind for name in TARGET_TIMES for column, kind in _with_ci(name).items()},
    "epochs_to_target": "float64", "epochs_to_target_min": "Int64", "epochs_to_target_max": "Int64",
    "final_val_acc_mean": "float64", "final_val_acc_std": "float64", "convergence_flag": "str",
    **{column: kind for name in RATIOS for column, kind in _with_ci(name).items()},
    "slowdown_vs_no_load": "float64", "gpu_name": "str", "git_commit": "str", "run_id": "str",
}
SUMMARY_COLUMNS = list(COLUMNS)
# Columns every row has a value in (the rest may be empty: nulls). An empty one means a damaged file.
REQUIRED_COLUMNS = [
    *KEY_COLUMNS, "device", "hidden", "trials", "step_ms_median", "step_ms_p10", "step_ms_p90", "seeds_per_s",
    "epoch_s", "run_id",
]
# Relative difference between a row's step_ms_median and its records' that says the row is stale
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


def trial_row(record: dict[str, Any]) -> dict[str, Any]:
    """One record's values as a trial of its configuration: its key (trial included) and what it measured."""
    c, m, env = record["config"], record["metrics"], record["environment"]
    key = RunKey.of(c)
    return {
        **key.as_dict(), "fanouts": fanouts_label(key.fanouts), "device": c["device"], "hidden": c["hidden"],
        **{k: m[k] for k in ("step_ms_median", "step_ms_p10", "step_ms_p90", "steps_per_epoch", "epoch_s_measured",
                             *MEMORY_METRICS, *RECORD_METRICS)},
        "setup_s": setup_seconds(m["phase_s"]),
        "final_loss": final_loss(record["losses"]),
        "val_acc": record["accuracy"]["val"], "test_acc": record["accuracy"]["test"],
        **_to_target(record["training"]),
        "gpu_name": env["gpu_name"], "git_commit": env["git_commit"], "boot_id": env.get("boot_id"),
        "started_at": env.get("started_at"),
        "run_id": record["run_id"], "configuration_id": key.configuration().run_id,
    }


def _to_target(training: dict[str, Any] | None) -> dict[str, Any]:
    """A trial's run to the target: whether it reached it, its times and epochs to it (NaN where not), and the
    last evaluation's accuracy; every value NaN for a run that did not train to a target, all but the accuracy
    for one on a dataset without a target (the curve alone)."""
    if training is None:
        return {"reached": math.nan, **dict.fromkeys((*TARGET_TIMES, "epochs_to_target", "final_val_acc"), math.nan)}
    reached = training["not_reached"] is None
    has_target = training["target_val_acc"] is not None
    return {"reached": float(reached) if has_target else math.nan,
            **{k: training[k] if reached else math.nan for k in TARGET_TIMES},
            "epochs_to_target": training["epochs_to_target"] if reached else math.nan,
            "final_val_acc": training["evaluations"][-1]["val_acc"]}


def trial_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per record (``trial_row``), in the order given."""
    return pd.DataFrame([trial_row(r) for r in records])


def _present(values: pd.Series) -> list[float]:
    return [float(v) for v in values if v is not None and not pd.isna(v)]


def _median_or_nan(values: pd.Series) -> float:
    present = _present(values)
    return stats.median(present) if present else math.nan


def _median_bytes(values: pd.Series) -> Any:
    median = _median_or_nan(values)
    return pd.NA if math.isnan(median) else round(median)


def _interval(name: str, values: list[float]) -> dict[str, float]:
    """``<name>_ci_low`` / ``_ci_high``: the median's interval over ``values`` (NaN below ``stats.MIN_TRIALS``)."""
    interval = stats.median_ci(values) or (math.nan, math.nan)
    return {f"{name}_ci_low": interval[0], f"{name}_ci_high": interval[1]}


def _shared(trials: pd.DataFrame, column: str, config_id: str) -> Any:
    values = {None if pd.isna(v) else v for v in trials[column]}
    if len(values) > 1:
        shown = ", ".join(sorted(str(v) for v in values))
        raise ZeroGNNError(f"the trials of {config_id} differ in {column} ({shown}): they are not repeats of one "
                           f"configuration; re-run the trials whose records are stale (or move them aside)")
    return values.pop()


def _configuration(config_id: str, trials: pd.DataFrame) -> dict[str, Any]:
    """One configuration's row from its trials (the ratios are added per group afterwards)."""
    first = trials.iloc[0]
    steps = trials["step_ms_median"].tolist()
    median = stats.median(steps)
    epochs = _present(trials["epoch_s_measured"])
    spread = stats.cv(steps)
    floor = _median_or_nan(trials["floor_ms"])
    return {
        **{k: first[k] for k in KEY_COLUMNS}, **{k: _shared(trials, k, config_id) for k in SHARED},
        "trials": len(trials),
        "step_ms_median": median, **_interval("step_ms_median", steps),
        "step_ms_cv": math.nan if spread is None else spread,
        "step_ms_p10": stats.median(trials["step_ms_p10"].tolist()),
        "step_ms_p90": stats.median(trials["step_ms_p90"].tolist()),
        "seeds_per_s": first["batch_size"] * first["gpus"] / (median / 1e3),
        "epoch_s": median * first["steps_per_epoch"] / 1e3,
        "epoch_s_measured": _median_or_nan(trials["epoch_s_measured"]), **_interval("epoch_s_measured", epochs),
        **{k: _median_or_nan(trials[k]) for k in MEDIAN_METRICS},
        # uncapped: GPU time under the profiler can exceed the unprofiled step by a few per cent
        "gpu_exec_fraction_raw": _median_or_nan(trials["gpu_busy_ms_per_step"]) / median,
        **{k: _median_bytes(trials[k]) for k in MEMORY_METRICS},
        "step_over_floor": median / floor,
        **_to_target_columns(trials),
        "run_id": config_id,
    }


def _to_target_columns(trials: pd.DataFrame) -> dict[str, Any]:
    """A configuration's runs to the target: how many reached it; the times' medians with their intervals and
    the epochs' median and range, only where every one did (a time that was never reached has no value to
    take a median of); the last evaluation's accuracy as mean and sample standard deviation (OGB's form)."""
    trained = trials[trials["reached"].notna()]
    every = not trained.empty and bool(trained["reached"].all())
    times = {name: trained[name].tolist() if every else [] for name in TARGET_TIMES}
    epochs = trained["epochs_to_target"].tolist() if every else []
    accuracy = _present(trials["final_val_acc"])
    return {
        "targets_reached": int(trained["reached"].sum()) if not trained.empty else pd.NA,
        **{column: value for name in TARGET_TIMES for column, value in
           {name: stats.median(times[name]) if every else math.nan, **_interval(name, times[name])}.items()},
        "epochs_to_target": stats.median(epochs) if epochs else math.nan,
        "epochs_to_target_min": int(min(epochs)) if epochs else pd.NA,
        "epochs_to_target_max": int(max(epochs)) if epochs else pd.NA,
        "final_val_acc_mean": statistics.fmean(accuracy) if accuracy else math.nan,
        "final_val_acc_std": statistics.stdev(accuracy) if len(accuracy) > 1 else math.nan,
    }


def check_one_provenance(trials: pd.DataFrame) -> None:
    """ZeroGNNError unless every comparison group's records come from one commit and one machine instance
    (``environment.boot_id``; records without one are not counted against it)."""
    for values, group in trials.groupby(GROUP_KEYS, sort=False):
        for column, what in (("git_commit", "commits"), ("boot_id", "machine instances (boot ids)")):
            seen = group.dropna(subset=[column]).drop_duplicates(column)
            if len(seen) > 1:
                runs = ", ".join(f"{run_id} ({value})" for run_id, value in zip(seen["run_id"], seen[column]))
                raise ZeroGNNError(
                    f"the comparison group {' '.join(str(v) for v in values)} mixes {what}: {runs}; record a group "
                    f"at one commit on one machine, or, for a study across machines, allow it (config "
                    f"`mixed_provenance: true`, zerognn summarize --allow-mixed-provenance)")


def configuration_rows(trials: pd.DataFrame) -> pd.DataFrame:
    """The summary of ``trial_frame`` rows: one row per configuration, with the ratios to host-mediated."""
    by_config = {config_id: t for config_id, t in trials.groupby("configuration_id", sort=False)}
    df = pd.DataFrame([_configuration(config_id, t) for config_id, t in by_config.items()])
    for column, (metric, baseline_on_top) in RATIOS.items():
        df = _add_ratio(df, by_config, column, metric, baseline_on_top)
    return _add_convergence_flag(_add_slowdown(df))


def _add_ratio(df: pd.DataFrame, by_config: dict[str, pd.DataFrame], column: str, metric: str,
               baseline_on_top: bool) -> pd.DataFrame:
    """Each row's ``metric`` against host-mediated's in its group: the ratio of the trials' medians, with a
    bootstrap interval (none for host-mediated itself, or with too few trials)."""
    base_ids = df.loc[df["variant"] == BASELINE].set_index(GROUP_KEYS)["run_id"]
    row_values = df.set_index("run_id")[metric]  # a configuration without a value of its own has no ratio
    point, low, high = [], [], []
    for row in df.itertuples(index=False):
        base_id = base_ids.get(tuple(getattr(row, k) for k in GROUP_KEYS))
        ours = _present(by_config[row.run_id][metric])
        theirs = [] if base_id is None else _present(by_config[base_id][metric])
        if not ours or not theirs or pd.isna(row_values[row.run_id]) or pd.isna(row_values[base_id]):
            point.append(math.nan), low.append(math.nan), high.append(math.nan)
            continue
        top, bottom = (theirs, ours) if baseline_on_top else (ours, theirs)
        point.append(stats.median(top) / stats.median(bottom))
        interval = None if row.run_id == base_id else stats.ratio_ci(top, bottom)
        low.append(math.nan if interval is None else interval[0])
        high.append(math.nan if interval is None else interval[1])
    return df.assign(**{column: point, f"{column}_ci_low": low, f"{column}_ci_high": high})


def _add_convergence_flag(df: pd.DataFrame) -> pd.DataFrame:
    """``convergence_flag``: why a variant's epochs to the target are not host-mediated's within the seeds'
    spread (its range and host-mediated's do not overlap): it would not be training the same thing. Empty
    otherwise, and where either has no epochs to compare."""
    span = ["epochs_to_target_min", "epochs_to_target_max"]
    base = {tuple(r[k] for k in GROUP_KEYS): tuple(r[span]) for _, r in df.loc[df["variant"] == BASELINE].iterrows()}
    flags = []
    for _, row in df.iterrows():
        (low, high), (base_low, base_high) = tuple(row[span]), base.get(tuple(row[GROUP_KEYS]), (pd.NA, pd.NA))
        if any(pd.isna(v) for v in (low, high, base_low, base_high)) or not (high < base_low or low > base_high):
            flags.append(None)
        else:
            flags.append(f"epochs to target {low}-{high}, {BASELINE} {base_low}-{base_high}")
    return df.assign(convergence_flag=flags)


def _add_slowdown(df: pd.DataFrame) -> pd.DataFrame:
    """Each row's median step over the same variant's in the same group without host load; NaN without one."""
    keys = [k for k in GROUP_KEYS if k != "host_load"] + ["variant"]
    base = df.loc[df["host_load"] == 0, keys + ["step_ms_median"]].rename(columns={"step_ms_median": "_quiet_ms"})
    merged = df.merge(base, on=keys, how="left")
    return df.assign(slowdown_vs_no_load=(merged["step_ms_median"] / merged["_quiet_ms"]).to_numpy())


def unstable(df: pd.DataFrame) -> pd.DataFrame:
    """The summary's rows whose between-trial CV is at or above ``stats.CV_FLAG``."""
    return df[df["step_ms_cv"] >= stats.CV_FLAG]


def summarize(runs_dir: str | os.PathLike, out_csv: str | os.PathLike,
              allow_mixed_provenance: bool = False) -> pd.DataFrame:
    """Build the summary of every record under ``runs_dir``, write it to ``out_csv``, return it. A comparison
    group mixing commits or machines is refused unless ``allow_mixed_provenance``."""
    trials = trial_frame(iter_records(runs_dir))
    if trials.empty:
        raise ZeroGNNError(
            f"no run records (*.json) under {runs_dir}; run the pipeline first (snakemake) or point to the "
            f"directory that holds the records."
        )
    if not allow_mixed_provenance:
        check_one_provenance(trials)
    df = configuration_rows(trials).sort_values(SORT_KEYS, kind="stable").reset_index(drop=True)
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
                               f"{', '.join(CONFIGURATION_FIELDS)} give {expected}; {rebuild}.")
    return df


def check_summary_current(summary: pd.DataFrame, records: Iterable[dict[str, Any]],
                          summary_path: str | os.PathLike, runs_dir: str | os.PathLike) -> None:
    """Raise ZeroGNNError unless ``summary`` (read from ``summary_path``) has exactly one row per configuration
    of the records of ``runs_dir``, each with as many trials as there are records of it and the median of
    their median steps."""
    rebuild = (f"rebuild it with `zerognn summarize --runs {runs_dir} --out {summary_path}` "
               f"(or `snakemake figures`)")
    steps: dict[str, list[float]] = {}
    for r in records:
        steps.setdefault(RunKey.of(r["config"]).configuration().run_id, []).append(r["metrics"]["step_ms_median"])
    gone = [run_id for run_id in summary["run_id"] if run_id not in steps]
    if gone:
        raise ZeroGNNError(f"summary {summary_path} is out of date: it names run {gone[0]}{_more(gone)} whose record "
                           f"is missing from {runs_dir}; {rebuild}.")
    listed = set(summary["run_id"])
    new = [run_id for run_id in steps if run_id not in listed]
    if new:
        raise ZeroGNNError(f"record {new[0]}{_more(new)} in {runs_dir} is not in summary {summary_path}; {rebuild}.")
    for run_id, trials, row_ms in zip(summary["run_id"], summary["trials"], summary["step_ms_median"]):
        record_ms = stats.median(steps[run_id])
        if trials != len(steps[run_id]):
            raise ZeroGNNError(f"summary {summary_path} is out of date: run {run_id} has {trials} trial(s) there but "
                               f"{len(steps[run_id])} record(s) in {runs_dir}; {rebuild}.")
        if abs(row_ms - record_ms) > STALE_RELATIVE * abs(record_ms):
            raise ZeroGNNError(f"summary {summary_path} is out of date: run {run_id} has step_ms_median {row_ms!r} "
                               f"there but its records in {runs_dir} give {record_ms!r}; {rebuild}.")


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
