"""``zerognn-epoch``: zerognn's step graph looped on the device, so one host launch trains a block of steps.

The step is zerognn's: the same ``StepGraph`` (``zerognn.fixed_launch.step_graph``), captured the same
way, with its ``cudaGraph_t`` kept. The graph launched is a ``DeviceLoop``
(``zerognn.fixed_launch.device_loop``): the step graph as the body of a WHILE conditional node driven by
the device's committed-step counter. A block of steps — a whole epoch, or the run loop's warm-up, timed or
profiled steps — is one ``cudaGraphLaunch``; the host only queues the next epoch's batch order (one
device copy of an order made at setup; two epochs fit, one per row) and watches the pinned mirror of
the counter.

An overflow rolls the step back as in zerognn, and the loop ends at that step. The host notices it
through the mirror, grows the envelope, re-captures, rebuilds the loop and launches again from the
device's counter: no batch is dropped, repeated or reordered, and the updates are zerognn's.

Each loop iteration stamps the GPU's clock (%globaltimer) when a step begins, so the run loop keeps
per-step times (median, p10-p90) without a host call per step. The profiler reports the loop body's kernels
once per launch, so the measurement layer (``zerognn.measure.untraced``) times the body by replaying the step
graph from the host for the last steps, with the training state put back afterwards.
"""

from __future__ import annotations

import time
from typing import Any

import torch

from ..fixed_launch.device_loop import DeviceLoop
from ..fixed_launch.envelope_policy import CalibratedEnvelope
from ..fixed_launch.step_graph import StepGraph
from ..measure.untraced import UntracedReplay
from ..sampling import epoch_permutation
from . import register
from .base import Variant

_REPLAYED_STEPS = 5  # the profiled window's length by default


@register
class ZeroGNNEpoch(CalibratedEnvelope, Variant):
    name = "zerognn-epoch"
    description = "zerognn's step graph in a device-side WHILE loop: one host launch per block of steps (an epoch)"
    requires_cuda = True
    device_driven = True

    def setup(self) -> None:
        ctx = self.ctx
        # Every epoch's batch order the run can reach, made before any step: filling a permutation row is
        # then one device copy, queued behind the running loop, instead of the host computing it.
        self._orders = [epoch_permutation(ctx.dataset.train_idx, ctx.seed, e)
                        for e in range(-(-ctx.loss_log.numel() // ctx.steps_per_epoch) + 1)]
        self._bounds = torch.zeros(2, dtype=torch.int64, device=ctx.device)
        # stamps[g]: the GPU clock when step g began; one slot past the last step the run can take
        self._stamps = torch.zeros(ctx.loss_log.numel() + 1, dtype=torch.int64, device=ctx.device)
        self._expected = 0   # the committed count the launches so far end at
        self._launch_lengths: list[int] = []
        self.graph = StepGraph(ctx, self.make_envelope(), self._order, keep_graph=True, stream=self.step_stream())
        self._loop = self._build_loop()

    @property
    def control(self):
        return self.graph.control

    def _order(self, epoch: int) -> torch.Tensor:
        if epoch < len(self._orders):
            return self._orders[epoch]
        return epoch_permutation(self.ctx.dataset.train_idx, self.ctx.seed, epoch)

    def _build_loop(self) -> DeviceLoop:
        self.graph.graph.instantiate()
        return DeviceLoop(self.graph.graph.raw_cuda_graph(), self.graph.control.state, self._bounds, self._stamps,
                          self.graph.stream)

    def step(self, epoch: int, step: int, global_step: int) -> None:
        self.run_steps(global_step, 1)

    def run_steps(self, first: int, count: int) -> None:
        """Launch the steps up to ``first + count``; the last launch is left running."""
        target, spe, orders = first + count, self.ctx.steps_per_epoch, self.graph.orders
        while True:
            committed = self._settle()
            if committed >= target:
                return
            epoch = committed // spe
            stop = min(target, (epoch + 2) * spe)  # two permutation rows
            orders.fill(epoch)
            if stop > (epoch + 1) * spe:
                orders.fill(epoch + 1)
            self._loop.launch(stop - committed, torch.cuda.current_stream(self.ctx.device))
            self._launch_lengths.append(stop - committed)
            self._expected = stop
            # The next epoch's order is ready before a loop reaches it (stream order keeps the row a
            # running loop still reads until it has finished).
            orders.fill((stop - 1) // spe + 1)

    def _settle(self) -> int:
        """Wait (reading the pinned mirror, no API call) until the last launch ended; after a rollback grow
        the envelope and re-capture. Returns the committed step count."""
        while True:
            committed, rolled_back = self.graph.progress()
            if self.graph.rolled_back(rolled_back):
                self._loop.close()  # its body is a copy of the graph the re-capture frees
                committed = self.graph.recover()
                self._loop = self._build_loop()
                return committed
            if committed >= self._expected:
                return committed
            time.sleep(0)

    def finish(self) -> None:
        self.run_steps(self._expected, 0)
        torch.cuda.synchronize(self.ctx.device)

    def untraced_replay(self) -> UntracedReplay | None:
        """The loop's body, whose kernels the trace shows once per launch: the step graph replayed from the host
        for the last committed steps (the profiled window's, on their batches), everything it changes put back."""
        count = min(_REPLAYED_STEPS, self.graph.progress()[0], self.ctx.steps_per_epoch)
        if not count:
            return None

        def run() -> int:
            for _ in range(count):
                self.graph.graph.replay()
            return count

        return UntracedReplay(run, kernels=None, prepare=lambda: self.graph.rewind_for_rerun(count))

    def step_stamps_ns(self, first: int, count: int) -> list[int]:
        torch.cuda.synchronize(self.ctx.device)
        return self._stamps[first:first + count + 1].tolist()

    def info(self) -> dict[str, Any]:
        lengths = self._launch_lengths
        return self.graph.info() | {"loop_launches": len(lengths), "loop_steps_per_launch_max": max(lengths, default=0)}
