"""Whether a run computes in a fixed order: the one switch for bit-identical runs.

Inside ``deterministic(True)``, everything traced or captured picks its fixed-order form: the aggregation
backwards pull through each block's transpose instead of scattering with float ``atomicAdd``
(``zerognn.cuda.aggregate``), the dense layers run GEMMs whose every sum has a fixed order whatever the
row count (``zerognn.models.dense``, ``zerognn.cuda.dense_gemm``), and PyTorch's own ops follow
``torch.use_deterministic_algorithms`` (the torch-ops variants' scatters). Outside it, the atomic forms
and cuBLAS run. docs/determinism.md says why each is needed and what it costs. Like PyTorch's switch it is
process-wide, so autograd's worker threads see the same setting as the thread that built the graph.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

_enabled = False


def enabled() -> bool:
    """Whether the fixed-order forms are selected now."""
    return _enabled


@contextlib.contextmanager
def deterministic(on: bool) -> Iterator[None]:
    """Select the fixed-order forms (``on``) or the atomic ones for the block, PyTorch's switch with them.

    PyTorch's fill of uninitialised memory, which its deterministic mode turns on by default, stays off:
    no operator here reads memory it has not written, and the fills would add kernels to every step."""
    global _enabled
    previous = (_enabled, torch.are_deterministic_algorithms_enabled(),
                torch.is_deterministic_algorithms_warn_only_enabled(),
                torch.utils.deterministic.fill_uninitialized_memory)
    _enabled = on
    _set_torch(on, warn_only=True)  # an op without a fixed-order form warns, not fails
    torch.utils.deterministic.fill_uninitialized_memory = False
    try:
        yield
    finally:
        _enabled = previous[0]
        _set_torch(previous[1], warn_only=previous[2])
        torch.utils.deterministic.fill_uninitialized_memory = previous[3]


def _set_torch(mode: bool, warn_only: bool) -> None:
    """PyTorch's switch, set only when it changes: setting it loads dynamo (over a second of every run)."""
    if mode == torch.are_deterministic_algorithms_enabled() and (
            not mode or warn_only == torch.is_deterministic_algorithms_warn_only_enabled()):
        return
    torch.use_deterministic_algorithms(mode, warn_only=warn_only)
