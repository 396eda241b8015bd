"""The fixed-order operators (GPU only): the transpose, the transposed backwards, the fixed-order GEMMs.

Two properties make runs bit-identical: the same inputs give the same bits every call, and rows that a
variant pads with (an envelope's capacity past the live count) change no bit of what the live rows get.
"""

import pytest
import torch

from tests.cuda.test_kernels import DEV, live, random_block
from zerognn.cuda import dense_gemm, sampling
from zerognn.cuda.aggregate import CUDA_OPS, EllBlock, transpose
from zerognn.cuda.dense_gemm import CHUNK_ROWS
from zerognn.determinism import deterministic

pytestmark = pytest.mark.gpu


def bits(t):
    return t.detach().contiguous().view(torch.int32).cpu()


def same_bits(a, b):
    return torch.equal(bits(a), bits(b))


@pytest.mark.parametrize("n_live", [300, 170])
def test_the_transpose_lists_each_sources_readers_in_slot_order(n_live):
    block = random_block(num_dst=300, num_src=900, fanout=7, seed=4)
    local = block.nbr_local.clone()
    local[::9] = -1  # dropped neighbours are nobody's readers
    block = EllBlock(block.num_dst, block.num_src, block.fanout, local, block.counts, live(n_live), block.overflow)
    t = transpose(block)
    counts, local = block.counts.cpu(), local.cpu()
    readers = {s: [] for s in range(block.num_src)}
    for e in range(n_live * block.fanout):
        p, k = divmod(e, block.fanout)
        if k < counts[p] and local[e] >= 0:
            readers[int(local[e])].append(e)
    ends, degree, order = t.ends.cpu(), t.degree.cpu(), t.order.cpu()
    for s, slots in readers.items():
        assert int(degree[s]) == len(slots)
        assert order[int(ends[s]) - len(slots): int(ends[s])].tolist() == slots
    assert block.overflow.tolist() == [0, 0]


def padded(block, capacity, src_capacity):
    """The same live block in buffers of ``capacity`` destinations and ``src_capacity`` sources (what an
    envelope holds), the extra slots filled with ids that must never be read."""
    local = torch.full((capacity * block.fanout,), src_capacity - 1, dtype=torch.int32, device=DEV)
    local[: block.num_dst * block.fanout] = block.nbr_local
    counts = torch.full((capacity,), block.fanout, dtype=torch.int32, device=DEV)
    counts[: block.num_dst] = block.counts
    return EllBlock(capacity, src_capacity, block.fanout, local, counts, live(block.num_dst),
                    sampling.new_overflow(DEV))


def grads(op, block, inputs, grad_out):
    leaves = [t.detach().clone().requires_grad_(True) for t in inputs]
    with deterministic(True):
        out = op(*leaves, block)
        out[: grad_out.shape[0]].backward(grad_out)
    return out.detach(), [t.grad for t in leaves]


def pad_rows(t, rows):
    out = torch.zeros((rows,) + tuple(t.shape[1:]), dtype=t.dtype, device=t.device)
    out[: t.shape[0]] = t
    return out


@pytest.mark.parametrize("width", [64, 30])
@pytest.mark.parametrize("op", ["sage", "gcn", "gat"])
def test_transposed_backwards_give_the_same_bits_every_call_and_at_any_capacity(op, width):
    block = random_block(num_dst=300, num_src=900, fanout=7, seed=5)
    roomy = padded(block, 420, 1300)
    gen = torch.Generator(device=DEV).manual_seed(0)
    if op == "gat":
        heads = 2
        inputs = [torch.randn(900, heads, width // heads, device=DEV, generator=gen),
                  torch.randn(900, heads, device=DEV, generator=gen),
                  torch.randn(300, heads, device=DEV, generator=gen)]

        def call(z, s_src, s_dst, b):
            return CUDA_OPS.gat(z, s_src, s_dst, b, 0.2)

        grad_out = torch.randn(300, heads, width // heads, device=DEV, generator=gen)
        roomy_inputs = [pad_rows(inputs[0], 1300), pad_rows(inputs[1], 1300), pad_rows(inputs[2], 420)]
    else:
        inputs = [torch.randn(900, width, device=DEV, generator=gen)]

        def call(x, b):
            return getattr(CUDA_OPS, op)(x, b)

        grad_out = torch.randn(300, width * (2 if op == "sage" else 1), device=DEV, generator=gen)
        roomy_inputs = [pad_rows(inputs[0], 1300)]
    out, first = grads(call, block, inputs, grad_out)
    _, again = grads(call, block, inputs, grad_out)
    roomy_out, roomy_grads = grads(call, roomy, roomy_inputs, grad_out)
    assert same_bits(roomy_out[:300], out)
    for a, b, r in zip(first, again, roomy_grads):
        assert same_bits(a, b)
        assert same_bits(r[: a.shape[0]], a)
        assert not r[a.shape[0]:].any()  # padded sources get no gradient


@pytest.mark.parametrize("m, n, k", [(1, 5, 3), (700, 47, 512), (CHUNK_ROWS * 3, 256, 200), (2049, 130, 129)])
def test_fixed_order_gemms_match_pytorch_and_ignore_rows_of_zeros(m, n, k):
    gen = torch.Generator(device=DEV).manual_seed(m)
    x = torch.randn(m, k, device=DEV, generator=gen)
    w = torch.randn(n, k, device=DEV, generator=gen) * 0.1
    bias = torch.randn(n, device=DEV, generator=gen)
    g = torch.randn(m, n, device=DEV, generator=gen)
    tol = dict(rtol=1e-4, atol=1e-4 * max(m, k) ** 0.5)
    out = dense_gemm.linear(x, w, bias, relu=True)
    assert torch.allclose(out, torch.relu(x.double() @ w.double().t() + bias.double()).float(), **tol)
    assert torch.allclose(dense_gemm.linear(x, w, None, relu=False), (x.double() @ w.double().t()).float(), **tol)
    grad_x = dense_gemm.input_grad(g, w)
    assert torch.allclose(grad_x, (g.double() @ w.double()).float(), **tol)
    grad_w, grad_b = dense_gemm.weight_and_bias_grad(g, x, bias=True)
    assert torch.allclose(grad_w, (g.double().t() @ x.double()).float(), **tol)
    assert torch.allclose(grad_b, g.double().sum(0).float(), **tol)
    assert same_bits(dense_gemm.column_sums(g), grad_b)
    for extra in (1, 7, 64, CHUNK_ROWS, 3 * CHUNK_ROWS + 5):
        xp, gp = pad_rows(x, m + extra), pad_rows(g, m + extra)
        assert same_bits(dense_gemm.linear(xp, w, bias, relu=True)[:m], out), extra
        assert same_bits(dense_gemm.input_grad(gp, w)[:m], grad_x), extra
        wp, bp = dense_gemm.weight_and_bias_grad(gp, xp, bias=True)
        assert same_bits(wp, grad_w) and same_bits(bp, grad_b), extra
    again_w, again_b = dense_gemm.weight_and_bias_grad(g, x, bias=True)
    assert same_bits(again_w, grad_w) and same_bits(again_b, grad_b)


def test_the_tile_decides_who_computes_an_element_not_its_bits(monkeypatch):
    gen = torch.Generator(device=DEV).manual_seed(1)
    x, w = torch.randn(3000, 200, device=DEV, generator=gen), torch.randn(256, 200, device=DEV, generator=gen)
    g = torch.randn(3000, 256, device=DEV, generator=gen)
    results = []
    for sms in (1, 10**6):  # 128 x 128 tiles, then 64 x 64
        monkeypatch.setattr(dense_gemm, "_sm_count", lambda device, sms=sms: sms)
        results.append((dense_gemm.linear(x, w, None, False), dense_gemm.input_grad(g, w),
                         dense_gemm.weight_and_bias_grad(g, x, bias=False)[0]))
    for a, b in zip(*results):
        assert same_bits(a, b)
