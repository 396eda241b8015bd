"""The ReLU's backward folded into the next layer's aggregation (``folds_relu_backward``).

A hidden SAGE or GCN layer's ReLU output is read by the next layer's aggregation alone (SAGE's self half
too), so ops that mask the gradient they return for that input by input > 0 make the ReLU's own backward
(PyTorch's ``threshold_backward``, one kernel per hidden layer) redundant; the dense layer then passes
its gradient through. The gradients must be those of the unfolded step. On the CPU: the models' wiring,
with ops that mask in PyTorch. On a GPU: the CUDA kernels against the same kernels unfolded (bit for bit
in deterministic mode) and against the PyTorch ops, at fp32 and bf16, and a profiled backward without a
threshold kernel.
"""

import contextlib

import pytest
import torch
import torch.nn.functional as F

from tests.conftest import random_graph
from zerognn.determinism import deterministic
from zerognn.models import TORCH_OPS, TorchOps, build_model
from zerognn.models.dense import linear
from zerognn.precision import using
from zerognn.sampling import sample_subgraph

# ------------------------------------------------------------------ on the CPU: the models' wiring


class _MaskGradient(torch.autograd.Function):
    """Identity forward; the backward masks by the input > 0 (with ``where``, not threshold_backward)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return torch.where(x > 0, grad, torch.zeros_like(grad))


class _FoldingTorchOps(TorchOps):
    """PyTorch ops that fold the ReLU's backward, as the CUDA ops do, recording each relu_input."""

    folds_relu_backward = True

    def __init__(self):
        self.relu_inputs = []

    def sage(self, x, block, relu_input=False):
        self.relu_inputs.append(relu_input)
        return super().sage(_MaskGradient.apply(x) if relu_input else x, block)

    def gcn(self, x, block, relu_input=False):
        self.relu_inputs.append(relu_input)
        return super().gcn(_MaskGradient.apply(x) if relu_input else x, block)


def _cpu_step(name, ops):
    g = random_graph(400, 3000, seed=2)
    features = torch.randn(400, 6, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    labels = torch.arange(400) % 3
    seeds = torch.arange(0, 400, 7)
    sub = sample_subgraph(g, seeds, [4, 3, 3], seed=0, epoch=0, step=0)
    model = build_model(name, 6, 16, 3, 3, seed=0).double()
    # biases that push many hidden pre-activations below zero, so the masks matter
    with torch.no_grad():
        for lin in model.lins:
            lin.bias.sub_(0.3)
    loss = F.cross_entropy(model(features[sub.frontiers[-1]], sub.hops[::-1], ops), labels[seeds])
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        loss.backward()
    names = [e.name for e in prof.events()]
    return [p.grad for p in model.parameters()], names


@pytest.mark.parametrize("name", ["sage", "gcn"])
def test_the_models_fold_the_relu_backward_into_ops_that_mask(name):
    ops = _FoldingTorchOps()
    folded, folded_names = _cpu_step(name, ops)
    unfolded, unfolded_names = _cpu_step(name, TORCH_OPS)
    assert ops.relu_inputs == [False, True, True]  # the features are no ReLU's output; the hidden layers are
    for a, b in zip(folded, unfolded):
        assert torch.allclose(a, b, rtol=1e-12, atol=1e-15)
    assert sum("threshold_backward" in n for n in unfolded_names) == 2  # the control: one per hidden layer
    assert not any("threshold_backward" in n for n in folded_names)


def test_torch_ops_fold_nothing_and_keep_the_relu_backward():
    assert TORCH_OPS.folds_relu_backward is False
    _, names = _cpu_step("sage", TORCH_OPS)
    assert any("threshold_backward" in n for n in names)


def test_the_dense_layer_leaves_the_mask_to_its_reader():
    """With ``relu_backward_downstream`` the layer's backward takes its gradient as already masked."""
    gen = torch.Generator().manual_seed(3)
    x, w, b = (torch.randn(*s, generator=gen, dtype=torch.float64) for s in ((9, 5), (4, 5), (4,)))
    g = torch.randn(9, 4, generator=gen, dtype=torch.float64)
    grads = []
    for downstream in (False, True):
        leaves = [t.clone().requires_grad_(True) for t in (x, w, b)]
        out = linear(*leaves, relu=True, relu_backward_downstream=downstream)
        assert torch.equal(out, torch.relu(F.linear(x, w, b)))
        out.backward(torch.where(out > 0, g, 0) if downstream else g)
        grads.append([t.grad for t in leaves])
    for a, c in zip(*grads):
        assert torch.equal(a, c)
    # without a ReLU there is nothing to leave downstream
    leaves = [t.clone().requires_grad_(True) for t in (x, w, b)]
    linear(*leaves, relu=False, relu_backward_downstream=True).backward(g)
    assert torch.allclose(leaves[0].grad, g @ w)


# ------------------------------------------------------------------ on a GPU: the kernels


def _gpu_case(name, hidden, seed=0):
    from tests.cuda.test_kernels import DEV, run_pipeline
    from zerognn.cuda.aggregate import as_hop

    g = random_graph(4000, 40000, seed=seed + 3).to(DEV)
    gen = torch.Generator().manual_seed(seed)
    seeds = torch.randperm(4000, generator=gen)[:256].to(DEV)
    features = torch.randn(4000, 24, generator=gen).to(DEV)
    labels = (torch.arange(4000) % 5).to(DEV)
    frontiers, blocks = run_pipeline(g, seeds, [10, 5, 5], seed=seed, epoch=0, step=0)
    model = build_model(name, 24, hidden, 5, 3, seed=seed).to(DEV)
    with torch.no_grad():  # many non-positive hidden pre-activations, so the masks matter
        for lin in model.lins:
            lin.bias.sub_(0.2)
    x, y = features[frontiers[-1]], labels[seeds]
    return model, x, y, blocks[::-1], [as_hop(b) for b in blocks][::-1]


def _unfolded_cuda_ops():
    from zerognn.cuda.aggregate import CudaOps

    class Unfolded(CudaOps):
        folds_relu_backward = False  # the same kernels; the dense layer's threshold_backward masks

    return Unfolded()


def _grads(model, x, y, blocks, ops, profile=False):
    model.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x, blocks, ops), y)
    profiler = (torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                   torch.profiler.ProfilerActivity.CUDA])
                if profile else contextlib.nullcontext())
    with profiler as prof:
        loss.backward()
        torch.cuda.synchronize()
    grads = [p.grad.detach().clone() for p in model.parameters()]
    return loss.detach(), grads, (prof.events() if profile else None)


def _rel_err(a, b):
    return float((a - b).norm() / b.norm().clamp(min=1e-30))


@pytest.mark.gpu
@pytest.mark.parametrize("ordered", [False, True])  # the scatter backwards and the transposed ones
@pytest.mark.parametrize("hidden", [64, 30])  # the float4 path and the scalar one
@pytest.mark.parametrize("name", ["sage", "gcn"])
def test_folded_gradients_are_the_unfolded_ones(name, hidden, ordered):
    from zerognn.cuda.aggregate import CUDA_OPS

    model, x, y, blocks, _ = _gpu_case(name, hidden)
    with deterministic(ordered):
        loss, folded, _ = _grads(model, x, y, blocks, CUDA_OPS)
        loss_ref, unfolded, _ = _grads(model, x, y, blocks, _unfolded_cuda_ops())
    assert all(bool(g.ne(0).any()) for g in folded)
    for a, b in zip(folded, unfolded):
        if ordered:  # the same sums in the same order, masked after: the same bits
            assert torch.equal(a, b)
        else:  # float atomics add in varying order
            assert _rel_err(a, b) < 1e-5
    if ordered:
        assert torch.equal(loss, loss_ref)


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
@pytest.mark.parametrize("name", ["sage", "gcn"])
def test_folded_gradients_match_the_torch_ops(name, precision):
    from zerognn.cuda.aggregate import CUDA_OPS

    model, x, y, blocks, hops = _gpu_case(name, 64, seed=1)
    with using(precision):
        _, folded, _ = _grads(model, x, y, blocks, CUDA_OPS)
        _, unfolded, _ = _grads(model, x, y, blocks, _unfolded_cuda_ops())
        _, reference, _ = _grads(model, x, y, hops, TORCH_OPS)
    # fp32: summation order alone; bf16: the project's bf16 tolerance (tests/variants/test_precision_parity.py)
    tolerance = {"float32": 1e-4, "bfloat16": 1e-2}[precision]
    for a, b, ref in zip(folded, unfolded, reference):
        assert _rel_err(a, b) < tolerance / 10  # the same GEMM operands; atomics' order apart
        assert _rel_err(a, ref) < tolerance


@pytest.mark.gpu
@pytest.mark.parametrize("ordered", [False, True])
@pytest.mark.parametrize("name", ["sage", "gcn"])
def test_a_folded_backward_runs_no_threshold_kernel(name, ordered):
    from zerognn.cuda.aggregate import CUDA_OPS

    model, x, y, blocks, _ = _gpu_case(name, 64, seed=2)
    unfolded_ops = _unfolded_cuda_ops()
    with deterministic(ordered):
        for ops in (CUDA_OPS, unfolded_ops):  # warm-up: kernels loaded, cuBLAS initialised
            _grads(model, x, y, blocks, ops)
        _, _, folded = _grads(model, x, y, blocks, CUDA_OPS, profile=True)
        _, _, unfolded = _grads(model, x, y, blocks, unfolded_ops, profile=True)

    def kernels(events):
        return [e.name for e in events if e.device_type == torch.autograd.DeviceType.CUDA]

    def bias_mvs(events):  # bias gradients summed by the dense layer (the fixed-order path runs none)
        return sum(e.name == "aten::mv" for e in events)

    assert not any("threshold" in n.lower() for n in [e.name for e in folded])
    # the control: the unfolded backward has one threshold kernel per hidden layer
    assert sum("threshold" in n.lower() for n in kernels(unfolded)) == 2
    if ordered:  # and only that more
        assert len(kernels(folded)) == len(kernels(unfolded)) - 2
    else:  # the scatters under the ReLUs also gathered the hidden layers' bias gradients (zerognn.column_sums)
        assert (bias_mvs(unfolded), bias_mvs(folded)) == (3, 1)
        assert len(kernels(folded)) <= len(kernels(unfolded)) - 4
