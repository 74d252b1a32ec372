"""``brainscore leaderboard`` at brain-score.org's scale (704 models x 23 benchmarks), before and after issue 29.

    python perf/cli_leaderboard.py [--models 704] [--before REV] [--repeats 3]

1. Fills a fresh SQLite results database as ``perf/web_load.py`` does (every model on every benchmark,
   provenances of the size real ones have).
2. Runs the command as a user does, a new process each time (``python -m brainscore leaderboard --db URL``,
   output to a file), with the code of ``--before`` (default: the commit before the change, extracted with
   ``git archive``) and with this checkout's code:

   - before: the command as it was (reads every score, aggregates all, lays the table out with rich);
   - after, first run: no standings kept yet (reads every score, keeps the standings);
   - after, again: nothing changed since (reads the results state only);
   - after a new score: one model's entry aggregated again from the row added since.

3. Checks that both print the same leaderboard (``--format json``, equal numbers), and prints the seconds of
   each (the fastest of ``--repeats`` runs), their ratio to "before", and the load average before and after (the
   machine is shared: compare the ratios, taken in one run).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "perf"))
sys.path.insert(0, str(ROOT / "src"))

#: main just before issue 29's terminal work landed (the command as it was, with the same plugins).
BEFORE = "627660b"


def extract(rev: str, target: Path) -> Path:
    """``src/`` of ``rev`` under ``target`` (``git archive``); its path."""
    target.mkdir(parents=True, exist_ok=True)
    archive = target / "src.tar"
    with open(archive, "wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")
    return target / "src"


def command(src: Path, home: Path, url: str, *extra: str) -> tuple[float, str]:
    """Seconds the command took as a new process, and what it printed."""
    env = {**os.environ, "PYTHONPATH": str(src), "BRAINSCORE_DEV_SRC": str(src), "BRAINSCORE_HOME": str(home)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "brainscore", "leaderboard", "--db", url, *extra], env=env,
                          capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"the command failed ({src}):\n{done.stderr[-3000:]}")
    return seconds, done.stdout


def load_average() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=704)
    parser.add_argument("--before", default=BEFORE, help=f"the revision to compare with (default {BEFORE})")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import web_load

    print(f"load average before: {load_average()}")
    with tempfile.TemporaryDirectory(prefix="brainscore-perf-leaderboard-") as tmp:
        tmp = Path(tmp)
        url = f"sqlite:///{tmp / 'results.sqlite'}"
        filled = web_load.fill(url, args.models, 1, tmp)
        print(f"{filled['rows']} scores of {args.models} models filled in {filled['fill_s']:.1f} s")
        before_src, after_src = extract(args.before, tmp / "before"), ROOT / "src"
        old, new = tmp / "home-before", tmp / "home-after"
        timings = {}
        timings["before"] = min(command(before_src, old, url)[0] for _ in range(args.repeats))
        timings["after, first run"], _ = command(after_src, new, url)
        timings["after, again"] = min(command(after_src, new, url)[0] for _ in range(args.repeats))
        from brainscore.metrics.score import Score
        from brainscore.results import Database, record
        from brainscore.scoring.outcome import Outcome

        model = filled["models"][random.Random(1).randrange(args.models)]
        record(Outcome.from_score(Score.of(0.99, raw=Score.of(0.99), model_identifier=model,
                                           benchmark_identifier=filled["benchmarks"][0], benchmark_version=1)),
               Database(url))
        timings["after a new score"], _ = command(after_src, new, url)
        same = json.loads(command(before_src, old, url, "--format", "json")[1]) == \
            json.loads(command(after_src, new, url, "--format", "json")[1])
        print(f"\n{'brainscore leaderboard, ' + str(args.models) + ' models':<44} {'seconds':>8} {'x before':>9}")
        for name, seconds in timings.items():
            print(f"  {name:<42} {seconds:8.2f} {seconds / timings['before']:9.3f}")
        print(f"\nthe same leaderboard before and after (--format json): {same}")
    print(f"load average after: {load_average()}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
