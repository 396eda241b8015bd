"""``zerognn-worstcase``: ZeroGNN over the worst-case envelope min(N, B·Π(1+f)) — why tightness matters."""

from __future__ import annotations

from ..fixed_launch.envelope import Envelope, worst_case
from . import register
from .zerognn import ZeroGNN


@register
class ZeroGNNWorstCase(ZeroGNN):
    name = "zerognn-worstcase"
    description = "ZeroGNN with every buffer at the worst-case envelope (ablation: no calibration)"

    def make_envelope(self) -> Envelope:
        ctx = self.ctx
        return worst_case(ctx.dataset.num_nodes, ctx.batch_size, ctx.fanouts)
