"""Progress of long steps, on stderr: a tqdm bar in a terminal, start and end lines in a log.

Every step that can take more than about two seconds (loading and verifying data, packaging,
activations, layer selection, metrics, ceilings, the bootstrap, recording) runs inside
:func:`stage`, wherever it is in the stack: this module is at the bottom (it imports nothing of
the package), so the layers that do the work report it without knowing who shows it.

- In a terminal, a stage shows a bar (what runs, how far, the time left when the number of units
  is known; nested stages one bar each) once it has run for ``delay`` seconds, and removes it when
  it ends: quick steps stay silent.
- Anywhere else (a log file, a pipe, a Dask worker's log), a stage that runs for ``delay`` seconds
  writes one line when it starts and one when it ends, with its duration, and a line at most every
  :data:`LOG_EVERY_S` seconds in between while its units advance::

      [14:02:11] V4 layer selection on Cowley2026.190923.V4-pls: started, 0/12 layers
      [14:02:41] V4 layer selection on Cowley2026.190923.V4-pls: 5/12 layers in 30 s, about 42 s left
      [14:03:24] V4 layer selection on Cowley2026.190923.V4-pls: done, 12 layers in 72.6 s
      [14:03:25] efficientnet-lite0: layer selection for V4 among 12 candidate layers: done in 74.0 s

``BRAINSCORE_PROGRESS=0`` (what the command line's ``--quiet`` sets, so the processes it starts
inherit it) silences both; :func:`silence` sets it.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterable, Iterator, TypeVar

__all__ = ["stage", "track", "Stage", "enabled", "silence", "DELAY_S", "LOG_EVERY_S"]

#: Seconds a stage runs before anything is shown (quicker stages stay silent).
DELAY_S = 2.0
#: Most seconds between two progress lines of one stage in a log (while its units advance).
LOG_EVERY_S = 30.0
#: Seconds between two redraws of the terminal's bars (and checks for stages that became slow).
TICK_S = 0.5

_T = TypeVar("_T")
_PLURAL = {"stimulus": "stimuli", "B": "B", "byte": "bytes"}


def enabled() -> bool:
    """False when ``BRAINSCORE_PROGRESS`` is ``0`` / ``false`` / ``no`` / ``off``."""
    return os.environ.get("BRAINSCORE_PROGRESS", "1").strip().lower() not in ("0", "false", "no", "off")


def silence() -> None:
    """Show no progress from now on, in this process and the processes it starts (``BRAINSCORE_PROGRESS=0``)."""
    os.environ["BRAINSCORE_PROGRESS"] = "0"


def _units(count: float, unit: str) -> str:
    if unit in ("B", "byte", "bytes"):
        size = float(count)
        for prefix in ("", "k", "M", "G", "T"):
            if size < 1000 or prefix == "T":
                return f"{size:.0f} {prefix}B" if not prefix else f"{size:.1f} {prefix}B"
            size /= 1000
    whole = int(count)
    return f"{whole} {unit if whole == 1 else _PLURAL.get(unit, unit + 's')}"


def _seconds(value: float) -> str:
    if value < 90:
        return f"{value:.0f} s"
    if value < 5400:
        return f"{value / 60:.0f} min"
    return f"{value / 3600:.1f} h"


class Stage:
    """Handle of a running stage: call :meth:`update` after each unit of work.

    Attributes
    ----------
    description : str
    total : int or None
        Number of units, when known (may be set after the stage started).
    unit : str
    done : int
        Units counted so far.
    """

    def __init__(self, description: str = "", total: int | None = None, unit: str = "step", delay: float = 0.0,
                 stream=None, tty: bool = False):
        self.description, self.total, self.unit, self.done = description, total, unit, 0
        self._delay, self._stream, self._tty = delay, stream, tty
        self._start, self._wall = time.perf_counter(), time.time()
        self._shown = False  # the bar is drawn (terminal) or the start line written (log)
        self._bar = None
        self._last_line, self._last_done = self._start, 0

    def update(self, n: int = 1) -> None:
        """Count ``n`` more units as done."""
        self.done += n

    # --- drawn by the ticker thread and at the stage's start and end, under _LOCK -------------------
    def _elapsed(self) -> float:
        return time.perf_counter() - self._start

    def _show(self) -> None:
        if self._shown:
            return
        self._shown = True
        if self._tty:
            from tqdm.auto import tqdm

            scaled = self.unit in ("B", "byte", "bytes")
            self._bar = tqdm(total=self.total, desc=self.description, unit="B" if scaled else self.unit,
                             unit_scale=scaled, unit_divisor=1000, file=self._stream, leave=False,
                             position=sum(1 for other in _OPEN if other._bar is not None), dynamic_ncols=True,
                             mininterval=TICK_S, bar_format=self._format())
            # the bar's clock starts with the stage, not with the bar
            self._bar.start_t = self._bar.last_print_t = time.time() - self._elapsed()
            self._redraw()
        else:
            counted = (f", {self.done}/{_units(self.total, self.unit)}" if self.total
                       else f", {_units(self.done, self.unit)} so far" if self.done else "")
            self._line(f"started{counted}", when=self._wall)

    def _format(self) -> str | None:
        """tqdm's format: its own bar with the time left when the total is known; else what runs, for how long,
        and the units counted so far."""
        if self.total:
            return None
        return "{desc}: {elapsed}" + (" ({n_fmt} {unit}, {rate_fmt})" if self.done else "")

    def _redraw(self) -> None:
        bar = self._bar
        if bar is None:
            return
        if bar.total != self.total:
            bar.total = self.total
        bar.bar_format = self._format()
        bar.n = self.done
        bar.refresh()

    def _tick(self, now: float) -> None:
        if not self._shown:
            if now - self._start >= self._delay:
                self._show()
            return
        if self._tty:
            self._redraw()
        elif now - self._last_line >= LOG_EVERY_S and self.done != self._last_done:
            self._last_line, self._last_done = now, self.done
            elapsed = now - self._start
            if self.total:
                left = elapsed / self.done * (self.total - self.done) if self.done else None
                self._line(f"{self.done}/{_units(self.total, self.unit)} in {_seconds(elapsed)}"
                           + (f", about {_seconds(left)} left" if left is not None else ""))
            else:
                self._line(f"{_units(self.done, self.unit)} in {_seconds(elapsed)}")

    def _end(self, failed: BaseException | None) -> None:
        elapsed = self._elapsed()
        if not self._shown and elapsed >= self._delay:
            self._show()
        if not self._shown:
            return
        if self._bar is not None:
            self._bar.close()
            return
        if failed is not None:
            what = "interrupted" if isinstance(failed, KeyboardInterrupt) else f"failed ({type(failed).__name__})"
            self._line(f"{what} after {elapsed:.1f} s")
        else:
            count = f", {_units(self.done, self.unit)}" if self.done else ""
            self._line(f"done{count} in {elapsed:.1f} s")

    def _line(self, text: str, when: float | None = None) -> None:
        stamp = time.strftime("%H:%M:%S", time.localtime(time.time() if when is None else when))
        try:
            print(f"[{stamp}] {self.description}: {text}", file=self._stream, flush=True)
        except (OSError, ValueError):  # a closed or broken stream: progress must never stop the work
            pass


# --- the ticker: one daemon thread per process draws every open stage ---------------------------------
_LOCK = threading.RLock()
_OPEN: list[Stage] = []
_TICKER: tuple[int, threading.Thread] | None = None
_WAKE = threading.Event()


def _run_ticker() -> None:
    while True:
        _WAKE.wait(TICK_S)
        _WAKE.clear()
        with _LOCK:
            now = time.perf_counter()
            for handle in list(_OPEN):
                try:
                    handle._tick(now)
                except Exception:  # noqa: BLE001 - the display must never stop the work
                    pass


def _after_fork() -> None:
    """A forked child starts with no stage open, a free lock and no ticker (its parent's thread is not copied)."""
    global _LOCK, _TICKER
    _LOCK, _TICKER = threading.RLock(), None
    _OPEN.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _ensure_ticker() -> None:
    global _TICKER
    if _TICKER is None or _TICKER[0] != os.getpid() or not _TICKER[1].is_alive():  # a forked child has none
        thread = threading.Thread(target=_run_ticker, name="brainscore-progress", daemon=True)
        thread.start()
        _TICKER = (os.getpid(), thread)


@contextmanager
def stage(description: str, total: int | None = None, unit: str = "step", delay: float | None = None,
          stream=None) -> Iterator[Stage]:
    """Report the progress of the enclosed work on ``stream`` (default ``sys.stderr``).

    Parameters
    ----------
    description : str
        What runs, e.g. ``"ceiling of Kriegeskorte2008.IT-rdm"``.
    total : int, optional
        Number of units, when known (a bar with an estimate of the time left); may also be set on the
        handle later (``step.total = n``).
    unit : str
        Name of a unit, e.g. ``"layer"``, ``"image"``, ``"RDM"``, ``"resample"``; ``"B"`` for bytes
        (shown as kB, MB, GB).
    delay : float, optional
        Seconds before anything is shown (default :data:`DELAY_S`): quicker stages stay silent.
    stream : file, optional
        Default ``sys.stderr`` (read when the stage starts). A terminal (``isatty()``) gets a bar,
        anything else lines.

    Yields
    ------
    Stage
        Call ``update(n)`` as units finish. Without progress (``BRAINSCORE_PROGRESS=0``) it only counts.

    Notes
    -----
    The enclosed code's exception passes through unchanged; a log then says the stage failed and after
    how long. Drawing happens under one lock, in the calling thread at the start and end of a stage and
    in one daemon thread in between; a broken stream never raises into the work.
    """
    stream = stream if stream is not None else sys.stderr
    delay = DELAY_S if delay is None else delay
    if not enabled():
        yield Stage(description, total, unit)
        return
    try:
        tty = bool(getattr(stream, "isatty", lambda: False)())
    except (OSError, ValueError):
        tty = False
    handle = Stage(description, total, unit, delay, stream, tty)
    with _LOCK:
        _OPEN.append(handle)
        if delay <= 0:
            handle._show()
    _ensure_ticker()
    failure: BaseException | None = None
    try:
        yield handle
    except GeneratorExit:  # a generator stopped early (track): an end, not a failure
        raise
    except BaseException as error:
        failure = error
        raise
    finally:
        with _LOCK:
            if handle in _OPEN:
                _OPEN.remove(handle)
            try:
                handle._end(failure)
            except Exception:  # noqa: BLE001 - the display must never hide the work's own outcome
                pass


def track(items: Iterable[_T], description: str, total: int | None = None, unit: str = "step",
          delay: float | None = None, stream=None) -> Iterator[_T]:
    """Yield ``items``, counting each as one unit of a :func:`stage` (``total`` default: ``len(items)``).

    Examples
    --------
    >>> [x for x in track([1, 2, 3], "adding", unit="number")]
    [1, 2, 3]
    """
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with stage(description, total=total, unit=unit, delay=delay, stream=stream) as step:
        for item in items:
            yield item
            step.update()
