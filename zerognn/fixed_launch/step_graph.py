"""The fixed-launch training step of one envelope, captured as a CUDA Graph, and regrown after an overflow.

``StepGraph`` owns what both ZeroGNN variants replay: the envelope, the step's device-resident control
block (``StepControl``: counter, epoch orders, hop keys, live sizes, overflow records, the pinned
mirror), the training state as one flat buffer and its snapshot, and the step itself — batch selection,
sampling, gathers, forward, backward and Adam — captured over the envelope after one rolled-back eager
pass. ``zerognn`` replays it from the host once a step; ``zerognn-epoch`` loops it on the device.

Overflow: a kernel that would write past a capacity raises its hop's record instead; the step's last
kernel then restores the training state from the snapshot its first kernel took and leaves the counter
where it was, so the update is suppressed on the device and the same batch runs again. The host sees
the rollback in the pinned mirror (``progress``, ``rolled_back``); ``recover`` puts back the batch order that step
reads, grows the envelope for the hop that overflowed and re-captures.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch

from ..cuda import sampling
from ..cuda.aggregate import CUDA_OPS, EllBlock
from ..cuda.capture import capturing
from ..cuda.gather import gather_labels, model_input
from ..cuda.loss import backward, cross_entropy
from ..distributed import average_gradients
from ..errors import ZeroGNNError
from ..measure.trace import phase
from .chunked_adam import chunked_fused_adam_step
from .envelope import Envelope, worst_case_capacities
from .step_control import StepControl
from .training_state import flatten_training_state


class EpochOrders:
    """Epoch e's batch order in row e % 2 of ``rows`` (host-scheduled, stream-ordered, no sync).

    ``order(e)`` gives an epoch's order. A row holds epoch e until epoch e + 2 is filled into it, so a
    step may be run (again) only while its epoch is one of the last two filled: ``rewind`` restores that
    for a rolled-back step whose row a later epoch has taken.
    """

    def __init__(self, rows: torch.Tensor, order: Callable[[int], torch.Tensor]):
        self._rows, self._order = rows, order
        self.filled = -1  # the latest epoch filled; rows hold it and the one before

    def fill(self, epoch: int) -> None:
        """Make ``epoch``'s order available (a no-op once it is)."""
        if epoch > self.filled:
            self._rows[epoch % 2].copy_(self._order(epoch))
            self.filled = epoch

    def rewind(self, epoch: int) -> None:
        """A step of ``epoch`` runs again: put its order back if a later epoch took its row (the next
        epoch's is then filled again when it is next asked for)."""
        if self.filled > epoch + 1:
            self._rows[epoch % 2].copy_(self._order(epoch))
            self.filled = epoch


class StepGraph:
    """The step of ``ctx`` (a ``zerognn.variants.VariantContext``) over ``envelope`` as one CUDA Graph.

    ``order(e)`` is epoch e's batch order; ``keep_graph`` keeps the captured ``cudaGraph_t`` (a device-side
    loop clones it; whoever holds such a clone drops it before ``recover`` re-captures).
    """

    def __init__(self, ctx: Any, envelope: Envelope, order: Callable[[int], torch.Tensor], keep_graph: bool = False,
                 stream: torch.cuda.Stream | None = None):
        sampling.check_graph(ctx.dataset.graph)
        self.ctx, self.envelope, self.keep_graph = ctx, envelope, keep_graph
        hops = len(ctx.fanouts)
        self._scratch = sampling.SamplerScratch.for_graph(ctx.dataset.num_nodes, ctx.device)
        # Warm-up and every capture run on this one stream (``stream`` if given: one that set-up work already
        # ran GEMMs on): cuBLAS keeps a workspace per (thread, stream), so a stream per pass would hold
        # another pair of them for the rest of the run.
        self.stream = stream if stream is not None else torch.cuda.Stream(ctx.device)
        # A branch of the captured graph: each hop but the last maps its neighbours to local ids there, beside
        # the next hop (zerognn.cuda.sampling.relabel); no GEMM runs on it, so it holds no cuBLAS workspace.
        self._side = torch.cuda.Stream(ctx.device)
        self._flat = flatten_training_state(ctx.model, ctx.optimizer)
        self._snapshot = torch.empty_like(self._flat)
        self.control = StepControl(ctx.device, ctx.dataset.train_idx.numel(), ctx.steps_per_epoch, ctx.batch_size,
                                   hops, hops + 1, ctx.seed, ctx.world.size, ctx.world.rank)
        self.orders = EpochOrders(self.control.permutations, order)
        self.graph: torch.cuda.CUDAGraph | None = None
        self._rolled_back_seen = 0
        self.captures: list[dict[str, Any]] = []
        self.recoveries: list[dict[str, Any]] = []
        self.orders.fill(0)
        self.capture("initial")

    # ------------------------------------------------------------------ the step and its capture

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
                last = hop == len(ctx.fanouts) - 1  # its local ids are the first layer's: no branch
                frontier, n_live, block = sampling.sample_hop_ell(
                    ds.graph, frontier, n_live, fanout, control.hop_keys[hop:hop + 1], control.overflow[hop],
                    self._scratch, envelope.frontier_capacity[hop + 1], next_count=control.live[hop + 1:hop + 2],
                    neighbours_on=None if last else self._side)
                frontiers.append(frontier)
                blocks.append(block)
            torch.cuda.current_stream().wait_stream(self._side)  # the branch joins before any layer runs
            # The captured buffers: after each replay they hold that step's sample (read by tests).
            self.sampled: tuple[list[torch.Tensor], list[EllBlock]] = (frontiers, blocks)
        with phase("gather"):
            # SAGE's and GCN's first layer reads the feature rows through the frontier's ids: no gather kernel
            x = model_input(ctx.model, CUDA_OPS, ds.features, frontier, n_live, rows_record)
            y = gather_labels(ds.labels, control.seeds, control.live[0:1], rows_record)
        with phase("forward"):
            loss = cross_entropy(ctx.model(x, blocks[::-1], CUDA_OPS), y, control.live[0:1], rows_record)
            # Gathered features (GAT) are dead once the first layer has read them: free them before the
            # backward (as the eager variants' scopes do), or the graph's working set keeps them. SAGE's
            # and GCN's x holds no buffer (the rows are read through the ids).
            del x
            backward(loss)
            if ctx.world.size > 1:
                average_gradients(list(ctx.model.parameters()), ctx.world)
        with phase("optimizer"):
            chunked_fused_adam_step(ctx.optimizer)
        if ctx.world.size > 1:
            # Every rank must commit or roll back together (their gradients were averaged): an overflow
            # anywhere rolls the step back everywhere, and every rank grows by the largest need.
            torch.distributed.all_reduce(control.overflow, op=torch.distributed.ReduceOp.MAX)
        control.end(self._flat, self._snapshot, loss.detach(), ctx.loss_log, force_rollback)

    def capture(self, reason: str) -> None:
        """Capture the step over the current envelope (after one rolled-back eager pass for lazy init)."""
        ctx = self.ctx
        started = time.perf_counter()
        self.graph = None  # release the previous graph's memory pool first
        ctx.memory.hold(0)
        ctx.optimizer.zero_grad(set_to_none=True)
        self.stream.wait_stream(torch.cuda.current_stream(ctx.device))
        with torch.cuda.stream(self.stream):
            self._body(force_rollback=True)  # kernels loaded, cuBLAS/autograd initialised; no state change
        torch.cuda.current_stream(ctx.device).wait_stream(self.stream)
        ctx.optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize(ctx.device)  # the eager pass's memory is free before the pool is measured
        graph = torch.cuda.CUDAGraph(keep_graph=self.keep_graph)
        with ctx.memory.capture() as memory, capturing(graph, self.stream):
            self._body(force_rollback=False)
        torch.cuda.synchronize(ctx.device)
        self.graph = graph
        # The step's tensors are freed for the allocator once capture ends, yet every replay reuses
        # them: the run's peak counts them as live for as long as this graph is the one replayed.
        ctx.memory.hold(memory.working_set_bytes)
        self.captures.append({"reason": reason, "capture_s": time.perf_counter() - started,
                              "frontier_capacity": list(self.envelope.frontier_capacity),
                              "graph_pool_bytes": memory.pool_bytes,
                              "graph_working_set_bytes": memory.working_set_bytes})

    # ------------------------------------------------------------------ progress and overflow

    def progress(self) -> tuple[int, int]:
        """(committed, rolled back) steps as of the last step the GPU finished: a host memory read."""
        return self.control.read_mirror()

    def rolled_back(self, count: int) -> bool:
        """Whether ``count`` (the rolled-back steps ``progress`` gave) holds a rollback since the last ``recover``."""
        return count != self._rolled_back_seen

    def recover(self) -> int:
        """After a rollback: wait for the GPU, put back the rolled-back step's batch order, grow the envelope
        and re-capture. Returns the committed steps (the rolled-back step is the next to run)."""
        torch.cuda.synchronize(self.ctx.device)
        committed, rolled_back = self.control.read_mirror()
        self._rolled_back_seen = rolled_back
        self.orders.rewind(committed // self.ctx.steps_per_epoch)
        self._grow(committed)
        return committed

    # ------------------------------------------------------------------ running committed steps again

    def rewind_for_rerun(self, count: int) -> Callable[[], None]:
        """Set the device back ``count`` committed steps (at most an epoch), so that ``count`` host replays of
        the graph run those steps again, on their batches and samples; returns what puts the training state,
        the control block, the batch orders and the loss log back as they are now. With the GPU idle only
        (after the run's last steps): what measures the loop body's GPU time (``zerognn-epoch``) uses it."""
        device, control = self.ctx.device, self.control
        torch.cuda.synchronize(device)
        committed, _ = control.read_mirror()
        if not 0 < count <= min(committed, self.ctx.steps_per_epoch):
            raise ZeroGNNError(f"cannot run {count} of {committed} committed steps again (at most an epoch's "
                               f"{self.ctx.steps_per_epoch}); this is a bug")
        kept = [self._flat, self.ctx.loss_log, *control.tensors()]
        copies, filled = [t.clone() for t in kept], self.orders.filled
        first = committed - count
        self.orders.rewind(first // self.ctx.steps_per_epoch)
        control.state[0] = first
        torch.cuda.synchronize(device)

        def restore() -> None:
            torch.cuda.synchronize(device)
            for tensor, copy in zip(kept, copies):
                tensor.copy_(copy)
            torch.cuda.synchronize(device)
            self.orders.filled = filled

        return restore

    def _grow(self, global_step: int) -> None:
        need = self.control.need_max.tolist()
        ctx, envelope = self.ctx, self.envelope
        worst = worst_case_capacities(ctx.dataset.num_nodes, ctx.batch_size, ctx.fanouts)
        for hop in range(len(ctx.fanouts)):
            if need[hop] > envelope.frontier_capacity[hop + 1]:
                envelope = envelope.grown(hop, need[hop], limit=worst)
        if envelope == self.envelope:
            raise ZeroGNNError(f"step {global_step} overflowed with records {self.control.overflow.tolist()} that a "
                               f"larger envelope {self.envelope.frontier_capacity} would not fix; this is a bug")
        self.recoveries.append({"global_step": global_step, "needed": need[:-1],
                                "from": list(self.envelope.frontier_capacity), "to": list(envelope.frontier_capacity)})
        self.envelope = envelope
        self.capture(f"overflow at step {global_step}")

    def info(self) -> dict[str, Any]:
        committed, rolled_back = self.control.read_mirror()
        live_max = self.control.live_max.tolist()[1:]
        live_mean = [s / max(committed, 1) for s in self.control.live_sum.tolist()[1:]]
        return {
            "envelope": self.envelope.record(live_max, live_mean),
            "committed_steps": committed,
            "overflow_count": rolled_back,
            "recoveries": self.recoveries,
            "captures": self.captures,
        }
