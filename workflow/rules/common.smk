# Config validation and the study plan: which (dataset, model, variant, batch, fanouts, gpus) runs exist.

import glob
import os

import torch
from snakemake.logging import logger
from snakemake.utils import validate

from zerognn.launcher import nodes_for, run_launcher
from zerognn.records.schema import make_run_id
from zerognn.variants import all_variants, runnable_here


validate(config, "../schemas/config.schema.yaml")

DATA = config["data_dir"]
RESULTS = config["results_dir"]
FIGURES = config["figures_dir"]
LOGS = config["logs_dir"]
FANOUTS = "-".join(str(f) for f in config["fanouts"])
HAS_CUDA = torch.cuda.is_available()


def _planned_variants():
    registered = all_variants(config["variant_modules"])
    if config["variants"] == "all":
        wanted = [v for v in sorted(registered) if not registered[v].experimental]
        for v in sorted(set(registered) - set(wanted)):
            logger.warning(f"zerognn: variants: all leaves out experimental variant {v}; name it in `variants` to run it")
    else:
        wanted = config["variants"]
    unknown = [v for v in wanted if v not in registered]
    if unknown:
        raise ValueError(
            f"config names unknown variants {unknown}; registered: {sorted(registered)}. "
            "Add an out-of-package variant's module or .py file to `variant_modules`."
        )
    runnable = [v for v in wanted if runnable_here(registered[v])]
    for v in wanted:
        if v not in runnable:
            logger.warning(f"zerognn: skipping variant {v}: it needs a CUDA GPU and this machine has none")
    return runnable


def _planned_datasets():
    planned = []
    for name, opts in config["datasets"].items():
        if opts.get("needs_gpu", False) and not HAS_CUDA:
            logger.warning(f"zerognn: skipping dataset {name}: configured with needs_gpu and this machine has no CUDA GPU")
        else:
            planned.append(name)
    return planned


VARIANTS = _planned_variants()
DATASETS = _planned_datasets()
RUN_IDS = [
    make_run_id(d, m, v, b, config["fanouts"], g)
    for d in DATASETS
    for m in config["models"]
    for v in VARIANTS
    for b in config["batch_sizes_by_model"].get(m, config["batch_sizes"])
    for g in config["gpus"]
]
RUN_RECORDS = [f"{RESULTS}/runs/{run_id}.json" for run_id in RUN_IDS] + config["extra_run_records"]
logger.info(f"zerognn: planned {len(RUN_IDS)} runs: datasets {DATASETS}, variants {VARIANTS}, "
            f"models {config['models']}, batch sizes {config['batch_sizes']}, gpus {config['gpus']}")


wildcard_constraints:
    dataset="[A-Za-z0-9.-]+",
    model="[a-z]+",
    variant="[A-Za-z0-9.-]+",
    batch="[0-9]+",
    fanouts="[0-9-]+",
    gpus="[0-9]+",
