"""``wholegraph``: the training step with WholeGraph's GPU neighbour sampler (RAPIDS ``pylibwholegraph``).

The graph's CSR lives in WholeMemory tensors (one process, one GPU: a communicator of one rank), and each
hop is WholeGraph's own ``wholegraph_ops.unweighted_sample_without_replacement`` (at most ``fanout``
distinct neighbours per destination, its own RNG, keyed per hop from the run's seed, epoch and step) followed
by ``graph_ops.append_unique``, which keeps the destinations as the prefix of the next frontier and maps
each sampled neighbour to its place in it: the same semantics as this suite's sampler, drawn by another
implementation, so the samples are not the suite's (``sample_identical: false``) and the tests compare
them statistically. The model, aggregation ops (PyTorch's, as in ``torch-eager``), features, loss and
optimizer are the suite's, so every model runs.

Host-mediated, as WholeGraph's API requires: each sampling call reads its output size on the host (a
stream synchronisation inside the library), three per step.

Written against pylibwholegraph 25.x/26.x (``init_torch_env_and_create_wm_comm``, which also starts a
one-rank ``torch.distributed`` NCCL group; ``finalize`` at exit ends both); its GPU tests ran on an H200
with pylibwholegraph-cu13 26.10.
"""

from __future__ import annotations

import atexit
import os
from typing import Any

import torch
import torch.nn.functional as F

from ..errors import ZeroGNNError
from ..models import TORCH_OPS
from ..sampling import Hop, hop_key
from ..variants import Variant, phase, register

try:
    # libwholegraph.so needs librmm.so loaded first, which its loader leaves to libraft-cu13's; load it here so
    # that a host without libraft (never used otherwise: none of its symbols is needed) runs the peer too.
    import librmm

    librmm.load_library()
    import pylibwholegraph
    import pylibwholegraph.torch as wgth
    from pylibwholegraph.torch import graph_ops, wholegraph_ops
except ImportError as exc:  # one line, not a traceback, where WholeGraph is not installed
    raise ZeroGNNError(f"the wholegraph peer needs pylibwholegraph ({exc.msg}); install it with pip install "
                       f"'zerognn[wholegraph]' (Linux x86-64 with CUDA 13)") from exc

_KEY_MASK = 2**64 - 1
_state: dict[str, Any] = {}


def _communicator():
    """WholeMemory's communicator of this one process (started once; finalized at exit)."""
    if "comm" not in _state:
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            raise ZeroGNNError("the wholegraph peer starts its own one-rank process group and cannot join a "
                               "data-parallel run; run it with --gpus 1")
        os.environ.setdefault("MASTER_ADDR", "localhost")
        os.environ.setdefault("MASTER_PORT", "29517")
        threads = torch.get_num_threads()  # the library sets one thread; the run's setting stands
        _state["comm"], _ = wgth.init_torch_env_and_create_wm_comm(0, 1, torch.cuda.current_device(), 1)
        torch.set_num_threads(threads)
        atexit.register(wgth.finalize)
    return _state["comm"]


def _wholememory(comm, values: torch.Tensor):
    """A WholeMemory tensor on the GPU holding ``values`` (1-D)."""
    kind = "continuous" if comm.support_type_location("continuous", "cuda") else "chunked"
    tensor = wgth.create_wholememory_tensor(comm, kind, "cuda", [values.numel()], values.dtype, None)
    local, offset = tensor.get_local_tensor()  # with one rank, the whole tensor
    local.copy_(values[offset: offset + local.numel()])
    torch.cuda.synchronize()
    comm.barrier()
    return tensor, kind


@register
class WholeGraph(Variant):
    name = "wholegraph"
    description = "WholeGraph's GPU sampler (CSR in WholeMemory, its own RNG), the suite's model (a peer)"
    requires_cuda = True

    def setup(self) -> None:
        graph, comm = self.ctx.dataset.graph, _communicator()
        self._rowptr, self._memory_type = _wholememory(comm, graph.rowptr.to(torch.int64))
        self._col, _ = _wholememory(comm, graph.col)
        self._id_dtype = graph.col.dtype  # seeds, frontiers and neighbours share it (append_unique needs that)

    def sample(self, seeds: torch.Tensor, epoch: int, step: int) -> tuple[list[torch.Tensor], list[Hop]]:
        """Frontiers (seeds first, each the next one's prefix) and hops, as the reference sampler returns them."""
        frontiers, hops = [seeds.to(self._id_dtype)], []
        for h, fanout in enumerate(self.ctx.fanouts):
            frontier = frontiers[-1]
            _, neighbours, dst = wholegraph_ops.unweighted_sample_without_replacement(
                self._rowptr.wmb_tensor, self._col.wmb_tensor, frontier, fanout,
                random_seed=hop_key(self.ctx.seed, epoch, step, h) & _KEY_MASK, need_center_local_output=True)
            following, src = graph_ops.append_unique(frontier, neighbours, need_neighbor_raw_to_unique=True)
            hops.append(Hop(frontier.numel(), following.numel(), src.long(), dst.long()))
            frontiers.append(following)
        return frontiers, hops

    def step(self, epoch: int, step: int, global_step: int) -> None:
        ctx, ds = self.ctx, self.ctx.dataset
        seeds = self.seeds(epoch, step)
        with phase("sample"):
            frontiers, hops = self.sample(seeds, epoch, step)
        with phase("gather"):
            x = ds.features[frontiers[-1].long()]
            y = ds.labels[seeds]
        with phase("forward"):
            loss = F.cross_entropy(ctx.model(x, hops[::-1], TORCH_OPS), y)
        self.backward_and_update(loss, global_step)

    def info(self) -> dict[str, Any]:
        return {"peer": f"pylibwholegraph {getattr(pylibwholegraph, '__version__', '(version unknown)')}",
                "sample_identical": False,
                "memory_type": getattr(self, "_memory_type", None)}
