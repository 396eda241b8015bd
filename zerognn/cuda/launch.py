"""Launch our kernels on PyTorch's current CUDA stream through cuda-core.

The stream is wrapped at every launch, because CUDA-graph capture switches PyTorch's current stream.
Kernel arguments: tensors are passed as device pointers; every scalar must already be a numpy scalar
of the exact C width (np.int32, np.int64, np.float32), since cuda-core maps Python ints to pointers.
Each launch is checked against the kernel's declaration in its .cu file (``Operator.signatures``, the
one source of a kernel's signature): a wrong number of arguments, a tensor of the wrong dtype or off
the GPU, or a scalar of the wrong width is a clear error naming the kernel and the parameter.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from functools import cache

import numpy as np
import torch

try:
    from cuda.core import Device, LaunchConfig, Stream
    from cuda.core import launch as cuda_launch
except ImportError:  # an install without the `cuda` extra: the package imports, kernels cannot run
    Device = LaunchConfig = Stream = cuda_launch = None

from ..errors import ZeroGNNError
from .build import CUDA_EXTRA_MISSING, Param, compile_operator, kernel_operator, operators

THREADS = 256
_device_launch = False  # process-wide, so that autograd's worker threads (backward kernels) follow it too


def device_arch(device: int | None = None) -> str:
    major, minor = torch.cuda.get_device_capability(device)
    return f"sm_{major}{minor}"


@cache
def _module(operator: str, device: int):
    if Device is None:
        raise ZeroGNNError(CUDA_EXTRA_MISSING)
    Device(device).set_current()
    return compile_operator(operators()[operator], device_arch(device))


@cache
def kernel(name: str, device: int):
    return _module(kernel_operator(name).name, device).get_kernel(name)


@cache
def _max_blocks(device: int) -> int:
    return 32 * torch.cuda.get_device_properties(device).multi_processor_count


def resident_blocks(threads: int = THREADS) -> int:
    """Blocks of ``threads`` the current GPU holds at once at full occupancy (2048 threads per multiprocessor):
    a grid-stride kernel that ends with per-block work (a flush of block sums) keeps that work to one round."""
    return _max_blocks(torch.cuda.current_device()) // 32 * max(1, 2048 // threads)


def grid_for(elements: int, threads: int = THREADS, max_blocks: int | None = None) -> int:
    """Blocks for ``elements`` grid-stride work items (at least 1; kernels loop over the rest)."""
    blocks = max(1, -(-int(elements) // threads))
    return min(blocks, max_blocks or _max_blocks(torch.cuda.current_device()))


def vector_width(width: int) -> int:
    """A row's width in the units a float row kernel moves per thread (``zg_vec_width`` in
    kernels/zerognn_common.cuh): float4s when the width is a multiple of 4, else floats."""
    return width // 4 if width % 4 == 0 else width


# What a kernel parameter of each C type takes: a tensor of this dtype behind a pointer (or None, a null
# pointer), a numpy scalar of this type by value. Unsigned words travel in signed tensors of the same width.
_TENSOR_DTYPES = {"float": torch.float32, "int": torch.int32, "unsigned": torch.int32, "i64": torch.int64,
                  "u64": torch.int64}
_SCALAR_TYPES = {"float": np.float32, "int": np.int32, "unsigned": np.uint32, "i64": np.int64, "u64": np.uint64}


@cache
def signature(name: str) -> tuple[Param, ...]:
    """Kernel ``name``'s parameters, as its .cu file declares them."""
    return kernel_operator(name).signatures[name]


def kernel_arguments(name: str, args: tuple, on_device: bool = True) -> list:
    """``args`` as cuda-core passes them to kernel ``name``, checked against its declaration: the number
    of arguments, each tensor's dtype (and, ``on_device``, that it is on the GPU or in pinned host
    memory) and each scalar's numpy type. A mismatch is a clear error naming the kernel and parameter."""
    params = signature(name)
    if len(args) != len(params):
        raise ZeroGNNError(f"kernel {name} takes {len(params)} arguments ({', '.join(p.name for p in params)}), "
                           f"got {len(args)}")
    return [_arg(name, p, a, on_device) for p, a in zip(params, args)]


def _arg(kernel: str, param: Param, value, on_device: bool):
    if param.pointer and value is None:
        return 0  # a null pointer, for a kernel that reads it as "absent"
    if param.pointer:
        dtype = _TENSOR_DTYPES[param.ctype]
        if not isinstance(value, torch.Tensor) or value.dtype != dtype:
            raise ZeroGNNError(f"kernel {kernel}: parameter {param.name} ({param.ctype}*) needs a tensor of {dtype}, "
                               f"got {_describe(value)}")
        if on_device and not (value.is_cuda or value.is_pinned()):
            raise ZeroGNNError(f"kernel {kernel}: parameter {param.name} needs a CUDA (or pinned host) tensor, "
                               f"got {_describe(value)}")
        return value.data_ptr()
    if type(value) is not _SCALAR_TYPES[param.ctype]:
        raise ZeroGNNError(f"kernel {kernel}: parameter {param.name} ({param.ctype}) needs a "
                           f"np.{_SCALAR_TYPES[param.ctype].__name__} scalar, got {_describe(value)}")
    return value


def _describe(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"a {value.dtype} tensor on {value.device}"
    return f"{type(value).__name__} {value!r}"


@contextlib.contextmanager
def device_launched() -> Iterator[None]:
    """Within this block every launch of a kernel with a device-side parent (``dl_<name>`` in
    ``kernels/device_launch.cu``) goes through it: one thread that reads the live count from device memory
    and launches the kernel with an exactly sized grid (CUDA dynamic parallelism); the host's ``grid`` is
    ignored. Kernels sized by tensor shapes alone (the dense layers' gradients) launch from the host."""
    global _device_launch
    previous, _device_launch = _device_launch, True
    try:
        yield
    finally:
        _device_launch = previous


@cache
def device_launched_children() -> frozenset[str]:
    """The kernels that have a device-side parent (``dl_<name>``): what ``device_launched`` launches."""
    names = {k for op in operators().values() for k in op.kernels}
    return frozenset(n for n in names if f"dl_{n}" in names)


def launch(name: str, grid: int, *args, threads: int = THREADS) -> None:
    """Launch kernel ``name`` with ``grid`` blocks of ``threads`` on the current stream."""
    if _device_launch and name in device_launched_children():
        name, grid, args, threads = f"dl_{name}", 1, (*args, np.int32(threads)), 1
    arguments = kernel_arguments(name, args)
    device = torch.cuda.current_device()
    function = kernel(name, device)
    _make_current(device)
    stream = Stream.from_handle(torch.cuda.current_stream().cuda_stream)
    cuda_launch(stream, LaunchConfig(grid=int(grid), block=threads), function, *arguments)


_thread = threading.local()  # the device whose context this thread last made current for a launch


def _make_current(device: int) -> None:
    """Make ``device``'s primary context current on this thread, once per thread and device. A driver-API
    launch needs it, and a thread may have none: autograd runs backwards on a worker thread of its own, on
    which nothing may have touched CUDA yet when a backward's first work is one of our kernels (in
    deterministic mode the dense layers' fixed-order GEMMs; otherwise cuBLAS goes first and makes it
    current). A flag per thread keeps the check off every launch's cost."""
    if getattr(_thread, "device", None) != device:
        Device(device).set_current()
        _thread.device = device
