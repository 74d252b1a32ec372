"""Plots of the website, drawn on the server with matplotlib (Agg) as SVG and cached by content.

Each plot's cache key is the sha256 of exactly the values it draws, so a cached image never
outlives its data.
"""
from __future__ import annotations

import hashlib
import io
import json
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


def distribution(benchmark: str, scores: dict[str, float], highlight: str | None = None) -> bytes:
    """SVG: every model's score on ``benchmark`` as a histogram with each model marked as a tick.

    Parameters
    ----------
    scores : dict of str to float
        Model -> ceiled score (0..1; values outside are drawn where they fall).
    highlight : str, optional
        A model drawn in red.
    """
    def draw(plt):
        from matplotlib.ticker import MaxNLocator

        figure, axis = plt.subplots(figsize=(6, 2.6))
        values = list(scores.values())
        if values:
            axis.hist(values, bins=20, range=(min(0.0, min(values)), max(1.0, max(values))), color="#9ecae1",
                      edgecolor="#3182bd")
        for model, value in scores.items():
            axis.axvline(value, ymax=0.15, color="#d62728" if model == highlight else "#08519c", linewidth=1.5)
        axis.set_xlabel("score (ceiled)")
        axis.set_ylabel("models")
        axis.yaxis.set_major_locator(MaxNLocator(integer=True))
        axis.set_title(f"{benchmark}: {len(values)} model{'s' if len(values) != 1 else ''}", fontsize=10)
        axis.spines[["top", "right"]].set_visible(False)
        return figure

    return _cached("distribution", [benchmark, sorted(scores.items()), highlight], draw)


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
