"""Regressions and correlations applied to assemblies, aligned by coordinate values (never by position).

- :class:`KernelRegression`: the scikit-learn-style ``fit(X, Y)``/``predict(X)`` face of the regression kernels
  (:mod:`brainscore.metrics.kernels.regression`), on plain arrays.
  :class:`RidgeCVRegression` chooses the ridge penalty by leave-one-out on an ``n x n`` Gram surrogate.
- :class:`AssemblyRegression`: a regression (``fit``/``predict`` on arrays) applied to ``presentation x neuroid``
  assemblies: the target's presentations are put in the source's order by ``stimulus_id``; a prediction carries
  the source's presentation coordinates and the fitted target's neuroid coordinates.
- :class:`AssemblyCorrelation`: a correlation ``(vector, vector) -> (r, p)`` per neuroid over presentations,
  presentations aligned by ``stimulus_id`` and neuroids by ``neuroid_id``; Pearson r for all neuroids at once.

So a jumbled assembly gives the same numbers as a sorted one. These are the reference Brain-Score's
``XarrayRegression`` and ``XarrayCorrelation`` (``metric_helpers/xarray_utils.py``).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd

from brainscore.data import presentation_order
from brainscore.data.assemblies import DataAssembly, NeuroidAssembly
from brainscore.errors import ValidationError

__all__ = ["KernelRegression", "RidgeCVRegression", "AssemblyRegression", "AssemblyCorrelation", "coords_along",
           "aligned_order"]


def coords_along(assembly: Any, dim: str) -> dict[str, tuple[str, np.ndarray]]:
    """Every metadata coordinate of ``assembly`` that lies along ``dim`` only, as ``{name: (dim, values)}``.

    A stacked dimension (``MultiIndex``) contributes its levels, not itself.
    """
    coords = {}
    for name, coord in assembly.coords.items():
        if coord.dims != (dim,) or isinstance(assembly.indexes.get(name), pd.MultiIndex):
            continue
        if name == dim and dim in assembly.indexes and isinstance(assembly.indexes[dim], pd.MultiIndex):
            continue
        coords[str(name)] = (dim, np.asarray(coord.values))
    return coords


def aligned_order(values: np.ndarray, wanted: np.ndarray, name: str) -> np.ndarray:
    """Indices ``i`` with ``values[i] == wanted`` elementwise: :func:`brainscore.data.presentation_order` with
    ``repeats="aligned"`` (each wanted value exactly once in ``values``, unless the two already list the same
    values in the same order).

    Parameters
    ----------
    values : array-like of shape (n,)
        The other assembly's ids (e.g. the target's ``stimulus_id``).
    wanted : array-like of shape (m,)
        The ids in the order wanted (e.g. the source's).
    name : str
        The coordinate's name, for the messages.

    Returns
    -------
    ndarray of int, shape (m,)

    Raises
    ------
    AlignmentError
        If ``values`` repeats a value, or lacks one of ``wanted`` (a ``ValueError``).
    """
    return presentation_order(values, wanted, name, repeats="aligned", entry="entry",
                              sides=("assembly being aligned", "assembly it is aligned to"))


def _presentation_dim(assembly: Any, stimulus_coord: str) -> str:
    if stimulus_coord not in assembly.coords:
        raise ValidationError(f"the assembly has no {stimulus_coord!r} coordinate; coordinates: "
                              f"{sorted(map(str, assembly.coords))}")
    dims = assembly[stimulus_coord].dims
    if len(dims) != 1:
        raise ValidationError(f"{stimulus_coord!r} must lie along one dim, lies along {dims}")
    return dims[0]


def _neuroid_values(assembly: Any, neuroid_dim: str, neuroid_coord: str) -> np.ndarray:
    if neuroid_coord in assembly.coords and assembly[neuroid_coord].dims == (neuroid_dim,):
        return np.asarray(assembly[neuroid_coord].values)
    return np.arange(assembly.sizes[neuroid_dim])


class KernelRegression:
    """``fit(X, Y)`` / ``predict(X)`` over a regression kernel of :mod:`brainscore.metrics.kernels.regression`.

    ``fit`` keeps the training arrays; ``predict`` runs :func:`brainscore.metrics.kernels.regression.fit_predict`
    (the kernel fits and predicts in one pass), so a prediction is computed by the same code as in the
    cross-validated metrics (:mod:`brainscore.metrics.neural.regression`).

    Parameters
    ----------
    method : str
        ``"pls"``, ``"ridge"``, ``"ridgecv"``, ``"linear"`` or ``"neuron_to_neuron"``.
    **kwargs
        The kernel's settings (``n_components=25`` for PLS, ``alpha=1`` for ridge, ``alphas`` for ridgecv).

    Attributes
    ----------
    alpha_ : float
        For ``"ridge"``/``"ridgecv"``: the penalty used (ridgecv: chosen by leave-one-out on the training data),
        after ``fit``; AttributeError otherwise.

    Raises
    ------
    ValueError
        For an unknown ``method``; from ``fit``, for ``X`` and ``Y`` that are not 2-D with the same number of rows.
    """

    def __init__(self, method: str, **kwargs: Any):
        from brainscore.metrics.kernels.regression import METHODS

        if method not in METHODS:
            raise ValueError(f"unknown regression {method!r}; choose one of {sorted(METHODS)}")
        self.method, self.kwargs = method, kwargs
        self._train: tuple[np.ndarray, np.ndarray] | None = None
        self._alpha: float | None = None

    def fit(self, X: Any, Y: Any) -> "KernelRegression":
        """Keep ``X`` (n, features) and ``Y`` (n, targets) as float64 arrays; returns ``self``."""
        X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
        if X.ndim != 2 or Y.ndim != 2 or len(X) != len(Y):
            raise ValueError(f"fit needs X (n, features) and Y (n, targets) with the same n; got {X.shape}, {Y.shape}")
        self._train, self._alpha = (X, Y), None
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Predictions (n_test, targets) for ``X`` (n_test, features).

        Raises
        ------
        RuntimeError
            If called before ``fit``.
        """
        from brainscore.metrics.kernels.backend import to_numpy
        from brainscore.metrics.kernels.regression import fit_predict

        if self._train is None:
            raise RuntimeError(f"{type(self).__name__}.predict called before fit")
        prediction, info = fit_predict(self.method, *self._train, np.asarray(X, dtype=np.float64), **self.kwargs)
        if "alpha" in info.values:
            self._alpha = float(info.values["alpha"][0])
        return to_numpy(prediction)

    @property
    def alpha_(self) -> float:
        if self._alpha is None:
            if self._train is None or self.method not in ("ridge", "ridgecv"):
                raise AttributeError(f"alpha_ exists after fit, for ridge regressions ({self.method!r})")
            self.predict(self._train[0][:1])
        return self._alpha

    def __repr__(self) -> str:
        return f"KernelRegression({self.method!r}, {self.kwargs})"


class AssemblyRegression:
    """A regression (``fit(X, Y)``/``predict(X)`` on arrays ``(presentations, features)``, e.g. scikit-learn's or
    :class:`KernelRegression`) applied to ``presentation x neuroid`` assemblies.

    Parameters
    ----------
    regression : object
        With ``fit(X, Y)`` and ``predict(X)``.
    expected_dims : tuple of str
        The dims of the inputs, for the message (``('presentation', 'neuroid')``).
    neuroid_dim, neuroid_coord, stimulus_coord : str
        ``"neuroid"``, ``"neuroid_id"``, ``"stimulus_id"``.

    ``fit(source, target)`` aligns the target's presentations to the source's by ``stimulus_coord``
    (:func:`aligned_order`); ``predict(source)`` returns a :attr:`prediction_class` ``presentation x neuroid`` with
    the source's presentation coordinates and the fitted target's neuroid coordinates (``neuroid_coord`` 0..n-1
    when the target has none). Both raise :class:`~brainscore.errors.ValidationError` for an assembly without
    ``stimulus_coord`` or with other dims, and ``predict`` a RuntimeError before ``fit``.
    """

    #: The class of the predictions.
    prediction_class = NeuroidAssembly

    def __init__(self, regression: Any, expected_dims: tuple[str, ...] = ("presentation", "neuroid"),
                 neuroid_dim: str = "neuroid", neuroid_coord: str = "neuroid_id", stimulus_coord: str = "stimulus_id"):
        self._regression = regression
        self._expected_dims = tuple(expected_dims)
        self._neuroid_dim, self._neuroid_coord, self._stimulus_coord = neuroid_dim, neuroid_coord, stimulus_coord
        self._target_neuroids: dict[str, tuple[str, np.ndarray]] | None = None

    @property
    def regression(self) -> Any:
        """The wrapped regression (``fit``/``predict`` on arrays)."""
        return self._regression

    def _matrix(self, assembly: Any) -> tuple[str, np.ndarray]:
        presentation = _presentation_dim(assembly, self._stimulus_coord)
        if set(assembly.dims) != {presentation, self._neuroid_dim}:
            raise ValidationError(f"expected an assembly with dims {self._expected_dims}, got {tuple(assembly.dims)}")
        return presentation, np.asarray(assembly.transpose(presentation, self._neuroid_dim).values)

    def fit(self, source: Any, target: Any) -> None:
        """Fit the regression from ``source`` to ``target`` (aligned by ``stimulus_coord``)."""
        _, X = self._matrix(source)
        target_presentation, Y = self._matrix(target)
        order = aligned_order(target[self._stimulus_coord].values, source[self._stimulus_coord].values,
                              self._stimulus_coord)
        self._regression.fit(X, Y[order])
        self._target_neuroids = coords_along(target, self._neuroid_dim)
        if not self._target_neuroids:
            self._target_neuroids = {self._neuroid_coord: (self._neuroid_dim, np.arange(Y.shape[1]))}

    def predict(self, source: Any) -> NeuroidAssembly:
        """The fitted regression's prediction for ``source`` (see the class notes)."""
        if self._target_neuroids is None:
            raise RuntimeError(f"{type(self).__name__}.predict called before fit")
        presentation, X = self._matrix(source)
        Y = np.asarray(self._regression.predict(X))
        coords = {name: ("presentation", values) for name, (_, values) in coords_along(source, presentation).items()}
        coords.update({name: ("neuroid", values) for name, (_, values) in self._target_neuroids.items()})
        return self.prediction_class(Y, dims=("presentation", "neuroid"), coords=coords)


class AssemblyCorrelation:
    """A correlation ``f(a, b) -> (r, p)`` per neuroid between two assemblies, over presentations.

    Parameters
    ----------
    correlation : callable
        ``(vector, vector) -> (r, p)``; :func:`scipy.stats.pearsonr` is computed for all neuroids at once by
        :func:`brainscore.metrics.kernels.correlation.pearsonr_columns`.
    correlation_coord : str
        The dim correlated over (``presentation``); its values are aligned by ``stimulus_coord`` where both
        assemblies have it.
    neuroid_coord : str
        The neuroid dim; neuroids are aligned by ``neuroid_id`` where both assemblies have it.
    stimulus_coord : str

    ``__call__(prediction, target)`` returns a :attr:`result_class` of ``r`` per neuroid (dim ``neuroid``) with the
    prediction's neuroid coordinates; ValidationError if the two differ in shape after alignment, AlignmentError
    if an id is missing.
    """

    #: The class of the result.
    result_class = DataAssembly

    def __init__(self, correlation: Callable, correlation_coord: str = "presentation",
                 neuroid_coord: str = "neuroid", stimulus_coord: str = "stimulus_id"):
        self._correlation = correlation
        self._correlation_coord, self._neuroid_dim, self._stimulus_coord = correlation_coord, neuroid_coord, stimulus_coord

    @property
    def correlation(self) -> Callable:
        """The wrapped ``(vector, vector) -> (r, p)`` correlation."""
        return self._correlation

    def __call__(self, prediction: Any, target: Any) -> DataAssembly:
        import scipy.stats

        dim, neuroid = self._correlation_coord, self._neuroid_dim
        a = np.asarray(prediction.transpose(dim, neuroid).values, dtype=float)
        b = np.asarray(target.transpose(dim, neuroid).values, dtype=float)
        if self._stimulus_coord in prediction.coords and self._stimulus_coord in target.coords:
            b = b[aligned_order(target[self._stimulus_coord].values, prediction[self._stimulus_coord].values,
                                self._stimulus_coord)]
        ids_a = _neuroid_values(prediction, neuroid, "neuroid_id")
        ids_b = _neuroid_values(target, neuroid, "neuroid_id")
        if "neuroid_id" in prediction.coords and "neuroid_id" in target.coords:
            b = b[:, aligned_order(ids_b, ids_a, "neuroid_id")]
        if a.shape != b.shape:
            raise ValidationError(f"prediction {a.shape} and target {b.shape} differ in shape after alignment")
        if self._correlation is scipy.stats.pearsonr:
            from brainscore.metrics.kernels.correlation import pearsonr_columns

            r = np.asarray(pearsonr_columns(a, b), dtype=float)
        else:
            r = np.array([self._correlation(a[:, i], b[:, i])[0] for i in range(a.shape[1])], dtype=float)
        coords = coords_along(prediction, neuroid) or {"neuroid_id": (neuroid, ids_a)}
        return self.result_class(r, dims=(neuroid,), coords=coords)


class RidgeCVRegression(KernelRegression):
    """Ridge with the penalty chosen among ``alphas`` by efficient leave-one-out (scikit-learn's ``RidgeCV``, one
    alpha for all targets), on arrays: ``fit(X, Y)``, ``predict(X)``, ``alpha_`` (the reference's
    ``DualRidgeCVRegression``).

    ``fit`` runs ``RidgeCV`` on an ``n x n`` design with the same centred Gram matrix as ``X`` when features
    outnumber samples (``V sqrt(L)`` from the eigendecomposition ``Xc Xcᵀ = V L Vᵀ``; leave-one-out errors depend on
    the design only through that matrix), so no ``features x targets`` matrix is ever formed; otherwise on ``X``
    itself. ``predict`` is the ridge kernel at that alpha (dual form, ``n x n``, when samples are fewer than
    features).

    Parameters
    ----------
    alphas : sequence of float
        Candidate penalties (e.g. :data:`brainscore.metrics.kernels.ridge.ALPHA_LIST`).
    **kwargs
        Settings of the ridge kernel.

    Raises
    ------
    ValueError
        From ``fit``, for ``X`` and ``Y`` that are not 2-D with the same number of rows.
    """

    def __init__(self, alphas: Any, **kwargs: Any):
        super().__init__("ridge", **kwargs)
        self.alphas = alphas

    def fit(self, X: Any, Y: Any) -> "RidgeCVRegression":
        """Choose alpha on ``X`` (n, features) and ``Y`` (n, targets), keep both for ``predict``; returns ``self``."""
        from sklearn.linear_model import RidgeCV

        super().fit(X, Y)
        X, Y = self._train
        design = X
        if X.shape[1] > X.shape[0]:
            centred = X - X.mean(axis=0)
            eigenvalues, eigenvectors = np.linalg.eigh(centred @ centred.T)
            design = eigenvectors * np.sqrt(np.clip(eigenvalues, 0.0, None))
        self._alpha = float(RidgeCV(alphas=self.alphas).fit(design, Y).alpha_)
        return self

    def predict(self, X: Any) -> np.ndarray:
        """(n_test, targets): the ridge kernel at ``alpha_`` on ``X`` (n_test, features); before ``fit``, the
        ``AttributeError`` of ``alpha_``."""
        return KernelRegression("ridge", **self.kwargs, alpha=self.alpha_).fit(*self._train).predict(X)
