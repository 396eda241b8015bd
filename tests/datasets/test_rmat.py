"""R-MAT generation: determinism, the documented bit mapping, and the bounded-memory CSR build."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from zerognn.datasets import rmat
from zerognn.errors import ZeroGNNError
from zerognn.graph import CSRGraph
from zerognn.rng import combine_int, draw_int, key_int


def _python_edge(num_nodes: int, seed: int, e: int) -> tuple[int, int]:
    """Edge ``e`` computed from the Python-integer rng specification (no communities)."""
    levels = rmat.levels_for(num_nodes)
    t1, t2, t3 = (round(x * 65536) for x in (0.57, 0.76, 0.95))
    key = combine_int(key_int(seed, rmat.PURPOSE_EDGES), e)
    src = dst = 0
    for level in range(levels):
        r = draw_int(key, level // 4)
        u = (r >> (48 - 16 * (level % 4))) & 0xFFFF
        quadrant = (u >= t1) + (u >= t2) + (u >= t3)
        src, dst = 2 * src + (quadrant >> 1), 2 * dst + (quadrant & 1)
    return (src * num_nodes) >> levels, (dst * num_nodes) >> levels


def test_edges_follow_the_python_specification():
    src, dst = rmat.rmat_edges(1000, 7, 0, 50, "cpu")
    assert [(int(s), int(d)) for s, d in zip(src, dst)] == [_python_edge(1000, 7, e) for e in range(50)]


def test_edges_are_deterministic_seeded_and_chunk_independent():
    a = rmat.rmat_edges(5000, 3, 0, 20_000, "cpu", communities=8, intra_prob=0.5)
    b = rmat.rmat_edges(5000, 3, 0, 20_000, "cpu", communities=8, intra_prob=0.5)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    chunks = list(rmat.rmat_edge_chunks(5000, 20_000, 3, "cpu", 777, communities=8, intra_prob=0.5))
    assert torch.equal(torch.cat([s for s, _ in chunks]), a[0])
    assert torch.equal(torch.cat([d for _, d in chunks]), a[1])
    other = rmat.rmat_edges(5000, 4, 0, 20_000, "cpu", communities=8, intra_prob=0.5)
    assert (other[0] != a[0]).float().mean() > 0.5
    assert int(a[0].min()) >= 0 and int(a[1].max()) < 5000


def test_quadrant_frequencies_match_the_graph500_initiator():
    # With N a power of two the fold is the identity, so the top bit is the first level's choice.
    src, dst = rmat.rmat_edges(1 << 10, 0, 0, 200_000, "cpu")
    src_hi, dst_hi = src >> 9, dst >> 9
    freq = [float(((src_hi == i) & (dst_hi == j)).float().mean()) for i in (0, 1) for j in (0, 1)]
    assert np.allclose(freq, rmat.GRAPH500, atol=0.005)


def test_intra_community_edges_stay_in_the_source_community():
    n, c = 10_007, 13
    src, dst = rmat.rmat_edges(n, 1, 0, 50_000, "cpu", communities=c, intra_prob=1.0)
    assert torch.equal(rmat.community_of(src, n, c), rmat.community_of(dst, n, c))
    src, dst = rmat.rmat_edges(n, 1, 0, 50_000, "cpu", communities=c, intra_prob=0.3)
    same = (rmat.community_of(src, n, c) == rmat.community_of(dst, n, c)).float().mean()
    assert 0.3 < float(same) < 0.5


def test_node_permutation_is_a_deterministic_bijection():
    old_of_new, new_of_old = rmat.node_permutation(1000, 5, "cpu")
    assert torch.equal(torch.sort(old_of_new).values, torch.arange(1000))
    assert torch.equal(new_of_old[old_of_new], torch.arange(1000))
    assert torch.equal(rmat.node_permutation(1000, 5, "cpu")[0], old_of_new)
    assert not torch.equal(rmat.node_permutation(1000, 6, "cpu")[0], old_of_new)


def _symmetrised(n: int, draws: int, seed: int, relabel=None) -> CSRGraph:
    src, dst = rmat.rmat_edges(n, seed, 0, draws, "cpu", communities=5, intra_prob=0.5)
    if relabel is not None:
        src, dst = relabel[src], relabel[dst]
    return CSRGraph.from_edges(torch.cat([src, dst]), torch.cat([dst, src]), n)


@pytest.mark.parametrize("max_raw_entries", [None, 2_000, 600])  # 600 < the largest degree
def test_chunked_build_equals_in_memory_build(tmp_path, max_raw_entries):
    n, draws = 3_001, 20_000
    _, relabel = rmat.node_permutation(n, 2, "cpu")
    def chunks():
        return rmat.rmat_edge_chunks(n, draws, 2, "cpu", 1_234, communities=5, intra_prob=0.5, relabel=relabel)

    expected = _symmetrised(n, draws, 2, relabel)
    built = rmat.build_csr(n, chunks, "cpu", max_raw_entries=max_raw_entries)
    assert torch.equal(built.rowptr, expected.rowptr) and torch.equal(built.col.long(), expected.col.long())
    on_disk = rmat.build_csr(n, chunks, "cpu", col_path=tmp_path / "col.npy", max_raw_entries=max_raw_entries)
    assert torch.equal(on_disk.rowptr, expected.rowptr) and torch.equal(on_disk.col.long(), expected.col.long())
    assert np.load(tmp_path / "col.npy").shape == (expected.num_edges,)


def test_calibrated_draws_hit_the_target_exactly_on_small_graphs():
    n, target = 4_000, 30_000
    draws = rmat.draws_for_target(n, target, 9, "cpu", 5_000, communities=4, intra_prob=0.5)
    g = rmat.build_csr(n, lambda: rmat.rmat_edge_chunks(n, draws, 9, "cpu", communities=4, intra_prob=0.5), "cpu")
    assert g.num_edges == target
    assert draws > target // 2  # R-MAT repeats pairs


def test_impossible_edge_counts_are_rejected():
    with pytest.raises(ZeroGNNError, match="do not fit"):
        rmat.draws_for_target(10, 100, 0, "cpu")
    with pytest.raises(ZeroGNNError, match="nodes"):
        rmat.check_num_nodes(2**31 + 1)


def test_arxiv_like_graph_is_a_simple_symmetric_skewed_csr():
    from zerognn.datasets.synthetic import make_synthetic

    g = make_synthetic("arxiv-like", scale=0.05).graph
    g.check()
    n = g.num_nodes
    assert g.col.dtype == torch.int32 and g.rowptr.dtype == torch.int64
    rows = torch.repeat_interleave(torch.arange(n), g.degrees())
    cols = g.col.long()
    keys = rows * n + cols
    assert bool((rows != cols).all()), "self loop"
    assert bool((keys[1:] > keys[:-1]).all()), "rows must be sorted and duplicate-free"
    assert torch.equal(torch.sort(cols * n + rows).values, keys), "not symmetric"
    deg = g.degrees().double()
    assert float(deg.max()) > 20 * float(deg.mean())


def test_build_csr_rejects_ids_out_of_range():
    def chunks():
        return iter([(torch.tensor([0, 1]), torch.tensor([1, 5]))])

    with pytest.raises(ZeroGNNError, match="outside"):
        rmat.build_csr(4, chunks, "cpu")


def test_shrink_npy_keeps_the_prefix(tmp_path):
    path = tmp_path / "a.npy"
    arr = np.lib.format.open_memmap(path, mode="w+", dtype=np.int32, shape=(1000,))
    arr[:] = np.arange(1000)
    arr.flush()
    del arr
    rmat.shrink_npy(path, 7)
    assert np.array_equal(np.load(path), np.arange(7))
