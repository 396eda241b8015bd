"""``pyg`` and ``pyg-compile``: the training step with PyG's own layer, as PyG users write it.

Each SAGE layer is ``torch_geometric.nn.SAGEConv(aggr="mean")`` — PyG's message passing and mean
aggregation — run on the block as PyG's neighbour loader hands it over: bipartite, ``(x_src, x_dst)`` with
the destinations first among the sources, and an ``edge_index`` of [source; destination] local ids.
PyG's own sampler needs ``pyg-lib`` or ``torch-sparse``, so the blocks are this suite's: on a GPU its CUDA
sampler's as host-mediated runs it (each hop's size read back by the host, as PyG's loaders hand over
exactly sized blocks), turned into ``edge_index``, so that the step's time is PyG's layers beside a fast
sampler rather than the reference sampler's PyTorch ops; on the CPU the reference sampler's. Either gives
the samples of every other variant (``sample_identical``); the features, labels, loss and optimizer are
the suite's too.

The layer computes what the suite's SAGE computes, ``lin_l(mean of neighbours) + lin_r(self)`` with the
bias in ``lin_l``, so it runs on the suite's parameters rather than its own: each call hands SAGEConv the
two halves of the suite's ``[W_neigh | W_self]`` weight and its bias (``torch.func.functional_call``), and
the gradients reach the suite's parameters, which the run's optimizer updates and its evaluation reads.
At ``bfloat16`` the layers run under ``torch.autocast`` (PyG's linears are plain ``F.linear``); at ``tf32``
the run's matmul switch applies as to every variant. SAGE only: PyG's ``GCNConv`` normalises by both
degrees and adds self loops on a square graph, and its ``GATConv`` on a bipartite block takes no self
loops, so neither computes this suite's GCN or GAT layer.

``pyg-compile`` compiles the model and loss with ``torch.compile(dynamic=True)`` in the default mode, as
PyG's compile guide does, and records what compiling cost (``zerognn.variants.compile_stats``).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ..cuda.aggregate import as_hop
from ..errors import ZeroGNNError
from ..precision import gemm_dtype
from ..sampling import Hop
from ..variants import register
from ..variants.compile_stats import CompileStats, compile_here
from ..variants.host_mediated import HostMediated
from ..variants.torch_eager import TorchEager

try:
    import torch_geometric
    from torch_geometric.nn import SAGEConv
except ImportError as exc:  # one line, not a traceback, where PyG is not installed
    raise ZeroGNNError(f"the pyg peers need torch-geometric ({exc.msg}); install it with "
                       f"pip install 'zerognn[peers]'") from exc


class PyGSAGE:
    """The suite's SAGE model (``ctx.model``) run layer by layer through PyG's ``SAGEConv``."""

    def __init__(self, model: torch.nn.Module, device: torch.device):
        self.model = model
        widths = model.widths
        self.convs = [SAGEConv(a, b, aggr="mean").to(device) for a, b in zip(widths[:-1], widths[1:])]
        for conv in self.convs:
            conv.requires_grad_(False)  # its own parameters are placeholders: every call passes the suite's

    def layer(self, i: int, x: torch.Tensor, hop) -> torch.Tensor:
        """Layer ``i`` on one block (a reference sampler ``Hop``), before its activation."""
        lin, conv = self.model.lins[i], self.convs[i]
        width = lin.in_features // 2
        parameters = {"lin_l.weight": lin.weight[:, :width], "lin_l.bias": lin.bias,
                      "lin_r.weight": lin.weight[:, width:]}
        edge_index = torch.stack([hop.edge_src, hop.edge_dst])
        # the sizes come from (x_src, x_dst) themselves, as PyG's loaders leave them
        return torch.func.functional_call(conv, parameters, ((x, x[: hop.num_dst]), edge_index))

    def __call__(self, x: torch.Tensor, blocks: list) -> torch.Tensor:
        last = len(self.convs) - 1
        for i, hop in enumerate(blocks):
            x = self.layer(i, x, hop)
            if i != last:
                x = x.relu()
        return x


@register
class PyG(TorchEager):
    """``torch-eager``'s step (the gather, the optimizer step) with PyG's layers as its model and, on a GPU,
    host-mediated's CUDA sampler: ``sample`` and ``forward_loss`` differ."""

    name = "pyg"
    description = ("PyG's SAGEConv over the suite's blocks (on a GPU its CUDA sampler's, host-mediated), eager "
                   "(a peer: torch-geometric)")
    models = ("sage",)

    def setup(self) -> None:
        self.net = PyGSAGE(self.ctx.model, self.ctx.device)
        self._sampler = None
        if self.ctx.device.type == "cuda":  # host-mediated's sampler, through its public ``sample``
            self._sampler = HostMediated(self.ctx)
            self._sampler.setup()

    def sample(self, seeds: torch.Tensor, epoch: int, step: int) -> tuple[torch.Tensor, list[Hop]]:
        if self._sampler is None:
            return super().sample(seeds, epoch, step)
        frontier, _, blocks = self._sampler.sample(seeds, epoch, step)
        return frontier.long(), [as_hop(block) for block in blocks]

    def forward_loss(self, x: torch.Tensor, blocks: list, y: torch.Tensor) -> torch.Tensor:
        dtype = gemm_dtype()
        with torch.autocast(x.device.type, dtype=dtype or torch.bfloat16, enabled=dtype is not None):
            logits = self.net(x, blocks)
        return F.cross_entropy(logits.float(), y)

    def info(self) -> dict[str, Any]:
        return {"peer": f"torch_geometric {torch_geometric.__version__}", "sample_identical": True}


@register
class PyGCompile(PyG):
    name = "pyg-compile"
    description = "pyg with model and loss under torch.compile(dynamic=True), default mode (a peer)"
    requires_cuda = True  # like torch-compile: the step runs on the CPU too (the tests check it), unplanned there

    def setup(self) -> None:
        super().setup()
        self._stats = CompileStats()
        self._compiled = compile_here(super().forward_loss)

    def forward_loss(self, x: torch.Tensor, blocks: list, y: torch.Tensor) -> torch.Tensor:
        return self._compiled(x, blocks, y)

    def info(self) -> dict[str, Any]:
        return super().info() | self._stats.info(PyG.forward_loss)
