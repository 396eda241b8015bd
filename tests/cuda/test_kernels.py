"""Our CUDA operators against the reference sampler and PyTorch (GPU only)."""

import contextlib

import numpy as np
import pytest
import torch

from tests.conftest import random_graph
from zerognn import rng
from zerognn.cuda import sampling
from zerognn.cuda.aggregate import CUDA_OPS, EllBlock, as_hop
from zerognn.cuda.gather import gather_labels, gather_rows
from zerognn.cuda.launch import device_launched, launch
from zerognn.determinism import deterministic
from zerognn.graph import CSRGraph
from zerognn.models import TORCH_OPS
from zerognn.sampling import Hop, hop_key, sample_hop, sample_subgraph

pytestmark = pytest.mark.gpu
DEV = "cuda"


def key_tensor(seed, epoch, step, hop):
    return torch.tensor([rng.as_signed(hop_key(seed, epoch, step, hop))], dtype=torch.int64, device=DEV)


def live(n):
    return torch.tensor([n], dtype=torch.int32, device=DEV)


@pytest.mark.parametrize("skew", [False, True])
@pytest.mark.parametrize("fanout", [1, 5, 15, 40, 64])  # 40, 64: lanes take two slots each
def test_sample_kernel_matches_reference_slot_for_slot(skew, fanout):
    g = random_graph(3000, 40000, seed=11, skew=skew).to(DEV)
    frontier = torch.randperm(3000, generator=torch.Generator().manual_seed(2))[:700].to(DEV)
    overflow = sampling.new_overflow(DEV)
    nbr, counts = sampling.sample(g, frontier, live(700), 700, fanout, key_tensor(5, 1, 2, 0), overflow)
    dst, ref = sample_hop(g, frontier, fanout, hop_key(5, 1, 2, 0))
    ref_counts = torch.bincount(dst, minlength=700)
    assert torch.equal(counts.long(), ref_counts)
    mask = torch.arange(fanout, device=DEV).unsqueeze(0) < counts.unsqueeze(1)
    assert torch.equal(nbr.view(700, fanout)[mask], ref)
    assert overflow.tolist() == [0, 0]


def run_pipeline(g, seeds, fanouts, seed, epoch, step):
    """The host-mediated sampling pipeline, kernel by kernel, with exact sizes."""
    overflow = sampling.new_overflow(DEV)
    scratch = sampling.SamplerScratch.for_graph(g.num_nodes, DEV)
    frontier, n, n_dev = seeds, seeds.numel(), live(seeds.numel())
    frontiers, blocks = [frontier], []
    for hop, f in enumerate(fanouts):
        new_count = torch.empty(1, dtype=torch.int32, device=DEV)
        nbr, counts = sampling.sample(g, frontier, n_dev, n, f, key_tensor(seed, epoch, step, hop), overflow,
                                      scratch=scratch, new_count=new_count)
        sampling.dedupe(n_dev, nbr, counts, f, scratch, new_count)
        fresh = int(new_count)
        frontier, next_dev, local = sampling.relabel(frontier, n_dev, scratch, new_count, nbr, counts, f, n + fresh,
                                                     overflow)
        assert not scratch.bits.any() and not scratch.seen.any(), "relabel must leave both bitmaps clear"
        assert int(next_dev) == n + fresh
        blocks.append(EllBlock(n, n + fresh, f, local, counts, n_dev, overflow))
        frontiers.append(frontier)
        n, n_dev = n + fresh, next_dev
    assert overflow.tolist() == [0, 0]
    return frontiers, blocks


def ell_edges(block, dst_frontier, src_frontier):
    mask = torch.arange(block.fanout, device=DEV).unsqueeze(0) < block.counts.unsqueeze(1)
    dst = torch.arange(block.num_dst, device=DEV).unsqueeze(1).expand(-1, block.fanout)[mask]
    src = block.nbr_local.view(block.num_dst, block.fanout)[mask].long()
    return set(zip(dst_frontier[dst].tolist(), src_frontier[src].tolist()))


@pytest.mark.parametrize("skew", [False, True])
def test_dedupe_and_relabel_give_the_reference_frontiers_and_edges(skew):
    g = random_graph(5000, 60000, seed=3, skew=skew).to(DEV)
    seeds = torch.randperm(5000, generator=torch.Generator().manual_seed(4))[:256].to(DEV)
    frontiers, blocks = run_pipeline(g, seeds, [15, 10, 5], seed=7, epoch=0, step=3)
    ref = sample_subgraph(g, seeds, [15, 10, 5], seed=7, epoch=0, step=3)
    for h in range(3):
        assert torch.equal(frontiers[h + 1], ref.frontiers[h + 1])
        assert ell_edges(blocks[h], frontiers[h], frontiers[h + 1]) == ref.edge_set(h)


def random_block(num_dst=300, num_src=900, fanout=7, seed=0):
    gen = torch.Generator().manual_seed(seed)
    counts = torch.randint(0, fanout + 1, (num_dst,), generator=gen, dtype=torch.int32)
    local = torch.randint(0, num_src, (num_dst * fanout,), generator=gen, dtype=torch.int32)
    return EllBlock(num_dst, num_src, fanout, local.to(DEV), counts.to(DEV), live(num_dst), sampling.new_overflow(DEV))


def rel_err(a, b):
    return float((a - b).detach().norm() / b.detach().norm().clamp(min=1e-30))


@pytest.mark.parametrize("ordered", [False, True])  # the scatter backward and the transposed one
@pytest.mark.parametrize("width", [64, 30])  # the float4 path and the scalar one
@pytest.mark.parametrize("op", ["sage", "gcn"])
def test_row_aggregations_and_gradients_match_pytorch(op, width, ordered):
    block = random_block()
    hop = as_hop(block)
    x = torch.randn(block.num_src, width, device=DEV, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_(True)
    with deterministic(ordered):
        out = getattr(CUDA_OPS, op)(x, block)
        ref = getattr(TORCH_OPS, op)(x_ref, hop)
        assert rel_err(out, ref) < 1e-5
        g = torch.randn_like(out)
        out.backward(g)
        ref.backward(g)
    assert rel_err(x.grad, x_ref.grad) < 1e-5


@pytest.mark.parametrize("ordered", [False, True])
def test_gat_attention_and_gradients_match_pytorch(ordered):
    block = random_block(seed=1)
    hop = as_hop(block)
    heads, channels = 4, 40
    z = torch.randn(block.num_src, heads, channels, device=DEV, requires_grad=True)
    s_src = torch.randn(block.num_src, heads, device=DEV, requires_grad=True)
    s_dst = torch.randn(block.num_dst, heads, device=DEV, requires_grad=True)
    refs = [t.detach().clone().requires_grad_(True) for t in (z, s_src, s_dst)]
    with deterministic(ordered):
        out = CUDA_OPS.gat(z, s_src, s_dst, block, 0.2)
        ref = TORCH_OPS.gat(*refs, hop, 0.2)
        assert rel_err(out, ref) < 1e-5
        g = torch.randn_like(out)
        out.backward(g)
        ref.backward(g)
    for mine, theirs in zip((z, s_src, s_dst), refs):
        assert rel_err(mine.grad, theirs.grad) < 1e-4


@pytest.mark.parametrize("width", [33, 32])  # the scalar path and the float4 one
def test_gathers(width):
    table = torch.randn(1000, width, device=DEV)
    labels = torch.randint(0, 9, (1000,), device=DEV)
    ids = torch.randint(0, 1000, (257,), device=DEV)
    overflow = sampling.new_overflow(DEV)
    rows = gather_rows(table, ids, live(200), overflow)
    assert torch.equal(rows[:200], table[ids[:200]]) and torch.all(rows[200:] == 0)
    assert torch.equal(gather_labels(labels, ids, live(257), overflow), labels[ids])
    assert overflow.tolist() == [0, 0]


def test_overflow_is_flagged_not_written():
    g = random_graph(2000, 30000, seed=5).to(DEV)
    frontier = torch.arange(0, 2000, 2, device=DEV)
    overflow = sampling.new_overflow(DEV)
    # the live count (1000) exceeds the capacity (600): only 600 rows are sampled, the need is recorded
    nbr, counts = sampling.sample(g, frontier, live(1000), 600, 5, key_tensor(0, 0, 0, 0), overflow)
    assert overflow.tolist() == [1, 1000]
    assert nbr.numel() == 600 * 5
    # new nodes beyond the next frontier's capacity are counted, not stored; the need is that frontier's
    # size; they get no local id, so no aggregation reads past the frontier
    overflow = sampling.new_overflow(DEV)
    scratch = sampling.SamplerScratch.for_graph(g.num_nodes, DEV)
    new_count = torch.empty(1, dtype=torch.int32, device=DEV)
    nbr, counts = sampling.sample(g, frontier[:600], live(600), 600, 5, key_tensor(0, 0, 0, 0), overflow,
                                  scratch=scratch, new_count=new_count)
    sampling.dedupe(live(600), nbr, counts, 5, scratch, new_count)
    assert overflow.tolist() == [0, 0] and int(new_count) > 10
    next_frontier, next_count, local = sampling.relabel(frontier[:600], live(600), scratch, new_count, nbr, counts, 5,
                                                        610, overflow)
    assert overflow.tolist() == [1, 600 + int(new_count)] and int(next_count) == 610
    assert next_frontier.numel() == 610 and int(local.max()) < 610
    assert not scratch.bits.any() and not scratch.seen.any()


def _bitmap(nodes: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """One bit per node of ``num_nodes`` (int32 words, bit i of word w is node 32 w + i), set for ``nodes``."""
    words = torch.zeros(-(-num_nodes // 32), dtype=torch.int64)
    for u in nodes.tolist():
        words[u >> 5] |= 1 << (u & 31)
    return torch.where(words >= 2**31, words - 2**32, words).to(torch.int32).to(nodes.device)


@pytest.mark.parametrize("grid", [None, 1, 3])
@pytest.mark.parametrize("num_nodes", [40, 32 * 1024 * 3 + 77])
def test_new_nodes_are_ranked_in_id_order_from_the_bitmap(num_nodes, grid):
    """Whatever the grid (tiles taken by ticket, fewer blocks than tiles too), new nodes come out sorted by
    id, after the frontier, with their local ids set, and the bitmap and the scan's scratch are left
    clear."""
    gen = torch.Generator().manual_seed(num_nodes)
    frontier = torch.randperm(num_nodes, generator=gen)[:7].to(DEV)
    pool = torch.randperm(num_nodes, generator=gen)[: num_nodes // 3].to(DEV)
    nbr = pool.view(-1, 1)  # one "neighbour" per frontier slot: fanout 1 over len(pool) slots
    counts = torch.ones(pool.numel(), dtype=torch.int32, device=DEV)
    n_slots = live(pool.numel())
    overflow = sampling.new_overflow(DEV)
    scratch = sampling.SamplerScratch.for_graph(num_nodes, DEV)
    scratch.seen.copy_(_bitmap(frontier, num_nodes))  # the frontier marked, as sample_neighbors marks it
    scratch.local_ids[frontier] = torch.arange(7, dtype=torch.int32, device=DEV)
    new_count = torch.zeros(1, dtype=torch.int32, device=DEV)
    launch("dedupe_neighbors", grid or 8, nbr.view(-1), counts, n_slots, np.int32(1), scratch.seen, scratch.bits,
           new_count)
    expected_new = torch.sort(pool[~torch.isin(pool, frontier)]).values
    assert int(new_count) == expected_new.numel()
    next_frontier, next_count, local = sampling.relabel(frontier, live(7), scratch, new_count, nbr.view(-1), counts,
                                                        1, 7 + expected_new.numel(), overflow, grid=grid)
    assert torch.equal(next_frontier[:7], frontier) and torch.equal(next_frontier[7:], expected_new)
    positions = torch.arange(next_frontier.numel(), dtype=torch.int32, device=DEV)
    assert torch.equal(scratch.local_ids[next_frontier], positions)  # every node of the next frontier, its place
    assert torch.equal(local[:7], scratch.local_ids[pool[:7]])  # the 7 frontier rows' neighbour slots: their ids
    assert int(next_count) == 7 + expected_new.numel() and overflow.tolist() == [0, 0]
    assert not scratch.bits.any() and not scratch.seen.any()
    assert not scratch.tile_status.any() and int(scratch.tile_ticket) == 0


def test_row_kernels_never_write_past_their_capacity():
    """A live count above the output's rows raises the overflow record; rows past the capacity stay poisoned;
    rows between a smaller live count and the capacity are zeroed."""
    block = random_block(num_dst=300, num_src=900, fanout=7, seed=2)
    x = torch.randn(block.num_src, 16, device=DEV)
    capacity = 200
    out = torch.full((block.num_dst, 32), float("nan"), device=DEV)
    launch("sage_concat_forward", 4, x, np.int64(16), block.nbr_local, block.counts, live(300), np.int32(capacity),
           np.int32(block.fanout), None, out, block.overflow)
    assert block.overflow.tolist() == [1, 300]
    assert not out[:capacity].isnan().any() and out[capacity:].isnan().all()
    # a live count below the capacity: the rows between them are zeroed (finite for fixed-size layers)
    out.fill_(float("nan"))
    launch("sage_concat_forward", 4, x, np.int64(16), block.nbr_local, block.counts, live(150), np.int32(capacity),
           np.int32(block.fanout), None, out, block.overflow)
    assert torch.all(out[150:capacity] == 0) and out[capacity:].isnan().all()
    overflow = sampling.new_overflow(DEV)
    ids = torch.arange(50, device=DEV)
    rows = torch.full((50, 16), float("nan"), device=DEV)
    launch("gather_rows", 2, x, np.int64(16), ids, live(50), np.int32(20), rows, overflow)
    assert overflow.tolist() == [1, 50] and rows[20:].isnan().all() and not rows[:20].isnan().any()


def test_dropped_neighbours_are_skipped_not_dereferenced():
    """A neighbour relabelled to -1 (lost to an upstream overflow) contributes nothing and reads nothing."""
    block = random_block(seed=3)
    hop = as_hop(block)
    local = block.nbr_local.clone()
    local[::5] = -1
    dropped = EllBlock(block.num_dst, block.num_src, block.fanout, local, block.counts, block.n_dst, block.overflow)
    x = torch.randn(block.num_src, 8, device=DEV)
    out = CUDA_OPS.sage(x, dropped)[:, :8]
    keep = local.view(block.num_dst, -1)[
        torch.arange(block.fanout, device=DEV).unsqueeze(0) < block.counts.unsqueeze(1)] >= 0
    partial = Hop(hop.num_dst, hop.num_src, hop.edge_src[keep], hop.edge_dst[keep])
    total, _ = TORCH_OPS._sum_and_count(x, partial)
    expected = total / block.counts.clamp(min=1).unsqueeze(1).float()
    assert rel_err(out, expected) < 1e-5


class _FilledEmpty:
    """``torch`` as zerognn.cuda.sampling sees it, except that its integer ``empty`` buffers (the hop's
    new-node count among them; also ``nbr``, ``counts``, the local ids and the next frontier, whose unwritten
    slots nothing reads) come filled: with ``fill``, or for ``fill=None`` with what a reused allocation may
    hold — random bits, and node ids and -1 and -2 in every other slot."""

    def __init__(self, fill: int | None, num_nodes: int):
        self.fill, self.num_nodes = fill, num_nodes
        self.gen = torch.Generator().manual_seed(0)

    def __getattr__(self, name):
        return getattr(torch, name)

    def empty(self, *size, dtype=None, device=None, **kwargs):
        out = torch.empty(*size, dtype=dtype, device=device, **kwargs)
        if dtype not in (torch.int64, torch.int32):
            return out
        if self.fill is not None:
            return out.fill_(self.fill)
        info = torch.iinfo(dtype)
        junk = torch.randint(info.min, info.max, (out.numel(),), generator=self.gen, dtype=dtype)
        junk[::2] = torch.randint(-2, self.num_nodes, (junk[::2].numel(),), generator=self.gen, dtype=dtype)
        return out.copy_(junk.view(out.shape))


def _live_edges(block, n, dst_frontier, src_frontier):
    """The block's sampled edges of its first ``n`` (live) rows as global (dst, src) pairs."""
    counts = block.counts[:n]
    mask = torch.arange(block.fanout, device=DEV).unsqueeze(0) < counts.unsqueeze(1)
    dst = torch.arange(n, device=DEV).unsqueeze(1).expand(-1, block.fanout)[mask]
    src = block.nbr_local.view(-1, block.fanout)[:n][mask].long()
    return set(zip(dst_frontier[dst].tolist(), src_frontier[src].tolist()))


def _hops_with_prefilled_empties(monkeypatch, fill, g, frontier, n_live, fanouts, device_side):
    """sample_and_dedupe + finish_hop over ``fanouts`` from the first ``n_live`` of ``frontier``'s slots
    (host-mediated next capacities), with sampling's integer empties prefilled (``_FilledEmpty``); checks
    that every hop's frontier bitmap after dedupe holds exactly the live frontier, and that both bitmaps are
    clear after relabel, and returns per hop (next live frontier, live counts, live rows' local ids, edges)."""
    overflow = sampling.new_overflow(DEV)
    scratch = sampling.SamplerScratch.for_graph(g.num_nodes, DEV)
    n_dev, n, out = live(n_live), n_live, []
    with monkeypatch.context() as m, device_launched() if device_side else contextlib.nullcontext():
        m.setattr(sampling, "torch", _FilledEmpty(fill, g.num_nodes))
        for hop, f in enumerate(fanouts):
            draft = sampling.sample_and_dedupe(g, frontier, n_dev, f, key_tensor(7, 0, 3, hop), overflow, scratch)
            mask = torch.arange(f, device=DEV).unsqueeze(0) < draft.counts[:n].unsqueeze(1)
            assert torch.equal(_nodes_of(scratch.seen), torch.sort(frontier[:n]).values), (
                f"hop {hop}: the frontier's bitmap holds other nodes than the live frontier")
            fresh = torch.unique(draft.nbr.view(-1, f)[:n][mask])
            assert torch.equal(_nodes_of(scratch.bits), fresh[~torch.isin(fresh, frontier[:n])]), hop
            next_frontier, next_dev, block = sampling.finish_hop(draft, overflow,
                                                                 frontier.numel() + int(draft.new_count))
            assert not scratch.seen.any() and not scratch.bits.any(), f"hop {hop}: relabel left a bitmap set"
            n_next = int(next_dev)
            out.append((next_frontier[:n_next].clone(), draft.counts[:n].clone(),
                        block.nbr_local.view(-1, f)[:n][mask].clone(), _live_edges(block, n, frontier, next_frontier)))
            frontier, n_dev, n = next_frontier, next_dev, n_next
    assert overflow.tolist() == [0, 0]
    return out


def _nodes_of(bitmap: torch.Tensor) -> torch.Tensor:
    """The node ids whose bits are set in ``bitmap`` (int32 words, bit i of word w is node 32 w + i), sorted."""
    words = bitmap.view(torch.int32).long() & 0xFFFFFFFF
    bits = (words.unsqueeze(1) >> torch.arange(32, device=bitmap.device)) & 1
    return torch.nonzero(bits.view(-1)).view(-1)


@pytest.mark.parametrize("device_side", [False, True])
@pytest.mark.parametrize("n_live", [0, 3, 300])
def test_a_hop_needs_no_buffer_cleared_whatever_it_held(monkeypatch, n_live, device_side):
    """A hop's buffers come from torch.empty (sample_neighbors zeroes the new-node count; no fill kernel).
    With garbage in them beforehand a hop gives what -1-filled buffers give, and the reference's frontiers
    and edges, host-launched and device-launched (dl_sample_neighbors sizes its child's grid by the live
    frontier): with no live node (one block zeroes the count), a few live nodes in a large frontier, and
    every slot live."""
    g = random_graph(3000, 40000, seed=11, skew=True).to(DEV)
    frontier = torch.randperm(3000, generator=torch.Generator().manual_seed(2))[:300].to(DEV)
    fanouts = [15, 10]
    garbage = _hops_with_prefilled_empties(monkeypatch, None, g, frontier, n_live, fanouts, device_side)
    cleared = _hops_with_prefilled_empties(monkeypatch, -1, g, frontier, n_live, fanouts, device_side)
    ref = sample_subgraph(g, frontier[:n_live], fanouts, seed=7, epoch=0, step=3)
    for h, (mine, theirs) in enumerate(zip(garbage, cleared)):
        for a, b in zip(mine[:3], theirs[:3]):
            assert torch.equal(a, b), f"hop {h}"
        assert mine[3] == theirs[3] == ref.edge_set(h)
        assert torch.equal(mine[0], ref.frontiers[h + 1])
    if n_live == 0:
        assert all(hop[0].numel() == 0 and not hop[3] for hop in garbage)


def test_a_hop_runs_four_kernels_and_no_fill():
    """sample, dedupe and relabel (two: relabel_nodes ranks the new nodes itself) kernels and nothing else:
    sample_neighbors marks the frontier and zeroes the count, relabel_nodes clears both bitmaps (fixed next
    capacity: no copy either)."""
    g = random_graph(3000, 40000, seed=11).to(DEV)
    frontier = torch.randperm(3000, generator=torch.Generator().manual_seed(2))[:300].to(DEV)
    overflow = sampling.new_overflow(DEV)
    scratch = sampling.SamplerScratch.for_graph(g.num_nodes, DEV)
    n_dev, key = live(300), key_tensor(0, 0, 0, 0)

    def hop():
        return sampling.sample_hop_ell(g, frontier, n_dev, 10, key, overflow, scratch, next_capacity=300 * 11)

    hop()  # compiles and loads the kernels outside the profile
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        hop()
        torch.cuda.synchronize()
    kernels = sorted(e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    assert not [k for k in kernels if "fill" in k.lower()], kernels
    assert kernels == sorted(["sample_neighbors", "dedupe_neighbors", "relabel_nodes", "relabel_neighbors"]), kernels
    assert overflow.tolist() == [0, 0]


WIDE_NODES = 5_000_000  # 156,250 bitmap words: 153 tiles of RANK_WORDS for relabel_nodes' scan


@pytest.fixture(scope="module")
def wide_graph():
    """A synthetic CSR over 5 million nodes (degrees 0..15, uniform neighbours; about 37 million edges), so
    that every hop's new nodes spread over all of relabel_nodes' tiles."""
    gen = torch.Generator().manual_seed(17)
    degrees = torch.randint(0, 16, (WIDE_NODES,), generator=gen)
    rowptr = torch.zeros(WIDE_NODES + 1, dtype=torch.int64)
    torch.cumsum(degrees, 0, out=rowptr[1:])
    col = torch.randint(0, WIDE_NODES, (int(rowptr[-1]),), generator=gen, dtype=torch.int32)
    return CSRGraph(rowptr, col).to(DEV), torch.randperm(WIDE_NODES, generator=gen).to(DEV)


def _fixed_hop(g, frontier, n_dev, fanout, key, overflow, scratch, grid):
    """One hop at fixed capacities (nothing read back: no synchronisation), relabel's kernels on ``grid``
    blocks (None: the host's own grids): (next frontier, its live size, counts, local ids)."""
    capacity = frontier.numel()
    new_count = torch.empty(1, dtype=torch.int32, device=DEV)
    nbr, counts = sampling.sample(g, frontier, n_dev, capacity, fanout, key, overflow, scratch=scratch,
                                  new_count=new_count)
    sampling.dedupe(n_dev, nbr, counts, fanout, scratch, new_count)
    next_frontier, next_count, local = sampling.relabel(frontier, n_dev, scratch, new_count, nbr, counts, fanout,
                                                        capacity * (fanout + 1), overflow, grid=grid)
    return next_frontier, next_count, counts, local


def _assert_hop_is_the_references(out, n, fanout, ref, hop):
    """A hop's outputs (``_fixed_hop``) from ``n`` live frontier nodes against hop ``hop`` of a reference
    subgraph: the next frontier and its size, every live row's count and its neighbours' local ids."""
    next_frontier, next_count, counts, local = out
    expected = ref.frontiers[hop + 1]
    assert int(next_count) == expected.numel()
    assert torch.equal(next_frontier[:expected.numel()], expected)
    assert torch.equal(counts[:n].long(), torch.bincount(ref.hops[hop].edge_dst, minlength=n))
    mask = torch.arange(fanout, device=DEV).unsqueeze(0) < counts[:n].unsqueeze(1)
    assert torch.equal(local.view(-1, fanout)[:n][mask].long(), ref.hops[hop].edge_src)


def _assert_scratch_is_clean(scratch):
    assert not scratch.bits.any() and not scratch.seen.any(), "relabel_nodes must leave both bitmaps clear"
    assert not scratch.tile_status.any(), "the launch's last ticket must reset every tile status"
    assert int(scratch.tile_ticket) == 0, "the launch's last ticket must reset the ticket counter"


BACK_TO_BACK = [0, 1, 2, 5, 31, 100, 1000, 4096, 20000, 30000, 7, 12345, 3, 500, 25000, 64, 8191, 1, 15000, 2500]


@pytest.mark.parametrize("mode", ["host", "grid 2", "device"])
def test_back_to_back_hops_over_many_tiles_give_the_reference(wide_graph, mode):
    """20 hops over one SamplerScratch, launched back to back with no synchronisation between them, from
    frontiers of 0 to 30,000 live nodes (so from no new node in most tiles to about a thousand in each) over
    153 tiles: each hop gives the reference's next frontier, counts and local ids, so every launch of
    relabel_nodes found its tile statuses and ticket clean. With the host's grids (more blocks than tiles),
    with 2 blocks (each block takes some 75 tiles by ticket), and device-launched (dl_relabel_nodes sizes the
    grid from the live counts)."""
    g, perm = wide_graph
    overflow = sampling.new_overflow(DEV)
    scratch = sampling.SamplerScratch.for_graph(g.num_nodes, DEV)
    assert scratch.tile_status.numel() >= 150
    grid = 2 if mode == "grid 2" else None
    hops = []
    with device_launched() if mode == "device" else contextlib.nullcontext():
        for i, n in enumerate(BACK_TO_BACK):
            fanout = (3, 10, 5)[i % 3]
            frontier = perm[97 * i: 97 * i + n + 1 + i % 4]  # 1 to 4 slots past the live ones
            hops.append(_fixed_hop(g, frontier, live(n), fanout, key_tensor(9, 0, i, 0), overflow, scratch, grid))
    for i, (n, out) in enumerate(zip(BACK_TO_BACK, hops)):
        fanout = (3, 10, 5)[i % 3]
        ref = sample_subgraph(g, perm[97 * i: 97 * i + n], [fanout], seed=9, epoch=0, step=i)
        _assert_hop_is_the_references(out, n, fanout, ref, 0)
    assert overflow.tolist() == [0, 0]
    _assert_scratch_is_clean(scratch)


@pytest.mark.parametrize("grid", [None, 2])
def test_a_captured_two_hop_sample_over_many_tiles_replays_like_the_reference(wide_graph, grid):
    """Two hops captured in one CUDA Graph (two launches of relabel_nodes per replay), replayed 5 times over
    new frontiers, live sizes and keys: each replay gives the reference's frontiers, counts and local ids,
    so the scratch the last ticket resets is clean for the next launch with no host involvement; and an
    eager hop after the replays too. With the host's grids and with 2 blocks for 153 tiles."""
    g, perm = wide_graph
    capacity, fanouts = 20000, (5, 3)
    overflow = sampling.new_overflow(DEV)
    scratch = sampling.SamplerScratch.for_graph(g.num_nodes, DEV)
    frontier = perm[:capacity].clone()
    n_dev = live(capacity)
    keys = [key_tensor(0, 0, 0, hop) for hop in range(2)]

    def sample_two_hops():
        first = _fixed_hop(g, frontier, n_dev, fanouts[0], keys[0], overflow, scratch, grid)
        return first, _fixed_hop(g, first[0], first[1], fanouts[1], keys[1], overflow, scratch, grid)

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm-up: the kernels are loaded before capture
        sample_two_hops()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = sample_two_hops()
    for replay, n in enumerate([capacity, 1, 7000, 0, 19999]):
        start = 1000 * replay + 13
        frontier[:n].copy_(perm[start:start + n])
        n_dev.fill_(n)
        for hop in range(2):
            keys[hop].copy_(key_tensor(3, 1, replay, hop))
        graph.replay()
        ref = sample_subgraph(g, perm[start:start + n], list(fanouts), seed=3, epoch=1, step=replay)
        _assert_hop_is_the_references(captured[0], n, fanouts[0], ref, 0)
        _assert_hop_is_the_references(captured[1], ref.frontiers[1].numel(), fanouts[1], ref, 1)
        assert overflow.tolist() == [0, 0]
        _assert_scratch_is_clean(scratch)
    n = 4321
    frontier[:n].copy_(perm[-n:])
    n_dev.fill_(n)
    for hop in range(2):
        keys[hop].copy_(key_tensor(4, 0, 0, hop))
    eager = sample_two_hops()
    ref = sample_subgraph(g, perm[-n:], list(fanouts), seed=4, epoch=0, step=0)
    _assert_hop_is_the_references(eager[0], n, fanouts[0], ref, 0)
    _assert_hop_is_the_references(eager[1], ref.frontiers[1].numel(), fanouts[1], ref, 1)
    _assert_scratch_is_clean(scratch)
