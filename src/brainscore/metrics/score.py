"""The :class:`Score`: a number with its error and provenance."""
from __future__ import annotations

from typing import Any

import numpy as np

from brainscore.data.assemblies import DataAssembly


class Score(DataAssembly):
    """A score: a (usually scalar) :class:`xarray.DataArray` whose ``attrs`` keep its provenance.

    Attributes (in ``attrs``)
    -------------------------
    error : float
        Uncertainty of the value. On what :func:`brainscore.score` returns: the bootstrap standard
        error of the ceiled score over the experiment's units (see :mod:`brainscore.scoring.bootstrap`),
        with ``ci95`` its 95% interval and ``error_reference`` the metric's own error; on a metric's
        or ceiling's direct output, that metric's error (e.g. the SEM over cross-validation splits).
    raw : Score or DataArray
        The unceiled score (for a ceiled score), or the per-split / per-neuroid values (for a raw one).
    ceiling : Score
        The ceiling a ceiled score was normalised by.

    Any other attribute (``model_identifier``, ``benchmark_identifier``, ``layer``, seeds, versions)
    may be added by the code that produced the score.

    Examples
    --------
    >>> s = Score.of(0.5, error=0.01)
    >>> float(s), s.error
    (0.5, 0.01)
    """

    __slots__ = ()

    #: the attribute holding the unceiled score (the reference's name for ``"raw"``)
    RAW_VALUES_KEY = "raw"

    @classmethod
    def merge(cls, *scores: Any) -> "Score":
        """One Score from several that hold different parts of it (e.g. one per ``split``), aligned by their
        coordinates (an outer join; an entry in two of them must agree); the attrs are the first's. The reference's
        ``Score.merge``.

        Raises
        ------
        ValueError
            Without scores, or if two disagree on an entry (xarray's ``MergeError``).
        """
        import xarray as xr

        if not scores:
            raise ValueError("Score.merge needs at least one score")
        name = "__merged__"
        merged = xr.merge([xr.DataArray(s).rename(name).to_dataset() for s in scores], compat="no_conflicts",
                          join="outer", combine_attrs="override")[name]
        merged.name = None
        return cls(merged)

    @classmethod
    def of(cls, value: float, error: float | None = None, **attrs: Any) -> "Score":
        """A scalar score with ``error`` and any further attributes."""
        score = cls(np.asarray(value, dtype=float))
        if error is not None:
            score.attrs["error"] = float(error)
        score.attrs.update(attrs)
        return score

    @property
    def error(self) -> float | None:
        value = self.attrs.get("error")
        return None if value is None else float(value)

    @property
    def raw(self) -> Any:
        return self.attrs.get("raw")

    @property
    def ceiling(self) -> Any:
        return self.attrs.get("ceiling")

    def __repr__(self) -> str:
        if self.ndim == 0:
            error = f" ± {self.error:.4f}" if self.error is not None else ""
            return f"<Score {float(self):.4f}{error}>"
        return super().__repr__()
