"""The study a config asks for: which runs exist (their keys), and the spec each run is started with.

``plan(config, target)`` reads a study config that has passed its schema (defaults filled in) and
returns the planned run keys, with a line for each variant or dataset the target leaves out; the plan
follows the config's target, never the machine that plans it. With ``trials`` > 1 (or several ``seeds``)
each configuration runs that many times, each a fresh process, in rounds (``trial_order``): a round runs
every variant of a comparison group once at one seed and trial, the variants' order rotating by one place
each round, and each run waits for the one before it (``Plan.previous``). ``run_spec(config, target, key)`` is the
one ``RunSpec`` a planned run is started with: the key's fields, the config's run parameters (the
RunSpec fields a config key of the same name sets) and what the target and the variant lists decide.
Nothing here draws a figure or needs a GPU.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, fields, replace
from typing import Any

from ..errors import ZeroGNNError
from ..precision import precision_problem
from ..records.ids import KEY_FIELDS, RunKey
from ..records.spec import RunSpec
from ..variants import external_variants, study_variants
from .launcher import job_resources

# RunSpec fields that a config key of the same name gives one value for every run.
RUN_PARAMETERS = tuple(f.name for f in fields(RunSpec) if f.metadata["config"] == f.name and not f.metadata["axis"])
# The key's fields planned from a plain list in the config (its RunSpec field's config key), one run per
# value, after those planned here by name: an axis added to RunKey and RunSpec is planned with no change here.
_BY_NAME = ("dataset", "model", "variant", "batch_size", "fanouts", "trial")
LIST_AXES = {f.name: f.metadata["config"] for f in fields(RunSpec) if f.name in KEY_FIELDS and f.name not in _BY_NAME}
# The trial of each configuration that also runs the profiled window and the evaluation (both come after
# everything timed, so the trials' timed windows are the same): what a trace shows varies little from
# process to process, and the evaluation of a fixed seed not at all in deterministic mode.
PROFILED_TRIAL = 1
# The device a run starts on, by target: a GPU study on a machine without one fails with a clear error
# instead of measuring the CPU.
RUN_DEVICE = {"gpu": "cuda", "cpu": "cpu"}


@dataclass(frozen=True)
class Plan:
    datasets: list[str]
    variants: list[str]
    keys: list[RunKey]
    variant_modules: dict[str, str]  # an out-of-package variant -> the module spec that defines it
    left_out: list[str]  # one line per variant or dataset the plan leaves out, and why
    previous: dict[str, str]  # run id -> the run id that runs just before it (only with trials > 1)


def plan(config: dict[str, Any], target: str) -> Plan:
    """The runs ``config`` asks for on ``target`` (``gpu`` or ``cpu``); ZeroGNNError for a config that names
    what does not exist."""
    left_out: list[str] = []
    variants = _variants(config, target, left_out)
    datasets = []
    for name, options in config["datasets"].items():
        if options.get("needs_gpu", False) and target != "gpu":
            left_out.append(f"skipping dataset {name}: configured with needs_gpu and the target is cpu")
        else:
            datasets.append(name)
    for gpus in config["gpus"]:
        job_resources(gpus, config["gpus_per_node"])  # whole nodes only
    _check_extra_rules(config)
    for variant, seeds in config["seeds_by_variant"].items():
        extra = sorted(set(seeds) - set(config["seeds"]))
        if extra:
            raise ZeroGNNError(f"seeds_by_variant gives {variant} seeds {extra} that `seeds` does not list; a "
                               f"variant's seeds are a subset of the study's: add them to `seeds` or drop them")
    configurations = [
        RunKey(dataset, model, variant, batch, config["fanouts"], **dict(zip(LIST_AXES, values)))
        for dataset in datasets
        for model in config["models"]
        for variant in variants
        for batch in config["batch_sizes_by_model"].get(model, config["batch_sizes"])
        for values in itertools.product(*(config[key] for key in LIST_AXES.values()))
    ]
    configurations = _runnable_models(configurations, study_variants(config["variant_modules"]), left_out)
    configurations = [key for key in _runnable_precisions(configurations, target, left_out)
                      if key.seed in config["seeds_by_variant"].get(key.variant, config["seeds"])]
    keys = trial_order(configurations, config["trials"])
    previous = {} if config["trials"] == 1 and len(config["seeds"]) == 1 else {
        later.run_id: earlier.run_id for sequence in _by_group(keys) for earlier, later in zip(sequence, sequence[1:])
    }
    # Only the runs of an out-of-package variant depend on its module: naming one more module in
    # `variant_modules` plans that variant's runs and leaves every finished run as it is.
    return Plan(datasets, variants, keys, external_variants(config["variant_modules"]), left_out, previous)


def _runnable_models(configurations: list[RunKey], registered: dict, left_out: list[str]) -> list[RunKey]:
    """The configurations whose variant runs their model; one line per variant and model left out."""
    kept = []
    for key in configurations:
        models = registered[key.variant].models
        if models is None or key.model in models:
            kept.append(key)
        elif (line := f"skipping variant {key.variant} with model {key.model}: it runs only "
                      f"{', '.join(models)}") not in left_out:
            left_out.append(line)
    return kept


def _runnable_precisions(configurations: list[RunKey], target: str, left_out: list[str]) -> list[RunKey]:
    """The configurations whose precision runs on ``target`` in their mode; one line per reason for the rest."""
    kept = []
    for key in configurations:
        problem = precision_problem(key.dtype, RUN_DEVICE[target], key.deterministic)
        if problem is None:
            kept.append(key)
        elif (line := f"skipping {key.dtype} runs: {problem}") not in left_out:
            left_out.append(line)
    return kept


def trial_order(configurations: list[RunKey], trials: int) -> list[RunKey]:
    """Every configuration's trials 1..``trials``, in the order they run: per comparison group, one round per
    seed and trial (seeds in order, each seed's trials in order), round r running the group's variants from
    the r-th on, wrapping around (a rotation: over as many rounds as variants, each variant runs once in each
    place of a round), so no variant always runs first or after the same neighbour, and each round has every
    variant once."""
    ordered = []
    for group in _by_group(configurations):
        seeds = sorted({key.seed for key in group})
        rounds = [(seed, k) for seed in seeds for k in range(trials)]
        for r, (seed, k) in enumerate(rounds):
            members = [key for key in group if key.seed == seed]
            shift = r % len(members)
            ordered += [replace(key, trial=k + 1) for key in members[shift:] + members[:shift]]
    return ordered


def _by_group(keys: list[RunKey]) -> list[list[RunKey]]:
    """``keys`` split by comparison group, in order of first appearance, each in its order in ``keys``."""
    groups: dict[tuple, list[RunKey]] = {}
    for key in keys:
        groups.setdefault(key.comparison(), []).append(key)
    return list(groups.values())


def run_spec(config: dict[str, Any], target: str, key: RunKey, variant_modules: dict[str, str]) -> RunSpec:
    """The spec of the run ``key`` in the study ``config`` on ``target``."""
    module = variant_modules.get(key.variant)
    decided = {"device": RUN_DEVICE[target], "whole_epoch": key.variant in config["whole_epoch_variants"],
               "variant_modules": [] if module is None else [module]}
    if key.trial != PROFILED_TRIAL:  # the same warm-up, timed steps and whole epoch; no trace, no evaluation
        decided |= {"profile_steps": 0} | ({} if config["epochs"] else {"eval_nodes": 0})  # unless it trains to
        # the target, which evaluates as it goes
    return RunSpec(**({name: config[name] for name in RUN_PARAMETERS} | key.as_dict() | decided))


def _variants(config: dict[str, Any], target: str, left_out: list[str]) -> list[str]:
    registered = study_variants(config["variant_modules"])
    if config["variants"] == "all":
        wanted = [v for v in sorted(registered) if not registered[v].experimental]
        left_out += [f"variants: all leaves out experimental variant {v}; name it in `variants` to run it"
                     for v in sorted(set(registered) - set(wanted))]
    else:
        wanted = config["variants"]
    for key, names in (("config names", wanted), ("whole_epoch_variants names", config["whole_epoch_variants"]),
                       ("seeds_by_variant names", list(config["seeds_by_variant"]))):
        unknown = [v for v in names if v not in registered]
        if unknown:
            raise ZeroGNNError(f"{key} unknown variants {unknown}; registered: {sorted(registered)}. Add an "
                               "out-of-package variant's module or .py file to `variant_modules`.")
    runnable = [v for v in wanted if target == "gpu" or not registered[v].requires_cuda]
    left_out += [f"skipping variant {v}: it needs a CUDA GPU and the target is cpu (config `target: "
                 f"{config['target']}`)" for v in wanted if v not in runnable]
    return runnable


def _check_extra_rules(config: dict[str, Any]) -> None:
    for rules in config["extra_rule_files"]:
        if not os.path.isfile(rules):
            raise ZeroGNNError(f"extra_rule_files names {rules}, which does not exist; fix the path")
    runs = os.path.normpath(f"{config['results_dir']}/runs")
    for record in config["extra_run_records"]:
        if os.path.dirname(os.path.normpath(record)) != runs:
            raise ZeroGNNError(f"extra_run_records names {record}, which is not in {runs}/, where the summary "
                               f"reads records; write it there")
