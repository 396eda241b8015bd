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


# Corruptions: each writes one bad array (or meta key) into a valid copy of tiny. The message must be
# one line naming the directory, the file and the problem, and how to rebuild.

N, E, F, C = 2000, 20000, 16, 4


def _array(directory, key):
    return np.load(directory / f"{key}.npy")


def _save(directory, key, arr) -> None:
    np.save(directory / f"{key}.npy", arr)


def _assert_clear(err, directory, what: str) -> None:
    message = str(err.value)
    assert "\n" not in message
    assert str(directory) in message and what in message
    assert "zerognn dataset make" in message


def _set(key, index, value):
    def corrupt(d):
        arr = _array(d, key)
        arr[index] = value
        _save(d, key, arr)

    return corrupt


def _retype(key, dtype):
    return lambda d: _save(d, key, _array(d, key).astype(dtype))


def _reshape(key, make):
    return lambda d: _save(d, key, make(_array(d, key)))


def _decreasing_rowptr(d):
    rowptr = _array(d, "rowptr")
    rowptr[1000] = rowptr[1002] + 1
    _save(d, "rowptr", rowptr)


def _unlabelled_train_node(d):
    labels = _array(d, "labels")
    labels[_array(d, "train_idx")[7]] = -1
    _save(d, "labels", labels)


FAST = {
    # wrong dtype
    "rowptr int32": (_retype("rowptr", np.int32), "rowptr.npy has dtype int32"),
    "rowptr byte-swapped": (_retype("rowptr", ">i8"), "rowptr.npy has dtype byte-swapped int64"),
    "col float32": (_retype("col", np.float32), "col.npy has dtype float32"),
    "col uint32": (_retype("col", np.uint32), "col.npy has dtype uint32"),
    "features float64": (_retype("features", np.float64), "features.npy has dtype float64"),
    "labels int32": (_retype("labels", np.int32), "labels.npy has dtype int32"),
    "labels float": (_retype("labels", np.float32), "labels.npy has dtype float32"),
    "train_idx int32": (_retype("train_idx", np.int32), "train_idx.npy has dtype int32"),
    "val_idx float64": (_retype("val_idx", np.float64), "val_idx.npy has dtype float64"),
    "test_idx uint64": (_retype("test_idx", np.uint64), "test_idx.npy has dtype uint64"),
    # wrong shape or length
    "rowptr short": (_reshape("rowptr", lambda a: a[:-1]), "rowptr.npy has shape (2000,)"),
    "rowptr 2-D": (_reshape("rowptr", lambda a: a[:, None]), "rowptr.npy has shape (2001, 1)"),
    "col short": (_reshape("col", lambda a: a[:-1]), "col.npy has shape (19999,)"),
    "features narrow": (_reshape("features", lambda a: a[:, :-1]), "features.npy has shape (2000, 15)"),
    "features short": (_reshape("features", lambda a: a[:-1]), "features.npy has shape (1999, 16)"),
    "features 1-D": (_reshape("features", lambda a: a.reshape(-1)), "features.npy has shape (32000,)"),
    "labels long": (_reshape("labels", lambda a: np.append(a, 0)), "labels.npy has shape (2001,)"),
    "labels 2-D": (_reshape("labels", lambda a: a[:, None]), "labels.npy has shape (2000, 1)"),
    "train_idx 2-D": (_reshape("train_idx", lambda a: a[:, None]), "train_idx.npy has shape"),
    # CSR pointers
    "rowptr starts at 1": (_set("rowptr", 0, 1), "rowptr.npy runs from 1 to 20000"),
    "rowptr ends short": (_set("rowptr", -1, E - 1), "rowptr.npy runs from 0 to 19999"),
    "rowptr decreases": (_decreasing_rowptr, "rowptr.npy decreases at node 1000"),
    # id and label ranges
    "col negative": (_set("col", 5, -1), "col.npy holds node ids outside [0, 2000)"),
    "col too large": (_set("col", -1, N), "col.npy holds node ids outside [0, 2000)"),
    "label too large": (_set("labels", 3, C), "labels.npy holds labels"),
    "label below -1": (_set("labels", 3, -2), "labels.npy holds labels"),
    "unlabelled train node": (_unlabelled_train_node, "labels.npy has label -1 for node"),
    "train_idx too large": (_set("train_idx", -1, N), "train_idx.npy holds node ids outside [0, 2000)"),
    "train_idx negative": (_set("train_idx", 0, -1), "train_idx.npy holds node ids outside"),
    "val_idx too large": (_set("val_idx", 0, N + 10), "val_idx.npy holds node ids outside"),
    "test_idx negative": (_set("test_idx", 2, -5), "test_idx.npy holds node ids outside"),
    "empty train split": (lambda d: _save(d, "train_idx", np.array([], np.int64)), "train_idx.npy is empty"),
}

FULL_ONLY = {
    "NaN feature": (_set("features", (17, 3), np.nan), "features.npy has a non-finite value (NaN or Inf) in row 17"),
    "Inf feature": (_set("features", (1999, 0), np.inf), "row 1999"),
    "-Inf feature": (_set("features", (0, 15), -np.inf), "row 0"),
    "train node in val": (
        lambda d: _save(d, "val_idx", np.append(_array(d, "val_idx"), _array(d, "train_idx")[0])),
        "val_idx.npy repeats node",
    ),
    "repeated train node": (
        lambda d: _save(d, "train_idx", np.sort(np.append(_array(d, "train_idx"), _array(d, "train_idx")[3]))),
        "train_idx.npy repeats node",
    ),
}


@pytest.mark.parametrize("case", list(FAST))
def test_structural_corruption_is_caught_on_every_load(dataset_dir, case):
    corrupt, what = FAST[case]
    corrupt(dataset_dir)
    for check in (False, True):
        with pytest.raises(ZeroGNNError) as err:
            load_dataset(dataset_dir, check=check)
        _assert_clear(err, dataset_dir, what)
        assert "--force" in str(err.value), "meta.json is intact: a forced rebuild replaces it"


@pytest.mark.parametrize("case", list(FULL_ONLY))
def test_value_corruption_is_caught_by_the_full_check(dataset_dir, case):
    corrupt, what = FULL_ONLY[case]
    corrupt(dataset_dir)
    load_dataset(dataset_dir)
    with pytest.raises(ZeroGNNError) as err:
        load_dataset(dataset_dir, check=True)
    _assert_clear(err, dataset_dir, what)


def test_unlabelled_nodes_outside_the_splits_are_valid(dataset_dir):
    test_idx = _array(dataset_dir, "test_idx")
    _save(dataset_dir, "test_idx", test_idx[1:])
    _set("labels", int(test_idx[0]), -1)(dataset_dir)
    ds = load_dataset(dataset_dir, check=True)
    assert int(ds.labels[int(test_idx[0])]) == -1


@pytest.mark.parametrize("array", ["rowptr", "labels", "train_idx", "val_idx"])
def test_every_missing_array_says_rebuild(dataset_dir, array):
    (dataset_dir / f"{array}.npy").unlink()
    with pytest.raises(ZeroGNNError) as err:
        load_dataset(dataset_dir)
    _assert_clear(err, dataset_dir, f"{array}.npy is missing")


def test_a_pickled_object_array_is_unreadable_not_loaded(dataset_dir):
    np.save(dataset_dir / "labels.npy", np.array([{"x": 1}] * N, dtype=object), allow_pickle=True)
    with pytest.raises(ZeroGNNError) as err:
        load_dataset(dataset_dir)
    _assert_clear(err, dataset_dir, "labels.npy is unreadable")


@pytest.mark.parametrize("key", ["name", "num_nodes", "num_edges", "num_features", "num_classes"])
def test_meta_missing_a_key_says_rebuild(dataset_dir, key):
    meta = json.loads((dataset_dir / "meta.json").read_text())
    del meta[key]
    (dataset_dir / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ZeroGNNError) as err:
        load_dataset(dataset_dir)
    _assert_clear(err, dataset_dir, f"meta.json lacks the key '{key}'")


def test_meta_missing_the_format_version_says_rebuild(dataset_dir):
    meta = json.loads((dataset_dir / "meta.json").read_text())
    del meta["format_version"]
    (dataset_dir / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ZeroGNNError) as err:
        load_dataset(dataset_dir)
    _assert_clear(err, dataset_dir, "format version None")


@pytest.mark.parametrize(
    "key, value, what",
    [
        ("name", 5, "meta.json has name = 5, expected a non-empty string"),
        ("name", "", "meta.json has name = '', expected a non-empty string"),
        ("num_nodes", "2000", "meta.json has num_nodes = '2000', expected an integer"),
        ("num_nodes", 2000.0, "meta.json has num_nodes = 2000.0, expected an integer"),
        ("num_nodes", 0, "meta.json has num_nodes = 0, expected at least 1"),
        ("num_edges", -1, "meta.json has num_edges = -1, expected at least 0"),
        ("num_edges", None, "meta.json has num_edges = None, expected an integer"),
        ("num_features", 0, "meta.json has num_features = 0, expected at least 1"),
        ("num_classes", True, "meta.json has num_classes = True, expected an integer"),
        ("num_classes", 0, "meta.json has num_classes = 0, expected at least 1"),
        ("num_classes", [4], "meta.json has num_classes = [4], expected an integer"),
        ("format_version", "1", "format version '1'"),
    ],
)
def test_meta_with_a_wrongly_typed_value_says_rebuild(dataset_dir, key, value, what):
    _edit_meta(dataset_dir, **{key: value})
    with pytest.raises(ZeroGNNError) as err:
        load_dataset(dataset_dir)
    _assert_clear(err, dataset_dir, what)


def test_meta_that_is_not_an_object_says_rebuild(dataset_dir):
    (dataset_dir / "meta.json").write_text("[1, 2]")
    with pytest.raises(ZeroGNNError) as err:
        load_dataset(dataset_dir)
    _assert_clear(err, dataset_dir, "not an object")


def test_more_classes_in_meta_than_labels_use_is_fine_fewer_is_not(dataset_dir):
    _edit_meta(dataset_dir, num_classes=C + 3)
    assert load_dataset(dataset_dir, check=True).num_classes == C + 3
    _edit_meta(dataset_dir, num_classes=C - 1)
    with pytest.raises(ZeroGNNError, match="labels.npy holds labels"):
        load_dataset(dataset_dir)


def test_in_memory_datasets_get_the_same_checks(dataset_dir):
    ds = load_dataset(dataset_dir, mmap=False)
    ds.check()
    ds.features[5, 5] = float("nan")
    ds.check(full=False)
    with pytest.raises(ZeroGNNError, match="dataset tiny: features has a non-finite value"):
        ds.check()
