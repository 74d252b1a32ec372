"""Cross-validation splits over stimuli, as Brain-Score builds them.

Splits are drawn on the presentation order of the *target* assembly exactly as scikit-learn's
splitters draw them (the reference calls them on ``np.zeros(n)`` and the stratification labels in
that order), so the same target order and seed give the same split membership as the reference.
With a stratification coordinate they are scikit-learn's ``StratifiedShuffleSplit``, otherwise
``ShuffleSplit``; ``kfold=True`` switches to (Stratified)KFold with shuffling. Defaults: 10 splits,
train size 0.9, seed 1 (Schrimpf et al. 2018).

ShuffleSplit, StratifiedShuffleSplit and KFold are re-drawn here with numpy's ``RandomState`` in the
same order of random calls as scikit-learn 1.x (``sklearn/model_selection/_split.py``), because
importing scikit-learn costs seconds at start-up; tests compare the membership against
scikit-learn itself. StratifiedKFold, rarely used, still calls scikit-learn.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from brainscore.errors import ValidationError


@dataclass(frozen=True)
class SplitConfig:
    """Parameters of cross-validation over stimuli.

    Parameters
    ----------
    splits : int
        Number of splits (folds with ``kfold``).
    train_size, test_size : float or None
        Fractions, as scikit-learn takes them (``test_size=None`` means the complement).
    split_coord : str
        Presentation coordinate whose values are split (each value wholly in train or test).
    stratification_coord : str or None
        Presentation coordinate to stratify by; None for plain shuffle splits.
    kfold : bool
        Use (Stratified)KFold(shuffle=True) instead of shuffle splits.
    random_state : int
        Seed.
    """

    splits: int = 10
    train_size: float | None = 0.9
    test_size: float | None = None
    split_coord: str = "stimulus_id"
    stratification_coord: str | None = "object_name"
    kfold: bool = False
    random_state: int = 1


def split_indices(n: int, config: SplitConfig, labels: np.ndarray | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Train/test index arrays for ``n`` items (in target order).

    Parameters
    ----------
    n : int
        Number of items (unique values of ``config.split_coord``, in target order).
    config : SplitConfig
    labels : ndarray of shape (n,), optional
        Stratification labels; required when ``config.stratification_coord`` is set.

    Returns
    -------
    list of (train, test) integer arrays
    """
    stratified = config.stratification_coord is not None
    if stratified and labels is None:
        raise ValueError(f"stratification by {config.stratification_coord!r} needs labels")
    if config.kfold:
        if stratified:
            from sklearn.model_selection import StratifiedKFold

            splitter = StratifiedKFold(n_splits=config.splits, shuffle=True, random_state=config.random_state)
            return list(splitter.split(np.zeros(n), labels))
        return kfold(n, config.splits, config.random_state)
    if stratified:
        return stratified_shuffle_split(np.asarray(labels), config.splits, config.train_size, config.test_size,
                                        config.random_state, what=config.stratification_coord)
    return shuffle_split(n, config.splits, config.train_size, config.test_size, config.random_state)


def _sizes(n: int, train_size, test_size, default_test_size: float = 0.1) -> tuple[int, int]:
    """Numbers of train and test items, as scikit-learn's ``_validate_shuffle_split`` computes them.

    A float is a fraction (test rounded up, train rounded down), an int a count, None the complement.
    """
    if test_size is None and train_size is None:
        test_size = default_test_size
    test_kind, train_kind = np.asarray(test_size).dtype.kind, np.asarray(train_size).dtype.kind
    for name, size, kind in (("test_size", test_size, test_kind), ("train_size", train_size, train_kind)):
        if size is not None and kind not in "if":
            raise ValueError(f"{name} must be a fraction in (0, 1), a count, or None; got {size!r}")
        if (kind == "i" and not 0 < size < n) or (kind == "f" and not 0 < size < 1):
            raise ValueError(f"{name}={size} should be a count in (0, {n}) or a fraction in (0, 1)")
    n_test = math.ceil(test_size * n) if test_kind == "f" else (int(test_size) if test_kind == "i" else None)
    n_train = math.floor(train_size * n) if train_kind == "f" else (int(train_size) if train_kind == "i" else None)
    if n_train is None:
        n_train = n - n_test
    elif n_test is None:
        n_test = n - n_train
    if n_train + n_test > n:
        raise ValueError(f"train ({n_train}) and test ({n_test}) sizes add up to more than the {n} items")
    if n_train == 0:
        raise ValueError(f"with {n} items, test_size={test_size} and train_size={train_size} leave no training item")
    return int(n_train), int(n_test)


def shuffle_split(n: int, splits: int, train_size=0.9, test_size=None,
                  random_state: int = 1) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random train/test index arrays over ``n`` items: scikit-learn's ``ShuffleSplit``, same membership.

    Each split permutes ``range(n)`` with ``numpy.random.RandomState(random_state)`` (one generator
    for all splits); the first ``n_test`` indices are the test set, the next ``n_train`` the train set.

    Returns
    -------
    list of (train, test) : integer arrays of shapes (n_train,) and (n_test,)
    """
    n_train, n_test = _sizes(n, train_size, test_size)
    rng = np.random.RandomState(random_state)
    out = []
    for _ in range(splits):
        permutation = rng.permutation(n)
        out.append((permutation[n_test:n_test + n_train], permutation[:n_test]))
    return out


def kfold(n: int, splits: int, random_state: int = 1) -> list[tuple[np.ndarray, np.ndarray]]:
    """Shuffled K folds over ``n`` items: scikit-learn's ``KFold(shuffle=True)``, same membership.

    Returns
    -------
    list of (train, test) : sorted integer arrays; the tests partition ``range(n)``
    """
    if not 2 <= splits <= n:
        raise ValueError(f"k-fold needs 2 <= splits <= number of items ({n}); got splits={splits}")
    indices = np.arange(n)
    np.random.RandomState(random_state).shuffle(indices)
    sizes = np.full(splits, n // splits, dtype=int)
    sizes[: n % splits] += 1
    out, start = [], 0
    for size in sizes:
        mask = np.zeros(n, dtype=bool)
        mask[indices[start:start + size]] = True
        out.append((np.flatnonzero(~mask), np.flatnonzero(mask)))
        start += size
    return out


def _approximate_mode(class_counts: np.ndarray, n_draws: int, rng: np.random.RandomState) -> np.ndarray:
    """Per-class draws closest to proportional, ties broken at random (scikit-learn's ``_approximate_mode``)."""
    continuous = class_counts / class_counts.sum() * n_draws
    floored = np.floor(continuous)
    need_to_add = int(n_draws - floored.sum())
    if need_to_add > 0:
        remainder = continuous - floored
        for value in np.sort(np.unique(remainder))[::-1]:
            (inds,) = np.where(remainder == value)
            add_now = min(len(inds), need_to_add)
            inds = rng.choice(inds, size=add_now, replace=False)
            floored[inds] += 1
            need_to_add -= add_now
            if need_to_add == 0:
                break
    return floored.astype(int)


def stratified_shuffle_split(labels: np.ndarray, splits: int, train_size=0.9, test_size=None, random_state: int = 1,
                             what: str = "labels") -> list[tuple[np.ndarray, np.ndarray]]:
    """Train/test splits that keep each label's share: scikit-learn's ``StratifiedShuffleSplit``, same membership.

    Parameters
    ----------
    labels : ndarray of shape (n,)
        The stratification label of each item.
    what : str
        The labels' name (a coordinate), used in error messages.

    Returns
    -------
    list of (train, test) integer arrays

    Raises
    ------
    ValidationError
        If a label occurs only once, or there are more labels than train or test items: stratified
        splits need every category repeated. Data packaged with a label unique per stimulus (the
        reference's ``object_name`` convention for some data) cannot be stratified.
    """
    labels = np.asarray(labels)
    n = len(labels)
    n_train, n_test = _sizes(n, train_size, test_size)
    classes, y_indices, class_counts = np.unique(labels, return_inverse=True, return_counts=True)
    y_indices = y_indices.reshape(-1)
    fix = ("Stratified splits need each category several times. If these values are not categories, split "
           "without stratification: load_metric(..., crossvalidation_kwargs={'stratification_coord': None}), or "
           "add a coordinate of real categories and pass its name as 'stratification_coord'.")
    if class_counts.min() < 2:
        single = classes[class_counts < 2]
        shown = ", ".join(map(repr, single[:3].tolist())) + (", ..." if len(single) > 3 else "")
        raise ValidationError(f"cannot stratify the splits by {what!r}: {len(single)} of its {len(classes)} values "
                              f"occur only once ({shown}). {fix}")
    if n_train < len(classes) or n_test < len(classes):
        raise ValidationError(f"cannot stratify the splits by {what!r}: its {len(classes)} values outnumber the "
                              f"{min(n_train, n_test)} items of the smaller side (train {n_train}, test {n_test}). {fix}")
    class_indices = np.split(np.argsort(y_indices, kind="stable"), np.cumsum(class_counts)[:-1])
    rng = np.random.RandomState(random_state)
    out = []
    for _ in range(splits):
        n_i = _approximate_mode(class_counts, n_train, rng)
        t_i = _approximate_mode(class_counts - n_i, n_test, rng)
        train, test = [], []
        for i in range(len(classes)):
            members = class_indices[i].take(rng.permutation(class_counts[i]), mode="clip")
            train.extend(members[: n_i[i]])
            test.extend(members[n_i[i]: n_i[i] + t_i[i]])
        out.append((rng.permutation(train), rng.permutation(test)))
    return out


# ---- splits of an assembly, and their aggregate: the one pair every metric and adapter uses (issue 38) ---------------
#: What a split draws: every presentation of the assembly, in its order (brainscore's regression and similarity
#: metrics, as the reference's ``CrossRegressedCorrelation`` and ``RDMCrossValidated``) ...
PRESENTATIONS = "presentations"
#: ... or every distinct value of the split coordinate, in first-seen order, each labelled by its first presentation
#: (the reference's ``metric_helpers.transformations.CrossValidation``; ``brainscore_vision`` uses this).
FIRST_SEEN_VALUES = "first_seen_values"


def assembly_splits(assembly, config: SplitConfig, *, over: str = PRESENTATIONS, what: str = "the target",
                    stratify_if_present: bool = False) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """The cross-validation splits of ``assembly`` along ``config.split_coord``, drawn by :func:`split_indices`.

    Parameters
    ----------
    assembly : xarray.DataArray
        With the coordinate ``config.split_coord`` (and ``config.stratification_coord`` when set) along one dim.
    config : SplitConfig
    over : {PRESENTATIONS, FIRST_SEEN_VALUES}
        What is drawn: each presentation (``values`` are the coordinate's values, one per presentation, repeats
        included), or each distinct value in first-seen order (stratified by the label of its first presentation).
        The two give different memberships when a value repeats; each caller keeps the reference's own.
    what : str
        The assembly's name in error messages (``"the target"``).
    stratify_if_present : bool
        True: an assembly without the stratification coordinate is split without stratification (the reference's
        transformations); False: that is an error.

    Returns
    -------
    values : ndarray of shape (n,)
        The drawn items' ``split_coord`` values.
    folds : list of (train, test) integer arrays
        Indices into ``values``, one pair per split.

    Raises
    ------
    ValidationError
        If the assembly lacks the split coordinate, or the stratification coordinate (unless
        ``stratify_if_present``), or a stratified split cannot be drawn (:func:`stratified_shuffle_split`).
    ValueError
        For an unknown ``over``, or sizes :func:`split_indices` cannot draw.
    """
    if over not in (PRESENTATIONS, FIRST_SEEN_VALUES):
        raise ValueError(f"over must be {PRESENTATIONS!r} or {FIRST_SEEN_VALUES!r}, got {over!r}")
    if config.split_coord not in assembly.coords:
        raise ValidationError(f"{what} has no coordinate {config.split_coord!r} to split on; its coordinates: "
                              f"{sorted(map(str, assembly.coords))}")
    values = np.asarray(assembly[config.split_coord].values)
    rows = None
    if over == FIRST_SEEN_VALUES:
        values, rows = np.unique(values, return_index=True)
        order = np.argsort(rows)
        values, rows = values[order], rows[order]
    stratify = config.stratification_coord
    if stratify is not None and stratify not in assembly.coords:
        if not stratify_if_present:
            raise ValidationError(f"cannot stratify the splits by {stratify!r}: {what} has no such coordinate; pass "
                                  f"stratification_coord=None (in crossvalidation_kwargs) for plain shuffle splits")
        stratify = None
        config = replace(config, stratification_coord=None)
    labels = None
    if stratify is not None:
        labels = np.asarray(assembly[stratify].values)
        labels = labels if rows is None else labels[rows]
    return values, split_indices(len(values), config, labels)


def presentation_folds(assembly, config: SplitConfig,
                       what: str = "the target") -> list[tuple[np.ndarray, np.ndarray]]:
    """Train/test *presentation* indices of ``assembly``: :func:`assembly_splits` over presentations, where each side
    takes every presentation whose split value was drawn for it (with unique values, the drawn indices themselves;
    a value repeated over presentations drawn for both sides is on both, as the reference's regression has it).

    Returns
    -------
    list of (train, test) integer arrays into the assembly's presentations

    Raises
    ------
    ValidationError
        As :func:`assembly_splits`.
    """
    values, folds = assembly_splits(assembly, config, what=what)
    if len(np.unique(values)) == len(values):
        return folds
    return [(np.flatnonzero(np.isin(values, values[train])), np.flatnonzero(np.isin(values, values[test])))
            for train, test in folds]


def mean_over_splits(per_split, dim: str = "split"):
    """The aggregate of per-split values: (mean, standard error of the mean) over the splits.

    The error is the standard deviation over splits with ``ddof=0`` divided by ``sqrt(n_splits)``, as Brain-Score
    reports it (Schrimpf et al. 2018).

    Parameters
    ----------
    per_split : ndarray of shape (n_splits, ...) or xarray.DataArray with dim ``dim``
        A numpy array is reduced over its first axis, NaN propagating (a NaN split makes a NaN score, as in the
        reference's regression metrics); a DataArray over ``dim`` with xarray's reductions, which skip NaN (as the
        reference's transformations do). Other axes or dims are kept.
    dim : str
        The DataArray's split dim.

    Returns
    -------
    (mean, error) : arrays (or DataArrays) of the remaining shape
    """
    if hasattr(per_split, "dims"):  # a DataArray: its own reductions (without importing xarray here)
        return per_split.mean(dim), per_split.std(dim) / math.sqrt(per_split.sizes[dim])
    per_split = np.asarray(per_split)
    return per_split.mean(axis=0), per_split.std(axis=0) / np.sqrt(per_split.shape[0])
