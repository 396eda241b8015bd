"""Every launch is checked against the kernel's declaration in its .cu file, on the CPU too: the number
of arguments, tensor dtypes and scalar widths, and every launch site in the package passes what its
kernel declares (the kernels do not run here; their arguments are only checked)."""

import contextlib

import numpy as np
import pytest
import torch

from tests.conftest import random_graph
from zerognn.cuda import launch as launch_module
from zerognn.cuda import loss as loss_module
from zerognn.cuda import sampling
from zerognn.cuda.aggregate import CUDA_OPS, EllBlock
from zerognn.cuda.build import kernels_dir, operators
from zerognn.cuda.gather import GatheredRows, gather_labels, gather_rows
from zerognn.cuda.launch import device_launched, kernel_arguments, signature
from zerognn.cuda.loss import CE_BLOCKS, CE_THREADS, cross_entropy
from zerognn.determinism import deterministic
from zerognn.errors import ZeroGNNError
from zerognn.fixed_launch import device_loop, step_control


def _sage_args(**change):
    args = dict(x=torch.zeros(8, 4), width=np.int64(4), nbr_local=torch.zeros(6, dtype=torch.int32),
                counts=torch.zeros(2, dtype=torch.int32), n_dst=torch.zeros(1, dtype=torch.int32),
                capacity=np.int32(2), fanout=np.int32(3), rows=None, out=torch.zeros(2, 8),
                overflow=torch.zeros(2, dtype=torch.int64))
    args.update(change)
    return tuple(args.values())


def test_signatures_come_from_the_cu_declarations():
    params = signature("sage_concat_forward")
    assert [p.name for p in params] == ["x", "width", "nbr_local", "counts", "n_dst", "capacity", "fanout", "rows",
                                        "out", "overflow"]
    assert [(p.ctype, p.pointer) for p in params[:2]] == [("float", True), ("i64", False)]
    # the device-side parents take the launch's thread count last
    assert signature("dl_sage_concat_forward")[-1].name == "threads"
    assert all(op.signatures for op in operators().values())


def test_a_launch_with_the_wrong_arguments_is_a_clear_error():
    assert len(kernel_arguments("sage_concat_forward", _sage_args(), on_device=False)) == 10
    with pytest.raises(ZeroGNNError, match=r"kernel sage_concat_forward takes 10 arguments \(x, width, .*got 9"):
        kernel_arguments("sage_concat_forward", _sage_args()[:-1], on_device=False)
    with pytest.raises(ZeroGNNError, match=r"parameter x \(float\*\) needs a tensor of torch.float32, got a "
                                           r"torch.float64 tensor"):
        kernel_arguments("sage_concat_forward", _sage_args(x=torch.zeros(8, 4, dtype=torch.float64)), on_device=False)
    with pytest.raises(ZeroGNNError, match=r"parameter width \(i64\) needs a np.int64 scalar, got int 4"):
        kernel_arguments("sage_concat_forward", _sage_args(width=4), on_device=False)
    with pytest.raises(ZeroGNNError, match=r"parameter capacity \(int\) needs a np.int32 scalar, got int64"):
        kernel_arguments("sage_concat_forward", _sage_args(capacity=np.int64(2)), on_device=False)
    with pytest.raises(ZeroGNNError, match=r"parameter rows \(i64\*\) needs a tensor of torch.int64, got a "
                                           r"torch.int32 tensor"):
        kernel_arguments("sage_concat_forward", _sage_args(rows=torch.zeros(8, dtype=torch.int32)), on_device=False)
    with pytest.raises(ZeroGNNError, match="needs a CUDA .* tensor, got a torch.float32 tensor on cpu"):
        kernel_arguments("sage_concat_forward", _sage_args())


class _Shim:
    """Stands in for what a launch needs of CUDA, so that launch() runs on the CPU up to the launch itself."""

    cuda_stream = 0

    @staticmethod
    def from_handle(handle):
        return None


class _TorchWithoutPinning:
    """``torch`` for StepControl on a machine without CUDA: host memory cannot be pinned there."""

    def __getattr__(self, name):
        return getattr(torch, name)

    @staticmethod
    def zeros(*shape, pin_memory=False, **kwargs):
        return torch.zeros(*shape, **kwargs)


def _exercise_every_launch_site(step_control_too: bool = True):
    graph = random_graph(200, 1000, seed=0)  # int32 column ids, as the CUDA sampler needs
    assert graph.col.dtype == torch.int32
    frontier, n = torch.arange(10), torch.tensor([10], dtype=torch.int32)
    overflow = sampling.new_overflow("cpu")
    key = torch.zeros(1, dtype=torch.int64)
    scratch = sampling.SamplerScratch.for_graph(graph.num_nodes, "cpu")
    new_count = torch.zeros(1, dtype=torch.int32)
    nbr, counts = sampling.sample(graph, frontier, n, 10, 3, key, overflow, scratch=scratch, new_count=new_count)
    sampling.dedupe(n, nbr, counts, 3, scratch, new_count)
    sampling.relabel(frontier, n, scratch, new_count, nbr, counts, 3, 40, overflow)
    gather_rows(torch.zeros(200, 8), frontier, n, overflow)
    gather_labels(torch.zeros(200, dtype=torch.int64), frontier, n, overflow)
    block = EllBlock(4, 10, 3, torch.zeros(12, dtype=torch.int32), torch.zeros(4, dtype=torch.int32),
                     torch.tensor([4], dtype=torch.int32), overflow)
    # the first layer's forwards over feature rows read through the frontier's ids (no backward)
    for op in (CUDA_OPS.sage, CUDA_OPS.gcn):
        op(GatheredRows(torch.zeros(200, 8), frontier, n, overflow), block)
    # both backward forms (scatter, and pulling through the transpose), each without and with the ReLU fold
    for ordered in (False, True):
        with deterministic(ordered):
            for op in (CUDA_OPS.sage, CUDA_OPS.gcn):
                for relu_input in (False, True):
                    x = torch.zeros(10, 8, requires_grad=True)
                    op(x, block, relu_input=relu_input).sum().backward()
            z = torch.zeros(10, 2, 4, requires_grad=True)
            scores = torch.zeros(10, 2, requires_grad=True), torch.zeros(4, 2, requires_grad=True)
            CUDA_OPS.gat(z, *scores, block, 0.2).sum().backward()
            cross_entropy(torch.zeros(4, 3, requires_grad=True), torch.zeros(4, dtype=torch.int64), n,
                          overflow).backward()
            cross_entropy(torch.zeros(4, 3), torch.zeros(4, dtype=torch.int64))  # every row live, no gradient
    if not step_control_too:  # zerognn's own control and loop: never device-launched
        return
    control = step_control.StepControl(torch.device("cpu"), 100, 10, 8, 2, 3, 0)
    params = torch.zeros(16)
    control.begin(params, torch.zeros(16))
    control.end(params, torch.zeros(16), torch.zeros(()), torch.zeros(5))
    bounds, stamps = torch.zeros(2, dtype=torch.int64), torch.zeros(6, dtype=torch.int64)
    device_loop.launch_loop_begin(np.uint64(7), control.state, torch.zeros(1, dtype=torch.int64), bounds, stamps)
    device_loop.launch_loop_continue(np.uint64(7), control.state, bounds, stamps)


def _shim_launches(monkeypatch, launched: list) -> None:
    """The real launch() on the CPU, up to cuda-core's launch; ``launched`` gets (kernel, its arguments)."""
    monkeypatch.setattr(launch_module, "kernel_arguments",
                        lambda name, args: launched.append((name, args)) or kernel_arguments(name, args,
                                                                                              on_device=False))
    monkeypatch.setattr(launch_module, "_max_blocks", lambda device: 1024)
    monkeypatch.setattr(launch_module, "kernel", lambda name, device: None)
    monkeypatch.setattr(launch_module, "cuda_launch", lambda *args: None)
    monkeypatch.setattr(launch_module, "LaunchConfig", lambda **kwargs: None)
    monkeypatch.setattr(launch_module, "Stream", _Shim)
    monkeypatch.setattr(launch_module, "_make_current", lambda device: None)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda *args: _Shim)
    monkeypatch.setattr(step_control, "torch", _TorchWithoutPinning())


def test_every_launch_site_passes_what_its_kernel_declares(monkeypatch):
    """Host-launched, then through the device-side parents (dynamic parallelism) for the kernels that
    have one."""
    launched = []
    _shim_launches(monkeypatch, launched)

    _exercise_every_launch_site()
    host = {
        "sample_neighbors", "dedupe_neighbors", "relabel_nodes", "relabel_neighbors",
        "gather_rows", "gather_labels", "sage_concat_forward", "sage_concat_backward",
        "gcn_aggregate_forward", "gcn_aggregate_backward", "gat_attention_forward", "gat_attention_backward",
        "ell_transpose_count", "ell_transpose_place", "ell_transpose_order", "sage_concat_backward_transposed",
        "gcn_aggregate_backward_transposed", "gat_attention_backward_transposed",
        "step_begin", "step_end", "loop_begin", "loop_continue", "cross_entropy_forward_backward"}
    assert {name for name, _ in launched} == host
    launched.clear()
    with device_launched():
        _exercise_every_launch_site(step_control_too=False)
    # the loss is a fixed grid whatever the row count: launched from the host in every variant
    host_only = {"step_begin", "step_end", "loop_begin", "loop_continue", "cross_entropy_forward_backward"}
    assert {name for name, _ in launched} == {f"dl_{name}" for name in host - host_only} | {
        "cross_entropy_forward_backward"}


@pytest.mark.parametrize("device_side", [False, True])
def test_the_loss_launches_a_fixed_grid_over_scratch_made_once(monkeypatch, device_side):
    """CE_BLOCKS blocks of CE_THREADS whatever the rows (so a row's warp depends on its index alone), also
    inside ``device_launched``, with the same partial sums and arrival counter at every call: no
    allocation or fill per step."""
    launched, configs = [], []
    _shim_launches(monkeypatch, launched)
    monkeypatch.setattr(launch_module, "LaunchConfig", lambda **kwargs: configs.append(kwargs))
    monkeypatch.setattr(loss_module, "_SCRATCH", {})
    assert CE_THREADS % 32 == 0 and CE_THREADS <= 1024  # whole warps, at most the 32 the kernel's block sums
    with device_launched() if device_side else contextlib.nullcontext():
        for rows in (4, 3000):
            cross_entropy(torch.zeros(rows, 3, requires_grad=True), torch.zeros(rows, dtype=torch.int64),
                          torch.tensor([rows], dtype=torch.int32))
    assert configs == [{"grid": CE_BLOCKS, "block": CE_THREADS}] * 2
    params = [p.name for p in signature("cross_entropy_forward_backward")]
    assert params[-2:] == ["block_loss", "blocks_done"]
    (first, second) = [args for name, args in launched if name == "cross_entropy_forward_backward"]
    assert first[-2] is second[-2] and first[-1] is second[-1]
    assert first[-2].dtype == torch.float32 and first[-2].shape == (CE_BLOCKS,)
    assert first[-1].dtype == torch.int32 and first[-1].tolist() == [0]


@pytest.mark.parametrize("device_side", [False, True])
@pytest.mark.parametrize("ordered", [False, True])
@pytest.mark.parametrize("op", ["sage", "gcn"])
def test_the_relu_fold_passes_the_forward_input_as_relu_out(monkeypatch, op, ordered, device_side):
    """``relu_input=True`` hands every form of the backward (scatter, transposed, their device-side
    parents) the forward's own x as ``relu_out``; without it the pointer is null."""
    launched = []
    _shim_launches(monkeypatch, launched)
    block = EllBlock(4, 10, 3, torch.zeros(12, dtype=torch.int32), torch.zeros(4, dtype=torch.int32),
                     torch.tensor([4], dtype=torch.int32), sampling.new_overflow("cpu"))
    kernel = {"sage": "sage_concat", "gcn": "gcn_aggregate"}[op]
    kernel = f"{'dl_' if device_side else ''}{kernel}_backward{'_transposed' if ordered else ''}"
    for relu_input in (False, True):
        launched.clear()
        x = torch.randn(10, 8).relu().requires_grad_(True)
        with deterministic(ordered), (device_launched() if device_side else contextlib.nullcontext()):
            getattr(CUDA_OPS, op)(x, block, relu_input=relu_input).sum().backward()
        (args,) = [args for name, args in launched if name == kernel]
        params = [p.name for p in signature(kernel)]
        relu_out = args[params.index("relu_out")]
        if relu_input:
            assert isinstance(relu_out, torch.Tensor) and relu_out.data_ptr() == x.data_ptr()
        else:
            assert relu_out is None
        assert kernel_arguments(kernel, args, on_device=False)[params.index("relu_out")] == (
            x.data_ptr() if relu_input else 0)


def test_every_form_of_the_sage_and_gcn_backwards_takes_relu_out():
    assert CUDA_OPS.folds_relu_backward is True
    for name in ("sage_concat_backward", "gcn_aggregate_backward", "sage_concat_backward_transposed",
                 "gcn_aggregate_backward_transposed"):
        for kernel in (name, f"dl_{name}"):
            params = {p.name: p for p in signature(kernel)}
            assert params["relu_out"].ctype == "float" and params["relu_out"].pointer, kernel


def _hop_inputs(live: int):
    """A graph and a hop's inputs on the CPU: (graph, 10 frontier slots with ``live`` of them live, the live
    count, an overflow record, a hop key, the sampler's scratch)."""
    graph = random_graph(200, 1000, seed=0)
    frontier, n = torch.arange(10), torch.tensor([live], dtype=torch.int32)
    overflow, key = sampling.new_overflow("cpu"), torch.zeros(1, dtype=torch.int64)
    return graph, frontier, n, overflow, key, sampling.SamplerScratch.for_graph(graph.num_nodes, "cpu")


class _TorchWithoutFills:
    """``torch`` for zerognn.cuda.sampling with ``full`` and ``zeros`` refused: a hop fills nothing (no kernel
    of its own zeroes the new-node count or clears a bitmap)."""

    def __getattr__(self, name):
        return getattr(torch, name)

    @staticmethod
    def full(*args, **kwargs):
        raise AssertionError("zerognn.cuda.sampling filled a tensor in a hop")

    @staticmethod
    def zeros(*args, **kwargs):
        raise AssertionError("zerognn.cuda.sampling zeroed a tensor in a hop: sample_neighbors zeroes the count")


@pytest.mark.parametrize("device_side", [False, True])
def test_sample_neighbors_marks_the_hops_frontier_and_a_plain_sample_marks_nothing(monkeypatch, device_side):
    """A hop (sample_and_dedupe) hands sample_neighbors, host- or device-launched, the frontier's bitmap and
    the local ids to write and the new-node count to zero, which dedupe_neighbors then reads and adds to; a
    plain sample() passes null pointers for all three."""
    launched = []
    _shim_launches(monkeypatch, launched)
    graph, frontier, n, overflow, key, bits = _hop_inputs(live=4)  # made once per graph, not by the hop
    monkeypatch.setattr(sampling, "torch", _TorchWithoutFills())
    prefix = "dl_" if device_side else ""
    kernel, dedupe = f"{prefix}sample_neighbors", f"{prefix}dedupe_neighbors"
    params = [p.name for p in signature(kernel)]
    with device_launched() if device_side else contextlib.nullcontext():
        draft = sampling.sample_and_dedupe(graph, frontier, n, 3, key, overflow, bits)
        assert [name for name, _ in launched] == [kernel, dedupe]
        given = dict(zip(params, launched[0][1]))
        assert given["seen_bits"] is bits.seen and given["local_ids"] is bits.local_ids
        assert given["new_count"] is draft.new_count and draft.new_count.dtype == torch.int32
        given = dict(zip([p.name for p in signature(dedupe)], launched[1][1]))
        assert given["seen_bits"] is bits.seen and given["new_bits"] is bits.bits
        assert given["new_count"] is draft.new_count

        launched.clear()
        sampling.sample(graph, frontier, n, 10, 3, key, overflow)
        (args,) = [args for name, args in launched if name == kernel]
        for name in ("seen_bits", "local_ids", "new_count"):
            at = params.index(name)
            assert args[at] is None and kernel_arguments(kernel, args, on_device=False)[at] == 0  # null pointers
    with pytest.raises(ZeroGNNError, match="both a SamplerScratch and a new-node count"):
        sampling.sample(graph, frontier, n, 10, 3, key, overflow, scratch=bits)


HOP_KERNELS = ("sample_neighbors", "dedupe_neighbors", "relabel_nodes", "relabel_neighbors")


@pytest.mark.parametrize("device_side", [False, True])
def test_a_hop_launches_four_kernels_in_order_with_the_scans_scratch_made_once(monkeypatch, device_side):
    """A hop is sample, dedupe, relabel_nodes and relabel_neighbors, host- or device-launched: no kernel ranks
    the new nodes apart from relabel_nodes, and none of its own marks the frontier. sample_and_dedupe
    launches the first two, so the new-node count (what host-mediated control reads) is there before any
    relabel; finish_hop launches the other two. relabel_nodes gets both bitmaps, the count, and the single-
    pass scan's tile statuses and ticket from SamplerScratch, and sample_neighbors, relabel_nodes and
    relabel_neighbors its local ids: the same tensors at every hop."""
    launched = []
    _shim_launches(monkeypatch, launched)
    graph, frontier, n, overflow, key, bits = _hop_inputs(live=10)
    prefix = "dl_" if device_side else ""
    relabel = f"{prefix}relabel_nodes"
    params = [p.name for p in signature(relabel)]
    scratch = []
    with device_launched() if device_side else contextlib.nullcontext():
        for hop, capacity in enumerate((40, 200)):
            launched.clear()
            draft = sampling.sample_and_dedupe(graph, frontier, n, 3, key, overflow, bits)
            assert [name for name, _ in launched] == [prefix + k for k in HOP_KERNELS[:2]], hop
            frontier, n, _ = sampling.finish_hop(draft, overflow, capacity)
            assert [name for name, _ in launched] == [prefix + k for k in HOP_KERNELS], hop
            (args,) = [args for name, args in launched if name == relabel]
            given = dict(zip(params, args))
            assert given["new_bits"] is bits.bits and given["new_count"] is draft.new_count
            assert given["seen_bits"] is bits.seen
            assert type(given["words"]) is np.int64 and given["words"] == bits.bits.numel()
            assert given["tile_status"] is bits.tile_status and given["tile_ticket"] is bits.tile_ticket
            for kernel in (HOP_KERNELS[0],) + HOP_KERNELS[2:]:
                (args,) = [args for name, args in launched if name == prefix + kernel]
                assert dict(zip([p.name for p in signature(prefix + kernel)], args))["local_ids"] is bits.local_ids
            scratch.append((given["tile_status"], given["tile_ticket"]))
    assert scratch[0][0] is scratch[1][0] and scratch[0][1] is scratch[1][1]
    assert "rank_new_nodes" not in {k for op in operators().values() for k in op.kernels}


@pytest.mark.parametrize("num_nodes, tiles", [(0, 1), (200, 1), (32 * 1024, 1), (32 * 1024 + 1, 2),
                                              (5_000_000, 153)])
def test_sampler_scratch_holds_a_zeroed_status_word_per_tile_a_ticket_and_a_local_id_per_node(num_nodes, tiles):
    """One int64 status word per RANK_WORDS bitmap words (at least one) and an int32 ticket, all zero: what
    relabel_nodes expects at every launch (kernels/relabel_nodes.cu resets them after each); an int32 local
    id per node, -1 until a hop writes it."""
    bits = sampling.SamplerScratch.for_graph(num_nodes, "cpu")
    assert bits.local_ids.dtype == torch.int32 and bits.local_ids.numel() == num_nodes
    assert bool((bits.local_ids == -1).all())
    assert bits.bits.dtype == torch.int32 and bits.bits.numel() == -(-num_nodes // 32)
    assert bits.seen.dtype == torch.int32 and bits.seen.numel() == bits.bits.numel() and not bits.seen.any()
    assert bits.tile_status.dtype == torch.int64 and bits.tile_status.numel() == tiles
    assert bits.tile_ticket.dtype == torch.int32 and bits.tile_ticket.tolist() == [0]
    assert not bits.bits.any() and not bits.tile_status.any()
    assert f"#define ZG_RANK_WORDS {sampling.RANK_WORDS} " in (kernels_dir() / "zerognn_common.cuh").read_text()
    for kernel in ("relabel_nodes", "dl_relabel_nodes"):
        declared = {p.name: (p.ctype, p.pointer) for p in signature(kernel)}
        assert declared["tile_status"] == ("u64", True) and declared["tile_ticket"] == ("unsigned", True), kernel


def test_sample_neighbors_and_its_parent_take_the_frontiers_bitmap_and_local_ids():
    for kernel in ("sample_neighbors", "dl_sample_neighbors"):
        params = {p.name: p for p in signature(kernel)}
        assert (params["seen_bits"].ctype, params["seen_bits"].pointer) == ("unsigned", True), kernel
        assert (params["local_ids"].ctype, params["local_ids"].pointer) == ("int", True), kernel
        assert (params["new_count"].ctype, params["new_count"].pointer) == ("int", True), kernel


@pytest.mark.parametrize("device_side", [False, True])
@pytest.mark.parametrize("op", ["sage", "gcn"])
def test_the_forwards_read_x_through_the_ids_of_gathered_rows_and_directly_otherwise(monkeypatch, op, device_side):
    """The forward (host-launched or through its device-side parent) gets a null ``rows`` for a tensor x, and
    for ``GatheredRows`` the table as x and the ids tensor itself as ``rows``; no gather kernel runs."""
    launched = []
    _shim_launches(monkeypatch, launched)
    overflow = sampling.new_overflow("cpu")
    block = EllBlock(4, 10, 3, torch.zeros(12, dtype=torch.int32), torch.zeros(4, dtype=torch.int32),
                     torch.tensor([4], dtype=torch.int32), overflow)
    kernel = {"sage": "sage_concat", "gcn": "gcn_aggregate"}[op]
    kernel = f"{'dl_' if device_side else ''}{kernel}_forward"
    params = [p.name for p in signature(kernel)]
    table, ids = torch.randn(200, 8), torch.randperm(200)[:10]
    x = torch.randn(10, 8)
    with device_launched() if device_side else contextlib.nullcontext():
        for given in (x, GatheredRows(table, ids, torch.tensor([10], dtype=torch.int32), overflow)):
            launched.clear()
            out = getattr(CUDA_OPS, op)(given, block)
            assert out.shape == (4, {"sage": 16, "gcn": 8}[op]) and out.grad_fn is None
            (args,) = [args for name, args in launched if name == kernel]
            assert [name for name, _ in launched] == [kernel]  # no gather kernel
            rows, source = args[params.index("rows")], args[params.index("x")]
            if given is x:
                assert rows is None and source.data_ptr() == x.data_ptr()
                assert kernel_arguments(kernel, args, on_device=False)[params.index("rows")] == 0  # a null pointer
            else:
                assert rows is ids and source is table
                assert kernel_arguments(kernel, args, on_device=False)[params.index("rows")] == ids.data_ptr()


def test_the_sage_and_gcn_forwards_and_their_parents_take_nullable_int64_rows():
    for name in ("sage_concat_forward", "gcn_aggregate_forward"):
        for kernel in (name, f"dl_{name}"):
            params = [p.name for p in signature(kernel)]
            rows = signature(kernel)[params.index("rows")]
            assert (rows.ctype, rows.pointer) == ("i64", True), kernel
            assert params[params.index("rows") + 1] == "out", kernel  # where the backwards take relu_out


def test_each_thread_makes_the_context_current_once_per_device(monkeypatch):
    """A launch makes its device's context current on the calling thread (autograd's worker threads may have
    none) the first time that thread launches on that device, and not on every launch."""
    import threading

    made = []

    class FakeDevice:
        def __init__(self, device):
            self.device = device

        def set_current(self):
            made.append((threading.get_ident(), self.device))

    monkeypatch.setattr(launch_module, "Device", FakeDevice)
    monkeypatch.setattr(launch_module, "_thread", threading.local())
    for device in (0, 0, 1, 1, 0):
        launch_module._make_current(device)
    here = threading.get_ident()
    assert made == [(here, 0), (here, 1), (here, 0)]
    worker = threading.Thread(target=lambda: [launch_module._make_current(0) for _ in range(3)])
    worker.start()
    worker.join()
    assert len(made) == 4 and made[-1][1] == 0 and made[-1][0] != here


@pytest.mark.gpu
def test_a_launch_from_a_thread_that_never_touched_cuda():
    """A thread of its own (as autograd's backward threads are) launches our kernels with no CUDA call of
    its own first: without the context made current there, the driver refuses (CUDA_ERROR_INVALID_CONTEXT)."""
    import threading

    labels = torch.arange(10, dtype=torch.int64, device="cuda") * 3
    ids = torch.tensor([4, 1, 7], dtype=torch.int64, device="cuda")
    n_ids, overflow = torch.tensor([3], dtype=torch.int32, device="cuda"), sampling.new_overflow("cuda")
    torch.cuda.synchronize()
    results, errors = [], []

    def work():  # its only CUDA work is the launch (and the output's allocation)
        try:
            results.append(gather_labels(labels, ids, n_ids, overflow))
        except Exception as exc:  # noqa: BLE001 - reported below with its message
            errors.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert not errors, errors
    assert results[0].tolist() == [12, 3, 21]
