"""Neural predictivity: regress the data on the model, correlate predictions with held-out data.

The method of Yamins et al. (2014, PNAS 111:8619) and Schrimpf et al. (2018, bioRxiv 407007), as
Brain-Score computes it:

1. align the model's responses (``source``) to the recorded ones (``target``) by ``stimulus_id``;
2. draw cross-validation splits of the stimuli on the *target's* presentation order
   (:mod:`brainscore.metrics.splits`: 10 shuffle splits of 90 % train, seed 1, stratified by
   ``object_name`` unless told otherwise);
3. per split, fit a regression (e.g. PLS with 25 components) from source to target on the training
   stimuli, predict the test stimuli, and take Pearson r between prediction and data per neuroid;
4. per split, the median r over neuroids; the score is the mean over splits and its ``error`` the
   standard error of that mean (std over splits with ddof=0, divided by ``sqrt(n_splits)``).

NaN r (a constant prediction) propagates to a NaN score, as in the reference. The numerics live in
:mod:`brainscore.metrics.kernels.regression`; this module does the labelled-array work around them.
"""
from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np
import xarray as xr

from brainscore.data.assemblies import DataAssembly, align_presentations
from brainscore.errors import AlignmentError, ValidationError
from brainscore.metrics.base import Metric
from brainscore.metrics.device import effective_device
from brainscore.metrics.kernels import regression as kernels
from brainscore.metrics.kernels.backend import namespace, on_device, to_numpy
from brainscore.metrics.kernels.correlation import pearsonr_columns
from brainscore.metrics.score import Score
from brainscore.metrics.splits import SplitConfig, mean_over_splits, presentation_folds
from brainscore.progress import stage

__all__ = ["CrossRegressedCorrelation", "TrainTestSplitCorrelation", "SpanTimeCrossRegressedCorrelation",
           "REGRESSION_DEFAULTS"]

#: Default keyword arguments of each regression (the reference's settings).
REGRESSION_DEFAULTS: dict[str, dict[str, Any]] = {
    "pls": dict(n_components=25),
    "ridge": dict(alpha=1.0),
    "ridgecv": dict(alphas=kernels.ALPHA_LIST),
    "linear": {},
    "neuron_to_neuron": {},
}

_CV_KEYS = {f.name for f in fields(SplitConfig)} | {"unique_split_values"}


def _split_config(crossvalidation_kwargs: dict[str, Any] | None) -> SplitConfig:
    """The reference's defaults (train 0.9, test the rest) merged with the caller's overrides."""
    kwargs = {"train_size": 0.9, "test_size": None, **(crossvalidation_kwargs or {})}
    unknown = set(kwargs) - _CV_KEYS
    if unknown:
        raise TypeError(f"unknown crossvalidation_kwargs {sorted(unknown)}; accepted: {sorted(_CV_KEYS)}")
    kwargs.pop("unique_split_values", None)  # split values are unique stimuli after averaging
    return SplitConfig(**kwargs)


def _regression_kwargs(regression: str, regression_kwargs: dict[str, Any] | None) -> dict[str, Any]:
    if regression not in REGRESSION_DEFAULTS:
        raise ValueError(f"unknown regression {regression!r}; choose one of {sorted(REGRESSION_DEFAULTS)}")
    return {**REGRESSION_DEFAULTS[regression], **(regression_kwargs or {})}


def _presentation_by_neuroid(assembly: DataAssembly, name: str) -> DataAssembly:
    """``assembly`` as ``presentation x neuroid`` (a single time bin squeezed), or a clear error."""
    if not isinstance(assembly, xr.DataArray):
        raise TypeError(f"{name} must be an assembly (xarray.DataArray with presentation and neuroid dims), "
                        f"got {type(assembly).__name__}")
    if "time_bin" in assembly.dims and assembly.sizes["time_bin"] == 1:
        assembly = assembly.squeeze("time_bin", drop=True)
    if set(assembly.dims) != {"presentation", "neuroid"}:
        raise ValidationError(f"{name} must have exactly the dims (presentation, neuroid), has {assembly.dims}; "
                              "use a spantime_* metric, or select one time bin, for several time bins")
    if "stimulus_id" not in assembly.coords:
        raise ValidationError(f"{name} has no stimulus_id coordinate on presentation; it is needed to align "
                              "model and data")
    if assembly.sizes["presentation"] < MIN_STIMULI or assembly.sizes["neuroid"] < 1:
        raise ValidationError(f"{name} has {assembly.sizes['presentation']} presentations x "
                              f"{assembly.sizes['neuroid']} neuroids; a cross-validated regression needs at least "
                              f"{MIN_STIMULI} stimuli and 1 neuroid")
    return assembly.transpose("presentation", "neuroid")


#: Fewest stimuli a cross-validated regression accepts (2 to fit, 1 to test, per fold, and more).
MIN_STIMULI = 3


def _values(assembly: DataAssembly, name: str, device: str | None) -> Any:
    """The assembly's values as floats, row-major (C order), checked: non-empty, finite, numeric.

    Raises
    ------
    ValidationError
        For no presentations or neuroids, NaN or infinite values (naming how many; inf would fail
        deep in LAPACK), or non-numeric values.
    """
    values = assembly.values
    if values.size == 0:
        raise ValidationError(f"{name} is empty ({dict(assembly.sizes)}); a regression needs at least "
                              f"{MIN_STIMULI} stimuli and 1 neuroid")
    if not np.issubdtype(values.dtype, np.number) or np.issubdtype(values.dtype, np.complexfloating):
        raise ValidationError(f"{name} holds values of dtype {values.dtype}; responses must be real numbers")
    if not np.issubdtype(values.dtype, np.floating):
        values = values.astype(np.float64)
    # row-major whatever the assembly's layout: BLAS sums in an order that depends on it, so the same data
    # in a transposed view (as a builder may hand it out) and row-major gave scores 1e-13 apart
    values = np.ascontiguousarray(values)
    if not np.isfinite(values).all():
        nan, inf = int(np.isnan(values).sum()), int(np.isinf(values).sum())
        raise ValidationError(f"{name} contains {nan} NaN and {inf} infinite values (of {values.size}); drop or "
                              "impute them before scoring (regressions cannot fit them; inf overflows the solvers)")
    return on_device(values, device)


def _neuroid_ids(assembly: DataAssembly) -> np.ndarray:
    if "neuroid_id" in assembly.coords:
        return np.asarray(assembly["neuroid_id"].values)
    return np.arange(assembly.sizes["neuroid"])


def _neuroid_coords(assembly: DataAssembly) -> dict[str, Any]:
    return {name: ("neuroid", coord.values) for name, coord in assembly.coords.items() if coord.dims == ("neuroid",)}


class _Counted(list):
    """Folds that count, on a progress stage, the furthest split a kernel has gone past (a kernel may pass over them
    more than once: the count never goes back)."""

    def __init__(self, folds, step):
        super().__init__(folds)
        self._step = step

    def __iter__(self):
        for index, fold in enumerate(list.__iter__(self)):
            yield fold
            if index + 1 > self._step.done:
                self._step.update(index + 1 - self._step.done)


def _cross_validated(what: str, regression: str, X, Y, folds, kwargs: dict[str, Any]):
    """:func:`kernels.cross_validated_predictions`, reported as a progress stage counting the splits fitted."""
    with stage(f"{what}: cross-validated {regression} over {len(folds)} splits", total=len(folds),
               unit="split") as step:
        return kernels.cross_validated_predictions(regression, X, Y, _Counted(folds, step), **kwargs)


def _check_design(X: np.ndarray, Y: np.ndarray, x_name: str, y_name: str, target: DataAssembly,
                  n_train: int, regression: str, regression_kwargs: dict[str, Any]) -> None:
    """Reject inputs whose score would be NaN or meaningless, before fitting.

    Raises
    ------
    ValidationError
        Too few stimuli; every feature of ``X`` constant (nothing to regress on); a neuroid of
        ``Y`` constant over all stimuli (its Pearson r is 0/0, and one NaN makes the median NaN);
        PLS with fewer training stimuli than components plus one.
    """
    n = X.shape[0]
    if n < MIN_STIMULI:
        raise ValidationError(f"{n} stimuli are too few for a cross-validated regression; it needs at least "
                              f"{MIN_STIMULI} (to fit on 2 and test on 1), and more for a meaningful score")
    if not _varies(X).any():
        raise ValidationError(f"every feature of {x_name} is the same for all stimuli; there is nothing to "
                              f"regress on: use a layer whose responses vary across stimuli")
    constant = np.flatnonzero(~_varies(Y))
    if len(constant):
        ids = target["neuroid_id"].values[constant] if "neuroid_id" in target.coords else constant
        raise ValidationError(f"{len(constant)} neuroids of {y_name} (e.g. {list(ids[:5])}) have the same response "
                              f"to every stimulus; their Pearson r is undefined (0/0) and would make the median "
                              f"NaN: drop them (e.g. assembly.isel(neuroid=assembly.std('presentation') > 0))")
    components = regression_kwargs.get("n_components") if regression == "pls" else None
    if components is not None and n_train < int(components) + 1:
        raise ValidationError(f"PLS with n_components={components} needs more than {components} training stimuli per "
                              f"fold, got {n_train} (of {n} stimuli); use more stimuli or pass "
                              f"regression_kwargs=dict(n_components={max(1, n_train - 1)})")


def _varies(a: Any) -> np.ndarray:
    """Per column, whether it takes more than one value (on the array's own device; a bool per column back)."""
    xp = namespace(a)
    return to_numpy(xp.max(a, axis=0) > xp.min(a, axis=0))


def _check_r(r: np.ndarray, neuroid_ids: np.ndarray, n_test: int) -> None:
    """Refuse NaN correlations: a neuroid's prediction or response constant over a split's test stimuli."""
    bad = np.isnan(r)
    if bad.any():
        neuroids = np.flatnonzero(bad.reshape(-1, r.shape[-1]).any(axis=0))
        raise ValidationError(f"Pearson r is undefined (0/0) for {len(neuroids)} neuroids (e.g. "
                              f"{list(np.asarray(neuroid_ids)[neuroids[:5]])}) in {int(bad.reshape(-1, r.shape[-1]).any(axis=1).sum())} "
                              f"splits: their response or prediction is constant over the {n_test} test stimuli of "
                              f"those splits. Use more stimuli, drop neuroids that rarely respond, or use fewer "
                              f"regression components")


class CrossRegressedCorrelation(Metric):
    """Cross-validated regression from model to data, scored by per-neuroid Pearson r.

    Parameters
    ----------
    regression : str
        ``"pls"``, ``"ridge"``, ``"ridgecv"``, ``"linear"`` or ``"neuron_to_neuron"``
        (see :mod:`brainscore.metrics.kernels.regression`).
    regression_kwargs : dict, optional
        Override the regression's defaults (:data:`REGRESSION_DEFAULTS`), e.g. ``n_components``,
        ``alpha``, ``alphas``, ``gram_dtype``.
    crossvalidation_kwargs : dict, optional
        Override :class:`~brainscore.metrics.splits.SplitConfig` fields (``splits``, ``train_size``,
        ``test_size``, ``split_coord``, ``stratification_coord``, ``kfold``, ``random_state``); the
        reference's ``dict(train_size=.9, test_size=None)`` is applied first.
    reverse : bool
        Predict the model from the data instead (the reference's ``reverse_pls``, Muzellec & Kar
        2025): r is per model unit, the median is over model units. Splits are still drawn on the
        data's presentation order.
    identifier : str, optional
        Registered name, recorded in the score.
    device : str, optional
        ``"cuda"`` (or any torch device) to run the numerics with torch there (the arrays keep the
        dtypes of the numpy path; results come back as numpy); default: the device of the enclosing
        :func:`brainscore.metrics.device.computing_on`, else numpy.

    Examples
    --------
    >>> metric = CrossRegressedCorrelation("pls", crossvalidation_kwargs=dict(stratification_coord=None))
    >>> score = metric(model_features, neural_data)  # doctest: +SKIP
    >>> float(score), score.attrs["error"], score.attrs["raw"].dims  # doctest: +SKIP
    (0.61, 0.008, ('split', 'neuroid'))

    References
    ----------
    Yamins et al. (2014), PNAS 111:8619; Schrimpf et al. (2018), bioRxiv 407007.
    """

    def __init__(self, regression: str = "pls", regression_kwargs: dict[str, Any] | None = None,
                 crossvalidation_kwargs: dict[str, Any] | None = None, reverse: bool = False,
                 identifier: str | None = None, device: str | None = None):
        self.regression = regression
        self.regression_kwargs = _regression_kwargs(regression, regression_kwargs)
        self.split_config = _split_config(crossvalidation_kwargs)
        self.reverse = reverse
        self.identifier = identifier or (("reverse_" if reverse else "") + regression)
        self.device = device

    def __call__(self, source: DataAssembly, target: DataAssembly) -> Score:
        """Score ``source`` (model, ``presentation x neuroid``) against ``target`` (data, averaged).

        Returns
        -------
        Score
            Scalar: mean over splits of the median over neuroids of Pearson r. Attributes:
            ``error`` (SEM over splits), ``raw`` (r as a ``split x neuroid`` DataArray carrying the
            neuroid coordinates of the predicted assembly), ``split_scores``, the parameters, and
            ``held_out`` (per split: the held-out predictions, data and stimulus ids, for a bootstrap).

        Raises
        ------
        AlignmentError
            If the source lacks stimuli of the target, or either repeats a stimulus_id.
        ValidationError
            If dims or coordinates are missing.
        """
        source = _presentation_by_neuroid(source, "source")
        target = _presentation_by_neuroid(target, "target")
        source, target = align_presentations(source, target)
        folds = presentation_folds(target, self.split_config)
        device = effective_device(self.device)
        X, Y = _values(source, "source", device), _values(target, "target", device)
        predicted, names = target, ("source", "target")
        if self.reverse:
            X, Y, predicted, names = Y, X, source, ("target", "source")
        _check_design(X, Y, *names, predicted, min(len(train) for train, _ in folds), self.regression,
                      self.regression_kwargs)
        predictions, info = _cross_validated(self.identifier, self.regression, X, Y, folds, self.regression_kwargs)
        r = to_numpy(kernels.fold_pearsonr(predictions, Y, folds))
        _check_r(r, _neuroid_ids(predicted), min(len(test) for _, test in folds))
        raw = xr.DataArray(r, dims=("split", "neuroid"),
                           coords={"split": np.arange(len(folds)), **_neuroid_coords(predicted)})
        score = _aggregate(raw, self._attrs(info, len(folds)))
        # what a bootstrap over stimuli needs (brainscore.benchmarks.neural.NeuralBenchmark.bootstrap)
        Yn, stimulus_ids = to_numpy(Y), np.asarray(target["stimulus_id"].values)
        score.attrs["held_out"] = {"predictions": [to_numpy(p) for p in predictions],
                                   "targets": [Yn[test] for _, test in folds],
                                   "stimulus_id": [stimulus_ids[test] for _, test in folds]}
        return score

    def _attrs(self, info: kernels.FitInfo, n_splits: int) -> dict[str, Any]:
        config = self.split_config
        attrs = {"metric": self.identifier, "regression": self.regression, "splits": n_splits,
                 "train_size": config.train_size, "split_coord": config.split_coord,
                 "stratification_coord": config.stratification_coord, "kfold": config.kfold,
                 "seed": config.random_state}
        attrs.update({k: v for k, v in self.regression_kwargs.items() if k in ("n_components", "alpha")})
        if "alpha" in info.values and self.regression == "ridgecv":
            attrs["alpha"] = np.asarray(info.values["alpha"])
        if "n_components" in info.values:
            attrs["n_components_fitted"] = np.asarray(info.values["n_components"])
        return attrs

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.identifier} {self.regression_kwargs | {}} {self.split_config}>"


def _aggregate(raw: xr.DataArray, attrs: dict[str, Any]) -> Score:
    """Median over neuroids per split, mean over splits, SEM error (NaN propagates as in the reference)."""
    per_split = np.median(raw.values, axis=-1)               # NaN if any neuroid's r is NaN
    center, error = mean_over_splits(per_split)
    score = Score.of(float(center), error=float(error), **attrs)
    score.attrs["raw"] = raw
    score.attrs["split_scores"] = per_split
    return score


class TrainTestSplitCorrelation(Metric):
    """Regression fitted on a fixed training set, scored on a fixed test set (the ``*_split`` metrics).

    ``metric(source_train, source_test, target_train, target_test)``: each source is aligned to its
    target by ``stimulus_id``; the score is the median over neuroids of Pearson r on the test set.

    Parameters
    ----------
    regression, regression_kwargs, reverse, identifier, device : see :class:`CrossRegressedCorrelation`
    """

    def __init__(self, regression: str = "pls", regression_kwargs: dict[str, Any] | None = None,
                 reverse: bool = False, identifier: str | None = None, device: str | None = None):
        self.regression = regression
        self.regression_kwargs = _regression_kwargs(regression, regression_kwargs)
        self.reverse = reverse
        self.identifier = identifier or (("reverse_" if reverse else "") + regression + "_split")
        self.device = device

    def __call__(self, source_train: DataAssembly, source_test: DataAssembly, target_train: DataAssembly,
                 target_test: DataAssembly) -> Score:
        """Fit on the training pair, predict and correlate on the test pair.

        Returns
        -------
        Score
            Scalar median over neuroids of r; attrs ``raw`` (r per neuroid), parameters, and for
            ridgecv the chosen ``alpha``.

        Raises
        ------
        AlignmentError
            If a source lacks stimuli of its target.
        """
        pairs = []
        for s_name, source, t_name, target in (("source_train", source_train, "target_train", target_train),
                                               ("source_test", source_test, "target_test", target_test)):
            source = _presentation_by_neuroid(source, s_name)
            target = _presentation_by_neuroid(target, t_name)
            try:
                source, target = align_presentations(source, target)
            except AlignmentError as error:
                raise AlignmentError(f"{s_name} vs {t_name}: {error}") from None
            pairs.append((source, target))
        (s_tr, t_tr), (s_te, t_te) = pairs
        device = effective_device(self.device)
        X_tr, Y_tr = _values(s_tr, "source_train", device), _values(t_tr, "target_train", device)
        X_te, Y_te = _values(s_te, "source_test", device), _values(t_te, "target_test", device)
        predicted, fitted = t_te, t_tr
        if self.reverse:
            X_tr, Y_tr, X_te, Y_te, predicted, fitted = Y_tr, X_tr, Y_te, X_te, s_te, s_tr
        _check_design(X_tr, Y_tr, "the training source", "the training target", fitted, len(to_numpy(X_tr)),
                      self.regression, self.regression_kwargs)
        prediction, info = kernels.fit_predict(self.regression, X_tr, Y_tr, X_te, **self.regression_kwargs)
        r = to_numpy(pearsonr_columns(prediction, Y_te))
        _check_r(r, _neuroid_ids(predicted), len(to_numpy(Y_te)))
        raw = xr.DataArray(r, dims=("neuroid",), coords=_neuroid_coords(predicted))
        score = Score.of(float(np.median(r)), metric=self.identifier, regression=self.regression,
                         **{k: v for k, v in self.regression_kwargs.items() if k in ("n_components", "alpha")})
        score.attrs["raw"] = raw
        if self.regression == "ridgecv":
            score.attrs["alpha"] = float(info.values["alpha"][0])
        return score


class SpanTimeCrossRegressedCorrelation(Metric):
    """One regression for all time bins (time bins stacked as samples), scored per time bin.

    ``source`` and ``target`` are ``presentation x neuroid x time_bin`` with the same time bins.
    Splits are drawn over the target's presentations as in :class:`CrossRegressedCorrelation`;
    the regression is fitted on every (training stimulus, time bin) sample; prediction and Pearson r
    are per time bin on the test stimuli; per split and time bin the median over neuroids; the score
    is the mean over splits per time bin, with the SEM as ``error`` (both ``time_bin`` arrays).

    Parameters
    ----------
    regression, regression_kwargs, crossvalidation_kwargs, identifier, device :
        see :class:`CrossRegressedCorrelation`.
    """

    def __init__(self, regression: str = "pls", regression_kwargs: dict[str, Any] | None = None,
                 crossvalidation_kwargs: dict[str, Any] | None = None, identifier: str | None = None,
                 device: str | None = None):
        self.regression = regression
        self.regression_kwargs = _regression_kwargs(regression, regression_kwargs)
        self.split_config = _split_config(crossvalidation_kwargs)
        self.identifier = identifier or f"spantime_{regression}"
        self.device = device

    def __call__(self, source: DataAssembly, target: DataAssembly) -> Score:
        """Score ``source`` against ``target`` per time bin.

        Returns
        -------
        Score
            Dims ``(time_bin,)``; attrs ``error`` (DataArray over time_bin), ``raw``
            (``split x time_bin x neuroid``), parameters.

        Raises
        ------
        ValidationError
            If either lacks a ``time_bin`` dim or their time bins differ.
        """
        for name, assembly in (("source", source), ("target", target)):
            if set(assembly.dims) != {"presentation", "neuroid", "time_bin"}:
                raise ValidationError(f"{name} must have dims (presentation, neuroid, time_bin), has {assembly.dims}")
        source = source.transpose("presentation", "time_bin", "neuroid")
        target = target.transpose("presentation", "time_bin", "neuroid")
        for coord in ("time_bin_start", "time_bin_end"):
            if coord in source.coords and coord in target.coords and \
                    not np.array_equal(source[coord].values, target[coord].values):
                raise ValidationError(f"source and target time bins differ ({coord}: {source[coord].values} vs "
                                      f"{target[coord].values}); record the model in the data's time bins")
        if source.sizes["time_bin"] != target.sizes["time_bin"]:
            raise ValidationError(f"source has {source.sizes['time_bin']} time bins, target {target.sizes['time_bin']}")
        source, target = align_presentations(source, target)
        folds = presentation_folds(target, self.split_config)
        n, T = target.sizes["presentation"], target.sizes["time_bin"]
        X = _values(source, "source", None).reshape(n * T, -1)       # sample = (presentation, time bin)
        Y = _values(target, "target", None).reshape(n * T, -1)
        device = effective_device(self.device)
        X, Y = on_device(X, device), on_device(Y, device)
        stacked = [((train[:, None] * T + np.arange(T)).ravel(), (test[:, None] * T + np.arange(T)).ravel())
                   for train, test in folds]
        _check_design(X, Y, "source", "target", target, min(len(train) for train, _ in stacked), self.regression,
                      self.regression_kwargs)
        predictions, info = _cross_validated(self.identifier, self.regression, X, Y, stacked, self.regression_kwargs)
        q = Y.shape[1]
        r = np.empty((len(folds), T, q))
        Yn = to_numpy(Y)
        for f, ((_, test), prediction) in enumerate(zip(folds, predictions)):
            prediction = to_numpy(prediction).reshape(len(test), T, q)
            actual = Yn.reshape(n, T, q)[test]
            for t in range(T):                                         # time bins, not neuroids
                r[f, t] = pearsonr_columns(prediction[:, t], actual[:, t])
        _check_r(r, _neuroid_ids(target), min(len(test) for _, test in folds))
        time_coords = {name: ("time_bin", coord.values) for name, coord in target.coords.items()
                       if coord.dims == ("time_bin",)}
        raw = xr.DataArray(r, dims=("split", "time_bin", "neuroid"),
                           coords={"split": np.arange(len(folds)), **time_coords, **_neuroid_coords(target)})
        per_split = np.median(r, axis=-1)                              # (split, time_bin)
        center, error = mean_over_splits(per_split)
        score = Score(center, dims=("time_bin",), coords=time_coords)
        score.attrs.update({"metric": self.identifier, "regression": self.regression, "splits": len(folds),
                            "seed": self.split_config.random_state,
                            "stratification_coord": self.split_config.stratification_coord,
                            **{k: v for k, v in self.regression_kwargs.items() if k in ("n_components", "alpha")}})
        score.attrs["error"] = xr.DataArray(error, dims=("time_bin",), coords=time_coords)
        score.attrs["raw"] = raw
        return score
