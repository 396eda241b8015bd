"""``torch-compile``: the torch-eager step with its model and loss under ``torch.compile``, as a user would.

Sampling stays in PyTorch ops — its sizes are data-dependent (unique, repeat_interleave), which is
exactly what a compiler cannot make static. The dense part, model forward and loss (and, through
AOTAutograd, their backward), is compiled with ``mode="reduce-overhead"`` (inductor with CUDA Graph
trees on a GPU) and ``dynamic=True``, because every batch brings new frontier sizes. The record says
how many graphs dynamo compiled (graph breaks and recompilations included) and, on a GPU, how many
CUDA Graphs were captured. On the H200 that was one per run, the cudagraph trees' pool graph: the trees
record a function only on a call after its warm-up, each new input size is a new function, and every
batch brings new sizes, so every step takes the warm-up path.
"""

from __future__ import annotations

from typing import Any

import torch
from torch._dynamo.utils import counters

from . import register
from .torch_eager import TorchEager


class _CaptureCounter:
    """Counts CUDA Graph captures in this process while open.

    Inductor's cudagraph trees capture through ``torch.cuda.CUDAGraph``: one graph per recorded
    function and input-size key, plus one empty graph per tree manager that sets up its memory pool.
    torch keeps no count that outlives a run (the trees' own counter is per-thread and dropped with its
    manager; on torch 2.11 dynamo's recording callback did not fire), so the capture entry point is
    wrapped for the run's duration.
    """

    def __init__(self) -> None:
        self.count = 0
        self._original = original = torch.cuda.CUDAGraph.capture_begin

        def counted(graph: torch.cuda.CUDAGraph, *args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return original(graph, *args, **kwargs)

        torch.cuda.CUDAGraph.capture_begin = counted

    def close(self) -> int:
        torch.cuda.CUDAGraph.capture_begin = self._original
        return self.count


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
        self._captures = _CaptureCounter() if self.ctx.device.type == "cuda" else None
        self._captured: int | None = None

    def forward_loss(self, x: torch.Tensor, hops: list, y: torch.Tensor) -> torch.Tensor:
        if self.ctx.device.type == "cuda":
            torch.compiler.cudagraph_mark_step_begin()  # each step's outputs may be overwritten by the next
        return self._compiled(x, hops, y)

    def finish(self) -> None:
        if self._captures is not None:
            self._captured, self._captures = self._captures.close(), None

    def info(self) -> dict[str, Any]:
        return {
            "dynamo_graphs": counters["stats"]["unique_graphs"] - self._graphs_before,
            "frames_compiled": counters["frames"]["ok"] - self._frames_before,
            "cuda_graph_captures": self._captured,
        }
