"""Run a variant for a few steps on a dataset, outside the measured loop (shared by variant tests)."""

import torch

from zerognn.models import build_model
from zerognn.variants import VariantContext, get_variant


def run_steps(ds, variant, model_name, steps, batch=128, fanouts=(5, 3), configure=None, blocks=None):
    """Train ``steps`` global steps with ``variant``; returns (variant, losses on the CPU, parameters).

    ``blocks`` (step counts summing to ``steps``) hands a device-driven variant its steps in those blocks.
    """
    model = build_model(model_name, ds.num_features, 64, ds.num_classes, len(fanouts), seed=0).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=0.003, capturable=True, fused=True)
    ctx = VariantContext(ds, model, opt, model_name, list(fanouts), batch, 0, torch.device("cuda"),
                         torch.zeros(steps, device="cuda"))
    v = get_variant(variant)(ctx)
    if configure is not None:
        configure(v)
    v.setup()
    per_epoch = ds.train_idx.numel() // batch
    if blocks is not None:
        first = 0
        for count in blocks:
            v.run_steps(first, count)
            first += count
        assert first == steps
    else:
        for g in range(steps):
            v.step(*divmod(g, per_epoch), g)
    v.finish()
    return v, ctx.loss_log.cpu(), [p.detach().cpu().clone() for p in model.parameters()]
