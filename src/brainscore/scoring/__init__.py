"""Scoring: the one job (:func:`score`), layer selection, the per-layer report.

This layer sits above the registry and the plugins: it loads models and benchmarks by identifier and
runs one on the other. Nothing below it (benchmarks, metrics, models, data) imports it.
"""
from brainscore.scoring.job import load_model, score

__all__ = ["score", "load_model"]
