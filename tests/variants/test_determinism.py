"""Bit-identical training (GPU): every CUDA variant computes exactly the same run, and so does a repeat.

Over one whole epoch of arxiv-like at B=1024, 15-10-5, for each model: the per-step losses and the final
parameters of zerognn, host-mediated, cuda-graph-naive, dynamic-parallelism, zerognn-worstcase and
zerognn-epoch are equal bit for bit, as are two runs of zerognn, and a zerognn run whose envelope
overflows and is re-captured inside the epoch. The fixed-order operators (zerognn.determinism) are what
makes this hold: with the float-atomic scatters, two runs of one variant already differ.
"""

import pytest
import torch

from zerognn.datasets import load_dataset, make_dataset

from .runner import make_context, run_steps
from .test_zerognn import _too_small

pytestmark = pytest.mark.gpu
BATCH, FANOUTS = 1024, (15, 10, 5)
VARIANTS = ["host-mediated", "cuda-graph-naive", "dynamic-parallelism", "zerognn-worstcase", "zerognn-epoch"]


@pytest.fixture(scope="module")
def arxiv(tmp_path_factory):
    out = tmp_path_factory.mktemp("data") / "arxiv-like"
    make_dataset("arxiv-like", out, scale=1.0, seed=0, device="cuda")
    return load_dataset(out).to("cuda")


def one_epoch(ds, variant, model, **kwargs):
    """(losses, parameters) of one epoch; ``info`` of the variant is kept in ``one_epoch.info``."""
    steps = make_context(ds, model, 0, BATCH, FANOUTS).steps_per_epoch
    blocks = [steps] if variant == "zerognn-epoch" else None
    v, losses, params = run_steps(ds, variant, model, steps, batch=BATCH, fanouts=FANOUTS, blocks=blocks, **kwargs)
    one_epoch.info = v.info()
    return losses, params


def bits(t):
    return t.contiguous().view(torch.int32)


def assert_identical(a, b, what):
    (loss_a, params_a), (loss_b, params_b) = a, b
    assert torch.equal(bits(loss_a), bits(loss_b)), (what, (loss_a - loss_b).abs().max())
    for i, (p, q) in enumerate(zip(params_a, params_b)):
        assert torch.equal(bits(p), bits(q)), (what, i, (p - q).abs().max())


@pytest.mark.parametrize("model", ["sage", "gcn", "gat"])
def test_every_cuda_variant_trains_an_epoch_bit_for_bit_like_zerognn(arxiv, model):
    zerognn = one_epoch(arxiv, "zerognn", model)
    assert_identical(one_epoch(arxiv, "zerognn", model), zerognn, "zerognn twice")
    for variant in VARIANTS:
        assert_identical(one_epoch(arxiv, variant, model), zerognn, variant)


def test_an_overflow_and_recapture_inside_the_epoch_changes_no_bit(arxiv):
    def squeeze(v):
        v.make_envelope = lambda: _too_small(v)

    squeezed = one_epoch(arxiv, "zerognn", "sage", configure=squeeze)
    info = one_epoch.info
    assert info["overflow_count"] >= 1 and info["recoveries"], info
    assert_identical(squeezed, one_epoch(arxiv, "zerognn", "sage"), "zerognn with re-captures")


def test_the_float_atomic_scatters_are_what_the_fixed_order_replaces(arxiv):
    """The control: with ordered=False two runs of zerognn are not bit-identical (else the tests above
    would prove nothing about the fixed-order operators)."""
    a = one_epoch(arxiv, "zerognn", "gcn", ordered=False)
    b = one_epoch(arxiv, "zerognn", "gcn", ordered=False)
    assert not torch.equal(bits(a[0]), bits(b[0]))
