"""The fused loss (``kernels/cross_entropy.cu``) against ``F.cross_entropy``: the loss and the gradient of the
logits in one launch over a fixed grid, the same bits every call and at any capacity, a live row count from
device memory, the last block's arrival counter back at zero after every launch and replay, and a CUDA Graph
replayed over changing inputs. The argument checks, the scratch's cache and the fallback for other dtypes run
on the CPU too."""

import pytest
import torch
import torch.nn.functional as F

from zerognn.cuda import loss as loss_module
from zerognn.cuda import sampling
from zerognn.cuda.loss import CE_BLOCKS, cross_entropy
from zerognn.errors import ZeroGNNError

DEV = "cuda"
gpu = pytest.mark.gpu


def live(n):
    return torch.tensor([n], dtype=torch.int32, device=DEV)


def batch(rows, classes, seed=0, device=DEV):
    g = torch.Generator().manual_seed(seed)
    logits = (3 * torch.randn(rows, classes, generator=g)).to(device)
    labels = torch.randint(0, classes, (rows,), generator=g).to(device)
    return logits, labels


def loss_and_grad(logits, labels, *args, scale=1.0):
    x = logits.clone().requires_grad_(True)
    loss = cross_entropy(x, labels, *args)
    (loss * scale).backward()
    return loss.detach(), x.grad


def reference(logits, labels, scale=1.0):
    x = logits.clone().requires_grad_(True)
    loss = F.cross_entropy(x, labels)
    (loss * scale).backward()
    return loss.detach(), x.grad


def bits(t):
    return t.detach().contiguous().view(torch.int32).cpu()


def captured_loss(capacity, classes):
    """The loss and its gradient captured in a CUDA Graph over static logits, labels and live count, after
    a warm-up call on a side stream (the kernel loaded and the scratch made before capture, as the variants
    do): (graph, x, y, n, loss, grad)."""
    x = torch.zeros(capacity, classes, device=DEV, requires_grad=True)
    y = torch.zeros(capacity, dtype=torch.int64, device=DEV)
    n = live(capacity)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        torch.autograd.grad(cross_entropy(x, y, n), x)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        loss = cross_entropy(x, y, n)
        (grad,) = torch.autograd.grad(loss, x)
    return graph, x, y, n, loss, grad


def assert_close_to_torch(got, want, rows):
    (loss, grad), (ref_loss, ref_grad) = got, want
    torch.testing.assert_close(loss, ref_loss, rtol=3e-5, atol=1e-6)
    # gradient entries are probabilities / rows: compare at that scale
    torch.testing.assert_close(grad, ref_grad, rtol=1e-4, atol=1e-6 / rows)


@gpu
@pytest.mark.parametrize("rows, classes", [
    (1, 7), (1, 47), (31, 32), (33, 40), (1024, 47), (1000, 172), (5000, 1000), (70_000, 47), (2049, 1),
])
def test_loss_and_gradient_match_torch(rows, classes):
    logits, labels = batch(rows, classes, seed=rows + classes)
    assert_close_to_torch(loss_and_grad(logits, labels), reference(logits, labels), rows)


@gpu
def test_the_gradient_is_scaled_by_the_incoming_gradient():
    logits, labels = batch(300, 47)
    assert_close_to_torch(loss_and_grad(logits, labels, scale=0.25), reference(logits, labels, scale=0.25), 300)


@gpu
@pytest.mark.parametrize("rows, classes", [(1, 7), (1000, 47), (70_000, 172)])
def test_two_calls_give_the_same_bits(rows, classes):
    logits, labels = batch(rows, classes, seed=3)
    first, second = loss_and_grad(logits, labels), loss_and_grad(logits, labels)
    assert torch.equal(bits(first[0]), bits(second[0])) and torch.equal(bits(first[1]), bits(second[1]))


@gpu
@pytest.mark.parametrize("n", [0, 1, 37, 700])
def test_rows_past_the_live_count_are_neither_read_nor_given_a_gradient(n):
    capacity, classes = 1000, 47
    logits, labels = batch(capacity, classes, seed=5)
    labels[n:] = -7  # never read: a read would make the loss NaN
    overflow = sampling.new_overflow(DEV)
    loss, grad = loss_and_grad(logits, labels, live(n), overflow)
    assert overflow.tolist() == [0, 0]
    assert not grad[n:].any()
    if n == 0:
        assert torch.isnan(loss)  # the mean of no rows, as F.cross_entropy gives it
        return
    assert_close_to_torch((loss, grad[:n]), reference(logits[:n], labels[:n]), n)
    # padding changes no bit of what the live rows get (warps take rows by index alone)
    exact = loss_and_grad(logits[:n], labels[:n], live(n))
    assert torch.equal(bits(loss), bits(exact[0])) and torch.equal(bits(grad[:n]), bits(exact[1]))


@gpu
def test_a_live_count_above_the_rows_raises_the_overflow_record_and_is_clamped():
    logits, labels = batch(64, 10)
    overflow = sampling.new_overflow(DEV)
    loss, grad = loss_and_grad(logits, labels, live(80), overflow)
    assert overflow.tolist() == [1, 80]
    assert_close_to_torch((loss, grad), reference(logits, labels), 64)


@gpu
def test_a_label_out_of_range_makes_the_loss_nan():
    logits, labels = batch(100, 10)
    labels[17] = 10
    loss, grad = loss_and_grad(logits, labels)
    assert torch.isnan(loss) and torch.isfinite(grad).all()


@gpu
def test_a_captured_loss_replays_over_new_inputs_and_live_counts():
    capacity, classes = 1024, 47
    graph, x, y, n, loss, grad = captured_loss(capacity, classes)
    for seed, rows in [(1, capacity), (2, 500), (3, 1), (4, capacity)]:
        logits, labels = batch(capacity, classes, seed=seed)
        with torch.no_grad():
            x.copy_(logits)
        y.copy_(labels)
        n.fill_(rows)
        graph.replay()
        eager = loss_and_grad(logits, labels, live(rows))
        assert torch.equal(bits(loss), bits(eager[0])) and torch.equal(bits(grad), bits(eager[1]))
        assert_close_to_torch((loss, grad[:rows]), reference(logits[:rows], labels[:rows]), rows)


@gpu
@pytest.mark.parametrize("n", [1_000, 1_031, 5_000, None])
def test_a_large_capacity_with_a_batch_or_every_row_live(n):
    """An envelope-sized buffer (200,003 rows, so the zero fill has a scalar head or tail around its float4
    stores) with a batch of ~1,000 live rows (fewer than the grid's warps), 5,000 (more), or every row
    (about 196 rows a warp)."""
    capacity, classes = 200_003, 47
    logits, labels = batch(capacity, classes, seed=11)
    overflow = sampling.new_overflow(DEV)
    if n is None:
        loss, grad = loss_and_grad(logits, labels)
        assert_close_to_torch((loss, grad), reference(logits, labels), capacity)
        counted = loss_and_grad(logits, labels, live(capacity), overflow)
        assert overflow.tolist() == [0, 0]
        assert torch.equal(bits(loss), bits(counted[0])) and torch.equal(bits(grad), bits(counted[1]))
        return
    labels[n:] = -7  # never read: a read would make the loss NaN
    loss, grad = loss_and_grad(logits, labels, live(n), overflow)
    assert overflow.tolist() == [0, 0]
    assert not grad[n:].any()
    assert_close_to_torch((loss, grad[:n]), reference(logits[:n], labels[:n]), n)
    exact = loss_and_grad(logits[:n], labels[:n], live(n))
    assert torch.equal(bits(loss), bits(exact[0])) and torch.equal(bits(grad[:n]), bits(exact[1]))


@gpu
def test_the_arrival_counter_is_back_at_zero_after_every_launch_and_replay():
    """The last block to finish sets the counter of finished blocks back to zero. Left anywhere else, the next
    launch would have no last block and write no loss: two launches in a row with no synchronisation between
    them, and a captured loss replayed three times over new batches, each give the right loss."""
    capacity, classes = 4096, 47
    first, second = batch(capacity, classes, seed=21), batch(capacity, classes, seed=22)
    got_first = loss_and_grad(*first, live(3000))
    got_second = loss_and_grad(*second, live(capacity))
    assert_close_to_torch((got_first[0], got_first[1][:3000]), reference(first[0][:3000], first[1][:3000]), 3000)
    assert_close_to_torch(got_second, reference(*second), capacity)
    _, blocks_done = loss_module._SCRATCH[first[0].device]
    assert blocks_done.tolist() == [0]

    graph, x, y, n, loss, grad = captured_loss(capacity, classes)
    for seed, rows in [(23, capacity), (24, 1000), (25, 2049)]:
        logits, labels = batch(capacity, classes, seed=seed)
        with torch.no_grad():
            x.copy_(logits)
        y.copy_(labels)
        n.fill_(rows)
        loss.detach().fill_(float("nan"))  # what a replay that wrote no loss would leave
        graph.replay()
        assert_close_to_torch((loss, grad[:rows]), reference(logits[:rows], labels[:rows]), rows)
        assert not grad[rows:].any()
        assert blocks_done.tolist() == [0]
    again = loss_and_grad(*first, live(3000))  # and an eager launch after the replays
    assert torch.equal(bits(again[0]), bits(got_first[0])) and torch.equal(bits(again[1]), bits(got_first[1]))


@gpu
@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_other_dtypes_take_torchs_loss(dtype):
    logits, labels = batch(200, 47)
    logits = logits.to(dtype)
    got, want = loss_and_grad(logits, labels), reference(logits, labels)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])


def test_other_dtypes_take_torchs_loss_on_the_cpu_too():
    logits, labels = batch(20, 5, device="cpu")
    logits = logits.double()
    assert torch.equal(cross_entropy(logits, labels), F.cross_entropy(logits, labels))


def test_the_scratch_is_made_once_per_device_and_never_inside_a_capture(monkeypatch):
    """The blocks' partial sums and the arrival counter are allocated and zeroed on a device's first call and
    reused by every later one; a first call inside a CUDA Graph capture is an error, not an allocation there."""
    monkeypatch.setattr(loss_module, "_SCRATCH", {})
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: True)
    with pytest.raises(ZeroGNNError, match="first call on a device must come before CUDA Graph capture"):
        loss_module._scratch(torch.device("cuda", 0))
    assert not loss_module._SCRATCH
    block_loss, blocks_done = scratch = loss_module._scratch(torch.device("cpu"))
    assert loss_module._scratch(torch.device("cpu")) is scratch
    assert block_loss.dtype == torch.float32 and block_loss.shape == (CE_BLOCKS,) and not block_loss.any()
    assert blocks_done.dtype == torch.int32 and blocks_done.tolist() == [0]


def test_shapes_and_the_live_count_are_checked():
    logits, labels = batch(20, 5, device="cpu")
    with pytest.raises(ZeroGNNError, match=r"logits \[rows, classes\] and one label per row; got logits \(20, 5\) "
                                           r"and labels \(19,\)"):
        cross_entropy(logits, labels[:19])
    with pytest.raises(ZeroGNNError, match="logits \\(100,\\)"):
        cross_entropy(logits.view(-1), labels)
    with pytest.raises(ZeroGNNError, match="n_rows is an int32 \\[1\\] tensor, got torch.int64"):
        cross_entropy(logits, labels, torch.tensor([20]))
    with pytest.raises(ZeroGNNError, match="needs a CUDA .* tensor, got a torch.float32 tensor on cpu"):
        cross_entropy(logits, labels)  # fp32 takes the kernel, which runs on a GPU only


def _through_a_layer(logits_in, labels, run_backward):
    """Gradients of a weight under the loss, with ``run_backward(loss)`` doing the backward."""
    w = torch.eye(logits_in.shape[1], device=logits_in.device).requires_grad_(True)
    loss = cross_entropy(logits_in @ w, labels)
    run_backward(loss)
    return loss.detach(), w.grad


@gpu
@pytest.mark.parametrize("rows, classes", [(1, 7), (1024, 47), (70_000, 172)])
def test_backward_gives_the_same_bits_as_loss_backward(rows, classes):
    logits, labels = batch(rows, classes, seed=3)
    want = _through_a_layer(logits, labels, lambda loss: loss.backward())
    got = _through_a_layer(logits, labels, loss_module.backward)
    assert torch.equal(bits(got[0]), bits(want[0])) and torch.equal(bits(got[1]), bits(want[1]))


@gpu
def test_backward_launches_no_fill_and_no_scale():
    logits, labels = batch(1024, 47, seed=4)
    for run_backward in (loss_module.backward, loss_module.backward):  # the first call warms up
        w = torch.eye(47, device=DEV).requires_grad_(True)
        loss = cross_entropy(logits @ w, labels)
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            run_backward(loss)
            torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    assert names and not [n for n in names if "Fill" in n or "Mul" in n], names


def _fake_launch(logits, labels, n_rows, overflow, want_grad):
    """The kernel's results computed by PyTorch, so that backward's routing runs on the CPU."""
    with torch.enable_grad():  # a Function's forward runs without it
        x = logits.detach().requires_grad_(True)
        loss = F.cross_entropy(x, labels)
        loss.backward()
    return loss.detach(), x.grad if want_grad else None


def test_backward_sends_the_stashed_gradient_to_the_logits(monkeypatch):
    monkeypatch.setattr(loss_module, "_launch", _fake_launch)
    logits, labels = batch(64, 10, seed=5, device="cpu")
    w = torch.randn(10, 10, generator=torch.Generator().manual_seed(6))
    grads = []
    for run_backward in (lambda loss: loss.backward(), loss_module.backward):
        weight = w.clone().requires_grad_(True)
        loss = loss_module._CrossEntropy.apply(logits @ weight, labels, None, None)
        run_backward(loss)
        grads.append(weight.grad)
    torch.testing.assert_close(grads[1], grads[0], rtol=0, atol=0)
    with pytest.raises(ZeroGNNError, match="has run already"):
        loss_module.backward(loss)


def test_backward_of_any_other_loss_is_its_own():
    x = torch.randn(5, 3, requires_grad=True)
    loss_module.backward(F.cross_entropy(x, torch.zeros(5, dtype=torch.int64)))
    assert x.grad is not None and x.grad.shape == (5, 3)


def test_backward_imports_no_symbolic_shapes():
    """``torch.autograd.backward`` with a gradient given checks its shape through torch's symbolic shapes,
    whose import (sympy) costs seconds once per process, inside every CUDA variant's setup; the stashed
    gradient needs no such check. In a fresh interpreter, as in a run."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import sys, torch
        from zerognn.cuda import loss as loss_module
        from tests.cuda.test_cross_entropy import _fake_launch, batch
        loss_module._launch = _fake_launch
        logits, labels = batch(64, 10, device="cpu")
        weight = torch.randn(10, 10).requires_grad_(True)
        loss_module.backward(loss_module._CrossEntropy.apply(logits @ weight, labels, None, None))
        assert weight.grad is not None and weight.grad.abs().sum() > 0
        print(sorted(m for m in ("sympy", "torch.fx.experimental.symbolic_shapes") if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
