"""The psychometric fit returns the reference procedure's optimum, bit for bit, also on step-like responses.

The reference procedure (one ``scipy.optimize.minimize(method='L-BFGS-B')`` per start of the 50 x levels grid,
the best kept) takes minutes on a busy machine, too slow for a test: its optimum on three cases of
``perf/threshold.py`` is stored below as a constant, from one run of
:func:`~brainscore.metrics.behavior.threshold.reference_fit_psychometric` (one BLAS thread, SciPy 1.17.1, 2026-11-29;
``perf/threshold.py --compare`` reruns it on every case). The live comparisons use a smaller grid of slope starts
(the same machinery, a tenth of the runs).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy
from threadpoolctl import threadpool_limits

from brainscore.metrics.behavior import threshold as module
from brainscore.metrics.behavior.threshold import (Threshold, fit_psychometric, psychometric_cum_gauss,
                                                   reference_fit_psychometric)

LEVELS = np.arange(1.0, 9.0)
# (proportions correct per level, the reference's (alpha, beta, lambda) and R^2 as float.hex)
REFERENCE_OPTIMA = {
    "smooth": ([0.5, 0.48, 0.58, 0.72, 0.86, 0.92, 0.96, 0.92],
               ("0x1.eb0126a2e1cd1p-1", "0x1.010cd79c5489cp+2", "0x1.fc699b1572068p-5"), "0x1.fc661c8538c02p-1"),
    # step-like: no finite optimum (the slope grows without bound); the reference's answer is where its best run stopped
    "step": ([0.5, 0.5, 0.48, 0.52, 0.98, 1.0, 1.0, 1.0],
             ("0x1.3f0a8eeb0ca5cp+3", "0x1.0b0d8057dc2f2p+2", "0x1.eb851eb851eb8p-6"), "0x1.fcaa061929ad9p-1"),
    "step-noisy": ([0.52, 0.46, 0.5, 0.96, 0.98, 1.0, 1.0, 0.98],
                   ("0x1.3f5da1da33bc4p+3", "0x1.e5fd38f9341f4p+1", "0x1.eb851eb851eb8p-6"), "0x1.fb7e327a976f5p-1"),
}
FEW_ALPHAS = np.logspace(-3, 1, 50)[::10]  # 5 of the 50 slope starts: 40 runs for 8 levels


@pytest.fixture(autouse=True)
def one_blas_thread():
    """SciPy's L-BFGS-B calls BLAS on 3-vectors: a threaded BLAS computes the same bits, 10x slower when busy."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


@pytest.mark.skipif(tuple(int(v) for v in scipy.__version__.split(".")[:2]) != (1, 17),
                    reason="the stored optima are the reference loop's bits under SciPy 1.17")
@pytest.mark.parametrize("case", sorted(REFERENCE_OPTIMA))
def test_fit_returns_the_reference_procedures_optimum_bit_for_bit(case):
    proportions, params, r2 = REFERENCE_OPTIMA[case]
    fitted, fitted_r2 = fit_psychometric(LEVELS, np.array(proportions))
    assert [v.hex() for v in fitted] == list(params)
    assert fitted_r2.hex() == r2
    # and so the threshold and its score: equal, not close
    metric = Threshold("x")
    expected = [float.fromhex(v) for v in params]
    accuracy = metric.inflection_accuracy(LEVELS, expected)
    assert (module.inverse_psychometric_cum_gauss(accuracy, *fitted)
            == module.inverse_psychometric_cum_gauss(accuracy, *expected))


@pytest.mark.parametrize("proportions", [REFERENCE_OPTIMA["step"][0], REFERENCE_OPTIMA["smooth"][0],
                                         [0.5, 1.0, 1.0, 1.0, 0.98], [0.55, 0.5, 0.7, 0.95, 0.9, 1.0, 1.0, 1.0, 0.96]])
def test_lockstep_runs_equal_scipy_minimize_run_by_run(proportions):
    """Every start's final parameters, not only the winner's, equal a separate scipy.optimize.minimize run."""
    y = np.array(proportions)
    x = np.arange(1.0, len(y) + 1)
    starts = module._starts(x, y, FEW_ALPHAS)
    finals, nlls = module._lbfgsb_lockstep(x, y, starts)
    for start, final, nll in zip(starts, finals, nlls):
        result = module.minimize(module._negative_log_likelihood, start, args=(x, y), method="L-BFGS-B",
                                 bounds=((None, None), (None, None), module.LAPSE_BOUNDS))
        assert np.array_equal(result.x, final), start
        assert module._negative_log_likelihood(result.x, x, y) == nll


def test_a_lockstep_that_disagrees_with_scipy_falls_back_to_the_reference_loop(monkeypatch):
    """If SciPy's private L-BFGS-B interface ever computes something else, the reference loop answers."""
    y = np.array([0.5, 0.5, 0.52, 0.98, 1.0])
    levels = np.arange(1.0, 6.0)
    expected = reference_fit_psychometric(levels, y, FEW_ALPHAS)
    real = module._lbfgsb_lockstep

    def off_by_a_bit(x, y, starts):
        finals, nlls = real(x, y, starts)
        return finals * (1 + 1e-12), nlls

    assert fit_psychometric(levels, y, FEW_ALPHAS) == expected
    monkeypatch.setattr(module, "_lbfgsb_lockstep", off_by_a_bit)
    assert fit_psychometric(levels, y, FEW_ALPHAS) == expected

    def changed_interface(x, y, starts):
        raise TypeError("setulb() takes 16 positional arguments but 17 were given")

    monkeypatch.setattr(module, "_lbfgsb_lockstep", changed_interface)
    assert fit_psychometric(levels, y, FEW_ALPHAS) == expected


def test_fit_still_recovers_a_generating_curve():
    y = np.round(psychometric_cum_gauss(LEVELS, 0.8, 4.0, 0.05) * 400) / 400
    (alpha, beta, lapse), r2 = fit_psychometric(LEVELS, y)
    assert (alpha, beta, lapse) == pytest.approx((0.8, 4.0, 0.05), rel=0.02)
    assert r2 > 0.999


def test_fit_calls_scipy_minimize_once_not_once_per_start(monkeypatch):
    """The speed-up, counted rather than timed: one ``minimize`` (the winner's check) instead of one per start."""
    calls = []
    real = module.minimize

    def counting(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "minimize", counting)
    y = np.array(REFERENCE_OPTIMA["step-noisy"][0])
    fit_psychometric(LEVELS, y, FEW_ALPHAS)
    assert len(calls) == 1  # the reference loop: len(FEW_ALPHAS) * len(LEVELS) = 40
