"""Training to a target accuracy: whole epochs after the timed steps, evaluated on a fixed validation set.

A run with ``epochs`` > 0 keeps training after its timed steps, up to ``epochs`` whole epochs from step 0, in
blocks that end where it evaluates (``RunSpec.evaluation_steps``: every ``eval_every`` epochs). Each block is
timed from an idle GPU to its last update done (``zerognn.measure.timing.time_block_s``, as a whole epoch
is); each evaluation is timed on its own and never counts as training. The evaluation is the run's own
(``zerognn.train.evaluate``): the first ``eval_nodes`` validation nodes, sampled under a fixed key in fixed
batches, so every variant and every seed is judged on the same subgraphs. What the blocks and evaluations
measured is returned as it is; ``zerognn.records.build.training_fields`` turns it into the record's
``training`` (time so far at each evaluation, time to the target).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..measure.timing import synchronize, time_block_s
from ..records.spec import RunSpec
from ..records.training import Evaluation
from ..variants import Variant
from .evaluate import validation_accuracy


def train_to_target(spec: RunSpec, variant: Variant, first: int, say: Callable[[str], None]) -> list[Evaluation]:
    """Train global steps ``first`` .. ``spec.epochs`` epochs, evaluating at each of ``spec.evaluation_steps``."""
    ctx = variant.ctx
    spe, device = ctx.steps_per_epoch, ctx.device
    evaluations = []
    for step in spec.evaluation_steps(spe):
        block_s = time_block_s(variant, first, step - first, device)
        begin = time.perf_counter()
        val = validation_accuracy(ctx.model, ctx.dataset, spec)
        synchronize(device)
        evaluations.append(Evaluation(step, block_s, time.perf_counter() - begin, val))
        say(f"epoch {step // spe}: val acc {val}, trained {block_s:.3f} s since the last evaluation")
        first = step
    return evaluations
