"""The reference sampler on hand-drawn graphs (expected output written out) and its properties."""

import pytest
import torch

from tests.conftest import random_graph
from zerognn import rng
from zerognn.errors import ZeroGNNError
from zerognn.graph import CSRGraph
from zerognn.sampling import hop_key, sample_hop, sample_subgraph
from zerognn.sampling.reference import extend_frontier

#   0 - 1 - 3        adjacency (sorted):  0: 1 2   1: 0 3   2: 0 4 5   3: 1   4: 2   5: 2
#    \
#     2 - 4
#      \
#       5
ADJ = {0: [1, 2], 1: [0, 3], 2: [0, 4, 5], 3: [1], 4: [2], 5: [2]}


def hand_graph() -> CSRGraph:
    src = torch.tensor([u for u, vs in ADJ.items() for _ in vs])
    dst = torch.tensor([v for vs in ADJ.values() for v in vs])
    return CSRGraph.from_edges(src, dst, 6)


def test_hand_graph_all_neighbours_when_degree_fits():
    sub = sample_subgraph(hand_graph(), torch.tensor([2, 3]), [3, 3], seed=0, epoch=0, step=0)
    assert sub.frontiers[0].tolist() == [2, 3]
    # hop 0: 2 -> 0 4 5, 3 -> 1; the new nodes {0, 1, 4, 5} follow the seeds in ascending order
    assert sub.frontiers[1].tolist() == [2, 3, 0, 1, 4, 5]
    assert sub.hops[0].edge_dst.tolist() == [0, 0, 0, 1]
    assert sub.hops[0].edge_src.tolist() == [2, 4, 5, 3]
    # hop 1: every neighbour is already in the frontier, so it does not grow
    assert sub.frontiers[2].tolist() == [2, 3, 0, 1, 4, 5]
    assert sub.hops[1].edge_dst.tolist() == [0, 0, 0, 1, 2, 2, 3, 3, 4, 5]
    assert sub.hops[1].edge_src.tolist() == [2, 4, 5, 3, 3, 0, 2, 1, 0, 0]
    assert (sub.hops[1].num_dst, sub.hops[1].num_src) == (6, 6)


def floyd_spec(key: int, degree: int, fanout: int) -> list[int]:
    """Floyd's algorithm written from the DESIGN text with Python integers."""
    picks = []
    for i in range(fanout):
        j = degree - fanout + i
        t = rng.uniform_below_int(rng.draw_int(key, i), j + 1)
        picks.append(j if t in picks else t)
    return picks


def star(degree: int) -> CSRGraph:
    leaves = torch.arange(1, degree + 1)
    return CSRGraph.from_edges(torch.cat([torch.zeros(degree, dtype=torch.int64), leaves]),
                               torch.cat([leaves, torch.zeros(degree, dtype=torch.int64)]), degree + 1)


def test_floyd_picks_match_the_integer_spec_and_a_written_out_value():
    g = star(10)
    key = hop_key(seed=0, epoch=0, step=0, hop=0)
    dst, nbrs = sample_hop(g, torch.tensor([0]), 3, key)
    expected_positions = floyd_spec(rng.combine_int(key, 0), 10, 3)
    assert nbrs.tolist() == [p + 1 for p in expected_positions]  # leaf at CSR position p is node p + 1
    assert nbrs.tolist() == [1, 5, 7]  # written out once; changes only if the RNG or Floyd order changes
    assert dst.tolist() == [0, 0, 0]


@pytest.mark.parametrize("skew", [False, True])
def test_picks_are_distinct_true_neighbours_with_min_degree_count(skew):
    g = random_graph(400, 3000, seed=3, skew=skew)
    frontier = torch.randperm(400, generator=torch.Generator().manual_seed(0))[:150]
    dst, nbrs = sample_hop(g, frontier, 4, hop_key(1, 2, 3, 0))
    deg = g.degrees()
    for pos, v in enumerate(frontier.tolist()):
        mine = nbrs[dst == pos].tolist()
        true = set(g.col[g.rowptr[v]:g.rowptr[v + 1]].tolist())
        assert len(mine) == min(int(deg[v]), 4)
        assert len(set(mine)) == len(mine)
        assert set(mine) <= true


def test_deterministic_and_independent_of_frontier_order():
    g = random_graph(300, 2500, seed=4, skew=True)
    seeds = torch.arange(0, 300, 5)
    a = sample_subgraph(g, seeds, [5, 3], seed=9, epoch=1, step=2)
    b = sample_subgraph(g, seeds, [5, 3], seed=9, epoch=1, step=2)
    shuffled = seeds[torch.randperm(seeds.numel(), generator=torch.Generator().manual_seed(1))]
    c = sample_subgraph(g, shuffled, [5, 3], seed=9, epoch=1, step=2)
    for hop in range(2):
        assert a.edge_set(hop) == b.edge_set(hop) == c.edge_set(hop)
        assert set(a.frontiers[hop + 1].tolist()) == set(c.frontiers[hop + 1].tolist())
    other = sample_subgraph(g, seeds, [5, 3], seed=9, epoch=1, step=3)
    assert a.edge_set(0) != other.edge_set(0)


def test_frontier_is_prefix_and_local_ids_are_consistent():
    g = random_graph(500, 4000, seed=5)
    sub = sample_subgraph(g, torch.arange(20), [6, 4, 2], seed=0, epoch=0, step=0)
    for h, hop in enumerate(sub.hops):
        cur, nxt = sub.frontiers[h], sub.frontiers[h + 1]
        assert torch.equal(nxt[: cur.numel()], cur)
        assert nxt.unique().numel() == nxt.numel()
        new = nxt[cur.numel():]
        assert torch.equal(new, new.sort().values)
        assert int(hop.edge_src.max()) < hop.num_src and int(hop.edge_dst.max()) < hop.num_dst


def test_pick_frequencies_are_roughly_uniform():
    g = star(10)
    counts = torch.zeros(11)
    for step in range(3000):
        _, nbrs = sample_hop(g, torch.tensor([0]), 3, hop_key(0, 0, step, 0))
        counts[nbrs] += 1
    freq = counts[1:] / 3000  # each leaf should be picked with probability 3/10
    assert torch.all((freq - 0.3).abs() < 0.04), freq


def test_extend_frontier_relabels():
    nxt, local = extend_frontier(torch.tensor([7, 3]), torch.tensor([3, 9, 1, 9, 7]))
    assert nxt.tolist() == [7, 3, 1, 9]
    assert local.tolist() == [1, 3, 2, 3, 0]


def test_bad_fanout_is_rejected():
    with pytest.raises(ZeroGNNError, match="fanouts must be positive"):
        sample_hop(hand_graph(), torch.tensor([0]), 0, 1)


@pytest.mark.gpu
def test_cpu_and_gpu_sample_the_same_subgraph():
    g = random_graph(2000, 20000, seed=6, skew=True)
    seeds = torch.arange(0, 2000, 7)
    cpu = sample_subgraph(g, seeds, [15, 10, 5], seed=3, epoch=2, step=1)
    gpu = sample_subgraph(g.to("cuda"), seeds.cuda(), [15, 10, 5], seed=3, epoch=2, step=1)
    for h in range(3):
        assert torch.equal(cpu.frontiers[h + 1], gpu.frontiers[h + 1].cpu())
        assert torch.equal(cpu.hops[h].edge_src, gpu.hops[h].edge_src.cpu())
        assert torch.equal(cpu.hops[h].edge_dst, gpu.hops[h].edge_dst.cpu())
