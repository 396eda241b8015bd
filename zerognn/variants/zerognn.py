"""``zerognn``: the training step as one CUDA Graph over a tight envelope, metadata never leaving the GPU.

* Device-resident metadata (``StepControl``): the step counter, the epoch permutations the batch is cut
  from, hop keys, per-hop live sizes and overflow records all live in device memory; the first kernel
  of the step selects its batch from the counter.
* Fixed launch structure: every buffer is provisioned from the envelope and every grid fixed at
  capture; kernels read live counts and skip padded work (rows past a live count are zero).
* Tight envelope: per-hop capacities from calibration (``zerognn.fixed_launch.envelope``); ``make_envelope`` is
  the one thing the ``zerognn-worstcase`` ablation changes.
* Overflow: a kernel that would write past a capacity raises its hop's record instead; the last kernel
  then restores the training state from the snapshot taken by the first and leaves the counter where
  it was, so the update is suppressed on the device and the same batch runs again. The host notices
  through a pinned mirror (no API call), grows the envelope, re-captures and catches up: no batch is
  dropped or truncated, and updates happen in the same order as host-mediated's.
* One graph per step: sample, gather, forward, backward and the optimizer step are captured once per
  envelope and replayed; in steady state a step is one ``cudaGraphLaunch``. Because the host's work is
  done once, at capture, the optimizer step launches Adam's fused kernel over small chunks
  (``zerognn.fixed_launch.chunked_adam``): the same update, with enough blocks to fill the GPU.
"""

from __future__ import annotations

import gc
import time
from typing import Any

import torch
import torch.nn.functional as F

from ..cuda import sampling
from ..cuda.aggregate import CUDA_OPS, EllBlock
from ..distributed import average_gradients
from ..errors import ZeroGNNError
from ..fixed_launch.chunked_adam import chunked_fused_adam_step
from ..fixed_launch.envelope import Envelope, calibrate, worst_case_capacities
from ..fixed_launch.step_control import StepControl
from ..fixed_launch.training_state import flatten_training_state
from ..sampling import epoch_permutation, steps_per_epoch
from . import register
from .base import Variant, phase


@register
class ZeroGNN(Variant):
    name = "zerognn"
    description = "device-resident metadata, fixed grids from a calibrated envelope, the whole step as one CUDA Graph"
    requires_cuda = True

    calibration_batches = 8
    margin = 0.15
    max_in_flight = 256  # replays the host may queue ahead of the GPU (also bounded by an epoch, see _throttle)

    def make_envelope(self) -> Envelope:
        ctx = self.ctx
        return calibrate(ctx.dataset.graph, ctx.dataset.train_idx, ctx.batch_size, ctx.fanouts, ctx.seed,
                         self.calibration_batches, self.margin)

    # ------------------------------------------------------------------ setup and capture

    def setup(self) -> None:
        ctx = self.ctx
        sampling.check_graph(ctx.dataset.graph)
        self.envelope = self.make_envelope()
        hops = len(ctx.fanouts)
        self._steps_per_epoch = steps_per_epoch(ctx.dataset.train_idx.numel(), ctx.batch_size * ctx.world.size)
        self._new_bits = sampling.NewNodeBits.for_graph(ctx.dataset.num_nodes, ctx.device)
        # Warm-up and every capture run on this one stream: cuBLAS keeps a workspace per (thread,
        # stream), so a stream per pass would hold another pair of them for the rest of the run.
        self._stream = torch.cuda.Stream(ctx.device)
        self._flat = flatten_training_state(ctx.model, ctx.optimizer)
        self._snapshot = torch.empty_like(self._flat)
        self.control = StepControl(ctx.device, ctx.dataset.train_idx.numel(), self._steps_per_epoch, ctx.batch_size,
                                   hops, hops + 1, ctx.seed, ctx.world.size, ctx.world.rank)
        self._in_flight_limit = max(1, min(self.max_in_flight, self._steps_per_epoch))
        self._filled_epoch = -1
        self._issued = 0          # replays launched (each ends committed or rolled back)
        self._target = 0          # global steps the loop has asked for
        self._rolled_back_seen = 0
        self._captures: list[dict[str, Any]] = []
        self._recoveries: list[dict[str, Any]] = []
        self._fill_permutation(0)
        self._capture("initial")

    def _fill_permutation(self, epoch: int) -> None:
        """Put ``epoch``'s batch order in row epoch % 2 (host-scheduled at epoch boundaries, no sync)."""
        if epoch > self._filled_epoch:
            ds = self.ctx.dataset
            self.control.permutations[epoch % 2].copy_(epoch_permutation(ds.train_idx, self.ctx.seed, epoch))
            self._filled_epoch = epoch

    def _body(self, force_rollback: bool) -> None:
        """One training step over the envelope; what the graph captures."""
        ctx, control, envelope = self.ctx, self.control, self.envelope
        ds = ctx.dataset
        rows_record = control.overflow[len(ctx.fanouts)]
        control.begin(self._flat, self._snapshot)
        with phase("sample"):
            frontier, n_live = control.seeds, control.live[0:1]
            frontiers, blocks = [frontier], []
            for hop, fanout in enumerate(ctx.fanouts):
                frontier, n_live, block = sampling.sample_hop_ell(
                    ds.graph, frontier, n_live, fanout, control.hop_keys[hop:hop + 1], control.overflow[hop],
                    self._new_bits, envelope.frontier_capacity[hop + 1], next_count=control.live[hop + 1:hop + 2])
                frontiers.append(frontier)
                blocks.append(block)
            # The captured buffers: after each replay they hold that step's sample (read by tests).
            self.sampled: tuple[list[torch.Tensor], list[EllBlock]] = (frontiers, blocks)
        with phase("gather"):
            x = sampling.gather_rows(ds.features, frontier, n_live, rows_record)
            y = sampling.gather_labels(ds.labels, control.seeds, control.live[0:1], rows_record)
        with phase("forward"):
            loss = F.cross_entropy(ctx.model(x, blocks[::-1], CUDA_OPS), y)
            # The gathered features are dead once the first layer has read them: free them before the
            # backward (as the eager variants' scopes do), or the graph's working set keeps them.
            del x
            loss.backward()
            if ctx.world.size > 1:
                average_gradients(list(ctx.model.parameters()), ctx.world)
        with phase("optimizer"):
            chunked_fused_adam_step(ctx.optimizer)
        if ctx.world.size > 1:
            # Every rank must commit or roll back together (their gradients were averaged): an overflow
            # anywhere rolls the step back everywhere, and every rank grows by the largest need.
            torch.distributed.all_reduce(control.overflow, op=torch.distributed.ReduceOp.MAX)
        control.end(self._flat, self._snapshot, loss.detach(), ctx.loss_log, force_rollback)

    def _capture(self, reason: str) -> None:
        """Capture the step over the current envelope (after one rolled-back eager pass for lazy init)."""
        ctx = self.ctx
        started = time.perf_counter()
        self._graph = None  # release the previous graph's memory pool first
        ctx.memory.hold(0)
        ctx.optimizer.zero_grad(set_to_none=True)
        side = self._stream
        side.wait_stream(torch.cuda.current_stream(ctx.device))
        with torch.cuda.stream(side):
            self._body(force_rollback=True)  # kernels loaded, cuBLAS/autograd initialised; no state change
        torch.cuda.current_stream(ctx.device).wait_stream(side)
        ctx.optimizer.zero_grad(set_to_none=True)
        # A CUDA Graph freed by the cycle collector during capture invalidates the capture, and
        # torch.cuda.graph no longer collects by default: collect now, while that is harmless.
        gc.collect()
        graph = self._new_cuda_graph()
        with ctx.memory.capture() as memory, torch.cuda.graph(graph, stream=side):
            self._body(force_rollback=False)
        torch.cuda.synchronize(ctx.device)
        self._graph = graph
        # The step's tensors are freed for the allocator once capture ends, yet every replay reuses
        # them: the run's peak counts them as live for as long as this graph is the one replayed.
        ctx.memory.hold(memory.working_set_bytes)
        self._captures.append({"reason": reason, "capture_s": time.perf_counter() - started,
                               "frontier_capacity": list(self.envelope.frontier_capacity),
                               "graph_pool_bytes": memory.pool_bytes,
                               "graph_working_set_bytes": memory.working_set_bytes})

    def _new_cuda_graph(self) -> torch.cuda.CUDAGraph:
        return torch.cuda.CUDAGraph()

    # ------------------------------------------------------------------ steady state

    def step(self, epoch: int, step: int, global_step: int) -> None:
        self._throttle(global_step)
        self._fill_permutation(epoch)
        self._graph.replay()
        self._issued += 1
        self._target = global_step + 1

    def _throttle(self, global_step: int) -> None:
        """Recover if a finished replay rolled back; keep at most an epoch of replays in flight.

        The bound keeps the permutation row a lagging (rolled-back) step reads from being refilled
        before the host has noticed the rollback.
        """
        while True:
            committed, rolled_back = self.control.read_mirror()
            if rolled_back != self._rolled_back_seen:
                self._recover(global_step)
                return
            if self._issued - (committed + rolled_back) <= self._in_flight_limit:
                return
            time.sleep(0)

    def _recover(self, target: int) -> None:
        """Grow the envelope after overflow, re-capture, and replay until ``target`` steps are committed."""
        torch.cuda.synchronize(self.ctx.device)
        while True:
            committed, rolled_back = self.control.read_mirror()
            if rolled_back != self._rolled_back_seen:
                self._rolled_back_seen = rolled_back
                self._grow(committed)
                continue  # the capture's own pass may overflow again on the next hop
            if committed >= target:
                break
            self._graph.replay()
            torch.cuda.synchronize(self.ctx.device)
        self._issued = committed + rolled_back

    def _grow(self, global_step: int) -> None:
        need = self.control.need_max.tolist()
        envelope = self.envelope
        worst = worst_case_capacities(self.ctx.dataset.num_nodes, self.ctx.batch_size, self.ctx.fanouts)
        for hop in range(len(self.ctx.fanouts)):
            if need[hop] > envelope.frontier_capacity[hop + 1]:
                envelope = envelope.grown(hop, need[hop], limit=worst)
        if envelope == self.envelope:
            raise ZeroGNNError(f"step {global_step} overflowed with records {self.control.overflow.tolist()} that a "
                               f"larger envelope {self.envelope.frontier_capacity} would not fix; this is a bug")
        self._recoveries.append({"global_step": global_step, "needed": need[:-1],
                                 "from": list(self.envelope.frontier_capacity),
                                 "to": list(envelope.frontier_capacity)})
        self.envelope = envelope
        self._capture(f"overflow at step {global_step}")

    def finish(self) -> None:
        torch.cuda.synchronize(self.ctx.device)
        self._recover(self._target)

    def info(self) -> dict[str, Any]:
        committed, rolled_back = self.control.read_mirror()
        live_max = self.control.live_max.tolist()[1:]
        live_mean = [s / max(committed, 1) for s in self.control.live_sum.tolist()[1:]]
        return {
            "envelope": self.envelope.record(live_max, live_mean),
            "committed_steps": committed,
            "overflow_count": rolled_back,
            "recoveries": self._recoveries,
            "captures": self._captures,
        }
