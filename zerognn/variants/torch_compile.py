"""``torch-compile``: the torch-eager step with its model and loss under ``torch.compile``, as a user would.

Sampling stays in PyTorch ops — its sizes are data-dependent (unique, repeat_interleave), which is
exactly what a compiler cannot make static. The dense part, model forward and loss (and, through
AOTAutograd, their backward), is compiled with ``mode="reduce-overhead"`` (inductor with CUDA Graph
trees on a GPU) and ``dynamic=True``, because every batch brings new frontier sizes. The record says
how many graphs dynamo compiled (graph breaks and recompilations included) and, on a GPU, how many
CUDA graphs inductor recorded.
"""

from __future__ import annotations

from typing import Any

import torch
from torch._dynamo.callback import CallbackTrigger, callback_handler
from torch._dynamo.utils import counters

from . import register
from .torch_eager import TorchEager


class _RecordingCounter:
    """Counts the CUDA Graphs inductor's cudagraph trees record, through dynamo's compile callbacks
    (each recording runs under a ``CUDAGRAPH_RECORDING`` callback; the trees' own counters are
    per-thread and vanish with their manager)."""

    def __init__(self) -> None:
        self.count = 0
        self._trigger = getattr(CallbackTrigger, "CUDAGRAPH_RECORDING", None)
        if self._trigger is not None:
            callback_handler.register_start_callback(self._on_start)

    def _on_start(self, args: Any) -> None:
        if getattr(args, "callback_trigger", None) is self._trigger:
            self.count += 1

    def close(self) -> int | None:
        """Stop counting; the count, or None where this torch has no recording callback."""
        if self._trigger is None:
            return None
        if self._on_start in callback_handler.start_callbacks:
            callback_handler.remove_start_callback(self._on_start)
        return self.count


@register
class TorchCompile(TorchEager):
    name = "torch-compile"
    description = "torch-eager sampling; model and loss under torch.compile(mode='reduce-overhead', dynamic=True)"
    # A GPU baseline (reduce-overhead means CUDA Graphs); the step itself also runs on the CPU, where
    # the tests check it, but the pipeline does not plan it there (it would add minutes of compiling).
    requires_cuda = True
    experimental = True  # its GPU test has not run yet

    def setup(self) -> None:
        self._graphs_before = counters["stats"]["unique_graphs"]
        self._frames_before = counters["frames"]["ok"]
        self._compiled = torch.compile(super().forward_loss, mode="reduce-overhead", dynamic=True)
        self._recordings = _RecordingCounter()
        self._recorded: int | None = None

    def forward_loss(self, x: torch.Tensor, hops: list, y: torch.Tensor) -> torch.Tensor:
        if self.ctx.device.type == "cuda":
            torch.compiler.cudagraph_mark_step_begin()  # each step's outputs may be overwritten by the next
        return self._compiled(x, hops, y)

    def finish(self) -> None:
        self._recorded = self._recordings.close()

    def info(self) -> dict[str, Any]:
        return {
            "dynamo_graphs": counters["stats"]["unique_graphs"] - self._graphs_before,
            "frames_compiled": counters["frames"]["ok"] - self._frames_before,
            "cuda_graph_recordings": self._recorded if self.ctx.device.type == "cuda" else None,
        }
