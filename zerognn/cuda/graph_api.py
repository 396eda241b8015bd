"""The CUDA runtime's graph API through cuda-bindings, for graphs PyTorch's capture cannot build alone:
conditional nodes (the device-driven loop's WHILE) and captures into a node's body. cuda-bindings returns
``(error, *values)`` from every call; ``check`` turns an error into one line.
"""

from __future__ import annotations

from typing import Any

from ..errors import ZeroGNNError, missing_extra


def runtime():
    try:
        from cuda.bindings import runtime as rt
    except ImportError as exc:
        raise missing_extra("cuda", "conditional CUDA Graph nodes", exc) from exc
    return rt


def check(result: tuple) -> Any:
    """The value(s) of a cuda-bindings call, or a ZeroGNNError naming its error."""
    rt = runtime()
    err, *values = result
    if err != rt.cudaError_t.cudaSuccess:
        raise ZeroGNNError(f"CUDA graph API error {err.name}: {rt.cudaGetErrorString(err)[1].decode()}; conditional "
                           f"graph nodes need CUDA 12.4 or newer")
    return values[0] if len(values) == 1 else (tuple(values) if values else None)
