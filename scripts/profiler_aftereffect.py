"""Does a profiler session slow what a process times after it? One fresh process per call, measured both ways.

    python scripts/profiler_aftereffect.py --dataset-dir data/products-like --variant host-mediated \
        --batch-size 1024 --out results/aftereffect/host-mediated-1.json

In one process: warm-up, a timed window, a profiled window (one lead-in step and the profiled steps, as a run
does), then the same timed window again; with ``--profiled 0`` the lead-in step runs without a profiler, the
control for drift over a process's life. The record has both windows' step times and medians. Run it as
several fresh processes per variant (the unit of replication) and compare the after/before ratio across
variants: a run times nothing after its profiled window (``zerognn.train.loop``), and this measures what
that order avoids. Each record carries the run's environment (commit, machine, call). Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import torch

from zerognn.atomic import write_json
from zerognn.datasets import load_dataset
from zerognn.measure.environment import collect_environment
from zerognn.measure.timing import time_steps
from zerognn.measure.trace import PROFILER_LEAD_IN_STEPS, profile_steps
from zerognn.records.spec import RunSpec
from zerognn.train.context import build_context
from zerognn.variants import get_variant


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset-dir", required=True)
    parser.add_argument("--variant", default="host-mediated")
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--window", type=int, default=40, help="timed steps before and after the profiler")
    parser.add_argument("--profiled", type=int, default=5,
                        help="profiled steps between the windows; 0 is the control, with no profiler session")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    device = torch.device("cuda")
    ds = load_dataset(Path(args.dataset_dir)).to(device)
    spec = RunSpec(dataset=ds.name, variant=args.variant, batch_size=args.batch_size, device="cuda")
    total = args.warmup + 2 * args.window + PROFILER_LEAD_IN_STEPS + args.profiled
    ctx = build_context(spec, ds, device, steps=total)
    variant = get_variant(args.variant)(ctx)
    variant.setup()
    variant.run_steps(0, args.warmup)
    step = args.warmup
    before = time_steps(variant, step, args.window, device, None)
    step += args.window
    if args.profiled:
        profile_steps(variant, step, args.profiled, device)
    else:  # the control: the lead-in step runs untraced and no profiler session starts
        variant.run_steps(step, PROFILER_LEAD_IN_STEPS)
    step += PROFILER_LEAD_IN_STEPS + args.profiled
    after = time_steps(variant, step, args.window, device, None)
    variant.finish()
    result = {"environment": collect_environment(device), "variant": args.variant, "batch_size": args.batch_size,
              "dataset": ds.name, "warmup_steps": args.warmup, "profiled_steps": args.profiled,
              "before_ms": before, "after_ms": after, "before_median_ms": statistics.median(before),
              "after_median_ms": statistics.median(after)}
    result["after_over_before"] = result["after_median_ms"] / result["before_median_ms"]
    write_json(args.out, result)
    print(json.dumps({k: v for k, v in result.items() if not k.endswith("_ms") and k != "environment"}))


if __name__ == "__main__":
    main()
