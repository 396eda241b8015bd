"""The training precisions a run may use, declared once: the run flag's choices, the config's ``precisions``
axis, run ids (``__p<name>`` for any but float32) and the floor's peak all derive from ``PRECISIONS``.

* ``float32``: fp32 storage and fp32 GEMMs (FFMA): what every run used before the axis existed.
* ``tf32``: fp32 storage, GEMMs on TF32 tensor cores (``torch.backends.cuda.matmul.allow_tf32``, set by the
  run for every variant alike: cuBLAS, cuBLASLt and inductor's GEMMs follow it; no step uses cuDNN). CUDA only, and
  not in deterministic mode, whose fixed-order GEMMs (``kernels/dense_gemm.cu``) are fp32 FFMA.
* ``bfloat16``: bf16 GEMMs, autocast-style: the models' dense layer (``zerognn.models.dense``, every GEMM of
  every model and variant) casts its operands to bf16 and its results back to fp32, accumulating in fp32;
  parameters, optimizer state, features, activations and the sampling and aggregation kernels stay fp32.
  The floor counts bf16 activations (the bytes a bf16 implementation would move), so the casts this
  storage pays for count against the step. Not in deterministic mode.

``using(name)`` sets a precision for a block, like ``zerognn.determinism.deterministic``: process-wide, so
autograd's worker threads see it too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Precision:
    tensor_core_gemms: bool  # fp32 GEMMs on TF32 tensor cores
    gemm_dtype: str | None  # the torch dtype the dense layer casts its GEMM operands to (None: as stored)
    peak: str  # which of the GPU's FLOP peaks bounds its dense work (zerognn.measure.floor.GpuPeaks)
    activation_bytes: int  # per activation element, as the floor counts them
    cuda_only: bool
    deterministic_ok: bool


DEFAULT = "float32"
PRECISIONS: dict[str, Precision] = {
    "float32": Precision(tensor_core_gemms=False, gemm_dtype=None, peak="fp32", activation_bytes=4,
                         cuda_only=False, deterministic_ok=True),
    "tf32": Precision(tensor_core_gemms=True, gemm_dtype=None, peak="tf32", activation_bytes=4, cuda_only=True,
                      deterministic_ok=False),
    # bf16 GEMMs run on the CPU too (slowly): the CPU tests check the path every GPU variant takes
    "bfloat16": Precision(tensor_core_gemms=False, gemm_dtype="bfloat16", peak="bf16", activation_bytes=2,
                          cuda_only=False, deterministic_ok=False),
}
_gemm_dtype: str | None = None


def gemm_dtype():
    """The torch dtype the dense layer's GEMMs take now (None: their operands' own)."""
    if _gemm_dtype is None:
        return None
    import torch

    return getattr(torch, _gemm_dtype)


def precision_problem(name: str, device: str, deterministic: bool) -> str | None:
    """Why a run cannot use precision ``name`` on ``device`` (``cpu``, ``cuda`` or ``auto``), or None."""
    precision = PRECISIONS[name]
    if precision.cuda_only and device == "cpu":
        return f"precision {name} needs a CUDA GPU (its GEMMs run on tensor cores); use float32 on the CPU"
    if deterministic and not precision.deterministic_ok:
        return (f"precision {name} does not apply in deterministic mode: its fixed-order GEMMs are fp32 FFMA; "
                f"run {name} without --deterministic")
    return None


@contextlib.contextmanager
def using(name: str) -> Iterator[None]:
    """Run the block at precision ``name`` (the matmul switch and the GEMM dtype it sets, restored afterwards)."""
    import torch  # here, not at the top: the workflow plans runs from this module without torch

    global _gemm_dtype
    precision = PRECISIONS[name]
    previous = torch.backends.cuda.matmul.allow_tf32, _gemm_dtype
    torch.backends.cuda.matmul.allow_tf32, _gemm_dtype = precision.tensor_core_gemms, precision.gemm_dtype
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, _gemm_dtype = previous
