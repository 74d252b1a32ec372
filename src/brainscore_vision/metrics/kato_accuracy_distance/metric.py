"""``KatoAccuracyDistance``: :class:`brainscore.metrics.behavior.accuracy_distance.AccuracyDistance` that first drops
trials without a valid response (``''``/``'NaN'``) in either assembly (Kato 2026)."""
from __future__ import annotations

from typing import Any

from brainscore.metrics.behavior.accuracy_distance import AccuracyDistance

__all__ = ["KatoAccuracyDistance"]


class KatoAccuracyDistance(AccuracyDistance):
    """:class:`AccuracyDistance` with ``valid_only=True`` (the reference's ``kato_accuracy_distance``)."""

    def __init__(self, **kwargs: Any):
        kwargs.setdefault("valid_only", True)
        super().__init__(**kwargs)
