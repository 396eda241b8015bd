"""``torch-compile``: the torch-eager step with its model and loss under ``torch.compile``, as a user would.

Sampling stays in PyTorch ops — its sizes are data-dependent (unique, repeat_interleave), which is
exactly what a compiler cannot make static. The dense part, model forward and loss (and, through
AOTAutograd, their backward), is compiled with ``mode="reduce-overhead"`` (inductor with CUDA Graph
trees on a GPU) and ``dynamic=True``, because every batch brings new frontier sizes. The record says
how many graphs dynamo compiled (graph breaks and recompilations included); the run loop counts the
CUDA Graphs captured (``metrics.cuda_graph_captures``, for every variant). On the H200 that was one
per run, the cudagraph trees' pool graph: the trees record a function only on a call after its
warm-up, each new input size is a new function, and every batch brings new sizes, so every step
takes the warm-up path.
"""

from __future__ import annotations

from typing import Any

import torch
from torch._dynamo.utils import counters

from . import register
from .torch_eager import TorchEager


@register
class TorchCompile(TorchEager):
    name = "torch-compile"
    description = "torch-eager sampling; model and loss under torch.compile(mode='reduce-overhead', dynamic=True)"
    # A GPU baseline (reduce-overhead means CUDA Graphs); the step itself also runs on the CPU, where
    # the tests check it, but the pipeline does not plan it there (it would add minutes of compiling).
    requires_cuda = True

    def setup(self) -> None:
        self._graphs_before = counters["stats"]["unique_graphs"]
        self._frames_before = counters["frames"]["ok"]
        self._compiled = torch.compile(super().forward_loss, mode="reduce-overhead", dynamic=True)

    def forward_loss(self, x: torch.Tensor, hops: list, y: torch.Tensor) -> torch.Tensor:
        if self.ctx.device.type == "cuda":
            torch.compiler.cudagraph_mark_step_begin()  # each step's outputs may be overwritten by the next
        return self._compiled(x, hops, y)

    def info(self) -> dict[str, Any]:
        return {
            "dynamo_graphs": counters["stats"]["unique_graphs"] - self._graphs_before,
            "frames_compiled": counters["frames"]["ok"] - self._frames_before,
        }
