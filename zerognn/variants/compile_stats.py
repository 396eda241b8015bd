"""What ``torch.compile`` cost and did in a run, for any variant that compiles part of its step.

``CompileStats`` takes a snapshot of dynamo's process-wide counters when the variant sets up and reports
the difference for the record's ``variant_info``: ``compile_s`` (dynamo's and inductor's compile wall time),
``dynamo_graphs``, ``frames_compiled``, ``graph_breaks`` and ``recompilations`` (compiled versions of the
compiled function beyond the first). ``compile_here`` compiles in this process: with inductor's default pool
of compile workers, a trial whose compile hits the on-disk cache can leave the workers starting up (each one
importing torch) while its steps are timed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..optimizer import restore_dynamo_marks


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


def _compiled_versions(function: Callable) -> int | None:
    """How many compiled versions dynamo caches for ``function``'s code (None where torch cannot say)."""
    try:
        from torch._C._dynamo.eval_frame import _debug_get_cache_entry_list

        return len(_debug_get_cache_entry_list(function.__code__))
    except (ImportError, AttributeError, TypeError):
        return None


def compile_here(function: Callable) -> Callable:
    """``function`` under ``torch.compile(dynamic=True)`` in the default mode, compiled in this process."""
    import torch
    from torch._inductor import config as inductor_config

    restore_dynamo_marks()  # Optimizer's methods marked never-to-compile again (zerognn.optimizer)
    inductor_config.compile_threads = 1
    return torch.compile(function, dynamic=True)


class CompileStats:
    """Dynamo's counters from construction on; ``info(function)`` for the record."""

    def __init__(self) -> None:
        counters = _counters()
        self._before = (counters["stats"]["unique_graphs"], counters["frames"]["ok"], _graph_breaks(),
                        _compile_seconds())

    def info(self, function: Callable) -> dict[str, Any]:
        """The compile facts since construction; ``function`` is the plain function that was compiled."""
        graphs, frames, breaks, seconds = self._before
        versions, counters = _compiled_versions(function), _counters()
        return {
            "compile_s": round(_compile_seconds() - seconds, 3),
            "dynamo_graphs": counters["stats"]["unique_graphs"] - graphs,
            "frames_compiled": counters["frames"]["ok"] - frames,
            "graph_breaks": _graph_breaks() - breaks,
            "recompilations": None if versions is None else max(0, versions - 1),
        }
