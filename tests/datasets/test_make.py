"""Building datasets safely: what ``--out`` may replace, the full check before publishing, disk space
and full disks, stale temporaries, and argument checks before any work."""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
import socket
from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest
import torch

from zerognn.atomic import OWNER_MARKER
from zerognn.datasets import SYNTHETIC, build, load_dataset, make_dataset, ogb_loader, synthetic
from zerognn.datasets.build import create_npy
from zerognn.datasets.specs import FIXED_BYTES, SyntheticSpec, scaled
from zerognn.datasets.store import DATASET_FILES
from zerognn.errors import ZeroGNNError

from .test_ogb_loader import no_network, write_ogbn_arxiv  # noqa: F401 (a fixture)


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if a synthetic build gets as far as drawing edges."""

    def refuse(*args, **kwargs):
        raise AssertionError("the build started before its arguments and target were checked")

    monkeypatch.setattr(synthetic.rmat, "draws_for_target", refuse)


@pytest.fixture
def built(tiny_dataset_dir, tmp_path) -> Path:
    """A copy of the tiny dataset at tmp_path/data (seed 0)."""
    out = tmp_path / "data"
    shutil.copytree(tiny_dataset_dir, out)
    return out


def _only(parent: Path, *names: str) -> None:
    assert sorted(p.name for p in parent.iterdir()) == sorted(names), "no temporary directory left behind"


def _make(out: Path, **kwargs):
    return make_dataset("tiny", out, device="cpu", **kwargs)


def test_an_empty_directory_is_built_into(tmp_path):
    (tmp_path / "data").mkdir()
    assert _make(tmp_path / "data").num_nodes == 2000
    assert set(p.name for p in (tmp_path / "data").iterdir()) == DATASET_FILES, "no owner marker published"
    _only(tmp_path, "data")


@pytest.mark.parametrize("force", [False, True])
def test_a_file_is_never_replaced(tmp_path, no_work, force):
    (tmp_path / "data").write_text("precious")
    with pytest.raises(ZeroGNNError, match="data is a file.*choose an empty or new --out"):
        _make(tmp_path / "data", force=force)
    assert (tmp_path / "data").read_text() == "precious"
    _only(tmp_path, "data")


@pytest.mark.parametrize("force", [False, True])
def test_a_directory_of_other_files_is_never_replaced(tmp_path, no_work, force):
    data = tmp_path / "data"
    (data / "tiny").mkdir(parents=True)
    (data / "notes.txt").write_text("mine")
    (data / "ogb").mkdir()
    with pytest.raises(ZeroGNNError) as err:
        _make(data, force=force)
    message = str(err.value)
    assert "holds files that are not a zerognn dataset (3 entries, e.g. 'notes.txt')" in message
    assert "choose an empty or new --out" in message and "\n" not in message
    assert sorted(p.name for p in data.iterdir()) == ["notes.txt", "ogb", "tiny"]
    _only(tmp_path, "data")


@pytest.mark.parametrize(
    "meta", ["{not json", json.dumps({"format_version": 99, "name": "tiny"}), json.dumps({"format_version": 1})]
)
def test_a_directory_with_a_foreign_meta_json_is_never_replaced(tmp_path, no_work, meta):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "meta.json").write_text(meta)
    with pytest.raises(ZeroGNNError, match="not a zerognn dataset"):
        _make(tmp_path / "data", force=True)
    assert (tmp_path / "data" / "meta.json").read_text() == meta


def test_a_dataset_with_extra_files_is_never_replaced(built, no_work):
    (built / "README").write_text("my notes")
    with pytest.raises(ZeroGNNError, match="e.g. 'README'"):
        _make(built, force=True)
    assert (built / "README").is_file()


def test_a_symbolic_link_is_never_replaced(tmp_path, no_work):
    (tmp_path / "real").mkdir()
    (tmp_path / "data").symlink_to(tmp_path / "real")
    with pytest.raises(ZeroGNNError, match="symbolic link"):
        _make(tmp_path / "data", force=True)
    assert (tmp_path / "data").is_symlink()


def test_a_dataset_is_replaced_only_with_force(built, no_work, monkeypatch):
    with pytest.raises(ZeroGNNError, match=r"already holds the dataset 'tiny'; pass --force to replace it"):
        _make(built, seed=3)
    assert load_dataset(built).meta["seed"] == 0
    monkeypatch.undo()
    assert _make(built, seed=3, force=True).meta["seed"] == 3
    assert load_dataset(built, check=True).meta["seed"] == 3
    _only(built.parent, "data")


def test_a_dataset_the_workflow_built_is_replaced_with_force(built, no_work, monkeypatch):
    (built / ".snakemake_timestamp").write_text("")  # Snakemake's mark on a directory() output
    with pytest.raises(ZeroGNNError, match=r"already holds the dataset 'tiny'; pass --force to replace it"):
        _make(built, seed=3)
    monkeypatch.undo()
    assert _make(built, seed=3, force=True).meta["seed"] == 3
    _only(built.parent, "data")


def test_the_ogb_converter_checks_the_target_before_reading(tmp_path, no_network):  # noqa: F811
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_text("x")
    with pytest.raises(ZeroGNNError, match="not a zerognn dataset"):
        make_dataset("ogbn-arxiv", tmp_path / "out", device="cpu", ogb_root=tmp_path / "ogb", force=True)
    assert not (tmp_path / "ogb").exists(), "ogb was not asked to read or download anything"


# The full check before publishing.


def test_a_build_with_non_finite_features_is_not_published(built, monkeypatch):
    fill = synthetic.fill_features

    def with_nan(out, *args):
        fill(out, *args)
        out[11, 2] = np.nan

    monkeypatch.setattr(synthetic, "fill_features", with_nan)
    with pytest.raises(ZeroGNNError) as err:
        _make(built, seed=4, force=True)
    message = str(err.value)
    assert "tiny build produced an invalid dataset" in message and "features.npy" in message
    assert "row 11" in message and "was left as it was" in message and "\n" not in message
    assert load_dataset(built, check=True).meta["seed"] == 0
    _only(built.parent, "data")


def test_a_build_with_bad_labels_is_not_published(tmp_path, monkeypatch):
    save = np.save

    def labels_off_by_one(path, arr, *args, **kwargs):
        save(path, arr + 1 if Path(path).name == "labels.npy" else arr, *args, **kwargs)

    monkeypatch.setattr(np, "save", labels_off_by_one)
    with pytest.raises(ZeroGNNError, match="invalid dataset.*labels.npy holds labels outside"):
        _make(tmp_path / "data")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_an_ogb_conversion_with_bad_labels_is_not_published(tmp_path, no_network, monkeypatch):  # noqa: F811
    write_ogbn_arxiv(tmp_path / "ogb")
    monkeypatch.setattr(ogb_loader, "_labels", lambda raw: np.full(np.asarray(raw).size, 99, dtype=np.int64))
    with pytest.raises(ZeroGNNError) as err:
        make_dataset("ogbn-arxiv", tmp_path / "out", device="cpu", ogb_root=tmp_path / "ogb")
    assert "labels.npy holds labels outside [-1, 40)" in str(err.value)
    assert "ogbn_arxiv may be damaged" in str(err.value)
    _only(tmp_path, "ogb")


# Disk space.


def _free_bytes(monkeypatch, free: int) -> None:
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(build.shutil, "disk_usage", lambda path: usage(10**12, 10**12 - free, free))


def test_too_little_free_space_is_refused_before_any_work(built, no_work, monkeypatch):
    _free_bytes(monkeypatch, 400_000)
    with pytest.raises(ZeroGNNError) as err:
        _make(built, force=True)
    message = str(err.value)
    assert message.startswith("tiny needs about ") and f"MB in {built.parent} and only 400.0 KB is free" in message
    assert message.endswith("free space or choose another --out.")
    assert load_dataset(built).meta["seed"] == 0
    _only(built.parent, "data")


def test_free_space_is_measured_where_the_directory_will_be(tmp_path, no_work, monkeypatch):
    seen = []
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(build.shutil, "disk_usage", lambda path: seen.append(Path(path)) or usage(1, 1, 0))
    with pytest.raises(ZeroGNNError, match="only 0.0 B is free"):
        _make(tmp_path / "not" / "yet" / "data")
    assert seen == [tmp_path]
    assert list(tmp_path.iterdir()) == []


def test_the_estimate_covers_what_a_build_writes(tmp_path):
    ds = _make(tmp_path / "data")
    on_disk = sum(p.stat().st_size for p in (tmp_path / "data").iterdir())
    raw_col = ds.meta["rmat_draws"] * 2 * 4
    estimate = SYNTHETIC["tiny"].disk_bytes()
    assert on_disk + raw_col - ds.graph.num_edges * 4 <= estimate < 4 * on_disk + FIXED_BYTES
    products = SYNTHETIC["products-like"].disk_bytes()
    assert 1.5e9 < products < 2.5e9


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_a_full_disk_while_allocating_is_a_clear_error(built, monkeypatch, code):
    def full(fd, offset, length):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "posix_fallocate", full, raising=False)
    with pytest.raises(ZeroGNNError) as err:
        _make(built, seed=2, force=True)
    message = str(err.value)
    assert f"the disk holding {built.parent} is full ({os.strerror(code)}) while building tiny" in message
    assert message.endswith("free space or choose another --out.") and "\n" not in message
    assert load_dataset(built, check=True).meta["seed"] == 0
    _only(built.parent, "data")


def test_a_full_disk_while_saving_is_a_clear_error(tmp_path, monkeypatch):
    save = np.save

    def full_on_labels(path, *args, **kwargs):
        if Path(path).name == "labels.npy":
            raise OSError(errno.ENOSPC, "No space left on device")
        save(path, *args, **kwargs)

    monkeypatch.setattr(np, "save", full_on_labels)
    with pytest.raises(ZeroGNNError, match="is full .No space left on device. while building tiny"):
        _make(tmp_path / "data")
    assert list(tmp_path.iterdir()) == []


def test_other_os_errors_are_not_disguised(tmp_path, monkeypatch):
    def denied(fd, offset, length):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "posix_fallocate", denied, raising=False)
    with pytest.raises(PermissionError):
        _make(tmp_path / "data")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "posix_fallocate"), reason="needs posix_fallocate")
def test_memory_mapped_outputs_are_allocated_up_front(tmp_path):
    arr = create_npy(tmp_path / "x.npy", np.float32, (1000, 64))
    size = (tmp_path / "x.npy").stat().st_size
    assert (tmp_path / "x.npy").stat().st_blocks * 512 >= size
    del arr


def test_stale_temporaries_of_killed_builds_are_removed_by_the_next_build(tmp_path):
    stale = tmp_path / ".data.k1ll3d.tmp"
    stale.mkdir()
    (stale / "col.npy").write_bytes(b"\0" * 1000)
    # Above Linux's largest pid_max (2^22), so no process has it.
    owner = {"host": socket.gethostname(), "pid": 2**22 + 12345, "target": "data"}
    (stale / OWNER_MARKER).write_text(json.dumps(owner))
    foreign = tmp_path / ".data.nomark.tmp"
    foreign.mkdir()
    _make(tmp_path / "data")
    _only(tmp_path, "data", ".data.nomark.tmp")


# Arguments are checked before any work.


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"name": "cora"}, "unknown dataset 'cora'.*ogbn-arxiv"),
        ({"scale": 0}, "positive finite"),
        ({"scale": -1.0}, "positive finite"),
        ({"scale": float("nan")}, "positive finite"),
        ({"scale": float("inf")}, "positive finite"),
        ({"scale": True}, "positive finite"),
        ({"scale": "0.5"}, "positive finite"),
        ({"scale": 1e308}, "larger than any graph"),
        ({"name": "papers100M-like", "scale": 100.0}, "R-MAT graph needs 2 to"),
        ({"seed": -1}, "seed must be an integer in \\[0, 2\\^63\\)"),
        ({"seed": 2**63}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"seed": True}, "seed"),
        ({"name": "ogbn-arxiv", "scale": float("nan")}, "positive finite"),
        ({"name": "ogbn-arxiv", "seed": -3}, "seed"),
        ({"name": "ogbn-arxiv", "scale": 0.5}, "cannot be scaled"),
    ],
)
def test_bad_arguments_are_refused_before_any_work(tmp_path, no_work, kwargs, message):
    kwargs = {"name": "tiny", **kwargs}
    with pytest.raises(ZeroGNNError, match=message):
        make_dataset(out_dir=tmp_path / "data", device="cpu", ogb_root=tmp_path / "ogb", **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_numpy_scalars_are_accepted_and_stored_as_json_numbers(tmp_path):
    ds = make_dataset("tiny", tmp_path / "data", scale=np.float32(0.5), seed=np.int64(7), device="cpu")
    assert ds.meta["scale"] == 0.5 and ds.meta["seed"] == 7 and ds.num_nodes == 1000


def test_the_smallest_scales_give_valid_graphs_with_every_split():
    for spec in SYNTHETIC.values():
        small = scaled(spec, 5e-324)
        assert small.num_nodes >= 64 and min(small.split_sizes()) >= 1
        assert sum(small.split_sizes()) <= small.num_nodes and math.isfinite(small.disk_bytes())


@pytest.mark.parametrize(
    "sizes, message",
    [
        ((1, 10), "too few"),
        ((10, 1), "too few"),
        ((10, 20, 0.98, 0.01, 0.01), "do not fit 10 nodes"),
    ],
)
def test_specs_that_could_not_build_are_refused(sizes, message):
    nodes, edges, *fracs = sizes
    fracs = fracs or [0.5, 0.25, 0.25]
    with pytest.raises(ZeroGNNError, match=message):
        SyntheticSpec("x", nodes, edges, 4, 2, *fracs)


def test_in_memory_builds_are_unaffected():
    ds = synthetic.make_synthetic("tiny")
    ds.check()
    assert isinstance(ds.features, torch.Tensor) and ds.num_nodes == 2000
