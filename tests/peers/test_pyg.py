"""The PyG peer (zerognn/peers/pyg.py): PyG's SAGEConv computes the suite's SAGE layer on the same block, so
`pyg` trains like `torch-eager` on the same samples (CPU here; on a GPU, over host-mediated's blocks, like
host-mediated), `pyg-compile` like `pyg`; the peer is loaded like any baseline, plans only SAGE and refuses
the rest in one line."""

import json
import sys

import pytest
import torch

pytest.importorskip("torch_geometric", reason="the pyg peer needs torch-geometric (the `peers` extra)")

from zerognn.datasets import load_dataset  # noqa: E402
from zerognn.errors import ZeroGNNError  # noqa: E402
from zerognn.models import TORCH_OPS, build_model  # noqa: E402
from zerognn.models.dense import linear  # noqa: E402
from zerognn.records.spec import RunSpec  # noqa: E402
from zerognn.sampling import batch_seeds, epoch_permutation, sample_subgraph  # noqa: E402
from zerognn.train.loop import run  # noqa: E402
from zerognn.variants import load_external  # noqa: E402
from zerognn.workflow.plan import plan  # noqa: E402

from ..variants.runner import run_steps  # noqa: E402
from ..workflow.test_plan import study  # noqa: E402

MODULE = "zerognn.peers.pyg"
assert load_external(MODULE) == ("pyg", "pyg-compile")
from zerognn.peers.pyg import PyGSAGE  # noqa: E402


@pytest.fixture(scope="module")
def ds(tiny_dataset_dir):
    return load_dataset(tiny_dataset_dir)


def test_sageconv_on_the_suites_weights_is_the_suites_sage_layer_on_the_same_block(ds):
    model = build_model("sage", ds.features.shape[1], 32, ds.num_classes, 2, seed=0)
    seeds = batch_seeds(epoch_permutation(ds.train_idx, 0, 0), 0, 128)
    sub = sample_subgraph(ds.graph, seeds, [5, 3], 0, 0, 0)
    blocks, net = sub.hops[::-1], PyGSAGE(model, torch.device("cpu"))
    x = ds.features[sub.frontiers[-1]]
    for i, hop in enumerate(blocks):
        lin = model.lins[i]
        expected = linear(TORCH_OPS.sage(x, hop), lin.weight, lin.bias, False)
        got = net.layer(i, x, hop)
        assert got.shape == expected.shape and torch.allclose(got, expected, rtol=1e-5, atol=1e-6), i
        x = expected.relu()
    assert torch.allclose(net(ds.features[sub.frontiers[-1]], blocks),
                          model(ds.features[sub.frontiers[-1]], blocks, TORCH_OPS), rtol=1e-5, atol=1e-6)


def test_an_ell_block_becomes_the_edges_of_its_filled_slots_in_slot_order():
    from zerognn.cuda.aggregate import EllBlock, as_hop

    i32 = dict(dtype=torch.int32)
    block = EllBlock(3, 5, 2, torch.tensor([3, 4, 1, -7, 9, 9], **i32), torch.tensor([2, 1, 0], **i32),
                     torch.tensor([3], **i32), torch.zeros(2, dtype=torch.int64))
    hop = as_hop(block)
    assert (hop.num_dst, hop.num_src) == (3, 5)
    assert hop.edge_src.tolist() == [3, 4, 1] and hop.edge_dst.tolist() == [0, 0, 1]
    assert hop.edge_src.dtype == hop.edge_dst.dtype == torch.int64


def test_the_gradients_reach_the_suites_parameters(ds):
    model = build_model("sage", ds.features.shape[1], 32, ds.num_classes, 2, seed=0)
    sub = sample_subgraph(ds.graph, batch_seeds(epoch_permutation(ds.train_idx, 0, 0), 0, 64), [5, 3], 0, 0, 0)
    PyGSAGE(model, torch.device("cpu"))(ds.features[sub.frontiers[-1]], sub.hops[::-1]).sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())


def cpu_losses(ds, variant, steps):
    v, losses, _ = run_steps(ds, variant, "sage", steps, device="cpu", hidden=32, lr=0.01)
    return v, losses


def test_pyg_trains_like_torch_eager_on_the_same_samples(ds):
    _, eager = cpu_losses(ds, "torch-eager", 20)
    v, pyg = cpu_losses(ds, "pyg", 20)
    assert ((pyg - eager).abs() / eager).max() < 1e-4, (eager, pyg)
    info = v.info()
    assert info["sample_identical"] is True and info["peer"].startswith("torch_geometric 2.")


def test_pyg_compile_trains_like_pyg_and_reports_its_graphs(ds):
    _, eager = cpu_losses(ds, "pyg", 6)
    v, compiled = cpu_losses(ds, "pyg-compile", 6)
    assert ((compiled - eager).abs() / eager).max() < 1e-4, (eager, compiled)
    info = v.info()
    assert info["dynamo_graphs"] >= 1 and info["compile_s"] > 0 and info["recompilations"] is not None


def test_the_plan_gives_the_peer_sage_alone_and_says_so():
    runs = plan(study(variants=["torch-eager", "pyg", "pyg-compile"], models=["sage", "gcn"],
                      variant_modules=[MODULE]), "gpu")
    assert {(k.variant, k.model) for k in runs.keys} == {
        ("torch-eager", "sage"), ("torch-eager", "gcn"), ("pyg", "sage"), ("pyg-compile", "sage")}
    assert "skipping variant pyg with model gcn: it runs only sage" in runs.left_out
    assert runs.variant_modules == {"pyg": MODULE, "pyg-compile": MODULE}


def test_a_run_of_another_model_is_refused_in_one_line_before_any_work(tiny_dataset_dir, tmp_path):
    spec = RunSpec(dataset="tiny", model="gcn", variant="pyg", batch_size=128, fanouts=[5, 3], hidden=32,
                   device="cpu", variant_modules=[MODULE])
    with pytest.raises(ZeroGNNError, match="variant 'pyg' runs only sage, not gcn; choose one of those models"):
        run(spec, tiny_dataset_dir, tmp_path / "r.json", progress=lambda m: None)
    assert not (tmp_path / "r.json").exists()


def test_a_run_writes_a_record_that_names_the_peer(tiny_dataset_dir, tmp_path):
    spec = RunSpec(dataset="tiny", model="sage", variant="pyg", batch_size=128, fanouts=[5, 3], hidden=32,
                   warmup_steps=2, measure_steps=4, profile_steps=0, eval_nodes=200, device="cpu",
                   variant_modules=[MODULE])
    record = run(spec, tiny_dataset_dir, tmp_path / "r.json", progress=lambda m: None)
    assert record["config"]["variant"] == "pyg" and record["variant_info"]["sample_identical"] is True
    assert 0.0 <= record["accuracy"]["val"] <= 1.0


def test_without_torch_geometric_the_peer_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch_geometric", None)  # what an environment without it imports
    monkeypatch.delitem(sys.modules, MODULE)
    with pytest.raises(ZeroGNNError, match=r"^the pyg peers need torch-geometric .*; install it with pip install "
                                           r"'zerognn\[peers\]'$"):
        load_external(MODULE)


def test_the_peers_study_plans_every_variant_at_three_batch_sizes_with_six_trials():
    import importlib.util

    import yaml

    from ..workflow.test_plan import REPO, SCHEMA

    config = {k: v["default"] for k, v in SCHEMA["properties"].items() if "default" in v} | yaml.safe_load(
        (REPO / "workflow/config/h200-peers.yaml").read_text())
    variants = ["host-mediated", "zerognn", "pyg", "pyg-compile", "wholegraph"]
    assert config["variants"] == variants
    if importlib.util.find_spec("pylibwholegraph") is None:  # the plan stops in one line; the rest plans as is
        with pytest.raises(ZeroGNNError, match=r"^the wholegraph peer needs pylibwholegraph"):
            plan(config, "gpu")
        variants.remove("wholegraph")
        config |= {"variants": variants, "variant_modules": ["zerognn.peers.pyg"]}
    runs = plan(config, "gpu")
    assert len(runs.keys) == len(variants) * 3 * 6 and not runs.left_out
    assert {(k.variant, k.batch_size) for k in runs.keys if k.trial == 6} == {
        (v, b) for v in variants for b in (256, 1024, 4096)}


@pytest.mark.gpu
@pytest.mark.parametrize("variant", ["pyg", "pyg-compile"])
def test_pyg_trains_like_host_mediated_on_the_gpu(tiny_dataset_dir, variant):
    """Same samples and weights: within the 1e-4 torch-compile is held to (PyG's scatters add in varying order)."""
    cuda = load_dataset(tiny_dataset_dir).to("cuda")
    _, mediated, _ = run_steps(cuda, "host-mediated", "sage", 50)
    _, peer, _ = run_steps(cuda, variant, "sage", 50, ordered=False)
    assert ((peer - mediated).abs() / mediated).max() < 1e-4, (mediated[:5], peer[:5])


def test_the_variants_listing_shows_the_peers_only_when_named_and_their_models(capsys):
    from zerognn.cli import main

    assert main(["variants"]) == 0
    assert "pyg" not in capsys.readouterr().out.split()  # imported by this process, but not named
    assert main(["variants", "--variant-module", MODULE, "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["pyg"]["models"] == ["sage"] and rows["torch-eager"]["models"] is None
    assert main(["variants", "--variant-module", MODULE]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("pyg "))
    assert line.endswith("(sage only)")
