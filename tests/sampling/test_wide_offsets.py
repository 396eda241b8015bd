"""Edge offsets past 2^31 (papers100M-like has 3.2 billion edges), without 3 billion edges on disk.

The graph's ``col`` is a sparse memory-mapped file of 2^31 + 170 entries: only the pages the test writes
take space, holes read as zeros. Node 1 is a hub of degree 2^31 - 16, so every later row starts past
2^31; the hub's Floyd picks land on positions the test computes from the integer specification and
writes values at. An offset truncated to 32 bits anywhere reads a hole (neighbour 0) or the wrong row.
"""

import os
from pathlib import Path

import numpy as np
import pytest
import torch

from zerognn import rng
from zerognn.datasets.rmat import _row_ranges, rmat_edges, shrink_npy
from zerognn.datasets.store import Dataset
from zerognn.datasets.validate import _check_rowptr
from zerognn.errors import ZeroGNNError
from zerognn.graph import CSRGraph
from zerognn.sampling import hop_key, sample_hop, sample_subgraph
from zerognn.train.loop import _check_fits

from .test_reference import floyd_spec

NUM_NODES = 64
HUB, HUB_DEGREE = 1, 2**31 - 16
SMALL_DEGREE = 3
FANOUT = 5
KEY = hop_key(7, 0, 3, 0)


def small_neighbours(v: int) -> list[int]:
    return [(v + k) % NUM_NODES for k in (1, 2, 3)]


def hub_positions() -> list[int]:
    return floyd_spec(rng.combine_int(KEY, HUB), HUB_DEGREE, FANOUT)


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    degrees = np.full(NUM_NODES, SMALL_DEGREE, dtype=np.int64)
    degrees[0], degrees[HUB] = 0, HUB_DEGREE
    rowptr = np.zeros(NUM_NODES + 1, dtype=np.int64)
    np.cumsum(degrees, out=rowptr[1:])
    path = tmp_path_factory.mktemp("wide") / "col.npy"
    col = np.lib.format.open_memmap(path, mode="w+", dtype=np.int32, shape=(int(rowptr[-1]),))
    for i, position in enumerate(hub_positions()):
        col[int(rowptr[HUB]) + position] = 10 + i
    for v in range(HUB + 1, NUM_NODES):
        col[rowptr[v]:rowptr[v + 1]] = small_neighbours(v)
    col.flush()
    del col
    return CSRGraph(torch.from_numpy(rowptr), torch.from_numpy(np.load(path, mmap_mode="c")))


def test_the_graph_really_passes_2_to_the_31(wide):
    assert wide.num_edges > 2**31 and int(wide.rowptr[HUB + 1]) > 2**31 - 32
    assert int(wide.rowptr[NUM_NODES]) - 2**31 == 170
    _check_rowptr(wide.rowptr.numpy(), wide.num_edges)


def test_the_reference_sampler_reads_rows_past_2_to_the_31(wide):
    frontier = torch.arange(HUB, NUM_NODES)
    dst, neighbours = sample_hop(wide, frontier, FANOUT, KEY)
    got: dict[int, list[int]] = {}
    for p, n in zip(dst.tolist(), neighbours.tolist()):
        got.setdefault(int(frontier[p]), []).append(n)
    assert got[HUB] == [10 + i for i in range(FANOUT)]
    for v in range(HUB + 1, NUM_NODES):
        assert got[v] == small_neighbours(v), v


def test_the_eager_sampler_walks_two_hops_across_the_boundary(wide):
    sub = sample_subgraph(wide, torch.tensor([HUB, 40, 63]), [FANOUT, 2], 7, 0, 3)
    hop0 = sub.edge_set(0)
    assert {(40, n) for n in small_neighbours(40)} <= hop0 and {(63, n) for n in small_neighbours(63)} <= hop0
    assert all(0 <= v < NUM_NODES for v in sub.frontiers[2].tolist())


def test_a_run_accepts_wide_offsets_and_rejects_a_degree_the_draw_cannot_take(wide):
    from zerognn.train import RunSpec

    spec = RunSpec(dataset="wide", model="sage", variant="torch-eager", batch_size=2, fanouts=[FANOUT])
    ids = torch.arange(2, 10)
    ds = Dataset("wide", wide, torch.empty(NUM_NODES, 4, device="meta"), torch.zeros(NUM_NODES, dtype=torch.int64),
                 ids, ids, ids, 2)
    _check_fits(spec, ds)
    rowptr = wide.rowptr.clone()
    rowptr[HUB + 1:] += 16  # the hub's degree becomes 2^31
    too_big = Dataset("wide", CSRGraph(rowptr, wide.col), ds.features, ds.labels, ids, ids, ids, 2)
    with pytest.raises(ZeroGNNError, match="degree 2147483648"):
        _check_fits(spec, too_big)


def test_csr_row_ranges_cut_past_2_to_the_31():
    raw_end = torch.tensor([2**30, 2**31 - 1, 2**31 + 5, 2**32 - 9, 2**32 + 7], dtype=torch.int64)
    assert _row_ranges(raw_end, 2**31) == [(0, 2), (2, 4), (4, 5)]


def test_shrinking_an_npy_file_past_2_to_the_31_rewrites_only_its_header(tmp_path):
    path = tmp_path / "col.npy"
    col = np.lib.format.open_memmap(path, mode="w+", dtype=np.int32, shape=(2**31 + 100,))
    col[2**31 + 7] = 42
    del col
    shrink_npy(path, 2**31 + 8)
    shrunk = np.load(path, mmap_mode="r")
    assert shrunk.shape == (2**31 + 8,) and int(shrunk[-1]) == 42


def test_rmat_ids_stay_in_range_at_the_largest_node_count():
    n = 2**31
    src, dst = rmat_edges(n, 3, 10**10, 10**10 + 4096, "cpu", communities=172, intra_prob=0.5)
    assert int(src.min()) >= 0 and int(dst.min()) >= 0 and int(src.max()) < n and int(dst.max()) < n


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_the_cuda_sampler_reads_rows_past_2_to_the_31(wide):
    from zerognn.cuda import sampling

    graph = wide.to("cuda")
    frontier = torch.arange(HUB, NUM_NODES, device="cuda")
    n = frontier.numel()
    overflow = sampling.new_overflow("cuda")
    key = torch.tensor([rng.as_signed(KEY)], dtype=torch.int64, device="cuda")
    nbr, counts = sampling.sample(graph, frontier, torch.tensor([n], dtype=torch.int32, device="cuda"), n, FANOUT,
                                  key, overflow)
    dst, ref = sample_hop(wide, frontier.cpu(), FANOUT, KEY)
    assert torch.equal(counts.long().cpu(), torch.bincount(dst, minlength=n))
    mask = torch.arange(FANOUT, device="cuda").unsqueeze(0) < counts.unsqueeze(1)
    assert torch.equal(nbr.view(n, FANOUT)[mask].cpu(), ref)
    assert overflow.tolist() == [0, 0]


FULL_DATASET = os.environ.get("ZEROGNN_FULL_DATASET_DIR")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available() or not FULL_DATASET,
                    reason="needs a CUDA GPU and ZEROGNN_FULL_DATASET_DIR (e.g. a papers100M-like build at scale 1)")
def test_the_cuda_sampler_equals_the_reference_on_a_full_scale_graph():
    """Every hop of 15-10-5 from 2,048 training seeds and the 16 largest hubs, on the built dataset."""
    from zerognn.cuda import sampling
    from zerognn.datasets import load_dataset

    host = load_dataset(Path(FULL_DATASET), features_on="meta")
    graph = host.graph.to("cuda")
    hubs = torch.topk(host.graph.degrees(), 16).indices
    picked = host.train_idx[torch.randperm(host.train_idx.numel(), generator=torch.Generator().manual_seed(0))[:2048]]
    seeds = torch.unique(torch.cat([picked, hubs]))
    sub = sample_subgraph(host.graph, seeds, [15, 10, 5], 0, 0, 0)
    for hop, fanout in enumerate([15, 10, 5]):
        frontier = sub.frontiers[hop]
        n = frontier.numel()
        overflow = sampling.new_overflow("cuda")
        key = torch.tensor([rng.as_signed(hop_key(0, 0, 0, hop))], dtype=torch.int64, device="cuda")
        nbr, counts = sampling.sample(graph, frontier.cuda(), torch.tensor([n], dtype=torch.int32, device="cuda"),
                                      n, fanout, key, overflow)
        dst, ref = sample_hop(host.graph, frontier, fanout, hop_key(0, 0, 0, hop))
        assert torch.equal(counts.long().cpu(), torch.bincount(dst, minlength=n)), hop
        mask = torch.arange(fanout, device="cuda").unsqueeze(0) < counts.unsqueeze(1)
        assert torch.equal(nbr.view(n, fanout)[mask].cpu(), ref), hop
        assert overflow.tolist() == [0, 0]
    assert int(host.graph.degrees()[hubs].min()) > 15, "the hubs take Floyd's path"
