"""Sample stimuli of a benchmark for its page: six of its images as 240 px JPEG thumbnails, kept on disk.

Loading a benchmark's stimulus set can take a minute (Marques 2020's gratings are rendered on first use), so a
page never waits for it: the first visit asks one background thread to prepare the thumbnails (:func:`request`),
which runs ``python -m brainscore.web.stimuli ROOT BENCHMARK`` at the lowest CPU priority; the page says they are
being prepared, and a later visit shows them (:func:`ready`). The
thumbnails live in ``$BRAINSCORE_HOME/web-stimuli/<benchmark>/`` (``0.jpg`` .. ``5.jpg``), written to a
temporary folder and renamed whole, so a page sees all of them or none. The six are the stimuli at evenly
spaced places of the stimulus set sorted by ``stimulus_id`` (the same six every time).
"""
from __future__ import annotations

import logging
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

SAMPLES = 6
SIZE = 240
_SAFE = re.compile(r"^[\w.+-]{1,200}$")
_pending: "queue.Queue[tuple[Path, str]]" = queue.Queue()
_asked: set[tuple[str, str]] = set()
_lock = threading.Lock()
_worker: threading.Thread | None = None
_log = logging.getLogger(__name__)


def folder(root: Path, benchmark: str) -> Path:
    """Where ``benchmark``'s thumbnails live under ``root`` (``$BRAINSCORE_HOME/web-stimuli``).

    Raises
    ------
    ValueError
        If ``benchmark`` is not a plain identifier (letters, digits, ``._+-``): it names a folder.
    """
    if not _SAFE.match(benchmark) or benchmark.startswith("."):
        raise ValueError(f"{benchmark!r} is not a benchmark identifier")
    return Path(root) / benchmark


def ready(root: Path, benchmark: str) -> list[int]:
    """The thumbnails of ``benchmark`` ready to show (their numbers; empty while being prepared)."""
    try:
        place = folder(root, benchmark)
    except ValueError:
        return []
    return sorted(int(p.stem) for p in place.glob("*.jpg") if p.stem.isdigit()) if place.is_dir() else []


def problem(root: Path, benchmark: str) -> str | None:
    """Why ``benchmark``'s thumbnails could not be made (None: no problem known)."""
    try:
        path = folder(root, benchmark) / "problem.txt"
        return path.read_text() if path.is_file() else None
    except (OSError, ValueError):
        return None


def request(root: Path, benchmark: str) -> None:
    """Ask the background thread to prepare ``benchmark``'s thumbnails (once per process and benchmark)."""
    global _worker
    key = (str(root), benchmark)
    with _lock:
        if key in _asked:
            return
        _asked.add(key)
        _pending.put((Path(root), benchmark))
        if _worker is None or not _worker.is_alive():
            _worker = threading.Thread(target=_work, name="brainscore-stimuli", daemon=True)
            _worker.start()


PREPARE_TIMEOUT_S = 900
"""How long one benchmark's preparation may take (Marques 2020's gratings render in about a minute)."""


def _work() -> None:
    """The background thread: each asked benchmark prepared in a child process at the lowest CPU priority (the
    web process never loads a stimulus set: its memory and CPU stay the visitors').

    The child lowers its own priority (``os.nice(19)`` first thing): a ``preexec_fn`` would make ``subprocess`` fork
    rather than vfork, and fork runs OpenBLAS's ``pthread_atfork`` handler, which waits for the BLAS threads while
    another thread of this process is inside a BLAS call that waits for them too: both hung (seen in CI, a web
    test's thread forking while a reproduce test computed an RDM in the same process).
    """
    while True:
        root, benchmark = _pending.get()
        try:
            done = subprocess.run([sys.executable, "-m", "brainscore.web.stimuli", str(root), benchmark],
                                  capture_output=True, text=True, timeout=PREPARE_TIMEOUT_S)
            problem = None if done.returncode == 0 else (done.stderr.strip().splitlines() or ["failed"])[-1]
        except (OSError, subprocess.TimeoutExpired) as error:
            problem = str(error)
        if problem:
            _log.warning("sample stimuli of %s: %s", benchmark, problem)
            try:
                place = folder(root, benchmark)
                place.mkdir(parents=True, exist_ok=True)
                (place / "problem.txt").write_text(problem[:500])
            except (OSError, ValueError):
                pass


def prepare(root: Path, benchmark: str) -> list[int]:
    """Write ``benchmark``'s thumbnails now (loads its stimulus set: seconds to a minute); returns their numbers.

    Raises
    ------
    UnknownIdentifierError
        If no such benchmark is registered; the data store's errors when its stimuli cannot be had.
    """
    from PIL import Image

    from brainscore import registry

    target = folder(root, benchmark)
    done = ready(root, benchmark)
    if done:
        return done
    stimuli = registry.load_benchmark(benchmark).stimulus_set
    ids = sorted(str(s) for s in stimuli["stimulus_id"].values)
    chosen = [ids[round(k * (len(ids) - 1) / max(1, SAMPLES - 1))] for k in range(min(SAMPLES, len(ids)))]
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    for k, stimulus_id in enumerate(dict.fromkeys(chosen)):
        with Image.open(stimuli.get_stimulus(stimulus_id)) as image:
            image = image.convert("RGB")
            image.thumbnail((SIZE, SIZE))
            image.save(partial / f"{k}.jpg", "JPEG", quality=85)
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return ready(root, benchmark)


if __name__ == "__main__":  # python -m brainscore.web.stimuli ROOT BENCHMARK: what the background thread runs
    os.nice(19)  # the lowest CPU priority, set here rather than by the parent (see _work)
    from brainscore.plugin_sources import private_bytecode

    private_bytecode()  # before any plugin is imported: a __pycache__ planted beside a source is never read
    prepare(Path(sys.argv[1]), sys.argv[2])
