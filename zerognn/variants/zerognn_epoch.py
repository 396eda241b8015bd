"""``zerognn-epoch``: zerognn's step graph looped on the device, so one host launch trains a block of steps.

The step is zerognn's, captured the same way; the graph launched is a ``DeviceLoop``
(``zerognn.fixed_launch.device_loop``): the step graph as the body of a WHILE conditional node driven by the
device's committed-step counter. A block of steps — a whole epoch, or the run loop's warm-up, timed or
profiled steps — is one ``cudaGraphLaunch``; the host only queues the next epoch's batch order (one
device copy of an order made at setup; two epochs fit, one per row) and watches the pinned mirror of
the counter.

An overflow rolls the step back as in zerognn, and the loop ends at that step. The host notices it
through the mirror, grows the envelope, re-captures, rebuilds the loop and launches again from the
device's counter: no batch is dropped, repeated or reordered, and the updates are zerognn's.

Each loop iteration stamps the GPU's clock (%globaltimer) when a step begins, so the run loop keeps
per-step times (median, p10-p90) without a host call per step.
"""

from __future__ import annotations

import time
from typing import Any

import torch

from ..fixed_launch.device_loop import DeviceLoop
from ..sampling import epoch_permutation, steps_per_epoch
from . import register
from .zerognn import ZeroGNN


@register
class ZeroGNNEpoch(ZeroGNN):
    name = "zerognn-epoch"
    description = "zerognn's step graph in a device-side WHILE loop: one host launch per block of steps (an epoch)"
    device_driven = True

    def setup(self) -> None:
        ctx = self.ctx
        spe = steps_per_epoch(ctx.dataset.train_idx.numel(), ctx.batch_size * ctx.world.size)
        # Every epoch's batch order the run can reach, made before any step: filling a permutation row is
        # then one device copy, queued behind the running loop, instead of the host computing it.
        self._orders = [epoch_permutation(ctx.dataset.train_idx, ctx.seed, e)
                        for e in range(-(-ctx.loss_log.numel() // spe) + 1)]
        self._loop: DeviceLoop | None = None
        self._bounds = torch.zeros(2, dtype=torch.int64, device=ctx.device)
        # stamps[g]: the GPU clock when step g began; one slot past the last step the run can take
        self._stamps = torch.zeros(ctx.loss_log.numel() + 1, dtype=torch.int64, device=ctx.device)
        self._expected = 0   # the committed count the launches so far end at
        self._launch_lengths: list[int] = []
        super().setup()

    # ------------------------------------------------------------------ capture

    def _new_cuda_graph(self) -> torch.cuda.CUDAGraph:
        return torch.cuda.CUDAGraph(keep_graph=True)  # its cudaGraph_t becomes the loop's body

    def _capture(self, reason: str) -> None:
        if self._loop is not None:  # its body is a copy of the graph about to be freed
            self._loop.close()
            self._loop = None
        super()._capture(reason)
        self._graph.instantiate()
        self._loop = DeviceLoop(self._graph.raw_cuda_graph(), self.control.state, self._bounds, self._stamps,
                                self._stream)

    # ------------------------------------------------------------------ steady state

    def step(self, epoch: int, step: int, global_step: int) -> None:
        self.run_steps(global_step, 1)

    def run_steps(self, first: int, count: int) -> None:
        """Launch the steps up to ``first + count``; the last launch is left running."""
        target = first + count
        while True:
            committed = self._settle()
            if committed >= target:
                return
            epoch = committed // self._steps_per_epoch
            stop = min(target, (epoch + 2) * self._steps_per_epoch)  # two permutation rows
            self._fill_permutation(epoch)
            if stop > (epoch + 1) * self._steps_per_epoch:
                self._fill_permutation(epoch + 1)
            self._loop.launch(stop - committed, torch.cuda.current_stream(self.ctx.device))
            self._launch_lengths.append(stop - committed)
            self._expected = stop
            # The next epoch's order is ready before a loop reaches it (stream order keeps the row a
            # running loop still reads until it has finished).
            self._fill_permutation((stop - 1) // self._steps_per_epoch + 1)

    def _fill_permutation(self, epoch: int) -> None:
        if epoch > self._filled_epoch:
            order = (self._orders[epoch] if epoch < len(self._orders)
                     else epoch_permutation(self.ctx.dataset.train_idx, self.ctx.seed, epoch))
            self.control.permutations[epoch % 2].copy_(order)
            self._filled_epoch = epoch

    def _settle(self) -> int:
        """Wait (reading the pinned mirror, no API call) until the last launch ended; after a rollback grow
        the envelope and re-capture. Returns the committed step count."""
        while True:
            committed, rolled_back = self.control.read_mirror()
            if rolled_back != self._rolled_back_seen:
                torch.cuda.synchronize(self.ctx.device)
                committed, rolled_back = self.control.read_mirror()
                self._rolled_back_seen = rolled_back
                # The order queued after the launch may be that of a later epoch in the row the rolled-back
                # step reads: put its own epoch's order back before anything runs it again.
                epoch = committed // self._steps_per_epoch
                self._filled_epoch = epoch - 1
                self._fill_permutation(epoch)
                self._grow(committed)
                return self.control.read_mirror()[0]
            if committed >= self._expected:
                return committed
            time.sleep(0)

    def finish(self) -> None:
        self.run_steps(self._expected, 0)
        torch.cuda.synchronize(self.ctx.device)

    def step_stamps_ns(self, first: int, count: int) -> list[int]:
        torch.cuda.synchronize(self.ctx.device)
        return self._stamps[first:first + count + 1].tolist()

    def info(self) -> dict[str, Any]:
        lengths = self._launch_lengths
        return super().info() | {"loop_launches": len(lengths), "loop_steps_per_launch_max": max(lengths, default=0)}
