"""``torch-compile``: the torch-eager step with its model and loss under ``torch.compile``, as PyG documents it.

Sampling stays in PyTorch ops — its sizes are data-dependent (unique, repeat_interleave), which is
exactly what a compiler cannot make static. The dense part, model forward and loss (and, through
AOTAutograd, their backward), is compiled with ``torch.compile(dynamic=True)`` in the default mode
(inductor, no CUDA Graphs): what PyG's compile guide and its own mini-batch benchmark use, because every
batch brings new frontier sizes. ``mode="reduce-overhead"`` was tried and is not the headline: its CUDA
Graph trees record a function only on a call after its warm-up, each new input size is a new function,
and every batch brings new sizes, so every step took the warm-up path (the reference's records made in
that mode at 5bd0744: 70.0 ms a step on products-like SAGE B=1024 against torch-eager's 17.0 ms).

Inductor compiles in this process (``compile_threads = 1``), which changes how long compiling takes, not
what it produces: with its default pool of compile workers, a trial whose compile hits inductor's on-disk
cache can leave the workers starting up (each one importing torch) while its steps are timed. Compiling
in-process, no other process shares the host while the steps are timed.

The record says what compiling cost and did: ``compile_s`` (dynamo's and inductor's compile time over
the run), ``dynamo_graphs``, ``frames_compiled``, ``graph_breaks`` and ``recompilations`` (compiled
versions of the step's function beyond the first); the run loop counts any CUDA Graphs captured
(``metrics.cuda_graph_captures``, for every variant).
"""

from __future__ import annotations

from typing import Any

import torch

from ..optimizer import restore_dynamo_marks
from . import register
from .torch_eager import TorchEager


def _counters():
    # Imported here, not at the top: every run imports every variant, and dynamo takes over a second to load.
    from torch._dynamo.utils import counters

    return counters


def _compile_seconds() -> float:
    """Dynamo's cumulative compile wall time in this process (forward and backward frames)."""
    from torch._dynamo.utils import calculate_time_spent

    return calculate_time_spent().get("total_wall_time", 0.0)


def _graph_breaks() -> int:
    return sum(_counters()["graph_break"].values())


def _compiled_versions(function: Any) -> int | None:
    """How many compiled versions dynamo caches for ``function``'s code (None where torch cannot say)."""
    try:
        from torch._C._dynamo.eval_frame import _debug_get_cache_entry_list

        return len(_debug_get_cache_entry_list(function.__code__))
    except (ImportError, AttributeError, TypeError):
        return None


@register
class TorchCompile(TorchEager):
    name = "torch-compile"
    description = "torch-eager sampling; model and loss under torch.compile(dynamic=True), default mode"
    # A GPU baseline; the step itself also runs on the CPU, where the tests check it, but the pipeline
    # does not plan it there (it would add minutes of compiling).
    requires_cuda = True

    def setup(self) -> None:
        from torch._inductor import config as inductor_config

        restore_dynamo_marks()  # Optimizer's methods marked never-to-compile again (zerognn.optimizer)
        inductor_config.compile_threads = 1
        counters = _counters()
        self._before = (counters["stats"]["unique_graphs"], counters["frames"]["ok"], _graph_breaks(),
                        _compile_seconds())
        self._compiled = torch.compile(super().forward_loss, dynamic=True)

    def forward_loss(self, x: torch.Tensor, hops: list, y: torch.Tensor) -> torch.Tensor:
        return self._compiled(x, hops, y)

    def info(self) -> dict[str, Any]:
        graphs, frames, breaks, seconds = self._before
        versions, counters = _compiled_versions(TorchEager.forward_loss), _counters()
        return {
            "compile_s": round(_compile_seconds() - seconds, 3),
            "dynamo_graphs": counters["stats"]["unique_graphs"] - graphs,
            "frames_compiled": counters["frames"]["ok"] - frames,
            "graph_breaks": _graph_breaks() - breaks,
            "recompilations": None if versions is None else max(0, versions - 1),
        }
