"""Aggregations against dense adjacency-matrix references, and the models over sampled blocks."""

import pytest
import torch
import torch.nn.functional as F

from zerognn.errors import ZeroGNNError
from zerognn.graph import CSRGraph
from zerognn.models import TORCH_OPS, build_model
from zerognn.models.dense import linear
from zerognn.sampling import Hop, sample_subgraph


def random_block(num_dst=5, num_src=9, num_edges=17, seed=0) -> Hop:
    g = torch.Generator().manual_seed(seed)
    # the last destination gets no neighbours
    dst = torch.randint(0, num_dst - 1, (num_edges,), generator=g).sort().values
    src = torch.randint(0, num_src, (num_edges,), generator=g)
    return Hop(num_dst, num_src, src, dst)


def dense(block: Hop) -> torch.Tensor:
    a = torch.zeros(block.num_dst, block.num_src, dtype=torch.float64)
    a.index_put_((block.edge_dst, block.edge_src), torch.ones(block.num_edges, dtype=torch.float64), accumulate=True)
    return a


def test_sage_and_gcn_match_dense_references():
    block = random_block()
    x = torch.randn(block.num_src, 4, dtype=torch.float64)
    a = dense(block)
    count = a.sum(1, keepdim=True)
    sage = TORCH_OPS.sage(x, block)
    assert torch.allclose(sage[:, :4], (a @ x) / count.clamp(min=1))
    assert torch.equal(sage[:, 4:], x[: block.num_dst])
    assert torch.allclose(TORCH_OPS.gcn(x, block), (a @ x + x[: block.num_dst]) / (count + 1))
    assert torch.all(sage[-1, :4] == 0)


@pytest.mark.parametrize("relu", [True, False])
def test_dense_layer_matches_linear_and_relu_with_gradients(relu):
    x = torch.randn(7, 5, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, dtype=torch.float64, requires_grad=True)
    expected = F.linear(x, w, b)
    expected = torch.relu(expected) if relu else expected
    assert torch.allclose(linear(x, w, b, relu), expected)
    assert torch.autograd.gradcheck(lambda *t: linear(*t, relu), (x, w, b))


def test_sage_layer_is_the_self_and_neighbour_linears():
    """One GEMM over [mean | self] equals W_self h_dst + W_neigh mean(h_src) + b."""
    block = random_block()
    model = build_model("sage", 4, 8, 3, 1, seed=0).double()
    x = torch.randn(block.num_src, 4, dtype=torch.float64)
    w, b = model.lins[0].weight, model.lins[0].bias
    a = dense(block)
    mean = (a @ x) / a.sum(1, keepdim=True).clamp(min=1)
    expected = mean @ w[:, :4].t() + x[: block.num_dst] @ w[:, 4:].t() + b
    assert torch.allclose(model(x, [block], TORCH_OPS), expected)


def test_gat_matches_dense_masked_softmax():
    block = random_block(seed=1)
    heads, c = 2, 3
    z = torch.randn(block.num_src, heads, c, dtype=torch.float64)
    s_src = torch.randn(block.num_src, heads, dtype=torch.float64)
    s_dst = torch.randn(block.num_dst, heads, dtype=torch.float64)
    out = TORCH_OPS.gat(z, s_src, s_dst, block, 0.2)
    a = dense(block)
    a[torch.arange(block.num_dst), torch.arange(block.num_dst)] += 1  # the self loop
    for h in range(heads):
        logits = F.leaky_relu(s_dst[:, h, None] + s_src[None, :, h], 0.2)
        # multi-edges count once per copy in the softmax: weight exp(logit) by multiplicity
        w = torch.where(a > 0, a * torch.exp(logits - logits.max()), torch.zeros_like(a))
        alpha = w / w.sum(1, keepdim=True)
        assert torch.allclose(out[:, h], alpha @ z[:, h])


def test_aggregation_gradients():
    block = random_block(seed=2)
    x = torch.randn(block.num_src, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: TORCH_OPS.sage(t, block), (x,))
    assert torch.autograd.gradcheck(lambda t: TORCH_OPS.gcn(t, block), (x,))


@pytest.mark.parametrize("name", ["sage", "gcn", "gat"])
def test_models_run_on_sampled_blocks_and_learn(name):
    # homophilous graph: every edge joins two nodes of the same class (i and i + 3k mod 300)
    gen = torch.Generator().manual_seed(1)
    src = torch.randint(0, 300, (3000,), generator=gen)
    dst = (src + 3 * torch.randint(1, 100, (3000,), generator=gen)) % 300
    g = CSRGraph.from_edges(torch.cat([src, dst]), torch.cat([dst, src]), 300)
    labels = torch.arange(300) % 3
    features = F.one_hot(labels, 3).double() + 0.3 * torch.randn(
        300, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    model = build_model(name, 3, 16, 3, 2, seed=0).double()
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    losses = []
    for step in range(40):
        seeds = torch.arange(step % 5, 300, 5)
        sub = sample_subgraph(g, seeds, [5, 5], seed=0, epoch=0, step=step)
        out = model(features[sub.frontiers[-1]], sub.hops[::-1], TORCH_OPS)
        assert out.shape == (seeds.numel(), 3)
        loss = F.cross_entropy(out, labels[seeds])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    assert sum(losses[-5:]) / 5 < 0.5 * sum(losses[:5]) / 5


def test_models_call_the_ops_they_are_given():
    calls = []

    class Recording:
        def sage(self, x, block):
            calls.append("sage")
            return TORCH_OPS.sage(x, block)

    block = random_block()
    model = build_model("sage", 4, 8, 2, 1, seed=0)
    model(torch.randn(block.num_src, 4), [block], Recording())
    assert calls == ["sage"]


def test_parameters_depend_only_on_seed():
    a = build_model("gat", 8, 16, 3, 2, seed=5)
    b = build_model("gat", 8, 16, 3, 2, seed=5)
    c = build_model("gat", 8, 16, 3, 2, seed=6)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not all(torch.equal(p, q) for p, q in zip(a.parameters(), c.parameters()))


def test_bad_model_arguments():
    with pytest.raises(ZeroGNNError, match="unknown model"):
        build_model("mlp", 4, 8, 2, 2, seed=0)
    with pytest.raises(ZeroGNNError, match="multiple of"):
        build_model("gat", 4, 10, 2, 2, seed=0)
