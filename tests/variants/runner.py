"""Run a variant for a few steps on a dataset, outside the measured loop (shared by variant tests)."""

import torch

from zerognn.determinism import deterministic
from zerognn.records.spec import RunSpec
from zerognn.train.context import build_context
from zerognn.variants import get_variant


def make_context(ds, model_name="sage", steps=0, batch=128, fanouts=(5, 3), hidden=64, lr=0.003, device="cuda"):
    """The context a run of these settings trains with (``zerognn.train.context.build_context``)."""
    spec = RunSpec(dataset=ds.name, model=model_name, batch_size=batch, fanouts=list(fanouts), hidden=hidden, lr=lr)
    return build_context(spec, ds, torch.device(device), steps=steps)


def run_steps(ds, variant, model_name, steps, batch=128, fanouts=(5, 3), configure=None, blocks=None, device="cuda",
              hidden=64, lr=0.003, ordered=True):
    """Train ``steps`` global steps with ``variant``; returns (variant, losses on the CPU, parameters).

    ``blocks`` (step counts summing to ``steps``) hands the variant its steps in those blocks (``run_steps``);
    ``ordered`` selects the fixed-order operators (``zerognn.determinism``), as a run does by default.
    """
    ctx = make_context(ds, model_name, steps, batch, fanouts, hidden, lr, device)
    with deterministic(ordered):
        v = get_variant(variant)(ctx)
        if configure is not None:
            configure(v)
        v.setup()
        first = 0
        for count in blocks or [1] * steps:
            v.run_steps(first, count)
            first += count
        assert first == steps
        v.finish()
    return v, ctx.loss_log.cpu(), [p.detach().cpu().clone() for p in ctx.model.parameters()]


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two float32 tensors are equal bit for bit (what two CUDA variants' runs are, in ordered mode)."""
    return torch.equal(a.contiguous().view(torch.int32), b.contiguous().view(torch.int32))
