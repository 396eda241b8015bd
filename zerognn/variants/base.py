"""The execution-variant interface: what every way of running the training step implements.

A variant owns *control* — who reads sizes, who launches what, how buffers are provisioned — never the
math: the model, optimizer, dataset and sampling semantics come in through ``VariantContext`` and are
the same for all variants. The training loop calls ``setup()`` once, then ``run_steps()`` for each block
of global steps (by default one ``step()`` each), then ``finish()``; a step writes its loss into
``ctx.loss_log[global_step]`` on the device and must not read it back.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import nn

from ..cuda.loss import backward
from ..datasets.store import Dataset
from ..distributed import SINGLE, World, average_gradients
from ..measure.memory import PeakMemory
from ..measure.trace import phase
from ..measure.untraced import UntracedReplay
from ..optimizer import adam_step
from ..sampling import batch_seeds, epoch_permutation


@dataclass
class VariantContext:
    """Everything a variant may use; identical across variants for the same run configuration."""

    dataset: Dataset          # on ``device``
    model: nn.Module          # on ``device``, identical initial parameters for every variant
    optimizer: torch.optim.Optimizer
    model_name: str
    fanouts: list[int]
    batch_size: int
    seed: int
    device: torch.device
    loss_log: torch.Tensor    # float32 [total steps] on ``device``
    steps_per_epoch: int      # steps each rank takes in an epoch (the last partial batch is dropped)
    world: World = SINGLE     # this process's rank among the data-parallel processes
    # The run's memory meter: a variant that replays a CUDA Graph measures its captures and declares
    # the graph's working set through it (never through the allocator's statistics directly).
    memory: PeakMemory | None = None

    def __post_init__(self) -> None:
        if self.memory is None:
            self.memory = PeakMemory(self.device)


class Variant(ABC):
    """One execution strategy for the training step. Subclasses register with ``@register``."""

    name: ClassVar[str]
    description: ClassVar[str]
    requires_cuda: ClassVar[bool] = False
    # The models it runs (None: every model in zerognn.models): the workflow plans no other, a run refuses one.
    models: ClassVar[tuple[str, ...] | None] = None
    # Written but not yet validated on a GPU: `variants: all` leaves it out; naming it runs it.
    experimental: ClassVar[bool] = False
    # The GPU drives its own steps: the run loop hands it blocks of steps (``run_steps``) and takes each
    # step's time from the device's clock (``step_stamps_ns``) instead of events around host calls.
    device_driven: ClassVar[bool] = False

    def __init__(self, ctx: VariantContext):
        self.ctx = ctx

    def setup(self) -> None:
        """One-time preparation before the first step (calibration, compilation, graph capture)."""

    def seeds(self, epoch: int, step: int) -> torch.Tensor:
        """This rank's seeds of global step ``step`` in ``epoch`` (the permutation is computed once per epoch)."""
        if epoch != getattr(self, "_permutation_epoch", None):
            self._permutation_epoch = epoch
            self._permutation = epoch_permutation(self.ctx.dataset.train_idx, self.ctx.seed, epoch)
        world = self.ctx.world
        return batch_seeds(self._permutation, step * world.size + world.rank, self.ctx.batch_size)

    def backward_and_update(self, loss: torch.Tensor, global_step: int) -> None:
        """Backward, optimizer step and the device-side loss log: the tail of every eager step."""
        with phase("backward"):
            self.ctx.optimizer.zero_grad(set_to_none=True)
            backward(loss)  # its kernels' gradient straight to the logits (zerognn.cuda.loss)
            if self.ctx.world.size > 1:
                average_gradients(list(self.ctx.model.parameters()), self.ctx.world)
        with phase("optimizer"):
            adam_step(self.ctx.optimizer)
        self.ctx.loss_log[global_step] = loss.detach()

    @abstractmethod
    def step(self, epoch: int, step: int, global_step: int) -> None:
        """Run training step ``step`` of ``epoch``; write its loss to ``ctx.loss_log[global_step]``."""

    def run_steps(self, first: int, count: int) -> None:
        """Global steps ``first`` .. ``first + count - 1``: by default one ``step`` each, issued by the host. A
        device-driven variant overrides this to run the block with one launch (possibly still queued)."""
        for g in range(first, first + count):
            self.step(*divmod(g, self.ctx.steps_per_epoch), g)

    def step_stamps_ns(self, first: int, count: int) -> list[int]:
        """A device-driven variant's GPU clock (ns) at the start of each of those steps and after the last."""
        raise NotImplementedError(f"{self.name} is not device-driven")

    def finish(self) -> None:
        """Called after the last step of a phase (before a timed whole epoch ends, before losses are
        read): settle any deferred work. May be called more than once."""

    def untraced_replay(self) -> UntracedReplay | None:
        """How to re-run, launched from the host, the GPU work of recent steps that the profiler's
        trace cannot show (the measurement layer times it after ``finish``); None where the trace
        sees all of the variant's GPU work."""
        return None

    def info(self) -> dict[str, Any]:
        """Variant-specific facts for the run record (``variant_info``): envelopes, captures, ..."""
        return {}
