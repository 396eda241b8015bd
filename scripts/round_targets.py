"""The run records of one round of a study, so that a GPU call can record whole rounds (scripts/whole_rounds.py).

A study runs each comparison group's trials and seeds in rounds (``zerognn.workflow.plan.trial_order``): round r
is every group's r-th (seed, trial) pair, each variant once. This prints the records of round ROUND, one path per
line, for Snakemake to make as its targets; or, with ``--count``, how many rounds the study has. ``--only`` keeps
the runs whose key has the given values (``dtype=tf32``, ``dataset=products-like,model=sage,batch_size=1024``): one
comparison group, or a few, of a study that does not fit one machine's calls, with the same run ids and order.

    python scripts/round_targets.py workflow/config/h200-trials.yaml 3
    python scripts/round_targets.py workflow/config/h200-tta.yaml --count
    python scripts/round_targets.py workflow/config/h200-precision.yaml 1 --only dtype=bfloat16
"""

import argparse
from dataclasses import fields
from pathlib import Path

import yaml

from zerognn.errors import ZeroGNNError
from zerognn.records.ids import RunKey, fanouts_label
from zerognn.workflow.config_types import schema_problem
from zerognn.workflow.plan import plan

SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"


# What --only may select on: a run key's fields but the trial (a round is one trial of every group).
ONLY_FIELDS = [f.name for f in fields(RunKey) if f.name != "trial"]


def parse_only(spec: str) -> dict[str, str]:
    """``field=value,field=value`` -> {field: value}; a one-line error for anything else."""
    selected = {}
    for part in filter(None, spec.split(",")):
        field, sep, value = part.partition("=")
        if not sep or field not in ONLY_FIELDS or not value:
            raise ZeroGNNError(f"--only {spec!r}: give field=value pairs joined by commas, the fields among "
                               f"{', '.join(ONLY_FIELDS)} (e.g. dataset=products-like,batch_size=1024)")
        selected[field] = value
    return selected


def group_fields(keys: list[RunKey]) -> list[str]:
    """The run-key fields a study's comparison groups differ in: those of ``keys`` (its planned runs) that take more
    than one value, but the variant, trial and seed, which vary within a group."""
    return [f for f in ONLY_FIELDS if f not in ("variant", "seed") and len({getattr(k, f) for k in keys}) > 1]


def only_value(key: RunKey, field: str) -> str:
    """A key field's value as --only writes it (fanouts 15-10-5, a flag true/false)."""
    value = getattr(key, field)
    if field == "fanouts":
        return fanouts_label(value)
    return str(value).lower() if isinstance(value, bool) else str(value)


def planned_keys(given: object, source: str) -> tuple[dict, list[RunKey]]:
    """The study config ``given`` (read from ``source``) with the schema's defaults, and the run keys it plans, in
    the order they run; a one-line error naming ``source`` where it breaks the schema."""
    schema = yaml.safe_load(SCHEMA.read_text())
    defaults = {k: v["default"] for k, v in schema["properties"].items() if "default" in v}
    problem = schema_problem(given, schema) if isinstance(given, dict) else "the config: not a mapping of keys"
    if problem:
        raise ZeroGNNError(f"{source}: {problem} (workflow/schemas/config.schema.yaml)")
    config = defaults | given
    target = config["target"]
    if target == "auto":  # as the workflow resolves it (workflow/rules/common.smk)
        import torch

        target = "gpu" if torch.cuda.is_available() else "cpu"
    return config, plan(config, target).keys


def round_records(config_path: str, only: dict[str, str] | None = None, results_dir: str | None = None
                  ) -> list[list[str]]:
    """Each round's record paths, in the order the study runs its rounds; with ``only``, of the runs whose key has
    those values (a one-line error where no run of the study has one of them); under ``results_dir`` where given,
    else the config's."""
    try:
        given = yaml.safe_load(Path(config_path).read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ZeroGNNError(f"{config_path}: not a readable YAML study config ({' '.join(str(e).split())})") from None
    config, keys = planned_keys(given, config_path)
    for field, value in (only or {}).items():
        wanted = value.lower() if field == "deterministic" else value
        values = sorted({only_value(k, field) for k in keys})
        if wanted not in values:
            raise ZeroGNNError(f"--only {field}={value}: no run of {config_path} has it, among the runs selected so "
                               f"far ({field}: {', '.join(values) or 'none'})")
        keys = [k for k in keys if only_value(k, field) == wanted]
    pairs = sorted({(k.seed, k.trial) for k in keys})
    runs = f"{results_dir or config['results_dir']}/runs"
    return [[f"{runs}/{k.run_id}.json" for k in keys if (k.seed, k.trial) == pair] for pair in pairs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config")
    parser.add_argument("round", nargs="?", type=int, help="1-based")
    parser.add_argument("--count", action="store_true", help="print how many rounds the study has")
    parser.add_argument("--only", default="", help="field=value[,field=value]: only the runs whose key has these")
    args = parser.parse_args()
    try:
        rounds = round_records(args.config, parse_only(args.only))
    except ZeroGNNError as e:
        parser.exit(2, f"round_targets: {e}\n")
    if args.count:
        print(len(rounds))
    elif args.round is None or not 1 <= args.round <= len(rounds):
        parser.error(f"give a round from 1 to {len(rounds)}, or --count")
    else:
        print("\n".join(rounds[args.round - 1]))


if __name__ == "__main__":
    main()
