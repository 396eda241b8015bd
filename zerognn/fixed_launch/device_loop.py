"""A CUDA Graph that runs a captured step graph in a device-side loop (``kernels/device_loop.cu``).

``DeviceLoop(step_graph, ...)`` builds, with the CUDA runtime's graph API (cuda-bindings), the graph

    loop_begin  ->  WHILE(handle) { child: the step graph  ->  loop_continue }

and instantiates it once. ``loop_begin`` reads the committed-step counter and the number of steps the
host asked for (a pinned host word), and sets the loop's bound; ``loop_continue`` keeps the loop going
while the bound is not reached and no step has been rolled back. One ``launch`` is one host API call for
any number of steps. The step graph is
cloned into the loop's body (``cudaGraphAddChildGraphNode``): its kernels keep the buffers the capture
gave them, so the PyTorch graph (and its memory pool) must outlive the loop.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from ..cuda.graph_api import check as _check
from ..cuda.graph_api import runtime as _runtime
from ..cuda.launch import launch


def _nodes(graph) -> list:
    rt = _runtime()
    _, count = _check(rt.cudaGraphGetNodes(graph, 0))
    if not count:
        return []
    nodes, _ = _check(rt.cudaGraphGetNodes(graph, count))
    return list(nodes)


def _capture_into(graph, dependencies: list, stream: torch.cuda.Stream, body: Callable[[], None]) -> list:
    """Run ``body`` (kernel launches on ``stream``) captured into ``graph`` after ``dependencies``; the new nodes."""
    rt = _runtime()
    before = {int(n) for n in _nodes(graph)}
    handle = rt.cudaStream_t(stream.cuda_stream)
    _check(rt.cudaStreamBeginCaptureToGraph(handle, graph, dependencies or None, None, len(dependencies),
                                            rt.cudaStreamCaptureMode.cudaStreamCaptureModeRelaxed))
    try:
        with torch.cuda.stream(stream):
            body()
    finally:
        _check(rt.cudaStreamEndCapture(handle))
    return [n for n in _nodes(graph) if int(n) not in before]


def launch_loop_begin(handle: np.uint64, state: torch.Tensor, request: torch.Tensor, bounds: torch.Tensor,
                      stamps: torch.Tensor) -> None:
    launch("loop_begin", 1, handle, state, request, bounds, stamps, np.int64(stamps.numel()), threads=1)


def launch_loop_continue(handle: np.uint64, state: torch.Tensor, bounds: torch.Tensor, stamps: torch.Tensor) -> None:
    launch("loop_continue", 1, handle, state, bounds, stamps, np.int64(stamps.numel()), threads=1)


class DeviceLoop:
    """The step graph looped on the device (see the module doc): ``launch(steps)`` trains that many steps."""

    def __init__(self, step_graph: int, state: torch.Tensor, bounds: torch.Tensor, stamps: torch.Tensor,
                 stream: torch.cuda.Stream) -> None:
        rt = _runtime()
        # read by loop_begin when a launch starts; written only while no launch is in flight
        self._request = torch.zeros(1, dtype=torch.int64, pin_memory=True)
        self._request_view = self._request.numpy()
        self._graph = _check(rt.cudaGraphCreate(0))
        self._exec = None
        try:
            handle = _check(rt.cudaGraphConditionalHandleCreate(
                self._graph, 0, rt.cudaGraphConditionalHandleFlags.cudaGraphCondAssignDefault))
            handle_arg = np.uint64(int(handle))
            begin = _capture_into(self._graph, [], stream,
                                  lambda: launch_loop_begin(handle_arg, state, self._request, bounds, stamps))
            params = rt.cudaGraphNodeParams()
            params.type = rt.cudaGraphNodeType.cudaGraphNodeTypeConditional
            params.conditional.handle = handle
            params.conditional.type = rt.cudaGraphConditionalNodeType.cudaGraphCondTypeWhile
            params.conditional.size = 1
            _check(rt.cudaGraphAddNode(self._graph, begin, None, len(begin), params))
            body = params.conditional.phGraph_out[0]
            step = _check(rt.cudaGraphAddChildGraphNode(body, None, 0, rt.cudaGraph_t(step_graph)))
            _capture_into(body, [step], stream, lambda: launch_loop_continue(handle_arg, state, bounds, stamps))
            self._exec = _check(rt.cudaGraphInstantiate(self._graph, 0))
        except BaseException:
            self.close()
            raise

    def launch(self, steps: int, stream: torch.cuda.Stream) -> None:
        """Enqueue ``steps`` training steps on ``stream`` (one host API call). The previous launch must have
        ended: its loop_begin reads the same request."""
        rt = _runtime()
        self._request_view[0] = steps
        _check(rt.cudaGraphLaunch(self._exec, rt.cudaStream_t(stream.cuda_stream)))

    def close(self) -> None:
        """Destroy the instantiated and the built graph (the step graph is the caller's)."""
        rt = _runtime()
        if self._exec is not None:
            _check(rt.cudaGraphExecDestroy(self._exec))
            self._exec = None
        if self._graph is not None:
            _check(rt.cudaGraphDestroy(self._graph))
            self._graph = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
