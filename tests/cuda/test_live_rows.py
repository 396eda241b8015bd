"""Dense work over live rows through a CUDA Graph SWITCH node (zerognn.cuda.live_rows): the bucket plan on the
CPU; on the GPU, that each replay runs exactly the bucket its live count picks, and that a captured dense layer
gives the GEMMs' results over the live rows, forward and backward."""

import pytest
import torch

from zerognn.cuda import live_rows
from zerognn.cuda.capture import capturing
from zerognn.cuda.live_rows import LiveRows, RowBuckets
from zerognn.errors import ZeroGNNError
from zerognn.fixed_launch.envelope import Envelope
from zerognn.models.dense import linear

DEV = "cuda"


def test_buckets_run_evenly_from_the_low_edge_to_the_capacity():
    b = RowBuckets.between(100, 170, count=8)
    assert b.edges == (100, 110, 120, 130, 140, 150, 160, 170)
    assert [b.bucket(n) for n in (0, 1, 100, 101, 110, 111, 169, 170, 171, 10_000)] == [0, 0, 0, 1, 1, 2, 7, 7, 7, 7]
    for n in range(0, 200):  # the smallest bucket that holds n rows, the capacity when none does
        edge = b.edges[b.bucket(n)]
        assert edge >= min(n, 170) and (b.bucket(n) == 0 or b.edges[b.bucket(n) - 1] < n)
    uneven = RowBuckets.between(10, 17, count=8)  # steps round up; the last edge is the capacity
    assert uneven.edges[-1] == 17 and list(uneven.edges) == sorted(uneven.edges)
    assert RowBuckets.between(50, 50).count == 1 and RowBuckets.between(80, 50).edges == (50,)


def test_an_envelope_buckets_each_frontier_from_its_smallest_calibrated_size():
    calibrated = Envelope(64, (5, 5), (64, 400, 2000), "calibrated",
                          {"calibration_min": [300, 1500], "calibration_max": [340, 1700]})
    assert calibrated.row_buckets(0).count == 1  # the seeds: always the batch
    assert calibrated.row_buckets(1).edges[0] == 300 and calibrated.row_buckets(1).edges[-1] == 400
    assert calibrated.row_buckets(2).edges[0] == 1500 and calibrated.row_buckets(2).edges[-1] == 2000
    two = calibrated.row_buckets(2)
    assert two.edges[two.bucket(1600)] == 1644
    worst = Envelope(64, (5, 5), (64, 384, 2304), "worst-case")
    assert worst.row_buckets(2).edges == tuple(288 * k for k in range(1, 9))


def _capture(fn):
    graph, stream = torch.cuda.CUDAGraph(), torch.cuda.Stream()
    with torch.cuda.stream(stream):
        fn()  # the eager pass: allocates the body stream's cuBLAS workspace
    torch.cuda.synchronize()
    with capturing(graph, stream):
        fn()
    torch.cuda.synchronize()
    return graph


@pytest.mark.gpu
def test_each_replay_runs_the_bucket_its_live_count_picks_and_no_other():
    buckets = RowBuckets.between(40, 96, count=8)
    count = torch.tensor([96], dtype=torch.int32, device=DEV)
    x, w = torch.randn(96, 32, device=DEV), torch.randn(16, 32, device=DEV)
    out = torch.empty(96, 16, device=DEV)

    def step():
        live_rows.run_over_live_rows(LiveRows(count, buckets), lambda n: torch.mm(x[:n], w.t(), out=out[:n]))

    graph = _capture(step)
    reference = x @ w.t()
    for n in (1, 39, 40, 41, 48, 49, 70, 95, 96, 97, 500):
        count.fill_(n)
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        edge = buckets.edges[buckets.bucket(n)]
        torch.testing.assert_close(out[:edge], reference[:edge])
        assert torch.isnan(out[edge:]).all(), f"live {n}: rows past bucket edge {edge} were written"


@pytest.mark.gpu
@pytest.mark.parametrize("relu", [True, False])
def test_a_captured_dense_layer_over_live_rows_gives_the_gradients_of_every_row(relu):
    """Padded rows hold zeros in the input and the output's gradient, as the aggregations leave them: the
    bucketed GEMMs then give the same output rows and the same weight and input gradients as GEMMs over all."""
    torch.manual_seed(0)
    capacity, live = 200, 137
    buckets = RowBuckets.between(100, capacity, count=4)
    count = torch.tensor([live], dtype=torch.int32, device=DEV)
    x = torch.zeros(capacity, 24, device=DEV)
    x[:live] = torch.randn(live, 24, device=DEV)
    x.requires_grad_(True)
    w = torch.randn(12, 24, device=DEV, requires_grad=True)
    b = torch.randn(12, device=DEV, requires_grad=True)
    g = torch.zeros(capacity, 12, device=DEV)
    g[:live] = torch.randn(live, 12, device=DEV)
    result = {}

    def step():
        for t in (x, w, b):
            t.grad = None
        out = linear(live_rows.attach(x.view_as(x), LiveRows(count, buckets)), w, b, relu=relu)
        out.backward(g)
        result.update(out=out, gx=x.grad, gw=w.grad, gb=b.grad)

    graph = _capture(step)
    graph.replay()
    torch.cuda.synchronize()
    expected = torch.addmm(b, x, w.t())
    expected = expected.relu() if relu else expected
    torch.testing.assert_close(result["out"][:live], expected[:live].detach())
    grad = g * (expected > 0) if relu else g
    torch.testing.assert_close(result["gw"], grad.t() @ x.detach(), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(result["gx"][:live], (grad @ w.detach())[:live], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(result["gb"], grad.sum(0), rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
def test_a_body_that_allocates_is_refused_with_what_to_do():
    buckets = RowBuckets.between(40, 96, count=2)
    count = torch.tensor([50], dtype=torch.int32, device=DEV)
    x = torch.randn(96, 8, device=DEV)

    def step():
        live_rows.run_over_live_rows(LiveRows(count, buckets), lambda n: x[:n] * 2)  # a new tensor: allocates

    with pytest.raises(ZeroGNNError, match=r"allocated memory inside a CUDA Graph conditional body.*out="):
        _capture(step)


@pytest.mark.gpu
def test_work_too_small_to_pay_for_a_switch_runs_over_every_row_and_large_work_switches():
    """Keyed work is judged in the pass before capture, timed both ways with its real body; a switch is
    captured only where it saved at least MIN_SAVING_US, and the verdict is there to read."""
    count = torch.tensor([10], dtype=torch.int32, device=DEV)
    results, judge = {}, live_rows.Judge()
    for name, rows, width in (("small", 96, 16), ("large", 65536, 512)):
        # 10 live rows: the first bucket, 1/8 of the rows
        buckets = RowBuckets.between(rows // 8, rows, count=8, judge=judge)
        x, w = torch.randn(rows, width, device=DEV), torch.randn(width, width, device=DEV)
        out = torch.empty(rows, width, device=DEV)

        def step(x=x, w=w, out=out, buckets=buckets, name=name):
            live_rows.run_over_live_rows(LiveRows(count, buckets), lambda n: torch.mm(x[:n], w, out=out[:n]),
                                         key=("test", name))

        graph = _capture(step)
        torch.testing.assert_close(out, x @ w)  # the pass before capture leaves every row computed
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        results[name] = int(torch.isnan(out[:, 0]).sum())
    assert judge.record()["graphs_captured"] == 4
    verdicts = {v["work"]: v for v in judge.record()["verdicts"]}
    assert not verdicts["test small"]["switches"] and verdicts["test large"]["switches"]
    assert verdicts["test large"]["live_rows"] == 10 and verdicts["test large"]["capacity"] == 65536
    assert verdicts["test large"]["switched_us"] + live_rows.MIN_SAVING_US < verdicts["test large"]["capacity_us"]
    assert results["small"] == 0  # no switch: every row written
    assert results["large"] == 65536 - 65536 // 8  # the first bucket's rows only
