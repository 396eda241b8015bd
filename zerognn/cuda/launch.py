"""Launch our kernels on PyTorch's current CUDA stream through cuda-core.

The stream is wrapped at every launch, because CUDA-graph capture switches PyTorch's current stream.
Kernel arguments: tensors are passed as device pointers; every scalar must already be a numpy scalar
of the exact C width (np.int32, np.int64, np.float32), since cuda-core maps Python ints to pointers.
"""

from __future__ import annotations

import contextlib
from functools import lru_cache
from typing import Iterator

import numpy as np
import torch
from cuda.core import Device, LaunchConfig, Stream
from cuda.core import launch as cuda_launch

from ..errors import ZeroGNNError
from .build import compile_operator, kernel_operator, operators

THREADS = 256
_device_launch = False  # process-wide, so that autograd's worker threads (backward kernels) follow it too


def device_arch(device: int | None = None) -> str:
    major, minor = torch.cuda.get_device_capability(device)
    return f"sm_{major}{minor}"


@lru_cache(maxsize=None)
def _module(operator: str, device: int):
    Device(device).set_current()
    return compile_operator(operators()[operator], device_arch(device))


@lru_cache(maxsize=None)
def kernel(name: str, device: int):
    return _module(kernel_operator(name).name, device).get_kernel(name)


@lru_cache(maxsize=None)
def _max_blocks(device: int) -> int:
    return 32 * torch.cuda.get_device_properties(device).multi_processor_count


def grid_for(elements: int, threads: int = THREADS, max_blocks: int | None = None) -> int:
    """Blocks for ``elements`` grid-stride work items (at least 1; kernels loop over the rest)."""
    blocks = max(1, -(-int(elements) // threads))
    return min(blocks, max_blocks or _max_blocks(torch.cuda.current_device()))


def vector_width(width: int) -> int:
    """A row's width in the units a float row kernel moves per thread (``zg_vec_width`` in
    kernels/zerognn_common.cuh): float4s when the width is a multiple of 4, else floats."""
    return width // 4 if width % 4 == 0 else width


def _arg(value):
    if isinstance(value, torch.Tensor):
        if not value.is_cuda:
            raise ZeroGNNError(f"kernel argument of shape {tuple(value.shape)} is on {value.device}, not a CUDA device")
        return value.data_ptr()
    if isinstance(value, (np.integer, np.floating)):
        return value
    raise ZeroGNNError(f"kernel scalar {value!r} must be a numpy scalar of the C type (np.int32, np.int64, np.float32)")


@contextlib.contextmanager
def device_launched() -> Iterator[None]:
    """Within this block every launch goes through the kernel's device-side parent (``dl_<name>`` in
    ``kernels/device_launch.cu``): one thread that reads the live count from device memory and launches
    the kernel with an exactly sized grid (CUDA dynamic parallelism). The host's ``grid`` is ignored."""
    global _device_launch
    previous, _device_launch = _device_launch, True
    try:
        yield
    finally:
        _device_launch = previous


def device_launched_children() -> frozenset[str]:
    """The kernels that have a device-side parent (``dl_<name>``): what ``device_launched`` launches."""
    names = {k for op in operators().values() for k in op.kernels}
    return frozenset(n for n in names if f"dl_{n}" in names)


def launch(name: str, grid: int, *args, threads: int = THREADS) -> None:
    """Launch kernel ``name`` with ``grid`` blocks of ``threads`` on the current stream."""
    if _device_launch:
        name, grid, args, threads = f"dl_{name}", 1, (*args, np.int32(threads)), 1
    device = torch.cuda.current_device()
    stream = Stream.from_handle(torch.cuda.current_stream().cuda_stream)
    cuda_launch(stream, LaunchConfig(grid=int(grid), block=threads), kernel(name, device), *map(_arg, args))
