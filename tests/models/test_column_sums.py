"""A layer's bias gradient from the op that wrote its gradient (``zerognn.column_sums``).

On the CPU: the dense layer takes the sums attached to the very gradient it receives, and sums the rows
itself whenever it receives anything else. On a GPU: the CUDA scatter backwards' sums against the rows
they wrote, and a SAGE step's bias gradients against the same step without the sums.
"""

import pytest
import torch
import torch.nn.functional as F

from zerognn import column_sums
from zerognn.models.dense import linear


class _Attach(torch.autograd.Function):
    """Identity forward; the backward returns the gradient with ``sums`` attached (as a scatter backward would)."""

    @staticmethod
    def forward(ctx, x, sums):
        ctx.sums = sums
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return column_sums.attach(grad.clone(), ctx.sums), None


def _case(seed=0):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(12, 5, generator=gen), torch.randn(4, 5, generator=gen), torch.randn(4, generator=gen),
            torch.randn(12, 4, generator=gen))


def test_attach_and_take():
    grad, sums = torch.randn(6, 3), torch.randn(3)
    assert column_sums.attach(grad, sums) is grad
    assert column_sums.take(grad) is sums
    assert column_sums.take(torch.randn(6, 3)) is None
    with pytest.raises(ValueError, match="do not fit"):
        column_sums.attach(torch.randn(6, 3), torch.randn(4))


def test_the_layer_takes_the_sums_attached_to_its_gradient():
    x, w, b, g = _case()
    marker = torch.full((4,), 7.0)  # not the true sums: proves they were taken, not recomputed
    leaves = [t.clone().requires_grad_(True) for t in (x, w, b)]
    _Attach.apply(linear(*leaves, relu=False), marker).backward(g)
    assert torch.equal(leaves[2].grad, marker)
    assert torch.allclose(leaves[1].grad, g.t() @ x) and torch.allclose(leaves[0].grad, g @ w)


def test_the_layer_sums_itself_what_it_masks_or_what_two_readers_add():
    x, w, b, g = _case(1)
    marker = torch.full((4,), 7.0)
    # a layer that applies its own ReLU mask receives another gradient than the one the sums belong to
    leaves = [t.clone().requires_grad_(True) for t in (x, w, b)]
    out = linear(*leaves, relu=True)
    _Attach.apply(out, marker).backward(g)
    assert torch.allclose(leaves[2].grad, torch.where(out > 0, g, 0).sum(0))
    # two readers: autograd adds their gradients into a new tensor, which carries no sums
    leaves = [t.clone().requires_grad_(True) for t in (x, w, b)]
    out = linear(*leaves, relu=False)
    (_Attach.apply(out, marker) * g).sum().add((out * g).sum()).backward()
    assert torch.allclose(leaves[2].grad, 2 * g.sum(0))


# ------------------------------------------------------------------ on a GPU: the kernels


@pytest.mark.gpu
@pytest.mark.parametrize("width", [64, 30, 1100])  # float4, scalar, and wider than a block's shared sums
@pytest.mark.parametrize("op", ["sage", "gcn"])
def test_a_scatter_backward_under_a_relu_returns_its_column_sums(op, width):
    from tests.cuda.test_kernels import random_block
    from zerognn.cuda.aggregate import CUDA_OPS

    block = random_block(seed=4)
    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(block.num_src, width, device="cuda", generator=gen).relu().requires_grad_(True)
    received = []

    class Receive(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.view_as(t)

        @staticmethod
        def backward(ctx, grad):
            received.append(grad)
            return grad

    out = getattr(CUDA_OPS, op)(Receive.apply(x), block, relu_input=True)
    out.backward(torch.randn(out.shape, device="cuda", generator=gen))
    (grad,) = received
    sums = column_sums.take(grad)
    assert sums is not None and sums.shape == (width,)
    reference = grad.double().sum(0)
    assert float((sums.double() - reference).norm() / reference.norm()) < 1e-5
    # without a ReLU under it the backward gathers none (nothing downstream could use them)
    received.clear()
    getattr(CUDA_OPS, op)(Receive.apply(x.detach().requires_grad_(True)), block).sum().backward()
    assert column_sums.take(received[0]) is None


@pytest.mark.gpu
@pytest.mark.parametrize("hidden", [64, 30])
def test_a_sage_step_with_the_sums_gives_the_bias_gradients_of_one_without(monkeypatch, hidden):
    from tests.models.test_relu_fold import _gpu_case, _rel_err
    from zerognn.cuda.aggregate import CUDA_OPS

    model, x, y, blocks, _ = _gpu_case("sage", hidden, seed=3)

    def bias_grads():
        model.zero_grad(set_to_none=True)
        F.cross_entropy(model(x, blocks, CUDA_OPS), y).backward()
        return [lin.bias.grad.clone() for lin in model.lins]

    with_sums = bias_grads()
    monkeypatch.setattr(column_sums, "take", lambda grad: None)  # every layer sums its rows itself
    for a, b in zip(with_sums, bias_grads()):
        assert a.ne(0).any()
        assert _rel_err(a, b) < 1e-5
