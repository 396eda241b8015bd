"""The measured run: warm-up, timed steady state, a profiled window, evaluation, one run record.

Phases, in order, all on the same variant instance and one continuing sequence of global steps:

1. ``warmup_steps`` steps (compilation, capture, allocator warm-up) — not measured;
2. ``measure_steps`` steps timed one by one (CUDA events on a GPU, a host clock on the CPU), with the
   device's peak memory measured over exactly these steps (``zerognn.measure.memory``: a re-capture
   inside them is included, and no variant can reset the measurement);
3. one lead-in step, then ``profile_steps`` steps under torch.profiler, from whose trace come the GPU's
   busy time per step, host syncs and launches per step and the per-phase breakdown (kept apart from 2
   so the profiler's overhead never reaches the step times). The execution fraction sets the busy time
   against 2's median step (``zerognn.measure.execution``);
4. with ``whole_epoch``: untimed steps up to the next epoch boundary, then that whole epoch — every
   training batch — timed as one wall-clock interval from an idle GPU to the last update done
   (``epoch_s_measured``, beside ``epoch_s`` extrapolated from the median step).

CUDA Graph captures are counted over the whole run for every variant alike, and GPU work the trace
cannot show is measured after the run by the measurement layer (``zerognn.measure.untraced``).

Losses are read back only at the end, so the loop itself adds no host synchronisation per step.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

from ..datasets.store import Dataset, load_dataset
from ..distributed import World, barrier, init_world, mean_over_ranks, shutdown
from ..errors import ZeroGNNError
from ..measure.captures import counting_cuda_graph_captures
from ..measure.environment import collect_environment
from ..measure.execution import execution_metrics, gpu_ms_by_class
from ..measure.floor import SIZE_SAMPLES, floor_metrics, step_sizes, step_work
from ..measure.host_load import host_load
from ..measure.memory import PeakMemory
from ..measure.trace import PROFILER_LEAD_IN_STEPS, profile_window
from ..measure.untraced import untraced_gpu_ms_per_step
from ..outputs import exclusive_output
from ..records.schema import SCHEMA_VERSION, percentiles, write_record
from ..records.spec import RunSpec
from ..variants import get_variant
from .context import build_context, resolve_device
from .evaluate import accuracy

Progress = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _timed_steps(run_step: Callable[[int], None], first: int, count: int, device: torch.device) -> list[float]:
    """Run ``count`` steps from global step ``first``; return each step's time in ms."""
    if device.type == "cuda":
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(count)]
        for i, (start, end) in enumerate(events):
            start.record()
            run_step(first + i)
            end.record()
        torch.cuda.synchronize()
        return [start.elapsed_time(end) for start, end in events]
    times = []
    for i in range(count):
        t0 = time.perf_counter()
        run_step(first + i)
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def _profiled_window(spec: RunSpec, variant, run_step: Callable[[int], None], run_block: Callable[[int, int], None],
                     device: torch.device, trace_path, progress: Progress, run_id: str):
    """The lead-in step and the profiled steps under torch.profiler (None with ``profile_steps`` 0); a
    device-driven variant gets the window's steps as one block, as in steady state."""
    if not spec.profile_steps:
        return None
    progress(f"[{run_id}] profiling {spec.profile_steps} steps")
    first = spec.warmup_steps + spec.measure_steps

    def profiled(i: int) -> None:
        if not variant.device_driven:
            run_step(first + i)
        elif i < PROFILER_LEAD_IN_STEPS:
            run_block(first + i, 1)
        elif i == PROFILER_LEAD_IN_STEPS:
            run_block(first + i, spec.profile_steps)

    return profile_window(profiled, spec.profile_steps, device, trace_path)


# The device's clock may not exceed the wall clock around a block; it may miss a little of it (the launch
# and the loop's first kernel come before the first stamp), not most of it.
DEVICE_CLOCK_SLACK_MS = 0.02
DEVICE_CLOCK_MIN_SHARE = 0.8


def _device_timed_steps(variant, first: int, count: int, device: torch.device, captures) -> list[float]:
    """A device-driven variant's steps ``first``.. as one block: each step's time from the GPU clock the
    variant stamps when a step begins, checked against CUDA events around the whole block."""
    variant.run_steps(first, 0)  # the previous block has ended: the events time this block alone
    captured = captures.count
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    variant.run_steps(first, count)
    end.record()
    torch.cuda.synchronize(device)
    stamps = variant.step_stamps_ns(first, count)
    step_ms = [(b - a) / 1e6 for a, b in zip(stamps, stamps[1:])]
    device_ms, event_ms = sum(step_ms), start.elapsed_time(end)
    # A re-capture inside the block (after an overflow) is host time the device's clock does not see.
    too_little = device_ms < DEVICE_CLOCK_MIN_SHARE * event_ms and captures.count == captured
    if min(step_ms) <= 0 or device_ms > event_ms + DEVICE_CLOCK_SLACK_MS or too_little:
        raise ZeroGNNError(f"{variant.name}: its device clock gives {device_ms:.3f} ms for steps {first}.."
                           f"{first + count - 1} (shortest {min(step_ms):.4f} ms) and CUDA events {event_ms:.3f} ms "
                           f"around them; the stamps are wrong: this is a bug")
    return step_ms


def _whole_epoch(run_block: Callable[[int, int], None], variant, start: int, first: int, spe: int,
                 device: torch.device, progress: Progress) -> float:
    """Train steps ``start``..``first``-1 untimed, then the whole epoch from global step ``first``; its
    wall time in seconds, from an idle GPU to the last update done (the variant's deferred work included)."""
    if first > start:
        progress(f"training steps {start}..{first - 1} up to the epoch boundary (not timed)")
    run_block(start, first - start)
    variant.finish()
    _synchronize(device)
    progress(f"timing epoch {first // spe}: {spe} steps")
    started = time.perf_counter()
    run_block(first, spe)
    variant.finish()
    _synchronize(device)
    return time.perf_counter() - started


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


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


def run(spec: RunSpec, dataset_dir: str | Path, out_path: str | Path, progress: Progress = _stderr,
        trace_path: str | Path | None = None) -> dict:
    """Run one configuration and write its record to ``out_path`` (atomically). Returns the record.

    With ``spec.gpus`` > 1 this is one rank of a torchrun-started data-parallel run: every rank trains,
    rank 0 measures and writes the record.
    """
    variant_cls = get_variant(spec.variant, spec.variant_modules)
    device = resolve_device(spec.device)
    if variant_cls.requires_cuda and device.type != "cuda":
        raise ZeroGNNError(f"variant {spec.variant!r} needs a CUDA GPU and this run is on {device}; "
                           f"run it on a GPU machine")
    world = init_world(spec.gpus, device.type)
    try:
        # One writer per record: a second run asked for the same output (a re-run beside an orphaned
        # one) stops here instead of sharing the machine with it and overwriting its record.
        with exclusive_output(out_path) if world.is_main else contextlib.nullcontext():
            return _run(spec, variant_cls, device, world, dataset_dir, out_path,
                        progress if world.is_main else (lambda message: None), trace_path)
    finally:
        shutdown(world)


def _run(spec: RunSpec, variant_cls, device: torch.device, world: World, dataset_dir: str | Path,
         out_path: str | Path, progress: Progress, trace_path: str | Path | None) -> dict:
    if device.type == "cuda":
        device = torch.device("cuda", world.local_rank)
    run_id = spec.key.run_id

    host_ds = load_dataset(Path(dataset_dir), features_on="meta")
    if host_ds.name != spec.dataset:
        raise ZeroGNNError(f"{dataset_dir} holds dataset {host_ds.name!r}, not {spec.dataset!r}; "
                           f"point --dataset-dir at the right directory")
    _check_fits(spec, host_ds)
    progress(f"[{run_id}] loading {host_ds.name} ({host_ds.num_nodes:,} nodes, {host_ds.graph.num_edges:,} edges) "
             f"onto {device}")
    # Regenerated features are computed straight on the run's device (never a host copy).
    host_ds = host_ds.with_features_on(device)
    ds = host_ds.to(device) if device.type == "cuda" else host_ds
    memory = PeakMemory(device)
    ctx = build_context(spec, ds, device, world, memory=memory)
    spe, model, loss_log, cuda = ctx.steps_per_epoch, ctx.model, ctx.loss_log, device.type == "cuda"
    if cuda:
        torch.cuda.synchronize(device)
    resident = memory.allocated()

    with counting_cuda_graph_captures() if cuda else contextlib.nullcontext() as captures:
        variant = variant_cls(ctx)
        variant.setup()

        def run_step(g: int) -> None:
            epoch, step = divmod(g, spe)
            variant.step(epoch, step, g)

        def run_block(first: int, count: int) -> None:
            if variant.device_driven:
                variant.run_steps(first, count)  # one launch for the block: the GPU drives the steps
            else:
                for g in range(first, first + count):
                    run_step(g)

        progress(f"[{run_id}] warm-up: {spec.warmup_steps} steps")
        run_block(0, spec.warmup_steps)
        if spec.host_load:
            progress(f"[{run_id}] {spec.host_load} CPU-bound processes on this run's cores from here to the end "
                     f"of the profiled steps")
        with host_load(spec.host_load):
            progress(f"[{run_id}] measuring {spec.measure_steps} steps")
            memory.start_window()
            if variant.device_driven:
                step_ms = _device_timed_steps(variant, spec.warmup_steps, spec.measure_steps, device, captures)
            else:
                step_ms = _timed_steps(run_step, spec.warmup_steps, spec.measure_steps, device)
            peak_live = memory.peak_bytes()
            median, p10, p90 = percentiles(step_ms)
            progress(f"[{run_id}] step time median {median:.2f} ms (p10 {p10:.2f}, p90 {p90:.2f})")
            trace = _profiled_window(spec, variant, run_step, run_block, device, trace_path, progress, run_id)

        epoch_first = spec.whole_epoch_first_step(spe)
        epoch_s = None
        if epoch_first is not None:
            epoch_s = _whole_epoch(run_block, variant, spec.total_steps, epoch_first, spe, device,
                                   lambda message: progress(f"[{run_id}] {message}"))
            progress(f"[{run_id}] whole epoch of {spe} steps: {epoch_s:.3f} s "
                     f"(extrapolated from the median step: {median * spe / 1e3:.3f} s)")

        variant.finish()
        replay = variant.untraced_replay()
        # CUPTI reports the body of a conditional graph node once per graph launch, not once per loop
        # iteration, so a device-driven variant's trace shows one step of GPU work for a whole block:
        # its GPU-side trace metrics are left null (unknown) rather than read from it. Its host-side
        # ones (syncs, launches) are what the trace sees.
        gpu_trace = None if variant.device_driven else trace
        untraced_ms = None
        if replay is not None and gpu_trace is not None and gpu_trace.gpu_busy_ms_per_step is not None:
            untraced_ms = untraced_gpu_ms_per_step(replay, device)

    losses = mean_over_ranks(loss_log, world).tolist()
    if not all(map(lambda v: v == v and abs(v) != float("inf"), losses)):
        raise ZeroGNNError(f"[{run_id}] training diverged (non-finite loss); lower the learning rate")
    if not world.is_main:
        barrier(world)  # rank 0 evaluates and writes the record
        return {}
    # The floor's live sizes: the reference sampler on this rank's batches of the first timed steps.
    timed = range(spec.warmup_steps, spec.warmup_steps + min(spec.measure_steps, SIZE_SAMPLES))
    sizes = step_sizes(host_ds.graph, host_ds.train_idx, spec.batch_size, spec.fanouts, spec.seed, list(timed), spe,
                       batch_index=lambda step: step * world.size + world.rank)
    environment = collect_environment(device)
    eval_nodes = spec.eval_nodes
    val = accuracy(model, ds, ds.val_idx[:eval_nodes], spec.fanouts, spec.seed, spec.batch_size) if eval_nodes else None
    test = (accuracy(model, ds, ds.test_idx[:eval_nodes], spec.fanouts, spec.seed, spec.batch_size)
            if eval_nodes else None)
    progress(f"[{run_id}] final loss {sum(losses[-5:]) / len(losses[-5:]):.4f}, val acc {val}, test acc {test}")

    record = {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "config": spec.to_dict() | {"device": device.type},
        "dataset": {
            "name": ds.name,
            "source": host_ds.meta.get("source"),
            "num_nodes": ds.num_nodes,
            "num_edges": ds.graph.num_edges,
            "num_features": ds.num_features,
            "num_classes": ds.num_classes,
            "scale": host_ds.meta.get("scale"),
        },
        "metrics": {
            "steps_per_epoch": spe,
            "step_ms": step_ms,
            "step_ms_median": median,
            "step_ms_p10": p10,
            "step_ms_p90": p90,
            "epoch_s": median * spe / 1e3,
            "epoch_s_measured": epoch_s,
            "epoch_first_step": epoch_first,
            "seeds_per_s": spec.batch_size * spec.gpus / (median / 1e3),
            **execution_metrics(median, gpu_trace, untraced_ms),
            "host_syncs_per_step": None if trace is None else trace.host_syncs_per_step,
            "host_launches_per_step": None if trace is None else trace.host_launches_per_step,
            "gpu_activities_per_step": None if gpu_trace is None else gpu_trace.gpu_activities_per_step,
            "gpu_ms_by_class": gpu_ms_by_class(gpu_trace, untraced_ms),
            **floor_metrics(median, step_work(model, sizes), environment["gpu_name"]),
            "peak_mem_bytes": None if peak_live is None else peak_live - resident,
            "cuda_graph_captures": None if captures is None else captures.count,
            "phase_ms": {} if trace is None else trace.phase_ms,
            "window_ms": None if trace is None else trace.window_ms,
        },
        "losses": losses,
        "accuracy": {"val": val, "test": test, "eval_nodes": eval_nodes},
        "variant_info": variant.info(),
        "environment": environment,
    }
    write_record(out_path, record)
    progress(f"[{run_id}] wrote {out_path}")
    barrier(world)
    return record
