"""The WholeGraph peer (zerognn/peers/wholegraph.py): without pylibwholegraph, one line; on a GPU with it, its
samples are valid neighbour samples with the suite's semantics (every edge real, min(degree, fanout) distinct
neighbours per destination, each frontier the next one's prefix), their sizes match the reference sampler's
over an epoch, and it trains like host-mediated to within the spread different samples give."""

import importlib.util

import pytest
import torch

from zerognn.datasets import load_dataset
from zerognn.errors import ZeroGNNError
from zerognn.sampling import batch_seeds, epoch_permutation, sample_subgraph
from zerognn.variants import load_external

from ..variants.runner import make_context, run_steps

MODULE = "zerognn.peers.wholegraph"
HAVE_WHOLEGRAPH = importlib.util.find_spec("pylibwholegraph") is not None
FANOUTS = (5, 3)


@pytest.mark.skipif(HAVE_WHOLEGRAPH, reason="pylibwholegraph is installed here")
def test_without_pylibwholegraph_the_peer_is_one_line():
    with pytest.raises(ZeroGNNError, match=r"^the wholegraph peer needs pylibwholegraph .*; install it with pip "
                                           r"install 'zerognn\[wholegraph\]' \(Linux x86-64 with CUDA 13\)$"):
        load_external(MODULE)


@pytest.fixture(scope="module")
def ds(tiny_dataset_dir):
    load_external(MODULE)
    return load_dataset(tiny_dataset_dir).to("cuda")


def _sampler(ds):
    from zerognn.peers.wholegraph import WholeGraph

    v = WholeGraph(make_context(ds, "sage", 0, 128, FANOUTS))
    v.setup()
    return v


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_WHOLEGRAPH, reason="needs pylibwholegraph (WholeGraph)")
def test_its_samples_are_valid_and_their_sizes_match_the_reference_over_an_epoch(ds):
    v = _sampler(ds)
    rowptr, col = ds.graph.rowptr.cpu(), ds.graph.col.cpu()
    steps = ds.train_idx.numel() // 128
    sizes, reference = torch.zeros(len(FANOUTS)), torch.zeros(len(FANOUTS))
    for step in range(steps):
        seeds = batch_seeds(epoch_permutation(ds.train_idx, 0, 0), step, 128)
        frontiers, hops = v.sample(seeds, 0, step)
        ref = sample_subgraph(ds.graph, seeds, list(FANOUTS), 0, 0, step)
        for h, (hop, fanout) in enumerate(zip(hops, FANOUTS)):
            dst_ids, src_ids = frontiers[h].long().cpu(), frontiers[h + 1].long().cpu()
            assert torch.equal(src_ids[: dst_ids.numel()], dst_ids)  # each frontier the next one's prefix
            assert src_ids.unique().numel() == src_ids.numel()
            pairs = torch.stack([dst_ids[hop.edge_dst.cpu()], src_ids[hop.edge_src.cpu()]], 1)
            assert pairs.unique(dim=0).shape[0] == pairs.shape[0]  # distinct neighbours per destination
            for d in range(dst_ids.numel()):
                node = int(dst_ids[d])
                picked = pairs[pairs[:, 0] == node, 1]
                true = col[rowptr[node]: rowptr[node + 1]].long()
                assert picked.numel() == min(true.unique().numel(), fanout), (step, h, node)
                assert torch.isin(picked, true).all(), (step, h, node)
            sizes[h] += hop.num_src
            reference[h] += ref.hops[h].num_src
    assert ((sizes - reference).abs() / reference).max() < 0.02, (sizes, reference)


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_WHOLEGRAPH, reason="needs pylibwholegraph (WholeGraph)")
def test_it_trains_like_host_mediated_to_within_what_other_samples_give(ds):
    _, mediated, _ = run_steps(ds, "host-mediated", "sage", 60, fanouts=FANOUTS)
    v, peer, _ = run_steps(ds, "wholegraph", "sage", 60, fanouts=FANOUTS, ordered=False)
    late = slice(40, 60)
    assert abs(float(peer[late].mean() / mediated[late].mean()) - 1) < 0.1, (mediated[late], peer[late])
    assert v.info()["sample_identical"] is False and v.info()["peer"].startswith("pylibwholegraph")
