"""Splits drawn without scikit-learn have scikit-learn's membership, for many sizes, seeds and labels."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from sklearn.model_selection import KFold, ShuffleSplit, StratifiedShuffleSplit

from brainscore.errors import ValidationError
from brainscore.metrics.splits import (SplitConfig, kfold, shuffle_split, split_indices,
                                       stratified_shuffle_split)


def _same(ours, theirs):
    theirs = list(theirs)
    assert len(ours) == len(theirs)
    for (train, test), (train_ref, test_ref) in zip(ours, theirs):
        np.testing.assert_array_equal(train, train_ref)  # same members in the same order
        np.testing.assert_array_equal(test, test_ref)


@pytest.mark.parametrize("n", [10, 37, 100, 640, 1001])
@pytest.mark.parametrize("seed", [0, 1, 42])
@pytest.mark.parametrize("train_size,test_size", [(0.9, None), (0.5, None), (None, 0.25), (0.6, 0.3), (None, None)])
def test_shuffle_split_is_scikit_learns(n, seed, train_size, test_size):
    ours = shuffle_split(n, 10, train_size, test_size, seed)
    _same(ours, ShuffleSplit(10, train_size=train_size, test_size=test_size, random_state=seed).split(np.zeros(n)))


@pytest.mark.parametrize("n", [10, 37, 100, 1001])
@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("splits", [2, 5, 10])
def test_kfold_is_scikit_learns(n, seed, splits):
    _same(kfold(n, splits, seed), KFold(splits, shuffle=True, random_state=seed).split(np.zeros(n)))


def _layouts(rng):
    return {
        "balanced": np.repeat(np.arange(8), 80),                        # 8 objects x 80 images (sorted)
        "interleaved": np.tile(np.array(["car", "face", "fruit", "animal"]), 50),
        "unequal": np.array([0] * 3 + [1] * 17 + [2] * 40 + [3] * 5 + [4] * 2),  # ties and remainders
        "shuffled strings": rng.choice(np.array(["a", "b", "c", "d", "e", "f", "g"]), 333),
        "two classes": np.array([1, 0] * 25 + [1] * 11),
    }


@pytest.mark.parametrize("layout", ["balanced", "interleaved", "unequal", "shuffled strings", "two classes"])
@pytest.mark.parametrize("seed", [0, 1, 123])
@pytest.mark.parametrize("train_size,test_size", [(0.9, None), (0.5, None), (0.7, 0.2)])
def test_stratified_shuffle_split_is_scikit_learns(layout, seed, train_size, test_size):
    labels = _layouts(np.random.RandomState(5))[layout]
    try:
        reference = list(StratifiedShuffleSplit(10, train_size=train_size, test_size=test_size,
                                                random_state=seed).split(np.zeros(len(labels)), labels))
    except ValueError:  # too few members for this size: we refuse too
        with pytest.raises(ValidationError):
            stratified_shuffle_split(labels, 10, train_size, test_size, seed)
        return
    _same(stratified_shuffle_split(labels, 10, train_size, test_size, seed), reference)


def test_split_indices_dispatch_matches_scikit_learn():
    labels = np.repeat(np.array(["a", "b", "c", "d"]), 25)
    _same(split_indices(100, SplitConfig(), labels),
          StratifiedShuffleSplit(10, train_size=0.9, random_state=1).split(np.zeros(100), labels))
    _same(split_indices(100, SplitConfig(stratification_coord=None)),
          ShuffleSplit(10, train_size=0.9, random_state=1).split(np.zeros(100)))


def test_unique_per_image_labels_get_a_clear_error():
    # the reference's packaging convention on some data: object_name unique per image
    labels = np.array([f"image{i}" for i in range(400)])
    with pytest.raises(ValidationError, match=r"'object_name'.*400 of its 400 values occur only once"
                                              r".*stratification_coord': None"):
        split_indices(400, SplitConfig(), labels)


def test_splits_do_not_import_scikit_learn():
    code = ("import sys, numpy as np; from brainscore.metrics.splits import split_indices, SplitConfig;"
            "split_indices(20, SplitConfig(), np.repeat([0, 1], 10));"
            "assert 'sklearn' not in sys.modules, 'sklearn imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


# ---- the one split/aggregate pair over an assembly coordinate (issue 38) -------------------------------------------
def _repeated_assembly():
    import xarray as xr

    ids = np.array(["c", "a", "c", "b", "a", "d", "b", "d"] * 3)
    objects = np.array([{"a": "x", "b": "y", "c": "x", "d": "y"}[i] for i in ids])
    return xr.DataArray(np.arange(len(ids), dtype=float), dims=("presentation",),
                        coords={"stimulus_id": ("presentation", ids), "object_name": ("presentation", objects)})


def test_assembly_splits_draws_presentations_or_first_seen_values():
    from brainscore.metrics.splits import FIRST_SEEN_VALUES, assembly_splits, presentation_folds

    assembly = _repeated_assembly()
    config = SplitConfig(splits=3, train_size=0.5, test_size=None, stratification_coord=None)
    values, folds = assembly_splits(assembly, config, over=FIRST_SEEN_VALUES)
    assert values.tolist() == ["c", "a", "b", "d"]  # first-seen order, not sorted
    assert [(t.tolist(), s.tolist()) for t, s in folds] == [(t.tolist(), s.tolist()) for t, s in shuffle_split(4, 3, 0.5)]
    values, folds = assembly_splits(assembly, config)
    assert len(values) == 24 and len(folds[0][0]) == 12  # every presentation drawn
    for (train, test), (drawn_train, drawn_test) in zip(presentation_folds(assembly, config), folds):
        # each side takes every presentation of a value drawn for it (as main's regression folds did)
        assert train.tolist() == np.flatnonzero(np.isin(values, values[drawn_train])).tolist()
        assert test.tolist() == np.flatnonzero(np.isin(values, values[drawn_test])).tolist()


def test_assembly_splits_says_what_is_missing():
    from brainscore.metrics.splits import FIRST_SEEN_VALUES, assembly_splits

    assembly = _repeated_assembly().drop_vars("object_name")
    with pytest.raises(ValidationError, match="cannot stratify the splits by 'object_name': the target has no such"):
        assembly_splits(assembly, SplitConfig())
    with pytest.raises(ValidationError, match="has no coordinate 'image_id' to split on"):
        assembly_splits(assembly, SplitConfig(split_coord="image_id"))
    values, folds = assembly_splits(assembly, SplitConfig(splits=2, train_size=0.5), over=FIRST_SEEN_VALUES,
                                    stratify_if_present=True)  # the reference transformations' leniency
    assert len(values) == 4 and len(folds) == 2


def test_mean_over_splits_numpy_propagates_nan_and_xarray_skips_it():
    import xarray as xr

    from brainscore.metrics.splits import mean_over_splits

    per_split = np.array([0.5, 0.7, 0.6, 0.8])
    center, error = mean_over_splits(per_split)
    assert center == per_split.mean() and error == per_split.std() / 2.0
    assert np.isnan(mean_over_splits(np.array([0.5, np.nan]))[0])
    center, error = mean_over_splits(xr.DataArray([0.5, np.nan, 0.7], dims=("split",)))
    assert float(center) == pytest.approx(0.6) and float(error) == pytest.approx(0.1 / np.sqrt(3))
