"""The one check of every score that enters the results database: a recorded score is a number it can be.

:func:`check_outcome` runs wherever an outcome is recorded (:func:`brainscore.results.records.record`, before
anything is written or kept in the journal, and :meth:`brainscore.results.Database.record`, the row-writing
step under it that the journal's replay also uses): the website's queue, ``brainscore score``, ``brainscore
run`` and the journal all pass it. A *done* outcome must have

- a ceiled score that is finite and inside the range its benchmark declares (``Benchmark.score_range``,
  carried by the outcome as ``score_range``; [0, 1] where none is declared);
- a ceiled score in [0, 1] whatever range is declared where its formula says it was clipped
  (``raw_over_ceiling_clipped``: the RSA benchmarks since issue 36, where a copy of the public RDMs' ranks
  reached 1.0106, and the behavioural benchmarks that clip as the reference's ``bound_score`` does);
- a raw score and a ceiling that are finite wherever its formula uses them (a NaN raw or ceiling arrives
  here as None, :func:`brainscore.scoring.outcome.number`, so a formula that needs one and lacks it fails too).

A failed outcome is a message, not a number: it is always recordable. A score that fails the check is never
recorded as done; :class:`InvalidScore` says why in the terms of the model and the benchmark.
"""
from __future__ import annotations

import math

from brainscore.errors import BrainScoreError
from brainscore.scoring.outcome import Outcome

__all__ = ["InvalidScore", "check_outcome", "DEFAULT_RANGE"]

DEFAULT_RANGE = (0.0, 1.0)
"""The ceiled scores a benchmark gives unless it declares another ``score_range``."""

#: formulas whose score is computed from a raw score and a ceiling (both must then be finite numbers)
CEILED_FORMULAS = ("r2_over_ceiling", "legacy", "raw_over_ceiling", "raw_over_ceiling_clipped")
#: formulas whose score is clipped to [0, 1] (a done score outside it is refused whatever range is declared)
CLIPPED_FORMULAS = ("raw_over_ceiling_clipped",)
#: formulas whose score is computed from a raw score alone
RAW_FORMULAS = ("r2",)


class InvalidScore(BrainScoreError, ValueError):
    """A done outcome whose numbers cannot be a score of its benchmark; nothing of it is recorded as done.

    Attributes
    ----------
    outcome : Outcome
        The outcome that was refused.
    """

    def __init__(self, message: str, outcome: Outcome):
        super().__init__(message)
        self.outcome = outcome


def _shown(value) -> str:
    return "missing (NaN or absent)" if value is None else repr(float(value))


def check_outcome(outcome: Outcome) -> None:
    """Refuse a done ``outcome`` whose score is not finite, lies outside its benchmark's range, or whose raw score
    or ceiling is not finite where its formula uses them; a failed outcome passes.

    Raises
    ------
    InvalidScore
        Naming the model, the benchmark, the number and what was expected.
    """
    if outcome.status != "done":
        return
    what = f"the score of {outcome.model} on {outcome.benchmark}"
    score = outcome.score
    if score is None or not isinstance(score, (int, float)) or isinstance(score, bool) or not math.isfinite(score):
        raise InvalidScore(f"{what} is {_shown(score) if not isinstance(score, str) else repr(score)}: a score must be "
                           f"a finite number; nothing was recorded as done", outcome)
    low, high = outcome.score_range or DEFAULT_RANGE
    if (low is not None and score < low) or (high is not None and score > high):
        shown = (f"{'(-inf' if low is None else f'[{low:g}'}, {'inf)' if high is None else f'{high:g}]'}")
        declared = f"its benchmark's range {shown}" if outcome.score_range else "[0, 1] (its benchmark declares no other)"
        raise InvalidScore(f"{what} is {score!r}, outside {declared}: nothing was recorded as done. A benchmark "
                           f"whose ceiled scores may leave [0, 1] declares it with score_range = (low, high)", outcome)
    if outcome.formula in CLIPPED_FORMULAS and not 0.0 <= score <= 1.0:
        raise InvalidScore(f"{what} is {score!r}, but its formula {outcome.formula} clips to [0, 1]: nothing was "
                           f"recorded as done (the unclipped value belongs in the provenance, not the score)", outcome)
    parts = []
    if outcome.formula in CEILED_FORMULAS + RAW_FORMULAS:
        parts.append(("raw score", outcome.raw))
    if outcome.formula in CEILED_FORMULAS:
        parts.append(("ceiling", outcome.ceiling))
    for name in ("raw", "ceiling"):  # present but not finite (an infinity; a NaN arrives as None)
        value = getattr(outcome, name)
        if value is not None and not math.isfinite(float(value)):
            parts.append((f"{name} score" if name == "raw" else name, value))
    for name, value in parts:
        if value is None or not math.isfinite(float(value)):
            raise InvalidScore(f"{what} has {name} {_shown(value)} (formula {outcome.formula}): the raw score and the "
                               f"ceiling of a score must be finite; nothing was recorded as done", outcome)
