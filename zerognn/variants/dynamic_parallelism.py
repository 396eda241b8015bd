"""``dynamic-parallelism``: host-mediated allocation, with every kernel launched from the device (CDP2).

The paper's second failed remedy: let the GPU size its own grids. Each sampling, gather and
aggregation kernel is launched by a one-thread parent (``kernels/device_launch.cu``) that reads the
live element count from device memory and tail-launches the child with an exactly sized grid. The host
still provisions memory, so it still reads every hop's new-node count back to allocate the next
buffers — the synchronisations stay, which is the point this baseline makes. Everything else (model,
cuBLAS GEMMs, optimizer) is as in ``host-mediated``.

The profiler's trace does not show the children: kineto records kernels through CUPTI's kernel
activity, which reports a CDP2 parent (whose span ends before its tail-launched child starts) but not
the child (CUPTI has a separate CDP-kernel record that kineto does not enable). So the children's GPU
time is measured apart, after the run: the last steps' sampling, gather, forward and backward run
again with the same kernels launched from the host — the same work with the same exact grids — under
the profiler, and the children's kernel time per step is added to the trace's GPU activity.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import torch

from ..cuda.launch import device_launched, device_launched_children
from . import register
from .host_mediated import HostMediated

_REPLAYED_STEPS = 5  # the profiled window's length by default


@register
class DynamicParallelism(HostMediated):
    name = "dynamic-parallelism"
    description = "host-mediated allocation; kernels launched from the device with exact grids (CDP2 tail launch)"

    def setup(self) -> None:
        super().setup()
        self._recent: deque[tuple[int, int]] = deque(maxlen=_REPLAYED_STEPS)
        self._child_ms: float | None = None

    def step(self, epoch: int, step: int, global_step: int) -> None:
        self._recent.append((epoch, step))
        with device_launched():
            super().step(epoch, step, global_step)

    def finish(self) -> None:
        if self._recent:
            self._child_ms = self._children_gpu_ms_per_step()

    def _children_gpu_ms_per_step(self) -> float:
        """The device-launched kernels' GPU time per step, from host-launched replays of the last steps
        (forward and backward only: the parameters are not updated; their gradients are dropped)."""
        children = device_launched_children()
        torch.cuda.synchronize(self.ctx.device)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for epoch, step in self._recent:
                self.loss(epoch, step).backward()
            torch.cuda.synchronize(self.ctx.device)
        self.ctx.model.zero_grad(set_to_none=True)
        us = sum(e.time_range.elapsed_us() for e in prof.events()
                 if e.device_type == torch.autograd.DeviceType.CUDA and e.name in children)
        return us / 1e3 / len(self._recent)

    def untraced_gpu_ms_per_step(self) -> float | None:
        return self._child_ms

    def info(self) -> dict[str, Any]:
        return {"kernel_launch": "device (CDP2, cudaStreamTailLaunch)",
                "child_gpu_ms_per_step": self._child_ms,
                "child_gpu_ms_measured_by": "host-launched replay of the last steps' forward and backward "
                                            "under torch.profiler (kineto's trace does not show CDP2 children)"}
