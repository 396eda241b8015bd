# Config validation and the study plan (zerognn/workflow/plan.py): which runs exist, and each one's spec.
# The plan follows the config's `target`, never the machine that builds the DAG (a login node without a
# GPU plans the same GPU study as the GPU node); only `target: auto` asks this machine for CUDA.

import glob
import json
import os
import shlex
import sys
import uuid

import yaml
from snakemake.logging import logger
from snakemake.utils import validate

from zerognn.errors import ZeroGNNError
from zerognn.figures.files import figure_files, read_supported
from zerognn.figures.needs import FIGURES as FIGURE_NAMES, FORMATS as FIGURE_FORMATS
from zerognn.records.ids import RUN_ID_WILDCARD, RunKey
from zerognn.variants import module_file
from zerognn.workflow.config_types import coerce, duplicate_key_problem, schema_problem
from zerognn.workflow.launcher import job_resources, run_launcher
from zerognn.workflow.plan import LIST_AXES, plan, run_spec


def _config_error(problem):
    """A bad config is one line naming the key, before any job runs (no traceback)."""
    print(f"zerognn: config error: {problem}", file=sys.stderr)
    sys.exit(2)


# YAML keeps the last of a key written twice; a config that does so is refused instead.
for _path in workflow.configfiles:
    if duplicate_key_problem(str(_path)):
        _config_error(duplicate_key_problem(str(_path)))

# `--config batch_sizes=[64]` arrives as strings; give every value the type the schema asks for.
with open(workflow.source_path("../schemas/config.schema.yaml")) as _schema:
    SCHEMA = yaml.safe_load(_schema)
config.update(coerce(dict(config), SCHEMA))
if schema_problem(config, SCHEMA):
    _config_error(f"{schema_problem(config, SCHEMA)} (workflow/schemas/config.schema.yaml)")
validate(config, "../schemas/config.schema.yaml")  # fills in the schema's defaults

# One id for this invocation, inherited by every job it starts (a cluster job's own Snakemake keeps it):
# each record names the call it ran in (zerognn/measure/provenance.py).
os.environ.setdefault("ZEROGNN_CALL_ID", uuid.uuid4().hex[:16])

DATA = config["data_dir"]
RESULTS = config["results_dir"]
FIGURES = config["figures_dir"]
LOGS = config["logs_dir"]
# The summary refuses a comparison group of several commits or machines unless the config allows it.
MIXED_PROVENANCE = "--allow-mixed-provenance" if config["mixed_provenance"] else ""


def _target():
    if config["target"] != "auto":
        return config["target"]
    import torch

    return "gpu" if torch.cuda.is_available() else "cpu"


TARGET = _target()
ON_GPU = TARGET == "gpu"
try:
    PLAN = plan(config, TARGET)
except ZeroGNNError as _exc:
    _config_error(_exc)
for _line in PLAN.left_out:
    logger.warning(f"zerognn: {_line}")
RUN_RECORDS = [f"{RESULTS}/runs/{key.run_id}.json" for key in PLAN.keys] + config["extra_run_records"]


PLAN_LINE = (f"target {TARGET}: planned {len(PLAN.keys)} runs: datasets {PLAN.datasets}, variants "
             f"{PLAN.variants}, models {config['models']}, batch sizes {config['batch_sizes']}, "
             + ", ".join(f"{field.replace('_', ' ')} {config[key]}" for field, key in LIST_AXES.items())
             + f", trials {config['trials']}")


def end_summary(ok):
    """What a finished (or stopped) invocation did and did not do, at the end of its output: the plan, what
    the target left out, the figures the records could not support and why, and where the outputs are."""
    lines = [f"zerognn: {'finished' if ok else 'stopped by an error (the failing job and its log are named above)'}",
             f"zerognn: {PLAN_LINE}"]
    lines += [f"zerognn: {line}" for line in PLAN.left_out]
    try:
        with open(f"{RESULTS}/figures.json") as supported:
            reasons = json.load(supported)
    except (OSError, ValueError):
        reasons = {}
    lines += [f"zerognn: figure {name} not drawn: {why}" for name, why in reasons.items() if why is not None]
    lines.append(f"zerognn: records {RESULTS}/runs/, summary {RESULTS}/summary.csv and {RESULTS}/summary.md, "
                 f"figures {FIGURES}/ (listed in {FIGURES}/manifest.txt), logs {LOGS}/")
    needs_gpu = [line for line in PLAN.left_out if "needs a CUDA GPU" in line or "needs_gpu" in line]
    if needs_gpu:
        lines.append("zerognn: on a machine with a CUDA GPU the same command also runs what is skipped above "
                     "for want of one, and the figures that compare the GPU variants")
    for line in lines:
        logger.info(line)


logger.info(f"zerognn: {PLAN_LINE}")


def run_key(wildcards):
    return RunKey.parse(wildcards.run_id)


def run_arguments(wildcards):
    """The run's `zerognn run` options: its one RunSpec, from the config and the key in its id."""
    spec = run_spec(config, TARGET, run_key(wildcards), PLAN.variant_modules)
    return " ".join(shlex.quote(arg) for arg in spec.arguments())


def previous_run(wildcards):
    earlier = PLAN.previous.get(wildcards.run_id)
    return [] if earlier is None else [ancient(f"{RESULTS}/runs/{earlier}.json")]


def variant_module_source(wildcards):
    spec = PLAN.variant_modules.get(run_key(wildcards).variant)
    source = None if spec is None else module_file(spec)
    return [] if source is None else [source]


def job_resource(name):
    """A run job's cluster resource (zerognn.workflow.launcher.job_resources) as a rule's resource function."""
    return lambda wildcards: job_resources(run_key(wildcards).gpus, config["gpus_per_node"])[name]


def supported_figure_files(wildcards):
    """The files of every figure the records support, known once the summary checkpoint has written the
    supported list (figure -> null, or why the records cannot support it): read, never drawn, here."""
    try:
        return [str(f) for f in figure_files(read_supported(checkpoints.summary.get().output.figures), FIGURES)]
    except ZeroGNNError as exc:  # a damaged list, say
        print(f"zerognn: error: {exc}", file=sys.stderr)
        sys.exit(2)


wildcard_constraints:
    dataset="[A-Za-z0-9.-]+",
    run_id=RUN_ID_WILDCARD,
