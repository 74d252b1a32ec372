"""Psychophysical thresholds: fit a psychometric function to a model's choices and compare its threshold
with each human subject's.

Psychometric function (Wichmann & Hill 2001, eq. 1; a cumulative Gaussian with guess rate ``gamma``
= 0.5 and lapse rate ``lambda``)::

    p(x) = gamma + (1 - gamma - lambda) * Phi(alpha * (x - beta))

Fitting (Brain-Score's procedure, Malania et al. 2007 benchmarks): the trials are aggregated into the
proportion correct per value of the independent variable; values after the curve's asymptote
(from the first point after the maximum beyond which every point is at least one std below the
maximum) are dropped, and the fit fails if fewer than a third remain. The negative log-likelihood
(of the proportions) is minimised by L-BFGS-B from every start in a grid (``alpha`` in
``logspace(-3, 1, 50)``, ``beta`` at each measured value, ``lambda = 1 - max(p)``), with ``lambda``
bounded to [0.03, 0.5] (scipy's L-BFGS-B with its default finite-difference gradient, as the reference;
``Phi`` is :func:`scipy.special.ndtr`, which ``scipy.stats.norm.cdf`` computes too, without its per-call
overhead); the fit with the lowest likelihood wins (the first on ties) and is rejected
when its R^2 on the proportions is below 0.4. The runs of all starts advance in lockstep through SciPy's own
L-BFGS-B routine, their likelihoods and gradients computed together (:func:`fit_psychometric`): the same bits as
the reference's loop of ``minimize`` calls (:func:`reference_fit_psychometric`), also where the likelihood has no
finite optimum (step-like responses, where the answer is wherever the best run stopped), 14-41x faster than
that loop with one BLAS thread and 119-190x than with a threaded BLAS (``perf/threshold.py --compare``). The threshold is the value at which the fitted curve
reaches ``threshold_accuracy``, by default its inflection (halfway between the fitted values at the
smallest and largest measured values); it is rejected above the largest kept value.

Scoring (the reference's ``scoring_function``): for a model threshold ``s`` and human thresholds
``t_i``, ``raw_i = max(1 - |t_i - s| / t_i, 0)``; the score is their mean, ``error`` their std (ddof=0).
A model whose fit fails scores 0 (``attrs['fit_failure']`` says why), as in the reference: a model at
chance has no threshold. The ceiling scores each human, drawn in turn with ``RandomState(i)``, against
the others.

:class:`ThresholdElevation` compares ``threshold(test condition) / threshold(baseline condition)``
the same way (the test condition uses the baseline's inflection accuracy).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np
from scipy.optimize import minimize
from scipy.special import ndtr, ndtri  # the standard normal's cdf and its inverse, without scipy.stats' overhead

from brainscore.errors import ValidationError
from brainscore.metrics.base import Metric
from brainscore.metrics.score import Score

__all__ = ["psychometric_cum_gauss", "inverse_psychometric_cum_gauss", "fit_psychometric",
           "reference_fit_psychometric", "threshold_scores",
           "FitFailure", "Threshold", "ThresholdElevation"]

ALPHA_GRID = np.logspace(-3, 1, 50)
LAPSE_BOUNDS = (0.03, 0.5)
MIN_R2 = 0.4


class FitFailure(Exception):
    """The psychometric function could not be fitted (the message says why)."""


def psychometric_cum_gauss(x: Any, alpha: float, beta: float, lambda_: float, gamma: float = 0.5) -> Any:
    """``gamma + (1 - gamma - lambda_) * Phi(alpha * (x - beta))`` (Wichmann & Hill 2001, eq. 1)."""
    return gamma + (1 - gamma - lambda_) * ndtr(alpha * (np.asarray(x) - beta))


def inverse_psychometric_cum_gauss(y: Any, alpha: float, beta: float, lambda_: float, gamma: float = 0.5) -> Any:
    """The ``x`` at which :func:`psychometric_cum_gauss` equals ``y``."""
    return beta + ndtri((np.asarray(y) - gamma) / (1 - gamma - lambda_)) / alpha


def _negative_log_likelihood(params: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    p = psychometric_cum_gauss(x, *params)
    with np.errstate(divide="ignore", invalid="ignore"):
        return -float(np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)))


def proportion_correct(x: np.ndarray, correct: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted unique ``x``, proportion of correct trials at each)."""
    values, inverse = np.unique(np.asarray(x), return_inverse=True)
    totals = np.bincount(inverse, minlength=len(values))
    hits = np.bincount(inverse, weights=(np.asarray(correct) == 1).astype(float), minlength=len(values))
    return values, hits / totals


def drop_after_asymptote(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """``x``, ``y`` up to the first point after the maximum from which all points lie >= one std below it; and
    whether at least a third of the points remain."""
    spread, top = np.std(y), int(np.argmax(y))
    cut = None
    for index in range(top + 1, len(y)):
        if np.all(np.abs(y[index:] - y[top]) >= spread):
            cut = index
            break
    kept_x, kept_y = (x, y) if cut is None else (x[:cut], y[:cut])
    return kept_x, kept_y, len(kept_y) / len(y) >= 1 / 3


def _starts(x: np.ndarray, y: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """The reference's starts in its order (``alpha`` outer, ``beta`` inner), shape ``(len(alphas) * len(x), 3)``."""
    alpha, beta = np.meshgrid(np.asarray(alphas, dtype=float), np.asarray(x, dtype=float), indexing="ij")
    return np.stack([alpha.ravel(), beta.ravel(), np.full(alpha.size, 1 - np.max(y))], axis=1)


def reference_fit_psychometric(x: np.ndarray, y: np.ndarray,
                               alphas: np.ndarray = ALPHA_GRID) -> tuple[tuple[float, float, float], float]:
    """The reference's procedure as it is written: one :func:`scipy.optimize.minimize` (L-BFGS-B, bounds on the
    lapse rate, finite-difference gradient) per start, the lowest likelihood winning (the first on ties).

    :func:`fit_psychometric` returns the same bits much faster; this loop stays as the baseline it is checked
    against (``perf/threshold.py --compare``, ``tests/metrics/behavior/test_threshold_fit.py``).

    Raises
    ------
    FitFailure
        If every start failed.
    """
    best, best_nll = None, np.inf
    for start in _starts(x, y, alphas):
        try:
            result = minimize(_negative_log_likelihood, start, args=(x, y), method="L-BFGS-B",
                              bounds=((None, None), (None, None), LAPSE_BOUNDS))
        except RuntimeError:
            continue
        nll = _negative_log_likelihood(result.x, x, y)
        if nll < best_nll:
            best, best_nll = tuple(float(v) for v in result.x), nll
    if best is None:
        raise FitFailure("every start of the psychometric fit failed")
    return best, _r2(x, y, best)


def _r2(x: np.ndarray, y: np.ndarray, params: tuple[float, float, float]) -> float:
    from sklearn.metrics import r2_score

    return float(r2_score(y, psychometric_cum_gauss(x, *params)))


def fit_psychometric(x: np.ndarray, y: np.ndarray, alphas: np.ndarray = ALPHA_GRID) -> tuple[tuple[float, float, float], float]:
    """Best ``(alpha, beta, lambda)`` of the grid-started L-BFGS-B fits (see the module notes) and its R^2.

    The same bits as :func:`reference_fit_psychometric` (the reference's loop of ``scipy.optimize.minimize``
    calls), computed by :func:`_lbfgsb_lockstep`: all starts' L-BFGS-B runs advance together and their
    likelihoods and finite-difference gradients are evaluated in one array operation. The winning run is
    then repeated with ``scipy.optimize.minimize`` itself; should the two ever differ (a SciPy whose private
    L-BFGS-B interface changed), the reference loop is run instead, so the result is the reference
    procedure's in every case.

    Parameters
    ----------
    x, y : array, shape (n,)
        Values of the independent variable and the proportion correct at each.
    alphas : array
        Slope starts (``logspace(-3, 1, 50)``).

    Raises
    ------
    FitFailure
        If every start failed.
    """
    from threadpoolctl import threadpool_limits

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    starts = _starts(x, y, alphas)
    # L-BFGS-B's BLAS calls are on 3-vectors; a threaded BLAS only waits on its threads there (10x slower on
    # a busy 2-core machine) and computes the same bits with one.
    with threadpool_limits(limits=1, user_api="blas"):
        try:
            finals, nlls = _lbfgsb_lockstep(x, y, starts)
        except (TypeError, ValueError, AttributeError, ImportError):  # SciPy's private interface changed
            return reference_fit_psychometric(x, y, alphas)
        ok = np.flatnonzero(np.isfinite(nlls))
        if not len(ok):
            raise FitFailure("every start of the psychometric fit failed")
        winner = int(ok[np.argmin(nlls[ok])])  # the first of equal minima, as the reference's strict '<'
        check = minimize(_negative_log_likelihood, starts[winner], args=(x, y), method="L-BFGS-B",
                         bounds=((None, None), (None, None), LAPSE_BOUNDS))
        if not np.array_equal(check.x, finals[winner]):
            return reference_fit_psychometric(x, y, alphas)
    best = tuple(float(v) for v in finals[winner])
    return best, _r2(x, y, best)


# scipy.optimize.minimize's L-BFGS-B defaults (scipy/optimize/_lbfgsb_py.py), which the reference uses
_MAXCOR, _FTOL, _PGTOL, _MAXLS, _MAXITER, _MAXFUN, _FD_STEP = 10, 2.2204460492503131e-09, 1e-5, 20, 15000, 15000, 1e-8
_LOWER = np.array([-np.inf, -np.inf, LAPSE_BOUNDS[0]])
_UPPER = np.array([np.inf, np.inf, LAPSE_BOUNDS[1]])


def _negative_log_likelihoods(params: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`_negative_log_likelihood` of each row of ``params`` (k x 3), element for element the same
    operations, so the same bits."""
    alpha, beta, lapse = params[:, 0:1], params[:, 1:2], params[:, 2:3]
    p = 0.5 + (1 - 0.5 - lapse) * ndtr(alpha * (x[None, :] - beta))
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.sum(y * np.log(p) + (1 - y) * np.log(1 - p), axis=1)


def _values_and_gradients(points: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Likelihood and gradient at each row of ``points`` as ``scipy.optimize.minimize`` computes them for
    L-BFGS-B without a gradient: ``approx_derivative``'s 2-point difference with absolute step 1e-8 (the step
    relative to ``max(1, |x|)`` where 1e-8 vanishes in ``x``), turned back where it would leave the bounds."""
    step = np.full_like(points, _FD_STEP)
    sign = (points >= 0).astype(float) * 2 - 1
    step = np.where((points + step) - points == 0,
                    np.finfo(float).eps ** 0.5 * sign * np.maximum(1.0, np.abs(points)), step)
    moved = points + step
    outside = (moved < _LOWER) | (moved > _UPPER)
    fits = np.abs(step) <= np.maximum(points - _LOWER, _UPPER - points)  # always: the lapse range is 0.47 wide
    step = np.where(outside & fits, -step, step)
    k = len(points)
    shifted = np.repeat(points[:, None, :], 4, axis=1)
    for i in range(3):
        shifted[:, i + 1, i] = points[:, i] + step[:, i]
    values = _negative_log_likelihoods(shifted.reshape(-1, 3), x, y).reshape(k, 4)
    return values[:, 0], (values[:, 1:] - values[:, :1]) / ((points + step) - points)


def _lbfgsb_lockstep(x: np.ndarray, y: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(final parameters, their likelihood) of ``scipy.optimize.minimize(..., method='L-BFGS-B')`` from each
    start, bit for bit: SciPy's own L-BFGS-B routine (``_lbfgsb.setulb``, reverse communication, SciPy >= 1.15)
    drives every run, and whenever runs ask for the likelihood and gradient, those of all of them are
    computed in one array operation (:func:`_values_and_gradients`). The run's bookkeeping follows
    ``scipy/optimize/_lbfgsb_py.py``: the start clipped into the bounds, values reused at an unchanged point,
    stopping at ``maxiter`` iterations or ``maxfun`` evaluations."""
    from scipy.optimize import _lbfgsb

    n, m = 3, _MAXCOR
    factr = _FTOL / np.finfo(float).eps
    nbd = np.array([0, 0, 2], dtype=np.int32)
    low, high = np.nan_to_num(_LOWER, neginf=0.0), np.nan_to_num(_UPPER, posinf=0.0)
    points = [np.array(start, dtype=np.float64) for start in np.clip(starts, _LOWER, _UPPER)]
    runs = len(points)
    wa = [np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m) for _ in range(runs)]
    iwa = [np.zeros(3 * n, dtype=np.int32) for _ in range(runs)]
    task = [np.zeros(2, dtype=np.int32) for _ in range(runs)]
    ln_task = [np.zeros(2, dtype=np.int32) for _ in range(runs)]
    lsave = [np.zeros(4, dtype=np.int32) for _ in range(runs)]
    isave = [np.zeros(44, dtype=np.int32) for _ in range(runs)]
    dsave = [np.zeros(29) for _ in range(runs)]
    values, gradients = _values_and_gradients(np.array(points), x, y)
    f = [float(v) for v in values]
    g = list(gradients)
    evaluated_at = [tuple(p) for p in points]  # tuples of floats compare as np.array_equal (NaN unequal), faster
    evaluations, iterations = [1 + n] * runs, [0] * runs
    setulb = _lbfgsb.setulb
    active = list(range(runs))
    while active:
        asking = []
        for r in active:
            point, state = points[r], task[r]
            while True:
                setulb(m, point, low, high, nbd, f[r], g[r], factr, _PGTOL, wa[r], iwa[r], state,
                       lsave[r], isave[r], dsave[r], _MAXLS, ln_task[r])
                if state[0] == 3:  # wants f and g at the point
                    if tuple(point) == evaluated_at[r]:
                        continue  # ScalarFunction's memo: the values it has
                    asking.append(r)
                    break
                if state[0] == 1:  # a new iteration
                    iterations[r] += 1
                    if iterations[r] >= _MAXITER:
                        state[0], state[1] = 5, 504
                    elif evaluations[r] > _MAXFUN:
                        state[0], state[1] = 5, 502
                    continue
                break  # converged, stopped or failed
        if asking:
            values, gradients = _values_and_gradients(np.array([points[r] for r in asking]), x, y)
            for j, r in enumerate(asking):
                f[r], g[r] = float(values[j]), gradients[j].copy()
                evaluated_at[r] = tuple(points[r])
                evaluations[r] += 1 + n
        active = asking
    finals = np.array(points)
    return finals, _negative_log_likelihoods(finals, x, y)


def threshold_scores(source: float, targets: Sequence[float]) -> Score:
    """Mean over targets of ``max(1 - |t - source| / t, 0)``; ``error`` their std (ddof=0), ``raw`` the values.

    Raises
    ------
    ValidationError
        If ``source`` or a target is not finite, or a target is not positive.
    """
    targets = np.asarray(targets, dtype=float).ravel()
    if not np.isfinite(source) or not np.isfinite(targets).all() or (targets <= 0).any() or not len(targets):
        raise ValidationError(f"thresholds must be finite and the human ones positive; got {source} and {targets}")
    raw = np.maximum(1 - np.abs(targets - source) / targets, 0)
    return Score.of(float(raw.mean()), error=float(raw.std()), raw=raw.tolist())


def _values(target: Any) -> list[float]:
    if isinstance(target, (list, tuple, np.ndarray)):
        return [float(v) for v in np.asarray(target, dtype=float).ravel()]
    if hasattr(target, "values"):
        return [float(v) for v in np.asarray(target.values, dtype=float).ravel()]
    raise TypeError(f"target must be a list or an assembly of thresholds, got {type(target).__name__}")


def _leave_one_out(values: list[float], score: Callable[[float, list[float]], Score]) -> Score:
    """Each value, drawn with ``RandomState(i)`` from the others in turn, scored against the rest."""
    values = list(values)
    scores = []
    for i in range(len(values)):
        held_out = np.random.RandomState(i).choice(values, replace=False)
        values.remove(held_out)
        scores.append(float(score(float(held_out), values)))
        values.append(held_out)
    return Score.of(float(np.mean(scores)), error=float(np.std(scores)), raw=scores)


class Threshold(Metric):
    """A model's psychometric threshold against human thresholds (see the module notes).

    Parameters
    ----------
    independent_variable : str
        Presentation coordinate of the model's responses that the threshold is over (e.g. ``vernier_offset``).
    fit_function, fit_inverse_function : callable
        The psychometric function and its inverse (default the cumulative Gaussian).
    threshold_accuracy : 'inflection' or float
        Proportion correct that defines the threshold.
    required_accuracy : float
        Mean accuracy below which no fit is tried (0.6).

    Returns (``__call__(source, target)``)
    --------------------------------------
    Score
        ``source`` a :class:`BehavioralAssembly` of choice probabilities (``presentation x choice``, with
        ``image_label`` and the independent variable on ``presentation``) or a precomputed threshold
        (float); ``target`` the human thresholds (list or assembly).
    """

    def __init__(self, independent_variable: str, fit_function: Callable = psychometric_cum_gauss,
                 fit_inverse_function: Callable = inverse_psychometric_cum_gauss,
                 threshold_accuracy: str | float = "inflection", required_accuracy: float = 0.6):
        self._independent_variable = independent_variable
        self.fit_function, self.fit_inverse_function = fit_function, fit_inverse_function
        self.threshold_accuracy = threshold_accuracy
        self.required_accuracy = required_accuracy

    @staticmethod
    def correct(source: Any) -> np.ndarray:
        """1 where the most probable choice is the presentation's ``image_label``, else 0."""
        for coord in ("choice", "image_label"):
            if coord not in source.coords:
                raise ValidationError(f"the model's responses need a {coord!r} coordinate")
        choices = np.asarray(source["choice"].values)[np.argmax(np.asarray(source.values), axis=1)]
        return (choices == np.asarray(source["image_label"].values)).astype(int)

    def inflection_accuracy(self, x: np.ndarray, params: tuple) -> float:
        """Proportion correct halfway between the fitted curve at the smallest and the largest ``x``."""
        low, high = self.fit_function(np.min(x), *params), self.fit_function(np.max(x), *params)
        return float(low + (high - low) / 2)

    def fit(self, source: Any) -> tuple[tuple, np.ndarray, float]:
        """(fit parameters, raw ``x``, largest kept ``x``) of ``source``'s responses.

        Raises
        ------
        FitFailure
            Accuracy below ``required_accuracy``, too little data before the asymptote, or a poor fit.
        """
        if self._independent_variable not in source.coords:
            raise ValidationError(f"the model's responses have no {self._independent_variable!r} coordinate")
        x = np.asarray(source[self._independent_variable].values, dtype=float)
        correct = self.correct(source)
        if np.mean(correct) < self.required_accuracy:
            raise FitFailure(f"accuracy {np.mean(correct):.3f} is below the required {self.required_accuracy}")
        levels, proportions = proportion_correct(x, correct)
        kept_x, kept_y, enough = drop_after_asymptote(levels, proportions)
        if not enough:
            raise FitFailure("performance decreases with the independent variable: less than a third of the "
                             "points lie before the asymptote")
        params, r2 = fit_psychometric(kept_x, kept_y)
        if r2 < MIN_R2:
            raise FitFailure(f"the psychometric fit's R^2 is {r2:.3f} (< {MIN_R2})")
        return params, x, float(np.max(kept_x))

    def threshold(self, source: Any, threshold_accuracy: str | float | None = None) -> tuple[float, float]:
        """(threshold, the accuracy it is at) of ``source``'s responses.

        Raises
        ------
        FitFailure
            As :meth:`fit`, or the threshold lies beyond the largest kept measurement (or is NaN).
        """
        params, x, largest = self.fit(source)
        accuracy = self.threshold_accuracy if threshold_accuracy is None else threshold_accuracy
        if accuracy == "inflection":
            accuracy = self.inflection_accuracy(x, params)
        value = float(self.fit_inverse_function(accuracy, *params))
        if np.isnan(value) or value > largest:
            raise FitFailure(f"the threshold {value} lies outside the measured range (up to {largest})")
        return value, float(accuracy)

    def __call__(self, source: Any, target: Any) -> Score:
        if isinstance(source, (float, int, np.floating)) and not isinstance(source, bool):
            return threshold_scores(float(source), _values(target))
        if not hasattr(source, "coords"):
            raise TypeError(f"source must be a BehavioralAssembly or a threshold (float), got {type(source).__name__}")
        try:
            value, _ = self.threshold(source)
        except FitFailure as failure:
            return Score.of(0.0, error=0.0, fit_failure=str(failure))
        score = threshold_scores(value, _values(target))
        score.attrs["threshold"] = value
        return score

    def ceiling(self, assembly: Any) -> Score:
        """Each human's threshold against the others' (see the module notes)."""
        return _leave_one_out(_values(assembly), threshold_scores)


class ThresholdElevation(Threshold):
    """``threshold(test condition) / threshold(baseline condition)`` of a model against the humans'.

    Parameters
    ----------
    independent_variable : str
    baseline_condition, test_condition : str
        Keys of the model's responses (a dict of two assemblies) and of the human data
        (``{'baseline_assembly': ..., 'condition_assembly': ...}`` for :meth:`ceiling`).
    threshold_accuracy : 'inflection' or float
    required_baseline_accuracy, required_test_accuracy : float
    """

    def __init__(self, independent_variable: str, baseline_condition: str, test_condition: str,
                 threshold_accuracy: str | float = "inflection", required_baseline_accuracy: float = 0.6,
                 required_test_accuracy: float = 0.6):
        super().__init__(independent_variable, threshold_accuracy=threshold_accuracy)
        self.baseline_condition, self.test_condition = baseline_condition, test_condition
        self._baseline = Threshold(independent_variable, threshold_accuracy=threshold_accuracy,
                                   required_accuracy=required_baseline_accuracy)
        self._test = Threshold(independent_variable, threshold_accuracy=threshold_accuracy,
                               required_accuracy=required_test_accuracy)

    @staticmethod
    def elevations(assemblies: Mapping[str, Any]) -> list[float]:
        """Per subject, ``condition_assembly / baseline_assembly`` (the human threshold elevations)."""
        baseline = np.asarray(assemblies["baseline_assembly"].values, dtype=float).ravel()
        condition = np.asarray(assemblies["condition_assembly"].values, dtype=float).ravel()
        if baseline.shape != condition.shape:
            raise ValidationError(f"baseline ({baseline.size}) and condition ({condition.size}) thresholds differ "
                                  f"in number")
        return (condition / baseline).tolist()

    def __call__(self, source: Any, target: Any) -> Score:
        if isinstance(source, (float, int, np.floating)) and not isinstance(source, bool):
            elevation = float(source)
        elif isinstance(source, Mapping):
            try:
                baseline, accuracy = self._baseline.threshold(source[self.baseline_condition])
                test, _ = self._test.threshold(source[self.test_condition], threshold_accuracy=accuracy)
            except FitFailure as failure:
                return Score.of(0.0, error=0.0, fit_failure=str(failure))
            elevation = test / baseline
        else:
            raise TypeError(f"source must be a dict of two BehavioralAssemblies or a threshold elevation (float), "
                            f"got {type(source).__name__}")
        targets = self.elevations(target) if isinstance(target, Mapping) else _values(target)
        score = threshold_scores(elevation, targets)
        score.attrs["threshold_elevation"] = elevation
        return score

    def ceiling(self, assemblies: Mapping[str, Any]) -> Score:
        """Each human's threshold elevation against the others' (see the module notes)."""
        return _leave_one_out(self.elevations(assemblies), threshold_scores)
