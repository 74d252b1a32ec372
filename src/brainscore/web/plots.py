"""Plots of the website as SVG, cached by content: the score distribution, scatter and timelines written as SVG
text (:mod:`brainscore.web.svg`), the layer-selection curves drawn with matplotlib (Agg).

Each plot's cache key is the sha256 of exactly the values it draws, so a cached image never
outlives its data.
"""
from __future__ import annotations

import hashlib
import io
import json
import math
import threading
from collections import OrderedDict

_CACHE: OrderedDict[str, bytes] = OrderedDict()
_LOCK = threading.Lock()
_MAX_ENTRIES = 256


def _cached(kind: str, payload, draw) -> bytes:
    key = hashlib.sha256(json.dumps([kind, payload], sort_keys=True, default=str).encode()).hexdigest()
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with _LOCK:  # pyplot is not thread-safe
        figure = draw(plt)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="svg", bbox_inches="tight")
        plt.close(figure)
        _CACHE[key] = buffer.getvalue()
        while len(_CACHE) > _MAX_ENTRIES:
            _CACHE.popitem(last=False)
        return _CACHE[key]


def warm() -> None:
    """Import matplotlib and draw one throw-away figure, so the first plot a visitor asks for does not wait for
    the import and the font cache (seconds on a fresh machine; the website calls it in a thread at start-up)."""
    _cached("warm", [], lambda plt: plt.subplots(figsize=(1, 1))[0])


def _memo(kind: str, payload, write) -> bytes:
    """``write()`` (SVG bytes) kept under the sha256 of exactly ``payload``, as :func:`_cached` keeps figures."""
    key = hashlib.sha256(json.dumps([kind, payload], sort_keys=True, default=str).encode()).hexdigest()
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    body = write()
    with _LOCK:
        _CACHE[key] = body
        while len(_CACHE) > _MAX_ENTRIES:
            _CACHE.popitem(last=False)
    return body


def distribution(benchmark: str, scores: dict[str, float], highlight: str | None = None) -> bytes:
    """SVG: every model's score on ``benchmark`` as a histogram with each model marked as a tick.

    Written as SVG text (:func:`brainscore.web.svg.histogram`), without matplotlib: the page's first plot took
    5.25 s with it (issue 29).

    Parameters
    ----------
    scores : dict of str to float
        Model -> the score the pages show (0..1; values outside are drawn where they fall).
    highlight : str, optional
        A model drawn in red.
    """
    from brainscore.web import svg

    title = f"{benchmark}: {len(scores)} model{'s' if len(scores) != 1 else ''}"
    return _memo("distribution", [benchmark, sorted(scores.items()), highlight],
                 lambda: svg.histogram(title, scores, highlight))


def scatter(a: str, b: str, points: list[tuple[str, float, float]]) -> bytes:
    """SVG: every model's score on benchmark ``a`` (x) against benchmark ``b`` (y), one dot a model."""
    from brainscore.web import svg

    return _memo("scatter", [a, b, points], lambda: svg.scatter(f"{len(points)} models scored on both", points, a, b))


def timeline(model: str, what: str, points: list[tuple[str, float]], invert: bool = False) -> bytes:
    """SVG: ``what`` (score or rank) of ``model`` at each date (``YYYY-MM-DD``, in order); ``invert``: 1 on top."""
    import datetime as dt

    from brainscore.web import svg

    days = [dt.date.fromisoformat(day).toordinal() for day, _ in points]
    labels = {float(x): day for x, (day, _) in zip(days, points)}
    if len(labels) > 6:  # at most about six dates written under the axis
        keep = set(list(labels)[::math.ceil(len(labels) / 6)])
        labels = {x: label for x, label in labels.items() if x in keep}
    series = {what: [(float(x), float(v)) for x, (_, v) in zip(days, points)]}
    return _memo("timeline", [model, what, points, invert],
                 lambda: svg.lines(f"{model}: {what} over time", series, labels, what, invert=invert))


def layer_curve(model: str, benchmark: str, layers: list[tuple[str, float]], chosen: str | None = None) -> bytes:
    """SVG: score against layer depth (layers in depth order), the committed layer marked."""
    def draw(plt):
        figure, axis = plt.subplots(figsize=(6, 2.6))
        names = [name for name, _ in layers]
        axis.plot(range(len(layers)), [value for _, value in layers], marker="o", color="#3182bd")
        if chosen in names:
            i = names.index(chosen)
            axis.plot([i], [layers[i][1]], marker="o", markersize=10, color="#d62728", label=f"committed: {chosen}")
            axis.legend(frameon=False, fontsize=8)
        axis.set_xticks(range(len(layers)), names, rotation=60, fontsize=7)
        axis.set_ylabel("score")
        axis.set_title(f"{model} on {benchmark}", fontsize=10)
        axis.spines[["top", "right"]].set_visible(False)
        return figure

    return _cached("layers", [model, benchmark, layers, chosen], draw)
