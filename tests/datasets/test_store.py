"""The on-disk store: damaged or outdated dataset directories are clear errors that name the fix."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from zerognn.datasets import load_dataset
from zerognn.datasets.store import FORMAT_VERSION
from zerognn.errors import ZeroGNNError


@pytest.fixture
def dataset_dir(tiny_dataset_dir, tmp_path):
    copy = tmp_path / "tiny"
    shutil.copytree(tiny_dataset_dir, copy)
    return copy


def _edit_meta(directory, **changes) -> None:
    meta = json.loads((directory / "meta.json").read_text())
    meta.update(changes)
    (directory / "meta.json").write_text(json.dumps(meta))


def test_a_good_directory_loads_memory_mapped(dataset_dir):
    ds = load_dataset(dataset_dir, check=True)
    assert ds.meta["format_version"] == FORMAT_VERSION
    assert isinstance(np.load(dataset_dir / "col.npy", mmap_mode="r"), np.memmap)


def test_missing_meta_names_the_build_command(dataset_dir):
    (dataset_dir / "meta.json").unlink()
    with pytest.raises(ZeroGNNError, match="zerognn dataset make"):
        load_dataset(dataset_dir)


def test_wrong_format_version_says_rebuild(dataset_dir):
    _edit_meta(dataset_dir, format_version=FORMAT_VERSION + 1)
    with pytest.raises(ZeroGNNError, match="version.*rebuild"):
        load_dataset(dataset_dir)


def test_invalid_meta_json_says_rebuild(dataset_dir):
    (dataset_dir / "meta.json").write_text("{not json")
    with pytest.raises(ZeroGNNError, match="rebuild"):
        load_dataset(dataset_dir)


@pytest.mark.parametrize("array", ["col", "features", "test_idx"])
def test_missing_array_says_rebuild(dataset_dir, array):
    (dataset_dir / f"{array}.npy").unlink()
    with pytest.raises(ZeroGNNError, match=f"{array}.npy.*rebuild"):
        load_dataset(dataset_dir)


def test_truncated_array_says_rebuild(dataset_dir):
    path = dataset_dir / "features.npy"
    path.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(ZeroGNNError, match="rebuild"):
        load_dataset(dataset_dir)


def test_sizes_disagreeing_with_meta_say_rebuild(dataset_dir):
    _edit_meta(dataset_dir, num_edges=12345)
    with pytest.raises(ZeroGNNError, match="12345.*rebuild"):
        load_dataset(dataset_dir)
