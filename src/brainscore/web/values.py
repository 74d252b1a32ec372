"""Which value of a recorded score every page shows, and whether a benchmark has a ceiling: one answer for the
leaderboard, the model, benchmark and compare pages and the JSON (issue 29: ``*-top1`` cells showed the raw value
on the leaderboard and the ceiled one on the model page; benchmarks without a ceiling showed "ceiling 1.0000")."""
from __future__ import annotations

from brainscore.leaderboard import tree


def no_ceiling(benchmark: str, info: dict | None = None) -> bool:
    """Whether ``benchmark`` has no ceiling: its leaderboard value is the metric's raw value.

    True for the engineering benchmarks (the leaderboard shows their raw value, :mod:`brainscore.leaderboard.aggregate`)
    and for benchmarks whose card declares ``ceiling: none ...`` (accuracy and shape bias: Brain-Score's ceiling
    ``Score(1)``). ``info``: the benchmark's :func:`~brainscore.web.benchmark_facts.benchmark_info` when already read.
    """
    if info is None:
        from brainscore.web.benchmark_facts import benchmark_info

        info = benchmark_info(benchmark)
    if engineering(benchmark):
        return True
    declared = str((info.get("card") or {}).get("ceiling") or "").strip().lower()
    return declared.startswith("none")


def engineering(benchmark: str) -> bool:
    """Whether ``benchmark`` is a leaf under ``engineering_vision`` (the leaderboard shows its raw value)."""
    parent = tree.benchmark_parents(include_selection=True).get(benchmark)
    try:
        return parent is not None and tree.root_of(parent) == "engineering_vision"
    except Exception:  # noqa: BLE001 - a parent outside the tree: not an engineering leaf
        return False


def shown_value(benchmark: str, score: float | None, raw: float | None) -> float | None:
    """The value every page shows for a score on ``benchmark``: the raw value for engineering benchmarks (as the
    leaderboard aggregates them), else the ceiled score."""
    if engineering(benchmark) and raw is not None:
        return raw
    return score
