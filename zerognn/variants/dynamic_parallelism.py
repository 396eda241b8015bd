"""``dynamic-parallelism``: host-mediated allocation, with every kernel launched from the device (CDP2).

The paper's second failed remedy: let the GPU size its own grids. Each sampling, gather and
aggregation kernel is launched by a one-thread parent (``kernels/device_launch.cu``) that reads the
live element count from device memory and tail-launches the child with an exactly sized grid. The host
still provisions memory, so it still reads every hop's new-node count back to allocate the next
buffers — the synchronisations stay, which is the point this baseline makes. Everything else (model,
cuBLAS GEMMs, optimizer) is as in ``host-mediated``.

The profiler's trace does not show the children (CUPTI's kernel activity reports a CDP2 parent, not the
child it launches), so the variant says how to run its last steps' sampling, gather, forward and
backward again with the same kernels launched from the host — the same work with the same exact
grids — and the measurement layer (``zerognn.measure.untraced``) times the children in that replay.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ..cuda.launch import device_launched, device_launched_children
from ..cuda.loss import backward
from ..measure.untraced import UntracedReplay
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

    def step(self, epoch: int, step: int, global_step: int) -> None:
        self._recent.append((epoch, step))
        with device_launched():
            super().step(epoch, step, global_step)

    def untraced_replay(self) -> UntracedReplay | None:
        if not self._recent:
            return None
        return UntracedReplay(self._replay_recent_steps, device_launched_children())

    def _replay_recent_steps(self) -> int:
        """The last steps' forward and backward, host-launched; the parameters are not updated and
        their gradients are dropped."""
        for epoch, step in self._recent:
            backward(self.loss(epoch, step))
        self.ctx.model.zero_grad(set_to_none=True)
        return len(self._recent)

    def info(self) -> dict[str, Any]:
        return {"kernel_launch": "device (CDP2, cudaStreamTailLaunch)"}
