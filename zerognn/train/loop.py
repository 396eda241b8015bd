"""The measured run: warm-up, timed steady state, a profiled window, evaluation, one run record.

Phases, in order, all on the same variant instance and one continuing sequence of global steps, each
handed to the variant as a block (``Variant.run_steps``):

1. ``warmup_steps`` steps (compilation, capture, allocator warm-up) — not measured;
2. ``measure_steps`` steps timed one by one (``zerognn.measure.timing``), with the device's peak memory
   measured over exactly these steps (``zerognn.measure.memory``: a re-capture inside them is included,
   and no variant can reset the measurement);
3. with ``whole_epoch``: untimed steps up to the next epoch boundary, then that whole epoch — every
   training batch — timed as one wall-clock interval from an idle GPU to the last update done
   (``epoch_s_measured``, beside ``epoch_s`` extrapolated from the median step);
   or, with ``epochs`` (a run to the target, ``zerognn.train.to_target``): training on to that many whole
   epochs, timed in blocks that end where it evaluates on the validation set (evaluations timed apart);
4. last, one lead-in step, then ``profile_steps`` steps under torch.profiler (``zerognn.measure.trace``),
   from whose trace come the GPU's busy time per step, host syncs and launches per step and the per-phase
   breakdown. Nothing timed follows it: a profiler session may leave the process slower (CUPTI stays
   attached), which would tax a many-launch step more than a one-launch one. The execution fraction sets
   the busy time against 2's median step (``zerognn.measure.execution``).

The run's wall time from process start to its record is kept by phase (``zerognn.measure.phases``,
the record's ``phase_s``).

With ``deterministic`` the whole run, evaluation included, uses the fixed-order kernels
(``zerognn.determinism``). CUDA Graph captures are counted over the whole run for every variant alike,
and GPU work the trace cannot show is measured after the run by the measurement layer
(``zerognn.measure.untraced``). Losses are read back only at the end, so the loop itself adds no host
synchronisation per step. The record is built from the measurements by ``zerognn.records.build``.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import torch

from ..datasets.specs import TARGETS
from ..datasets.store import Dataset, load_dataset
from ..determinism import deterministic
from ..distributed import World, barrier, init_world, mean_over_ranks, shutdown
from ..errors import ZeroGNNError
from ..measure.captures import counting_cuda_graph_captures
from ..measure.environment import collect_environment
from ..measure.floor import SIZE_SAMPLES, StepSizes, step_memory, step_sizes, step_work
from ..measure.host_load import host_load
from ..measure.memory import PeakMemory
from ..measure.phases import PhaseClock
from ..measure.timing import synchronize, time_block_s, time_steps
from ..measure.trace import profile_steps
from ..measure.untraced import untraced_ms
from ..outputs import exclusive_output
from ..precision import PRECISIONS, precision_problem, using
from ..records.build import Measurements, build_record, dataset_fields
from ..records.schema import percentiles, write_record
from ..records.spec import RunSpec
from ..records.training import Evaluation, setup_seconds, training_fields
from ..variants import Variant, VariantContext, get_variant
from .context import build_context, resolve_device
from .evaluate import evaluate
from .to_target import train_to_target

Progress = Callable[[str], None]
# A timed window whose p90 is more than this many times its p10 is reported as unstable.
UNSTABLE_SPREAD = 2.0


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(spec: RunSpec, dataset_dir: str | Path, out_path: str | Path, progress: Progress = _stderr,
        trace_path: str | Path | None = None, clock: PhaseClock | None = None) -> dict:
    """Run one configuration and write its record to ``out_path`` (atomically). Returns the record.

    With ``spec.gpus`` > 1 this is one rank of a torchrun-started data-parallel run: every rank trains,
    rank 0 measures and writes the record. ``clock`` holds the phases timed before the call (the command
    line's imports); without one, ``start`` is the process's time before the call.
    """
    clock = PhaseClock() if clock is None else clock
    started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
    with clock.phase("variant import"):
        variant_cls = get_variant(spec.variant, spec.variant_modules)
    device = resolve_device(spec.device)
    if variant_cls.requires_cuda and device.type != "cuda":
        raise ZeroGNNError(f"variant {spec.variant!r} needs a CUDA GPU and this run is on {device}; "
                           f"run it on a GPU machine")
    if variant_cls.models is not None and spec.model not in variant_cls.models:
        raise ZeroGNNError(f"variant {spec.variant!r} runs only {', '.join(variant_cls.models)}, not {spec.model}; "
                           f"choose one of those models or another variant")
    problem = precision_problem(spec.dtype, device.type, spec.deterministic)  # `auto` resolved
    if problem is not None:
        raise ZeroGNNError(problem)
    world = init_world(spec.gpus, device.type)
    try:
        # One writer per record: a second run asked for the same output (a re-run beside an orphaned
        # one) stops here instead of sharing the machine with it and overwriting its record.
        with exclusive_output(out_path) if world.is_main else contextlib.nullcontext():
            # training and evaluation, every kernel of the run
            with deterministic(spec.deterministic), using(spec.dtype):
                return _run(spec, variant_cls, device, world, dataset_dir, out_path,
                            progress if world.is_main else (lambda message: None), trace_path, clock, started_at)
    finally:
        shutdown(world)


def _run(spec: RunSpec, variant_cls: type[Variant], device: torch.device, world: World, dataset_dir: str | Path,
         out_path: str | Path, progress: Progress, trace_path: str | Path | None, clock: PhaseClock,
         started_at: str) -> dict:
    run_id = spec.key.run_id

    def say(message: str) -> None:
        progress(f"[{run_id}] {message}")

    if device.type == "cuda":
        device = torch.device("cuda", world.local_rank)
        with clock.phase("cuda init", device):
            torch.empty(1, device=device)  # the context, on this rank's GPU
    with clock.phase("dataset load", device):
        host_ds, ds = _load(spec, Path(dataset_dir), device, say)
    with clock.phase("context", device):
        ctx = build_context(spec, ds, device, world, memory=PeakMemory(device))
    spec.evaluation_steps(ctx.steps_per_epoch)  # a schedule that cannot run stops here, before any training
    measured, variant_info, evaluations = _train_and_measure(spec, variant_cls, ctx, host_ds, say, trace_path,
                                                             clock)
    losses = mean_over_ranks(ctx.loss_log, world).tolist()
    if not all(v == v and abs(v) != float("inf") for v in losses):
        raise ZeroGNNError(f"[{run_id}] training diverged (non-finite loss); lower the learning rate")
    if not world.is_main:
        barrier(world)  # rank 0 evaluates and writes the record
        return {}
    with clock.phase("evaluation", device):
        accuracy = evaluate(ctx.model, ds, spec)
    say(f"final loss {sum(losses[-5:]) / len(losses[-5:]):.4f}, val acc {accuracy['val']}, test acc "
        f"{accuracy['test']}")
    dataset = dataset_fields(ds.name, host_ds.meta, ds.num_nodes, ds.graph.num_edges, ds.num_features,
                             ds.num_classes)
    with clock.phase("environment"):
        environment = collect_environment(device)
    training = None if evaluations is None else training_fields(
        spec, TARGETS.get(spec.dataset), ctx.steps_per_epoch, setup_seconds(clock.seconds),
        clock.seconds["timed steps"], evaluations, losses)
    if training is not None:
        say("time to target: " + (f"{training['time_to_target_s']:.3f} s of training ("
                                  f"{training['time_to_target_with_setup_s']:.3f} s with setup), "
                                  f"{training['epochs_to_target']} epoch(s)" if training["not_reached"] is None
                                  else f"not reached: {training['not_reached']}"))
    with clock.phase("record"):  # built and checked against the schema; the phases end here
        record = build_record(spec, device.type, dataset, measured, losses, accuracy, variant_info,
                              environment | {"started_at": started_at}, training=training)
    record["metrics"]["phase_s"] = clock.record()
    write_record(out_path, record)
    total = clock.elapsed_s()
    progress(f"[{run_id}] wrote {out_path}" + ("" if total is None else f" ({total:.1f} s after the process "
                                                                        f"started)"))
    barrier(world)
    return record


def _load(spec: RunSpec, dataset_dir: Path, device: torch.device, say: Progress) -> tuple[Dataset, Dataset]:
    """The dataset on the host (graph and splits) and on the run's device, after checking that it fits."""
    host_ds = load_dataset(dataset_dir, features_on="meta")
    if host_ds.name != spec.dataset:
        raise ZeroGNNError(f"{dataset_dir} holds dataset {host_ds.name!r}, not {spec.dataset!r}; "
                           f"point --dataset-dir at the right directory")
    _check_fits(spec, host_ds)
    say(f"loading {host_ds.name} ({host_ds.num_nodes:,} nodes, {host_ds.graph.num_edges:,} edges) onto {device}")
    # Regenerated features are computed straight on the run's device (never a host copy).
    host_ds = host_ds.with_features_on(device)
    _check_values(host_ds)
    return host_ds, host_ds.to(device) if device.type == "cuda" else host_ds


# Feature rows scanned for NaN/inf before a run (evenly spaced over the table): a cheap check that catches
# a damaged or mis-converted table; `zerognn dataset info DIR --check` scans every value.
FEATURE_ROWS_SCANNED = 65_536


def _check_values(ds: Dataset) -> None:
    """Refuse, in one line, a dataset whose splits repeat a node or whose scanned feature rows hold NaN or inf:
    a run on it would train on nonsense and exit 0 (ids outside the graph are refused when it is loaded)."""
    rebuild = "rebuild it (zerognn dataset make NAME --out DIR --force) or fix its source"
    for split in ("train", "val", "test"):
        idx = getattr(ds, f"{split}_idx")
        distinct = int(torch.unique(idx).numel())
        if distinct != idx.numel():
            raise ZeroGNNError(f"dataset {ds.name}: its {split} split repeats node ids ({idx.numel()} ids, {distinct} "
                               f"distinct); {rebuild}")
    rows = torch.linspace(0, ds.num_nodes - 1, min(ds.num_nodes, FEATURE_ROWS_SCANNED)).long()
    finite = torch.isfinite(ds.features[rows.to(ds.features.device)]).all(dim=1).cpu()
    if not bool(finite.all()):
        row = int(rows[~finite][0])
        raise ZeroGNNError(f"dataset {ds.name}: feature row {row} holds NaN or inf; {rebuild} "
                           f"(zerognn dataset info DIR --check scans every value)")


def _check_fits(spec: RunSpec, ds: Dataset) -> None:
    # Edge offsets are int64 everywhere; node ids and degrees must fit int32: the kernels keep ids in
    # int32 columns, and the sampler's multiply-shift draw (zerognn.rng) needs degrees below 2^31.
    if ds.graph.num_nodes >= 2**31:
        raise ZeroGNNError(f"{ds.name} has {ds.graph.num_nodes} nodes; node ids must fit int32 (< 2^31)")
    max_degree = int(ds.graph.degrees().max()) if ds.graph.num_nodes else 0
    if max_degree >= 2**31:
        raise ZeroGNNError(f"{ds.name} has a node of degree {max_degree}; the sampler needs degrees below 2^31")
    if spec.batch_size * spec.gpus > ds.train_idx.numel():
        raise ZeroGNNError(
            f"batch size {spec.batch_size} x {spec.gpus} GPU(s) exceeds {ds.name}'s {ds.train_idx.numel()} train "
            f"nodes; use a smaller batch size or a larger scale"
        )


def _train_and_measure(spec: RunSpec, variant_cls: type[Variant], ctx: VariantContext, host_ds: Dataset,
                       say: Progress, trace_path: str | Path | None,
                       clock: PhaseClock) -> tuple[Measurements, dict, list[Evaluation] | None]:
    """Every phase of the run (the module doc), on one variant; its measurements, ``variant_info`` and, for a
    run to the target, its evaluations."""
    device, memory = ctx.device, ctx.memory
    # Device tensors that only a reference cycle still holds (an earlier run's, in the same process) are freed
    # whenever the collector next runs: counted in `resident` but freed during setup, they would take their
    # bytes off the peak above it, which could then be negative. Collected now, they count in neither.
    gc.collect()
    synchronize(device)
    resident = memory.allocated()
    with counting_cuda_graph_captures() if device.type == "cuda" else contextlib.nullcontext() as captures:
        with clock.phase("setup", device):
            variant = variant_cls(ctx)
            variant.setup()
        with clock.phase("warm-up", device):
            say(f"warm-up: {spec.warmup_steps} steps")
            variant.run_steps(0, spec.warmup_steps)
        if spec.host_load:
            say(f"{spec.host_load} CPU-bound processes on this run's cores during the timed and the profiled steps")
        with host_load(spec.host_load), clock.phase("timed steps", device):
            say(f"measuring {spec.measure_steps} steps")
            memory.start_window()
            step_ms = time_steps(variant, spec.warmup_steps, spec.measure_steps, device, captures)
            peak, peak_reserved = memory.peak_bytes(), memory.peak_reserved_bytes()
            median, p10, p90 = percentiles(step_ms)
            say(f"step time median {median:.2f} ms (p10 {p10:.2f}, p90 {p90:.2f})")
            if p90 > UNSTABLE_SPREAD * p10:
                say(f"warning: unstable step times (p90 is {p90 / p10:.1f}x p10): something else is using this "
                    f"machine, or the run is too short to reach a steady state; repeat it as trials")
        epoch_first = spec.whole_epoch_first_step(ctx.steps_per_epoch)
        epoch_s = None
        if epoch_first is not None:
            with clock.phase("whole epoch", device):
                epoch_s = _whole_epoch(spec, variant, epoch_first, ctx.steps_per_epoch, median, say)
        evaluations = None
        if spec.epochs:
            with clock.phase("training to target", device):
                say(f"training to epoch {spec.epochs}, evaluating every {spec.eval_every} epoch(s)")
                evaluations = train_to_target(spec, variant, spec.timed_steps_end, say)
        trace = None
        if spec.profile_steps:
            with host_load(spec.host_load), clock.phase("profiled steps", device):
                say(f"profiling {spec.profile_steps} steps")
                trace = profile_steps(variant, spec.profile_first_step(ctx.steps_per_epoch), spec.profile_steps,
                                      device, trace_path)
        with clock.phase("untraced replay", device):
            variant.finish()
            untraced = untraced_ms(variant.untraced_replay(), trace, device)
    with clock.phase("floor sizes"):
        sizes = _live_sizes(spec, ctx, host_ds)
    return Measurements(
        ctx.steps_per_epoch, step_ms, trace, untraced, epoch_s, epoch_first,
        None if peak is None else peak - resident, None if captures is None else captures.count,
        None if sizes is None else step_work(ctx.model, sizes, PRECISIONS[spec.dtype].activation_bytes),
        None if peak_reserved is None else peak_reserved - resident,
        None if sizes is None else step_memory(ctx.model, sizes, PRECISIONS[spec.dtype].activation_bytes),
    ), variant.info(), evaluations


def _whole_epoch(spec: RunSpec, variant: Variant, first: int, spe: int, median_ms: float, say: Progress) -> float:
    """Train the steps up to global step ``first`` untimed, then time the whole epoch from there (seconds)."""
    start = spec.timed_steps_end
    if first > start:
        say(f"training steps {start}..{first - 1} up to the epoch boundary (not timed)")
    variant.run_steps(start, first - start)
    say(f"timing epoch {first // spe}: {spe} steps")
    epoch_s = time_block_s(variant, first, spe, variant.ctx.device)
    say(f"whole epoch of {spe} steps: {epoch_s:.3f} s (extrapolated from the median step: "
        f"{median_ms * spe / 1e3:.3f} s)")
    return epoch_s


def _live_sizes(spec: RunSpec, ctx: VariantContext, host_ds: Dataset) -> StepSizes | None:
    """The step's live sizes, for its floor and its ideal memory: the reference sampler on this rank's batches
    of the first timed steps (``zerognn.measure.floor``); only the rank that writes the record needs them."""
    if not ctx.world.is_main:
        return None
    world, spe = ctx.world, ctx.steps_per_epoch
    timed = range(spec.warmup_steps, spec.warmup_steps + min(spec.measure_steps, SIZE_SAMPLES))
    return step_sizes(host_ds.graph, host_ds.train_idx, spec.batch_size, spec.fanouts, spec.seed, list(timed), spe,
                      batch_index=lambda step: step * world.size + world.rank)
