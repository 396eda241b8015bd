"""Shared fixtures: small hand-built graphs, the `gpu` marker's skip, a tiny dataset on disk."""

from __future__ import annotations

import pytest
import torch

from zerognn.graph import CSRGraph


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (run `pytest -m gpu` on a GPU machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def random_graph(num_nodes: int, num_edges: int, seed: int, skew: bool = False) -> CSRGraph:
    """A symmetric random graph; with ``skew`` a few hubs get most edges (power-law-ish degrees)."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(0, num_nodes, (num_edges,), generator=g)
    if skew:
        hubs = torch.randint(0, max(1, num_nodes // 50), (num_edges,), generator=g)
        dst = torch.where(torch.rand(num_edges, generator=g) < 0.7, hubs,
                          torch.randint(0, num_nodes, (num_edges,), generator=g))
    else:
        dst = torch.randint(0, num_nodes, (num_edges,), generator=g)
    return CSRGraph.from_edges(torch.cat([src, dst]), torch.cat([dst, src]), num_nodes)


@pytest.fixture(scope="session")
def tiny_dataset_dir(tmp_path_factory):
    from zerognn.datasets import make_dataset

    out = tmp_path_factory.mktemp("data") / "tiny"
    make_dataset("tiny", out, scale=1.0, seed=0, device="cpu")
    return out
