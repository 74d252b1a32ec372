"""What a run prints: one JSON line per pair, the summary table, and the failures with their logs."""
from __future__ import annotations

import json
from typing import Any, Sequence, TextIO

COLUMNS = ("model", "benchmark", "status", "score", "raw", "ceiling", "error", "layer", "method", "duration_s")


def json_line(summary: dict[str, Any]) -> str:
    """One JSON object (no newline) of a pair's summary, without its (long) failure log."""
    return json.dumps({k: v for k, v in summary.items() if k != "log"}, default=str)


def _cell(key: str, value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}" if key == "duration_s" else f"{value:.4f}"
    return str(value)


def table(summaries: Sequence[dict[str, Any]]) -> str:
    """A plain-text table of the summaries: model, benchmark, status, score, raw, ceiling, error, layer, how the
    layer was chosen (``declared``, ``selection`` or ``rule``), duration (s)."""
    rows = [[_cell(k, s.get(k)) for k in COLUMNS] for s in summaries]
    header = list(COLUMNS)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    numeric = {"score", "raw", "ceiling", "error", "duration_s"}
    fmt = lambda cells: "  ".join(c.rjust(w) if h in numeric else c.ljust(w)  # noqa: E731
                                  for c, w, h in zip(cells, widths, header)).rstrip()
    lines = [fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]
    counts = {status: sum(s.get("status") == status for s in summaries) for status in ("done", "skipped", "failed")}
    lines.append(f"{len(summaries)} pairs: {counts['done']} scored, {counts['skipped']} already recorded, "
                 f"{counts['failed']} failed")
    return "\n".join(lines)


def failures(summaries: Sequence[dict[str, Any]], stream: TextIO) -> int:
    """Write each failed pair with its error and log to ``stream``; the number of failures."""
    failed = [s for s in summaries if s.get("status") == "failed"]
    for s in failed:
        stream.write(f"\nFAILED {s['model']} on {s['benchmark']}: {s.get('failure')}\n")
        if s.get("log"):
            stream.write(s["log"].rstrip() + "\n")
    return len(failed)


def stage_seconds(stats: dict[str, float]) -> str:
    """``task-seconds per stage: select 95.1, activations 410.2, ...`` (summed over workers)."""
    return "task-seconds per stage: " + ", ".join(f"{stage} {seconds:.1f}" for stage, seconds in stats.items())
