"""The psychometric threshold fit side by side: the reference's loop of L-BFGS-B starts against the lockstep fit.

The reference (Brain-Score's threshold metric) minimises the likelihood with one
``scipy.optimize.minimize(method='L-BFGS-B')`` per start (50 slopes x every measured level, e.g. 400
starts for 8 levels) and keeps the best. :func:`brainscore.metrics.behavior.threshold.fit_psychometric`
drives the same SciPy L-BFGS-B routine for all starts at once and evaluates their likelihoods in one array
operation; it must return the same bits. ``--compare`` runs both, through the whole :class:`Threshold`
metric (proportions, the cut after the asymptote, the fit, the inflection threshold, the score against
fixed human thresholds), on every case below and prints per case: reference seconds, new seconds, their
ratio, the largest ``|threshold difference|`` and whether parameters and scores are bit-equal.

The cases are seeded model responses (the Malania 2007 data are not in ../shared/data): smooth
psychometric functions at several slopes and trial counts, and step-like responses (chance up to one
level, near-perfect from the next), whose likelihood has no finite optimum, so the reference's answer is
wherever its best L-BFGS-B run stopped.

Usage::

    PYTHONPATH=src python perf/threshold.py --compare [--case step] [--one-blas-thread-reference]

``--one-blas-thread-reference`` runs the reference loop with one BLAS thread too (threadpoolctl): its
L-BFGS-B calls BLAS on 3-vectors, where a threaded BLAS only waits (the new fit always uses one).
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import time
from unittest import mock

import numpy as np

from brainscore.data.assemblies import BehavioralAssembly
from brainscore.metrics.behavior import threshold as module

HUMANS = [2.0, 3.0, 4.0, 5.0, 6.5]  # human thresholds the scores are taken against (the levels' units)


def responses(levels, proportions, trials: int = 100) -> BehavioralAssembly:
    """Choice probabilities of ``trials`` presentations per level, ``round(p * trials)`` of them correct."""
    x, correct = [], []
    for level, p in zip(levels, proportions):
        hits = int(round(p * trials))
        x += [level] * trials
        correct += [1] * hits + [0] * (trials - hits)
    correct = np.array(correct)
    probabilities = np.where(correct[:, None] == 1, [[0.9, 0.1]], [[0.1, 0.9]])
    return BehavioralAssembly(probabilities, dims=["presentation", "choice"], coords={
        "stimulus_id": ("presentation", np.arange(len(x))), "vernier_offset": ("presentation", np.array(x, float)),
        "image_label": ("presentation", ["left"] * len(x)), "choice": ["left", "right"]})


def _binomial(seed, levels, alpha, beta, lapse, trials):
    p = module.psychometric_cum_gauss(np.asarray(levels, float), alpha, beta, lapse)
    return np.random.RandomState(seed).binomial(trials, p) / trials


LEVELS = np.arange(1.0, 9.0)
CASES = {
    "smooth": (LEVELS, _binomial(0, LEVELS, 0.8, 4.0, 0.05, 50), 50),
    "exact-curve": (LEVELS, np.round(module.psychometric_cum_gauss(LEVELS, 0.8, 4.0, 0.05) * 400) / 400, 400),
    "gentle-10-levels": (np.arange(1.0, 11.0), _binomial(1, np.arange(1.0, 11.0), 0.3, 5.0, 0.02, 40), 40),
    "steep-noisy": (LEVELS, _binomial(2, LEVELS, 3.0, 4.3, 0.03, 50), 50),
    "lapse-heavy": (LEVELS, _binomial(3, LEVELS, 1.0, 3.5, 0.2, 50), 50),
    "asymptote-drop": (LEVELS, np.array([0.52, 0.6, 0.74, 0.9, 0.96, 0.7, 0.62, 0.6]), 50),
    "geometric-levels": (np.array([0.25, 0.5, 1, 2, 4, 8, 16]), _binomial(4, [0.25, 0.5, 1, 2, 4, 8, 16], 0.4, 3.0,
                                                                      0.04, 50), 50),
    "step": (LEVELS, np.array([0.5, 0.5, 0.48, 0.52, 0.98, 1.0, 1.0, 1.0]), 50),
    "step-noisy": (LEVELS, np.array([0.52, 0.46, 0.5, 0.96, 0.98, 1.0, 1.0, 0.98]), 50),
    "step-exact": (LEVELS, np.array([0.5, 0.5, 0.5, 0.5, 1.0, 1.0, 1.0, 1.0]), 50),
    "step-early": (LEVELS, np.array([0.5, 1.0, 1.0, 1.0, 0.98, 1.0, 1.0, 1.0]), 50),
}


def run(case: str, fit) -> tuple[float, dict]:
    """(seconds, outcome) of the Threshold metric on ``case`` with ``fit`` as its psychometric fit."""
    levels, proportions, trials = CASES[case]
    assembly = responses(levels, proportions, trials)
    metric = module.Threshold("vernier_offset")
    fits = []

    def recording(x, y, *args, **kwargs):
        fits.append(fit(x, y, *args, **kwargs))
        return fits[-1]

    with mock.patch.object(module, "fit_psychometric", recording):
        start = time.perf_counter()
        try:
            value, _ = metric.threshold(assembly)
        except module.FitFailure as failure:
            value = f"fit fails: {failure}"
        seconds = time.perf_counter() - start
    score = module.threshold_scores(value, HUMANS) if isinstance(value, float) else 0.0  # as Threshold.__call__
    return seconds, {"params": fits[0][0] if fits else None, "threshold": value, "score": float(score)}


def compare(cases, one_thread_reference: bool) -> bool:
    """Print one row per case; True when every case's parameters, threshold and score are bit-equal."""
    from threadpoolctl import threadpool_limits

    module.fit_psychometric(LEVELS, CASES["smooth"][1])  # warm-up: imports, first calls
    print(f"{'case':18s} {'reference_s':>11s} {'new_s':>7s} {'ratio':>6s} {'max|dthreshold|':>15s} "
          f"{'threshold':>20s} {'score':>20s} bit-equal", flush=True)
    equal_everywhere = True
    for case in cases:
        limits = threadpool_limits(limits=1, user_api="blas") if one_thread_reference else contextlib.nullcontext()
        with limits:
            reference_s, reference = run(case, module.reference_fit_psychometric)
        new_s, new = run(case, module.fit_psychometric)
        a, b = reference["threshold"], new["threshold"]
        difference = abs(a - b) if isinstance(a, float) and isinstance(b, float) else (0.0 if a == b else np.inf)
        equal = reference == new
        equal_everywhere &= equal
        print(f"{case:18s} {reference_s:11.2f} {new_s:7.3f} {reference_s / new_s:6.1f} {difference:15.3g} "
              f"{a if isinstance(a, float) else 'fit fails':>20} {reference['score']!r:>20} {equal}", flush=True)
    return equal_everywhere


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", action="store_true", help="run the reference loop and the new fit on each case")
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="only these cases (repeatable)")
    parser.add_argument("--one-blas-thread-reference", action="store_true",
                        help="run the reference loop with one BLAS thread as well")
    args = parser.parse_args()
    cases = args.case or list(CASES)
    if not args.compare:
        for case in cases:
            seconds, outcome = run(case, module.fit_psychometric)
            print(f"{case:18s} {seconds:7.3f} s  threshold {outcome['threshold']}  score {outcome['score']!r}")
        return
    sys.exit(0 if compare(cases, args.one_blas_thread_reference) else 1)


if __name__ == "__main__":
    main()
