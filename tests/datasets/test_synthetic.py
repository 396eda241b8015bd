"""Synthetic datasets: determinism, the saved format, learnable labels, atomic builds, input checks."""

from __future__ import annotations

import pytest
import torch

from zerognn.datasets import KNOWN_DATASETS, SYNTHETIC, load_dataset, make_dataset, synthetic
from zerognn.datasets.specs import scaled
from zerognn.datasets.store import FORMAT_VERSION
from zerognn.datasets.synthetic import make_synthetic
from zerognn.errors import ZeroGNNError


def _same(a, b, features: bool = True) -> None:
    assert torch.equal(a.graph.rowptr, b.graph.rowptr)
    assert torch.equal(a.graph.col, b.graph.col)
    assert torch.equal(a.labels, b.labels)
    for split in ("train_idx", "val_idx", "test_idx"):
        assert torch.equal(getattr(a, split), getattr(b, split))
    if features:
        assert torch.equal(a.features, b.features)
    else:
        assert torch.allclose(a.features, b.features, atol=1e-5)


@pytest.fixture(scope="module")
def tiny():
    return make_synthetic("tiny")


@pytest.fixture(scope="module")
def arxiv_small():
    return make_synthetic("arxiv-like", scale=0.2)


def test_tiny_is_deterministic_and_seeded(tiny):
    _same(tiny, make_synthetic("tiny"))
    other = make_synthetic("tiny", seed=1)
    assert not torch.equal(other.graph.col, tiny.graph.col)
    assert not torch.equal(other.train_idx, tiny.train_idx)


def test_tiny_has_the_spec_sizes_and_dtypes(tiny):
    spec = SYNTHETIC["tiny"]
    tiny.check()
    assert tiny.num_nodes == spec.num_nodes and tiny.graph.num_edges == spec.num_edges
    assert tiny.features.shape == (spec.num_nodes, spec.num_features) and tiny.features.dtype == torch.float32
    assert tiny.labels.dtype == torch.int64 and tiny.num_classes == spec.num_classes
    assert set(tiny.labels.tolist()) == set(range(spec.num_classes))


def test_splits_are_sorted_disjoint_and_sized_by_the_spec(tiny):
    spec = SYNTHETIC["tiny"]
    splits = (tiny.train_idx, tiny.val_idx, tiny.test_idx)
    for idx, frac in zip(splits, (spec.train_frac, spec.val_frac, spec.test_frac)):
        assert idx.dtype == torch.int64 and idx.numel() == int(spec.num_nodes * frac)
        assert bool((idx[1:] > idx[:-1]).all())
    assert torch.cat(splits).unique().numel() == sum(i.numel() for i in splits)


def test_saved_dataset_round_trips(tmp_path, tiny):
    out = tmp_path / "tiny"
    returned = make_synthetic("tiny", out_dir=out)
    loaded = load_dataset(out, check=True)
    _same(loaded, tiny)
    _same(returned, tiny)
    meta = loaded.meta
    assert meta["format_version"] == FORMAT_VERSION and meta["source"] == "synthetic-rmat"
    assert (meta["num_nodes"], meta["num_edges"], meta["num_features"], meta["num_classes"]) == (2000, 20000, 16, 4)
    assert meta["col_dtype"] == "int32" and meta["scale"] == 1.0 and meta["seed"] == 0
    assert meta["generator_version"] == synthetic.GENERATOR_VERSION
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny"], "no temporary directory left behind"


def _nearest_centroid_accuracy(ds, x: torch.Tensor) -> float:
    tr, te = ds.train_idx, ds.test_idx
    means = torch.zeros(ds.num_classes, x.shape[1], dtype=x.dtype).index_add_(0, ds.labels[tr], x[tr])
    means /= torch.bincount(ds.labels[tr], minlength=ds.num_classes).clamp(min=1)[:, None]
    return float((torch.cdist(x[te], means).argmin(1) == ds.labels[te]).double().mean())


def test_labels_are_learnable_and_neighbours_help(arxiv_small):
    ds = arxiv_small
    g, x = ds.graph, ds.features.double()
    deg = g.degrees()
    rows = torch.repeat_interleave(torch.arange(ds.num_nodes), deg)
    neighbour_mean = torch.zeros_like(x).index_add_(0, rows, x[g.col.long()]) / deg.clamp(min=1)[:, None]
    chance = 1 / ds.num_classes
    features_only = _nearest_centroid_accuracy(ds, x)
    with_neighbours = _nearest_centroid_accuracy(ds, torch.cat([x, neighbour_mean], 1))
    assert 0.4 < features_only < 0.8, "well above chance, far from perfect"
    assert features_only > 10 * chance
    assert with_neighbours > features_only + 0.05


def test_graph_is_homophilous_beyond_its_degree_skew(arxiv_small):
    ds = arxiv_small
    g, y = ds.graph, ds.labels
    deg = g.degrees()
    rows = torch.repeat_interleave(torch.arange(ds.num_nodes), deg)
    homophily = float((y[rows] == y[g.col.long()]).double().mean())
    volume = torch.bincount(y, weights=deg.double(), minlength=ds.num_classes)
    degree_chance = float(((volume / volume.sum()) ** 2).sum())
    assert homophily > 0.4
    assert homophily > 3 * max(degree_chance, 1 / ds.num_classes)


def test_failed_build_leaves_no_directory(tmp_path, monkeypatch):
    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(synthetic, "fill_features", killed)
    with pytest.raises(KeyboardInterrupt):
        make_synthetic("tiny", out_dir=tmp_path / "tiny")
    assert list(tmp_path.iterdir()) == []


def test_failed_rebuild_keeps_the_previous_dataset(tmp_path, monkeypatch):
    out = tmp_path / "tiny"
    make_synthetic("tiny", out_dir=out)
    monkeypatch.setattr(synthetic, "fill_features", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        make_synthetic("tiny", seed=5, out_dir=out, force=True)
    assert load_dataset(out, check=True).meta["seed"] == 0
    assert [p.name for p in tmp_path.iterdir()] == ["tiny"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"name": "cora"}, "arxiv-like"),
        ({"name": "tiny", "scale": 0}, "positive"),
        ({"name": "tiny", "scale": float("nan")}, "positive"),
        ({"name": "tiny", "seed": -1}, "seed"),
        ({"name": "papers100M-like", "scale": 100.0}, "nodes"),
        ({"name": "tiny", "device": "tpu"}, "device"),
    ],
)
def test_bad_input_is_a_clear_error(kwargs, message):
    with pytest.raises(ZeroGNNError, match=message):
        make_synthetic(**kwargs)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU message")
def test_cuda_without_a_gpu_is_a_clear_error():
    with pytest.raises(ZeroGNNError, match="cpu"):
        make_synthetic("tiny", device="cuda")


def test_scaled_keeps_a_minimum_size():
    spec = scaled(SYNTHETIC["arxiv-like"], 1e-9)
    assert spec.num_nodes == 64 and spec.num_edges == 64
    half = scaled(SYNTHETIC["arxiv-like"], 0.5)
    assert (half.num_nodes, half.num_edges) == (84_672, 1_157_799)
    with pytest.raises(ZeroGNNError):
        scaled(spec, -1)


def test_smallest_scales_still_build():
    for name in SYNTHETIC:
        make_synthetic(name, scale=1e-9).check()


def test_make_dataset_dispatch(tmp_path):
    assert set(SYNTHETIC) < set(KNOWN_DATASETS) and "ogbn-arxiv" in KNOWN_DATASETS
    assert make_dataset("tiny", tmp_path / "t", device="cpu").num_nodes == 2000
    with pytest.raises(ZeroGNNError, match="ogbn-products"):
        make_dataset("nope", tmp_path / "x")
    with pytest.raises(ZeroGNNError, match="scaled"):
        make_dataset("ogbn-arxiv", tmp_path / "x", scale=0.5)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cpu_and_cuda_generate_the_same_dataset(tiny):
    _same(make_synthetic("tiny", device="cuda"), tiny, features=False)
    on_gpu = make_synthetic("arxiv-like", scale=0.05, device="cuda")
    _same(on_gpu, make_synthetic("arxiv-like", scale=0.05), features=False)


# Regenerated features (papers100M-like): not on disk, computed where the dataset is loaded.

PAPERS_SCALE = 2e-5  # 2,221 nodes


@pytest.fixture(scope="module")
def papers_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("papers") / "papers100M-like"
    make_synthetic("papers100M-like", scale=PAPERS_SCALE, out_dir=out)
    return out


def test_regenerated_features_are_not_stored_and_load_as_the_in_memory_build(papers_dir):
    assert not (papers_dir / "features.npy").exists() and (papers_dir / "col.npy").exists()
    loaded = load_dataset(papers_dir, check=True)
    assert loaded.meta["features"] == "regenerated"
    assert loaded.features.dtype == torch.float32 and loaded.features.shape == (loaded.num_nodes, 128)
    _same(loaded, make_synthetic("papers100M-like", scale=PAPERS_SCALE))
    loaded.check()


def test_regenerated_features_on_meta_are_sizes_only(papers_dir):
    ds = load_dataset(papers_dir, features_on="meta")
    assert ds.features.is_meta and ds.num_features == 128
    ds.check()


def test_stored_datasets_say_so(tmp_path):
    make_synthetic("tiny", out_dir=tmp_path / "tiny")
    assert load_dataset(tmp_path / "tiny").meta["features"] == "stored"


def test_disk_estimate_leaves_out_regenerated_features():
    papers = scaled(SYNTHETIC["papers100M-like"], 1.0)
    assert papers.disk_bytes() < 30e9, "rowptr, raw col, labels and splits only"
    stored = scaled(SYNTHETIC["products-like"], 1.0)
    assert stored.disk_bytes() > stored.num_nodes * stored.num_features * 4


@pytest.mark.parametrize("meta_change, problem", [
    ({"features": "fp16"}, "features = 'fp16'"),
    ({"feature_noise": None}, "feature_noise = None"),
    ({"seed": -1}, "seed = -1"),
])
def test_a_bad_feature_mode_is_one_line(papers_dir, tmp_path, meta_change, problem):
    import json
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(papers_dir, copy)
    meta = json.loads((copy / "meta.json").read_text()) | meta_change
    (copy / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ZeroGNNError, match="rebuild") as err:
        load_dataset(copy)
    assert problem in str(err.value) and "\n" not in str(err.value)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_regenerated_features_on_the_gpu_match_the_cpu_to_rounding(papers_dir):
    on_gpu = load_dataset(papers_dir, features_on="cuda")
    assert on_gpu.features.is_cuda
    assert torch.allclose(on_gpu.features.cpu(), load_dataset(papers_dir).features, atol=1e-5)
