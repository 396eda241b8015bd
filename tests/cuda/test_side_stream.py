"""zerognn.cuda.side_stream: the side callable runs on the side stream only while a graph is captured
(after the thread's warm-up), in order on the current stream otherwise, and the results are the same."""

import pytest
import torch

from zerognn.cuda import side_stream

DEV = "cuda"


def test_off_a_gpu_the_two_run_in_order():
    calls = []
    result = side_stream.concurrently(torch.device("cpu"), lambda: calls.append("main") or 1,
                                      lambda: calls.append("side") or 2)
    assert result == (1, 2) and calls == ["main", "side"]


def _work(a, b, out_main, out_side, streams):
    def main():
        streams.append(("main", torch.cuda.current_stream()))
        torch.mm(a, b, out=out_main)

    def side():
        streams.append(("side", torch.cuda.current_stream()))
        torch.mm(b, a, out=out_side)
    side_stream.concurrently(torch.device(DEV), main, side)


@pytest.mark.gpu
def test_a_captured_graph_runs_the_side_on_its_own_stream_with_the_same_results():
    a, b = torch.randn(512, 512, device=DEV), torch.randn(512, 512, device=DEV)
    out_main, out_side = torch.empty_like(a), torch.empty_like(a)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        eager = []
        _work(a, b, out_main, out_side, eager)  # eager: in order on the current stream, and the thread's warm-up
        assert [s for _, s in eager] == [stream, stream]
        graph, captured = torch.cuda.CUDAGraph(), []
        with torch.cuda.graph(graph, stream=stream):
            _work(a, b, out_main, out_side, captured)
        assert dict(captured)["side"] == side_stream.stream(torch.device(DEV))
        assert dict(captured)["main"] != dict(captured)["side"]
        with torch.cuda.graph(torch.cuda.CUDAGraph(), stream=stream), side_stream.serial():
            serial = []
            _work(a, b, out_main, out_side, serial)
        assert dict(serial)["side"] == dict(serial)["main"]  # serial(): no fork, also while capturing
    out_main.zero_(), out_side.zero_()
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out_main, a @ b)
    torch.testing.assert_close(out_side, b @ a)
