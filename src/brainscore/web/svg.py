"""Charts written as SVG text: a histogram, a scatter, a line over time.

The benchmark page's distribution took 5.25 s to build the first time with matplotlib (its import and font cache,
on a loaded machine); these charts are a few hundred elements written with string formatting, in milliseconds,
without any plotting library. Every text is escaped; the SVG has a ``<title>`` (screen readers) and no script.
"""
from __future__ import annotations

import math
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 600, 260
LEFT, RIGHT, TOP, BOTTOM = 48, 40, 28, 40
INK, MUTED, BAR, EDGE, MARK, HIGHLIGHT = "#1d2430", "#4b5563", "#9ecae1", "#3182bd", "#08519c", "#d62728"


def _frame(title: str, x_label: str, y_label: str, body: list[str], width: int = WIDTH, height: int = HEIGHT) -> bytes:
    text = escape(title)
    return ("".join([
        f'<?xml version="1.0" encoding="utf-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" font-family="system-ui, sans-serif" font-size="11" '
        f'role="img"><title>{text}</title><rect width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="{width / 2:.0f}" y="16" text-anchor="middle" font-size="12" fill="{INK}">{text}</text>',
        *body,
        f'<text x="{(LEFT + width - RIGHT) / 2:.0f}" y="{height - 6}" text-anchor="middle" fill="{MUTED}">'
        f'{escape(x_label)}</text>',
        f'<text transform="translate(12 {(TOP + height - BOTTOM) / 2:.0f}) rotate(-90)" text-anchor="middle" '
        f'fill="{MUTED}">{escape(y_label)}</text></svg>'])).encode()


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values covering [low, high]."""
    if high <= low:
        return [low]
    raw = (high - low) / count
    step = 10 ** math.floor(math.log10(raw))
    step *= next(m for m in (1, 2, 2.5, 5, 10) if raw <= m * step)
    first = math.ceil(low / step - 1e-9) * step
    return [round(first + k * step, 10) for k in range(int((high - first) / step + 1e-9) + 1)]


def _axes(x0: float, x1: float, y0: float, y1: float, width: int, height: int, integer_y: bool = False,
          invert: bool = False, x_ticks: bool = True):
    """The axes' lines, ticks and labels, and the two functions that map data to pixels (``invert``: larger y
    lower; ``x_ticks``: number the x axis)."""
    def sx(x):
        return LEFT + (x - x0) / ((x1 - x0) or 1) * (width - LEFT - RIGHT)

    def sy(y):
        share = (y - y0) / ((y1 - y0) or 1)
        return height - BOTTOM - (1 - share if invert else share) * (height - TOP - BOTTOM)

    out = [f'<path d="M{LEFT} {TOP}V{height - BOTTOM}H{width - RIGHT}" fill="none" stroke="{INK}"/>']
    for x in _ticks(x0, x1) if x_ticks else []:
        out.append(f'<path d="M{sx(x):.1f} {height - BOTTOM}v4" stroke="{INK}"/><text x="{sx(x):.1f}" '
                   f'y="{height - BOTTOM + 15}" text-anchor="middle" fill="{INK}">{x:g}</text>')
    for y in _ticks(y0, y1):
        if integer_y and y != int(y):
            continue
        out.append(f'<path d="M{LEFT - 4} {sy(y):.1f}h4" stroke="{INK}"/><text x="{LEFT - 6}" y="{sy(y) + 4:.1f}" '
                   f'text-anchor="end" fill="{INK}">{y:g}</text>')
    return out, sx, sy


def histogram(title: str, values: dict[str, float], highlight: str | None = None, x_label: str = "score") -> bytes:
    """SVG: a 20-bin histogram of ``values`` (name -> value) over [min(0, lowest), max(1, highest)], each value
    marked as a tick under it (``highlight``'s in red)."""
    numbers = [v for v in values.values() if v is not None and math.isfinite(v)]
    low, high = min([0.0, *numbers]), max([1.0, *numbers])
    bins = [0] * 20
    for v in numbers:
        bins[min(19, int((v - low) / (high - low) * 20))] += 1
    top = max(bins + [1])
    body, sx, sy = _axes(low, high, 0, top * 1.15, WIDTH, HEIGHT, integer_y=True)
    width = (high - low) / 20
    for k, count in enumerate(bins):
        if count:
            left, right = sx(low + k * width), sx(low + (k + 1) * width)
            body.append(f'<rect x="{left:.1f}" y="{sy(count):.1f}" width="{right - left:.1f}" '
                        f'height="{sy(0) - sy(count):.1f}" fill="{BAR}" stroke="{EDGE}"/>')
    marks = "".join(f"M{sx(v):.1f} {sy(0):.1f}v-{(HEIGHT - TOP - BOTTOM) * 0.12:.0f}" for name, v in values.items()
                    if v is not None and math.isfinite(v) and name != highlight)
    body.append(f'<path d="{marks}" stroke="{MARK}" stroke-width="1"/>')
    if highlight in values and values[highlight] is not None:
        body.append(f'<path d="M{sx(values[highlight]):.1f} {sy(0):.1f}V{TOP}" stroke="{HIGHLIGHT}" stroke-width="2"/>')
    return _frame(title, x_label, "models", body)


def scatter(title: str, points: list[tuple[str, float, float]], x_label: str, y_label: str) -> bytes:
    """SVG: one dot per ``(name, x, y)``, each with its name as a tooltip, on axes covering [0, 1] and the data."""
    xs, ys = [p[1] for p in points], [p[2] for p in points]
    body, sx, sy = _axes(min([0.0, *xs]), max([1.0, *xs]), min([0.0, *ys]), max([1.0, *ys]), WIDTH, 360)
    for name, x, y in points:
        body.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{EDGE}" fill-opacity=".6">'
                    f'<title>{escape(name)}: {x:.3f}, {y:.3f}</title></circle>')
    return _frame(title, x_label, y_label, body, height=360)


def lines(title: str, series: dict[str, list[tuple[float, float]]], x_labels: dict[float, str], y_label: str,
          invert: bool = False) -> bytes:
    """SVG: one line with dots per series (name -> [(x, y), ...]); ``x_labels``: the label of some x values (dates);
    ``invert``: larger y lower (ranks, 1 on top)."""
    xs = [x for points in series.values() for x, _ in points] or [0.0]
    ys = [y for points in series.values() for _, y in points] or [0.0]
    y0, y1 = min(ys), max(ys)
    if y0 == y1:
        y0, y1 = y0 - 1, y1 + 1
    body, sx, sy = _axes(min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1, y0, y1, WIDTH, HEIGHT,
                         integer_y=invert, invert=invert, x_ticks=False)
    for x, label in x_labels.items():
        body.append(f'<text x="{sx(x):.1f}" y="{HEIGHT - BOTTOM + 15}" text-anchor="middle" fill="{INK}">'
                    f'{escape(label)}</text>')
    colours = (EDGE, HIGHLIGHT, "#2ca02c", "#9467bd")
    for k, (name, points) in enumerate(series.items()):
        colour = colours[k % len(colours)]
        path = "".join(("M" if i == 0 else "L") + f"{sx(x):.1f} {sy(y):.1f}" for i, (x, y) in enumerate(points))
        body.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        body += [f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{colour}"><title>{escape(name)}: '
                 f'{y:g}</title></circle>' for x, y in points]
    return _frame(title, "date", y_label, body)
