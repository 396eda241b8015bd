"""``dynamic-parallelism``: host-mediated allocation, with every kernel launched from the device (CDP2).

The paper's second failed remedy: let the GPU size its own grids. Each sampling, gather and
aggregation kernel is launched by a one-thread parent (``kernels/device_launch.cu``) that reads the
live element count from device memory and tail-launches the child with an exactly sized grid. The host
still provisions memory, so it still reads every hop's new-node count back to allocate the next
buffers — the synchronisations stay, which is the point this baseline makes. Everything else (model,
cuBLAS GEMMs, optimizer) is as in ``host-mediated``. Whether the profiler's trace shows the child
kernels decides what the GPU execution fraction means here; see the README.
"""

from __future__ import annotations

from typing import Any

from ..cuda.launch import device_launched
from . import register
from .host_mediated import HostMediated


@register
class DynamicParallelism(HostMediated):
    name = "dynamic-parallelism"
    description = "host-mediated allocation; kernels launched from the device with exact grids (CDP2 tail launch)"

    def step(self, epoch: int, step: int, global_step: int) -> None:
        with device_launched():
            super().step(epoch, step, global_step)

    def info(self) -> dict[str, Any]:
        return {"kernel_launch": "device (CDP2, cudaStreamTailLaunch)"}
