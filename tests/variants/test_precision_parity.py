"""Every CUDA variant trains like host-mediated at the same precision (GPU), within that precision's tolerance.

At ``tf32`` and ``bfloat16`` a run is in the default (not the deterministic) mode, whose float-atomic
scatters add in varying order, so two variants agree only to rounding that training then carries forward.
Both precisions round a GEMM's operands the same way in every variant (``zerognn.models.dense``) and
accumulate in fp32, so what differs between variants is summation order, as at fp32, amplified where a
small difference flips an operand's rounding (bf16 keeps 8 mantissa bits, TF32 10). The tolerances
(``TOLERANCE``, docs/testing.md) are fixed in advance: the largest relative difference of any step's loss over
``STEPS`` steps of tiny SAGE: about 15x the 6.8e-5 by which fp32's default-mode variants differ on the H200
reference for TF32, about 2.5 bf16 unit roundoffs for bf16. A variant that skipped or mis-scaled a layer moves
the loss by far more; one that ignored the precision would not (tiny's bf16 losses are within 4e-4 of its fp32
ones over these steps on the CPU), which is why tests/test_precision.py checks that the dense layer every
variant runs takes the precision, eager and inside a captured graph, and the control here that it reaches
the training.
"""

import pytest
import torch

from zerognn.datasets import load_dataset
from zerognn.precision import using

from .runner import run_steps

pytestmark = pytest.mark.gpu
STEPS = 20
TOLERANCE = {"float32": 1e-4, "tf32": 1e-3, "bfloat16": 1e-2}
VARIANTS = ["torch-eager", "cuda-graph-naive", "dynamic-parallelism", "torch-compile", "zerognn",
            "zerognn-worstcase", "zerognn-epoch"]


@pytest.fixture(scope="module")
def ds(tiny_dataset_dir):
    return load_dataset(tiny_dataset_dir).to("cuda")


def losses(ds, variant, precision):
    blocks = [STEPS] if variant == "zerognn-epoch" else None
    with using(precision):
        return run_steps(ds, variant, "sage", STEPS, blocks=blocks, ordered=False)[1]


def relative(a, b):
    return float(((a - b).abs() / b.abs()).max())


@pytest.fixture(scope="module")
def host_mediated(ds):
    return {name: losses(ds, "host-mediated", name) for name in TOLERANCE}


@pytest.mark.parametrize("precision", list(TOLERANCE))
@pytest.mark.parametrize("variant", VARIANTS)
def test_a_variant_trains_like_host_mediated_at_the_same_precision(ds, host_mediated, variant, precision):
    assert relative(losses(ds, variant, precision), host_mediated[precision]) < TOLERANCE[precision]


@pytest.mark.parametrize("precision", ["tf32", "bfloat16"])
def test_the_precision_changes_the_training_so_the_comparison_can_fail(host_mediated, precision):
    """The control: a lower precision's losses are not fp32's, bit for bit."""
    assert not torch.equal(host_mediated[precision], host_mediated["float32"])
