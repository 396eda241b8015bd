"""SAGE's and GCN's first layer reads the feature rows through the frontier's ids (``GatheredRows``), with
no gather kernel and no gathered buffer.

On the CPU (the kernels' launches checked, not run): which input ``model_input`` gives each model and ops,
what a whole step over it launches — the first forward over the table with the ids as ``rows``, the other
layers over their inputs with a null ``rows``, no gather, no backward for the first layer — and the errors.
On a GPU: the forwards over ``GatheredRows`` equal to gather-then-aggregate bit for bit (both row widths,
live counts below the capacity, dropped neighbours, host- and device-launched), and a 3-layer model's loss
and gradients likewise.
"""

import contextlib

import pytest
import torch

from tests.conftest import random_graph
from tests.cuda.test_launch_arguments import _shim_launches
from zerognn.cuda import sampling
from zerognn.cuda.aggregate import CUDA_OPS, EllBlock
from zerognn.cuda.gather import GatheredRows, gather_rows, model_input
from zerognn.cuda.launch import device_launched, signature
from zerognn.determinism import deterministic
from zerognn.errors import ZeroGNNError
from zerognn.models import TORCH_OPS, build_model

_KERNEL = {"sage": "sage_concat", "gcn": "gcn_aggregate"}

# ------------------------------------------------------------------ on the CPU: the launches


def _cpu_blocks(sizes=(4, 10, 30, 60), fanouts=(3, 3, 3)):
    """Blocks of a 3-hop sample, seeds first, with local ids pointing into the next frontier."""
    overflow = sampling.new_overflow("cpu")
    gen = torch.Generator().manual_seed(0)
    blocks = []
    for h, f in enumerate(fanouts):
        local = torch.randint(0, sizes[h + 1], (sizes[h] * f,), generator=gen, dtype=torch.int32)
        blocks.append(EllBlock(sizes[h], sizes[h + 1], f, local, torch.full((sizes[h],), f, dtype=torch.int32),
                               torch.tensor([sizes[h]], dtype=torch.int32), overflow))
    return blocks, overflow


def test_model_input_reads_sage_and_gcn_features_through_the_ids_and_gathers_them_for_gat(monkeypatch):
    launched = []
    _shim_launches(monkeypatch, launched)
    features, ids = torch.randn(200, 8), torch.randperm(200)[:60]
    n_ids, overflow = torch.tensor([60], dtype=torch.int32), sampling.new_overflow("cpu")
    for name in ("sage", "gcn"):
        x = model_input(build_model(name, 8, 16, 3, 3, seed=0), CUDA_OPS, features, ids, n_ids, overflow)
        assert isinstance(x, GatheredRows) and x.table is features and x.ids is ids and x.n_ids is n_ids
        assert x.shape == (60, 8) and x.dtype == torch.float32 and x.device == ids.device
        assert launched == []  # nothing gathered
        # ops that read no rows through ids (the PyTorch ops) get them gathered
        gathered = model_input(build_model(name, 8, 16, 3, 3, seed=0), TORCH_OPS, features, ids, n_ids, overflow)
        assert isinstance(gathered, torch.Tensor) and gathered.shape == (60, 8)
        assert [name for name, _ in launched] == ["gather_rows"]
        launched.clear()
    # GAT's first GEMM takes x itself: gathered
    x = model_input(build_model("gat", 8, 16, 3, 3, seed=0), CUDA_OPS, features, ids, n_ids, overflow)
    assert isinstance(x, torch.Tensor) and x.shape == (60, 8)
    (args,) = [args for name, args in launched if name == "gather_rows"]
    assert args[0] is features and args[2] is ids
    # features of another dtype are never read through ids: they take the gather's path (whose kernel refuses them)
    with pytest.raises(ZeroGNNError, match=r"gather_rows: parameter table \(float\*\) needs a tensor of torch.float32"):
        model_input(build_model("sage", 8, 16, 3, 3, seed=0), CUDA_OPS, features.double(), ids, n_ids, overflow)


@pytest.mark.parametrize("device_side", [False, True])
@pytest.mark.parametrize("ordered", [False, True])
@pytest.mark.parametrize("name", ["sage", "gcn"])
def test_a_step_reads_the_features_in_the_first_forward_and_gathers_nothing(monkeypatch, name, ordered, device_side):
    """The first layer's forward gets the feature table as x and the frontier's ids as ``rows``; every other
    forward a null ``rows``; no gather kernel runs, and no backward for the first layer (its input is
    data), while every parameter gets its gradient."""
    launched = []
    _shim_launches(monkeypatch, launched)
    blocks, overflow = _cpu_blocks()
    features, ids = torch.randn(500, 8), torch.randperm(500)[:60]
    model = build_model(name, 8, 16, 3, 3, seed=0)
    with deterministic(ordered), device_launched() if device_side else contextlib.nullcontext():
        x = model_input(model, CUDA_OPS, features, ids, torch.tensor([60], dtype=torch.int32), overflow)
        model(x, blocks[::-1], CUDA_OPS).sum().backward()
    prefix = "dl_" if device_side else ""
    forward = f"{prefix}{_KERNEL[name]}_forward"
    params = [p.name for p in signature(forward)]
    names = [n for n, _ in launched]
    assert not any("gather" in n for n in names)
    forwards = [args for n, args in launched if n == forward]
    assert len(forwards) == 3
    first, *others = forwards
    assert first[params.index("x")] is features and first[params.index("rows")] is ids
    assert all(args[params.index("rows")] is None for args in others)
    backward = f"{prefix}{_KERNEL[name]}_backward{'_transposed' if ordered else ''}"
    assert names.count(backward) == 2  # the hidden layers' inputs only
    assert all(p.grad is not None for p in model.parameters())


def test_rows_read_through_ids_are_refused_where_they_cannot_serve():
    blocks, overflow = _cpu_blocks()
    ids, n_ids = torch.randperm(500)[:60], torch.tensor([60], dtype=torch.int32)
    trained = torch.randn(500, 8, requires_grad=True)
    with pytest.raises(ZeroGNNError, match="the table requires a gradient"):
        CUDA_OPS.sage(GatheredRows(trained, ids, n_ids, overflow), blocks[-1])
    with pytest.raises(ZeroGNNError, match="no ReLU made"):
        CUDA_OPS.gcn(GatheredRows(torch.randn(500, 8), ids, n_ids, overflow), blocks[-1], relu_input=True)
    with pytest.raises(ZeroGNNError, match=r"contiguous float32 table .*\(not contiguous\)"):
        GatheredRows(torch.randn(8, 500).t(), ids, n_ids, overflow)
    with pytest.raises(ZeroGNNError, match="contiguous float32 table"):
        GatheredRows(torch.randn(500, 8, dtype=torch.float64), ids, n_ids, overflow)
    with pytest.raises(ZeroGNNError, match="int64 ids"):
        GatheredRows(torch.randn(500, 8), ids.int(), n_ids, overflow)
    assert CUDA_OPS.accepts_gathered_rows is True and TORCH_OPS.accepts_gathered_rows is False


# ------------------------------------------------------------------ on a GPU: the same bits as gathering first

DEV = "cuda"


def _live(n: int) -> torch.Tensor:
    return torch.tensor([n], dtype=torch.int32, device=DEV)


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.equal(a.contiguous().view(torch.int32), b.contiguous().view(torch.int32))


@pytest.mark.gpu
@pytest.mark.parametrize("device_side", [False, True])
@pytest.mark.parametrize("width", [100, 37])  # the float4 path and the scalar one
@pytest.mark.parametrize("op", ["sage", "gcn"])
def test_a_forward_over_gathered_rows_is_gather_then_aggregate_bit_for_bit(op, width, device_side):
    """Capacities above the live counts on both sides (id slots past the live ids, destination rows past the
    live ones) and neighbours dropped to -1: the same output bits as the forward over ``gather_rows``'s
    buffer, padded rows zero in both."""
    gen = torch.Generator().manual_seed(width)
    table = torch.randn(5000, width, generator=gen).to(DEV)
    num_dst, live_dst, num_src, live_src, fanout = 300, 260, 1000, 900, 7
    ids = torch.randperm(5000, generator=gen)[:num_src].to(DEV)  # slots past live_src hold ids nothing reads
    counts = torch.randint(0, fanout + 1, (num_dst,), generator=gen, dtype=torch.int32)
    # live destinations read only live sources (as a relabelled hop's do); destinations are sources' prefix
    local = torch.randint(0, live_src, (num_dst * fanout,), generator=gen, dtype=torch.int32)
    local[::5] = -1  # dropped to an upstream overflow: skipped, never read
    overflow = sampling.new_overflow(DEV)
    block = EllBlock(num_dst, num_src, fanout, local.to(DEV), counts.to(DEV), _live(live_dst), overflow)
    fwd = getattr(CUDA_OPS, op)
    with device_launched() if device_side else contextlib.nullcontext():
        gathered = gather_rows(table, ids, _live(live_src), overflow)
        expected = fwd(gathered, block)
        out = fwd(GatheredRows(table, ids, _live(live_src), overflow), block)
    torch.cuda.synchronize()
    assert overflow.tolist() == [0, 0]
    assert _same_bits(out, expected)
    assert torch.all(out[live_dst:] == 0) and bool(out[:live_dst].ne(0).any())
    # the control: the rows the forward read are the table's, by id (not the table's first rows)
    assert not _same_bits(out, fwd(table[: num_src].contiguous(), block))


def _model_case(name: str, width: int, seed: int = 0):
    """A 3-hop sample of a random graph (host-mediated pipeline) and a model over ``width`` features."""
    from tests.cuda.test_kernels import run_pipeline

    g = random_graph(4000, 40000, seed=seed + 3).to(DEV)
    gen = torch.Generator().manual_seed(seed)
    seeds = torch.randperm(4000, generator=gen)[:256].to(DEV)
    features = torch.randn(4000, width, generator=gen).to(DEV)
    labels = (torch.arange(4000) % 5).to(DEV)[seeds]
    frontiers, blocks = run_pipeline(g, seeds, [10, 5, 5], seed=seed, epoch=0, step=0)
    model = build_model(name, width, 64, 5, 3, seed=seed).to(DEV)
    with torch.no_grad():  # many non-positive hidden pre-activations, so the folded ReLU masks matter
        for lin in model.lins:
            lin.bias.sub_(0.2)
    return model, features, labels, frontiers[-1], blocks[::-1]


@pytest.mark.gpu
@pytest.mark.parametrize("device_side", [False, True])
@pytest.mark.parametrize("width", [100, 37])
@pytest.mark.parametrize("name", ["sage", "gcn"])
def test_a_models_loss_and_gradients_over_gathered_rows_are_those_over_the_gather_bit_for_bit(name, width,
                                                                                              device_side):
    from zerognn.cuda.loss import cross_entropy

    model, features, labels, ids, blocks = _model_case(name, width)
    overflow = sampling.new_overflow(DEV)
    results = []
    with deterministic(True), device_launched() if device_side else contextlib.nullcontext():
        fused = model_input(model, CUDA_OPS, features, ids, _live(ids.numel()), overflow)
        assert isinstance(fused, GatheredRows)
        for x in (fused, gather_rows(features, ids, _live(ids.numel()), overflow)):
            model.zero_grad(set_to_none=True)
            loss = cross_entropy(model(x, blocks, CUDA_OPS), labels)
            loss.backward()
            results.append((loss.detach().clone(), [p.grad.detach().clone() for p in model.parameters()]))
    torch.cuda.synchronize()
    assert overflow.tolist() == [0, 0]
    (loss, grads), (loss_ref, grads_ref) = results
    assert _same_bits(loss, loss_ref)
    assert all(bool(g.ne(0).any()) for g in grads)
    for g, ref in zip(grads, grads_ref):
        assert _same_bits(g, ref)

