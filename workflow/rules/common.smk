# Config validation and the study plan: which (dataset, model, variant, batch, fanouts, gpus) runs exist.
# The plan follows the config's `target`, never the machine that builds the DAG (a login node without a
# GPU plans the same GPU study as the GPU node); only `target: auto` asks this machine for CUDA.

import functools
import glob
import os
import shlex
import sys

import yaml
from snakemake.logging import logger
from snakemake.utils import validate

from zerognn.workflow.config_types import coerce, schema_problem
from zerognn.errors import ZeroGNNError
from zerognn.figures import FIGURES as FIGURE_NAMES, FORMATS as FIGURE_FORMATS, figure_files
from zerognn.workflow.launcher import job_resources, run_launcher
from zerognn.records.schema import make_run_id
from zerognn.variants import all_variants, external_variants, module_file


def _config_error(problem):
    """A bad config is one line naming the key, before any job runs (no traceback)."""
    print(f"zerognn: config error: {problem}", file=sys.stderr)
    sys.exit(2)


# `--config batch_sizes=[64]` arrives as strings; give every value the type the schema asks for.
with open(workflow.source_path("../schemas/config.schema.yaml")) as _schema:
    SCHEMA = yaml.safe_load(_schema)
config.update(coerce(dict(config), SCHEMA))
if schema_problem(config, SCHEMA):
    _config_error(f"{schema_problem(config, SCHEMA)} (workflow/schemas/config.schema.yaml)")
validate(config, "../schemas/config.schema.yaml")  # fills in the schema's defaults

DATA = config["data_dir"]
RESULTS = config["results_dir"]
FIGURES = config["figures_dir"]
LOGS = config["logs_dir"]
FANOUTS = "-".join(str(f) for f in config["fanouts"])


def _target():
    if config["target"] != "auto":
        return config["target"]
    import torch

    return "gpu" if torch.cuda.is_available() else "cpu"


TARGET = _target()
ON_GPU = TARGET == "gpu"
# A run's device follows the target: a GPU study run on a machine without one fails with a clear error
# instead of measuring on the CPU.
RUN_DEVICE = {"gpu": "cuda", "cpu": "cpu"}[TARGET]


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
        raise ZeroGNNError(
            f"config names unknown variants {unknown}; registered: {sorted(registered)}. "
            "Add an out-of-package variant's module or .py file to `variant_modules`."
        )
    unknown = [v for v in config["whole_epoch_variants"] if v not in registered]
    if unknown:
        raise ZeroGNNError(f"whole_epoch_variants names unknown variants {unknown}; registered: {sorted(registered)}")
    runnable = [v for v in wanted if ON_GPU or not registered[v].requires_cuda]
    for v in wanted:
        if v not in runnable:
            logger.warning(f"zerognn: skipping variant {v}: it needs a CUDA GPU and the target is cpu "
                           f"(config `target: {config['target']}`)")
    return runnable


def _planned_datasets():
    planned = []
    for name, opts in config["datasets"].items():
        if opts.get("needs_gpu", False) and not ON_GPU:
            logger.warning(f"zerognn: skipping dataset {name}: configured with needs_gpu and the target is cpu")
        else:
            planned.append(name)
    return planned


GPU_COUNTS = config["gpus"]
try:
    VARIANTS = _planned_variants()
    DATASETS = _planned_datasets()
    # Only the runs of an out-of-package variant depend on its module: naming one more module in
    # `variant_modules` plans that variant's runs and leaves every finished run as it is.
    VARIANT_MODULE = external_variants(config["variant_modules"])
    for _gpus in GPU_COUNTS:
        job_resources(_gpus, config["gpus_per_node"])  # whole nodes only
    for _rules in config["extra_rule_files"]:
        if not os.path.isfile(_rules):
            raise ZeroGNNError(f"extra_rule_files names {_rules}, which does not exist; fix the path")
    for _record in config["extra_run_records"]:
        if os.path.dirname(os.path.normpath(_record)) != os.path.normpath(f"{RESULTS}/runs"):
            raise ZeroGNNError(f"extra_run_records names {_record}, which is not in {RESULTS}/runs/, where the "
                               f"summary reads records; write it there")
    RUN_IDS = [
        make_run_id(d, m, v, b, config["fanouts"], g, h)
        for d in DATASETS
        for m in config["models"]
        for v in VARIANTS
        for b in config["batch_sizes_by_model"].get(m, config["batch_sizes"])
        for g in GPU_COUNTS
        for h in config["host_load"]
    ]
except ZeroGNNError as _exc:
    _config_error(_exc)
RUN_RECORDS = [f"{RESULTS}/runs/{run_id}.json" for run_id in RUN_IDS] + config["extra_run_records"]
logger.info(f"zerognn: target {TARGET}: planned {len(RUN_IDS)} runs: datasets {DATASETS}, variants {VARIANTS}, "
            f"models {config['models']}, batch sizes {config['batch_sizes']}, gpus {GPU_COUNTS}, "
            f"host load {config['host_load']}")


def variant_module_option(wildcards):
    spec = VARIANT_MODULE.get(wildcards.variant)
    return "" if spec is None else f"--variant-module {shlex.quote(spec)}"


def whole_epoch_option(wildcards):
    return "--whole-epoch" if wildcards.variant in config["whole_epoch_variants"] else ""


def variant_module_source(wildcards):
    spec = VARIANT_MODULE.get(wildcards.variant)
    source = None if spec is None else module_file(spec)
    return [] if source is None else [source]


def job_resource(name):
    """A run job's cluster resource (zerognn.workflow.launcher.job_resources) as a rule's resource function."""
    return lambda wildcards: job_resources(int(wildcards.gpus), config["gpus_per_node"])[name]


def supported_figure_files(wildcards):
    """The files of every figure the records support, known once the summary (a checkpoint) exists."""
    summary = checkpoints.summary.get().output[0]
    return _figure_files(summary, os.stat(summary).st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _figure_files(summary, summary_mtime_ns):
    """Asked for by two rules per DAG evaluation: read the records and try the figures once per summary."""
    try:
        return [str(f) for f in figure_files(summary, f"{RESULTS}/runs", FIGURES)]
    except ZeroGNNError as exc:  # a summary that no longer matches the records on disk, say
        print(f"zerognn: error: {exc}", file=sys.stderr)
        sys.exit(2)


wildcard_constraints:
    dataset="[A-Za-z0-9.-]+",
    model="[a-z]+",
    variant="[A-Za-z0-9.-]+",
    batch="[0-9]+",
    fanouts="[0-9-]+",
    gpus="[0-9]+",
    load="[1-9][0-9]*",
