"""The run records of one round of a study, so that a GPU call can record whole rounds (scripts/whole_rounds.py).

A study runs each comparison group's trials and seeds in rounds (``zerognn.workflow.plan.trial_order``): round r
is every group's r-th (seed, trial) pair, each variant once. This prints the records of round ROUND, one path per
line, for Snakemake to make as its targets; or, with ``--count``, how many rounds the study has.

    python scripts/round_targets.py workflow/config/h200-trials.yaml 3
    python scripts/round_targets.py workflow/config/h200-tta.yaml --count
"""

import argparse
from pathlib import Path

import yaml

from zerognn.workflow.plan import plan

SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"


def round_records(config_path: str) -> list[list[str]]:
    """Each round's record paths, in the order the study runs its rounds."""
    schema = yaml.safe_load(SCHEMA.read_text())
    defaults = {k: v["default"] for k, v in schema["properties"].items() if "default" in v}
    config = defaults | yaml.safe_load(Path(config_path).read_text())
    target = config["target"]
    if target == "auto":  # as the workflow resolves it (workflow/rules/common.smk)
        import torch

        target = "gpu" if torch.cuda.is_available() else "cpu"
    keys = plan(config, target).keys
    pairs = sorted({(k.seed, k.trial) for k in keys})
    runs = f"{config['results_dir']}/runs"
    return [[f"{runs}/{k.run_id}.json" for k in keys if (k.seed, k.trial) == pair] for pair in pairs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config")
    parser.add_argument("round", nargs="?", type=int, help="1-based")
    parser.add_argument("--count", action="store_true", help="print how many rounds the study has")
    args = parser.parse_args()
    rounds = round_records(args.config)
    if args.count:
        print(len(rounds))
    elif args.round is None or not 1 <= args.round <= len(rounds):
        parser.error(f"give a round from 1 to {len(rounds)}, or --count")
    else:
        print("\n".join(rounds[args.round - 1]))


if __name__ == "__main__":
    main()
