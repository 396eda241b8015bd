"""The training precisions a run may use, declared once: the run flag's choices, the config's ``precisions``
axis, run ids (``__p<name>`` for any but float32) and the floor's peak all derive from ``PRECISIONS``.

* ``float32``: fp32 storage and fp32 GEMMs (FFMA): what every run used before the axis existed.
* ``tf32``: fp32 storage, GEMMs on TF32 tensor cores (``torch.backends.cuda.matmul.allow_tf32`` and cuDNN's
  switch, set by the run for every variant alike: cuBLAS and inductor's GEMMs follow them). CUDA only, and
  not in deterministic mode, whose fixed-order GEMMs (``kernels/dense_gemm.cu``) are fp32 FFMA.

``using(name)`` sets a precision for a block, like ``zerognn.determinism.deterministic``: process-wide, so
autograd's worker threads see it too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Precision:
    tensor_core_gemms: bool  # GEMMs on TF32 tensor cores (fp32 storage)
    peak: str  # which of the GPU's FLOP peaks bounds its dense work (zerognn.measure.floor.GpuPeaks)
    cuda_only: bool
    deterministic_ok: bool


DEFAULT = "float32"
PRECISIONS: dict[str, Precision] = {
    "float32": Precision(tensor_core_gemms=False, peak="fp32", cuda_only=False, deterministic_ok=True),
    "tf32": Precision(tensor_core_gemms=True, peak="tf32", cuda_only=True, deterministic_ok=False),
}


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
    """Run the block at precision ``name`` (the matmul switches it sets, restored afterwards)."""
    import torch  # here, not at the top: the workflow plans runs from this module without torch

    on = PRECISIONS[name].tensor_core_gemms
    previous = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = on
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = previous
