"""``KatoErrorConsistency``: :class:`brainscore.metrics.behavior.error_consistency.ErrorConsistency` leaving out
trials where either observer gave no response (``''``/``'NaN'``), Kato 2026."""
from __future__ import annotations

from typing import Any

from brainscore.metrics.behavior.error_consistency import ErrorConsistency

__all__ = ["KatoErrorConsistency"]


class KatoErrorConsistency(ErrorConsistency):
    """:class:`ErrorConsistency` with ``valid_only=True`` (the reference's ``kato_error_consistency``)."""

    def __init__(self, **kwargs: Any):
        kwargs.setdefault("valid_only", True)
        super().__init__(**kwargs)
