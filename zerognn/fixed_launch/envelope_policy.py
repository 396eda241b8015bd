"""The ZeroGNN variants' envelope policy: calibrate (``zerognn.fixed_launch.envelope``), then fit the capacities
to the dense GEMMs' waves (``zerognn.fixed_launch.gemm_waves``)."""

from __future__ import annotations

import torch

from . import gemm_waves
from .envelope import Envelope, calibrate


class CalibratedEnvelope:
    """The envelope policy of a variant with a ``ctx`` (``zerognn.variants.VariantContext``): ``calibrate``
    over ``calibration_batches`` batches with ``margin``, then, on a GPU, each capacity that dense layers run
    their GEMMs over fitted to the GEMMs' waves, timed on ``step_stream()``, the stream the variant's step runs
    on. The ZeroGNN variants take it; an ablation overrides ``make_envelope``."""

    calibration_batches = 8
    margin = 0.15

    def make_envelope(self) -> Envelope:
        ctx = self.ctx
        calibrated = calibrate(ctx.dataset.graph, ctx.dataset.train_idx, ctx.batch_size, ctx.fanouts, ctx.seed,
                               self.calibration_batches, self.margin)
        return gemm_waves.fit(calibrated, ctx.model, ctx.device, stream=self.step_stream())

    def step_stream(self) -> torch.cuda.Stream | None:
        """The stream the step runs on (None off a GPU), made once: the fit's GEMMs allocate their cuBLAS
        workspace for it, which the step then reuses."""
        if getattr(self, "_step_stream", None) is None and self.ctx.device.type == "cuda":
            self._step_stream = torch.cuda.Stream(self.ctx.device)
        return getattr(self, "_step_stream", None)
