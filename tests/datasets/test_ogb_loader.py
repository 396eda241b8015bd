"""The OGB loader, offline: a tiny ogbn-arxiv written in OGB's on-disk layout, read through ogb itself."""

from __future__ import annotations

import gzip
import sys
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import torch

from zerognn.datasets import load_dataset, make_dataset
from zerognn.datasets.ogb_loader import _labels, _split, load_ogb
from zerognn.errors import ZeroGNNError
from zerognn.graph import CSRGraph

N, F = 30, 8


def _csv(path: Path, rows) -> None:
    with gzip.open(path, "wt") as f:
        f.writelines(",".join(repr(v) for v in row) + "\n" for row in rows)


def write_ogbn_arxiv(root: Path, seed: int = 0) -> dict:
    """Write ogbn-arxiv's layout (master.csv: csv files, split 'time', node_year, no inverse edges, v1)."""
    rng = np.random.default_rng(seed)
    base = root / "ogbn_arxiv"
    raw, split = base / "raw", base / "split" / "time"
    for d in (raw, split, base / "processed", base / "mapping"):
        d.mkdir(parents=True)
    (base / "RELEASE_v1.txt").write_text("ogbn-arxiv test fixture\n")
    edges = rng.integers(0, N, size=(60, 2))
    edges[0] = (4, 4)  # a self loop
    edges[1] = edges[2][::-1]  # an edge and its reverse
    edges[3] = edges[4]  # a duplicate
    features = rng.standard_normal((N, F)).astype(np.float32)
    labels = rng.integers(0, 3, N)
    order = rng.permutation(N)
    idx = {"train": order[:18], "valid": order[18:24], "test": order[24:]}
    _csv(raw / "edge.csv.gz", edges.tolist())
    _csv(raw / "node-feat.csv.gz", [[float(v) for v in row] for row in features])
    _csv(raw / "node-label.csv.gz", [[int(v)] for v in labels])
    _csv(raw / "node_year.csv.gz", [[int(v)] for v in rng.integers(1990, 2020, N)])
    _csv(raw / "num-node-list.csv.gz", [[N]])
    _csv(raw / "num-edge-list.csv.gz", [[len(edges)]])
    for key, ids in idx.items():
        _csv(split / f"{key}.csv.gz", [[int(v)] for v in ids])
    return {"edges": edges, "features": features, "labels": labels, "idx": idx}


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the test touched the network")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_converts_the_ogb_layout(tmp_path, no_network):
    truth = write_ogbn_arxiv(tmp_path / "ogb")
    ds = load_ogb("ogbn-arxiv", tmp_path / "ogb", tmp_path / "out")
    assert (tmp_path / "ogb" / "ogbn_arxiv" / "processed" / "data_processed").is_file()
    src, dst = torch.from_numpy(truth["edges"]).T
    expected = CSRGraph.from_edges(torch.cat([src, dst]), torch.cat([dst, src]), N)
    assert torch.equal(ds.graph.rowptr, expected.rowptr)
    assert torch.equal(ds.graph.col, expected.col) and ds.graph.col.dtype == torch.int32
    assert torch.equal(ds.features, torch.from_numpy(truth["features"]))
    assert torch.equal(ds.labels, torch.from_numpy(truth["labels"]).long())
    for ours, theirs in (("train_idx", "train"), ("val_idx", "valid"), ("test_idx", "test")):
        assert torch.equal(getattr(ds, ours), torch.from_numpy(np.sort(truth["idx"][theirs])).long())
    assert ds.num_classes == 40 and ds.meta["source"] == "ogb" and ds.name == "ogbn-arxiv"
    load_dataset(tmp_path / "out", check=True)

    # The second read goes through ogb's processed cache, which a bare torch.load (torch >= 2.6) refuses.
    with pytest.raises(Exception, match="Weights only load failed"):
        torch.load(tmp_path / "ogb" / "ogbn_arxiv" / "processed" / "data_processed")
    with pytest.raises(ZeroGNNError, match="already holds the dataset 'ogbn-arxiv'.*--force"):
        make_dataset("ogbn-arxiv", tmp_path / "out", device="cpu", ogb_root=tmp_path / "ogb")
    again = make_dataset("ogbn-arxiv", tmp_path / "out", device="cpu", ogb_root=tmp_path / "ogb", force=True)
    assert torch.equal(again.graph.col, ds.graph.col) and torch.equal(again.features, ds.features)


def test_missing_processed_directory_is_created(tmp_path, no_network):
    write_ogbn_arxiv(tmp_path / "ogb")
    (tmp_path / "ogb" / "ogbn_arxiv" / "processed").rmdir()
    assert load_ogb("ogbn-arxiv", tmp_path / "ogb", tmp_path / "out").num_nodes == N


def test_absent_files_and_no_network_is_a_clear_error(tmp_path, no_network, monkeypatch):
    from ogb.nodeproppred import dataset as ogb_module

    def offline(url, folder, log=True):
        raise urllib.error.URLError("network is unreachable")

    monkeypatch.setattr(ogb_module, "download_url", offline)
    with pytest.raises(ZeroGNNError) as err:
        load_ogb("ogbn-arxiv", tmp_path / "ogb", tmp_path / "out")
    message = str(err.value)
    assert "ogbn-arxiv" in message and str(tmp_path / "ogb") in message and "network" in message
    assert "RELEASE_v1.txt" in message
    assert not (tmp_path / "out").exists()
    assert ogb_module.decide_download.__module__ == "ogb.utils.url", "patches are undone"


def test_missing_release_file_is_an_error_not_a_prompt(tmp_path, no_network, monkeypatch):
    write_ogbn_arxiv(tmp_path / "ogb")
    (tmp_path / "ogb" / "ogbn_arxiv" / "RELEASE_v1.txt").unlink()
    closed = open(tmp_path / "stdin", "w+")
    closed.close()
    monkeypatch.setattr(sys, "stdin", closed)
    with pytest.raises(ZeroGNNError, match="RELEASE_v1.txt"):
        load_ogb("ogbn-arxiv", tmp_path / "ogb", tmp_path / "out")


def test_damaged_files_are_a_clear_error(tmp_path, no_network):
    write_ogbn_arxiv(tmp_path / "ogb")
    (tmp_path / "ogb" / "ogbn_arxiv" / "raw" / "num-node-list.csv.gz").unlink()
    with pytest.raises(ZeroGNNError, match="delete"):
        load_ogb("ogbn-arxiv", tmp_path / "ogb", tmp_path / "out")


def test_unknown_name_is_rejected(tmp_path):
    with pytest.raises(ZeroGNNError, match="ogbn-papers100M"):
        load_ogb("ogbn-mag", tmp_path, tmp_path / "out")


def test_missing_labels_become_minus_one_and_leave_the_splits():
    labels = _labels(np.array([[1.0], [np.nan], [3.0], [np.nan]]))
    assert labels.tolist() == [1, -1, 3, -1] and labels.dtype == np.int64
    assert _split(np.array([3, 2, 1, 0]), labels).tolist() == [0, 2]


def test_a_split_naming_a_node_outside_the_graph_is_one_line():
    import numpy as np

    from zerognn.datasets.ogb_loader import _split
    from zerognn.errors import ZeroGNNError

    labels = np.array([0, 1, -1])
    assert list(_split([2, 0, 1], labels, "train")) == [0, 1]  # sorted, unlabelled left out
    with pytest.raises(ZeroGNNError, match="the valid split names node 3, outside the graph's 3 nodes"):
        _split([0, 3], labels, "valid")
