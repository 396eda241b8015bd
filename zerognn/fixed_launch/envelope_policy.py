"""The ZeroGNN variants' envelope policy: calibrate (``zerognn.fixed_launch.envelope``), then fit the capacities
to the dense GEMMs' waves (``zerognn.fixed_launch.gemm_waves``)."""

from __future__ import annotations

import time
from dataclasses import replace

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
        """The fitted envelope; its record also keeps the seconds each part took (``calibration_s``, and
        ``wave_fit_s`` where the waves were fitted), the bulk of the variant's setup."""
        ctx = self.ctx
        started = time.perf_counter()
        calibrated = calibrate(ctx.dataset.graph, ctx.dataset.train_idx, ctx.batch_size, ctx.fanouts, ctx.seed,
                               self.calibration_batches, self.margin)
        calibrated_at = time.perf_counter()
        fitted = gemm_waves.fit(calibrated, ctx.model, ctx.device, stream=self.step_stream())
        seconds = {"calibration_s": round(calibrated_at - started, 4)}
        if "wave_fit" in fitted.calibration:
            seconds["wave_fit_s"] = round(time.perf_counter() - calibrated_at, 4)
        return replace(fitted, calibration={**fitted.calibration, **seconds})

    def step_stream(self) -> torch.cuda.Stream | None:
        """The stream the step runs on (None off a GPU), made once: the fit's GEMMs allocate their cuBLAS
        workspace for it, which the step then reuses."""
        if getattr(self, "_step_stream", None) is None and self.ctx.device.type == "cuda":
            self._step_stream = torch.cuda.Stream(self.ctx.device)
        return getattr(self, "_step_stream", None)
