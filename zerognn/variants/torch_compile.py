"""``torch-compile``: the torch-eager step with its model and loss under ``torch.compile``, as PyG documents it.

Sampling stays in PyTorch ops — its sizes are data-dependent (unique, repeat_interleave), which is
exactly what a compiler cannot make static. The dense part, model forward and loss (and, through
AOTAutograd, their backward), is compiled with ``torch.compile(dynamic=True)`` in the default mode
(inductor, no CUDA Graphs): what PyG's compile guide and its own mini-batch benchmark use, because every
batch brings new frontier sizes. ``mode="reduce-overhead"`` was tried and is not the headline: its CUDA
Graph trees record a function only on a call after its warm-up, each new input size is a new function,
and every batch brings new sizes, so every step took the warm-up path (the reference's records made in
that mode at 5bd0744: 70.0 ms a step on products-like SAGE B=1024 against torch-eager's 17.0 ms).

Inductor compiles in this process (``compile_stats.compile_here``), which changes how long compiling takes,
not what it produces. The record says what compiling cost and did (``compile_stats.CompileStats``); the run
loop counts any CUDA Graphs captured (``metrics.cuda_graph_captures``, for every variant).
"""

from __future__ import annotations

from typing import Any

import torch

from . import register
from .compile_stats import CompileStats, compile_here
from .torch_eager import TorchEager


@register
class TorchCompile(TorchEager):
    name = "torch-compile"
    description = "torch-eager sampling; model and loss under torch.compile(dynamic=True), default mode"
    # A GPU baseline; the step itself also runs on the CPU, where the tests check it, but the pipeline
    # does not plan it there (it would add minutes of compiling).
    requires_cuda = True

    def setup(self) -> None:
        self._stats = CompileStats()
        self._compiled = compile_here(super().forward_loss)

    def forward_loss(self, x: torch.Tensor, hops: list, y: torch.Tensor) -> torch.Tensor:
        return self._compiled(x, hops, y)

    def info(self) -> dict[str, Any]:
        return self._stats.info(TorchEager.forward_loss)
