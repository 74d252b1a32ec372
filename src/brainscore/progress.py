"""Progress of long steps, on stderr: a tqdm bar in a terminal, one line per stage otherwise.

Every step that can take more than about two seconds (ceilings, RSA comparisons, layer selection,
behavioural trials, downloads, feature extraction) runs inside :func:`stage`. In a terminal the
bar appears once the step has run for ``delay`` seconds (so quick steps stay silent); in a log
file or a pipe, a stage that took at least ``delay`` seconds writes one line when it ends:
``<description>: <n> <unit> in <s> s``. Set ``BRAINSCORE_PROGRESS=0`` to silence both.
"""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from typing import Iterator

DELAY_S = 2.0


class Stage:
    """Handle of a running stage: call :meth:`update` after each unit of work."""

    def __init__(self, bar=None):
        self._bar = bar
        self.done = 0

    def update(self, n: int = 1) -> None:
        """Count ``n`` more units as done."""
        self.done += n
        if self._bar is not None:
            self._bar.update(n)


def enabled() -> bool:
    """False when ``BRAINSCORE_PROGRESS`` is ``0`` / ``false`` / ``no``."""
    return os.environ.get("BRAINSCORE_PROGRESS", "1").strip().lower() not in ("0", "false", "no")


@contextmanager
def stage(description: str, total: int | None = None, unit: str = "step", delay: float | None = None,
          stream=None) -> Iterator[Stage]:
    """Report the progress of the enclosed work on ``stream`` (default ``sys.stderr``).

    Parameters
    ----------
    description : str
        What runs, e.g. ``"ceiling of Kriegeskorte2008.IT-rdm"``.
    total : int, optional
        Number of units, when known (a bar with an estimate of the time left).
    unit : str
        Name of a unit, e.g. ``"layer"``, ``"RDM"``, ``"trial"``.
    delay : float, optional
        Seconds before anything is shown (default :data:`DELAY_S`): quicker stages stay silent.
    """
    stream = stream if stream is not None else sys.stderr
    delay = DELAY_S if delay is None else delay
    if not enabled():
        yield Stage()
        return
    start = time.perf_counter()
    if getattr(stream, "isatty", lambda: False)():
        from tqdm.auto import tqdm

        with tqdm(total=total, desc=description, unit=unit, delay=delay, file=stream, leave=False) as bar:
            yield Stage(bar)
        return
    handle = Stage()
    yield handle
    elapsed = time.perf_counter() - start
    if elapsed >= delay:
        count = f"{handle.done} {unit}{'s' if handle.done != 1 else ''} " if handle.done else ""
        print(f"{description}: {count}in {elapsed:.1f} s", file=stream, flush=True)
