"""Walk the website as a visitor at brain-score.org's scale, in Chromium, with axe-core (issue 29).

    python perf/site_walk.py [--models 704] [--base http://127.0.0.1:PORT] [--shots DIR]

Without ``--base`` it fills a fresh SQLite database with ``--models`` x every benchmark
(:func:`web_load.fill`, 704 x 23 by default), serves it on 127.0.0.1 without the queue
(``tests/web/page_server.py``) and walks it; with ``--base`` it walks a site already served.

For every page type (leaderboard, model, benchmark, the index pages, compare, agreement, login, register,
an unknown URL) at 1440 and 390 px it prints: the time the page took to load (first visit, so the server
builds it; then a second visit), its width against the viewport (a page wider than its viewport scrolls
sideways), and axe-core's violations by impact (axe.min.js from the ``axe-playwright-python`` package,
offline). Also: the first visit of a never-seen leaderboard query (``?sort=zzz``), the benchmark plot's
first build, and how many keys (Tab, and Enter on the skip link) reach the first model row. Prints the load average before and after:
the machine may be shared, so the times are from a loaded machine unless it says otherwise.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "perf"))

BENCHMARK = "Cowley2026.210325.V4-pls"


def pages(models: list[str]) -> list[tuple[str, str]]:
    """(page type, path) of every page type a visitor meets."""
    return [("leaderboard", "/"), ("model", f"/models/{models[0]}"), ("benchmark", f"/benchmarks/{BENCHMARK}"),
            ("benchmarks index", "/benchmarks"), ("models index", "/models"),
            ("compare", f"/compare?models={models[0]},{models[1]}"), ("agreement", "/agreement"),
            ("login", "/login"), ("register", "/register"), ("not found", "/no/such/page")]


def axe_counts(page) -> dict[str, int]:
    """axe-core's violations on ``page`` by impact (each violating element counts once)."""
    from browser_helpers import axe_violations

    counts: dict[str, int] = {}
    for violation in axe_violations(page):
        counts[violation["impact"]] = counts.get(violation["impact"], 0) + len(violation["nodes"])
    return counts


def walk(base: str, models: list[str], shots: Path | None) -> None:
    from browser_helpers import chromium

    with chromium() as browser:
        for width, height in ((1440, 900), (390, 844)):
            page = browser.new_context(viewport={"width": width, "height": height}).new_page()
            for kind, path in pages(models):
                started = time.perf_counter()
                response = page.goto(base + path)
                first = time.perf_counter() - started
                started = time.perf_counter()
                page.goto(base + path)
                second = time.perf_counter() - started
                scroll = page.evaluate("document.documentElement.scrollWidth")
                counts = axe_counts(page)
                print(f"{width:5d} px  {kind:17s} HTTP {response.status}  first {first:5.2f} s  again {second:5.2f} s  "
                      f"width {scroll:5d} px  axe {counts or 'none'}", flush=True)
                if shots is not None:
                    page.screenshot(path=str(shots / f"walk-{width}-{kind.replace(' ', '_')}.png"), full_page=False)
            started = time.perf_counter()
            page.goto(base + f"/?sort=zzz{width}")
            print(f"{width:5d} px  never-seen query ?sort=zzz: {time.perf_counter() - started:.2f} s", flush=True)
            row = page.locator("#leaderboard tbody tr[data-model]").first
            print(f"{width:5d} px  first model row at y={row.bounding_box()['y']:.0f} px", flush=True)
            page.close()
        page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
        page.goto(base + "/")
        keys = 0
        for presses in range(1, 200):
            page.keyboard.press("Tab")
            keys += 1
            if page.evaluate("document.activeElement.classList.contains('skip')"):
                page.keyboard.press("Enter")  # the skip link, as a keyboard user follows it
                keys += 1
            if page.evaluate("!!document.activeElement.closest('#leaderboard tbody tr[data-model]')"):
                break
        print(f"keys to the first model row: {keys} ({presses} Tab)")
        for benchmark in ("Kiani2007.IT-rdm", "Mur2013-rdm"):  # a plot no visit has built yet
            started = time.perf_counter()
            answer = httpx.get(f"{base}/plots/benchmarks/{benchmark}.svg?highlight={models[1]}", timeout=60)
            print(f"first build of {benchmark}'s plot: {time.perf_counter() - started:.3f} s "
                  f"(HTTP {answer.status_code}, {len(answer.content):,} bytes)")


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=704)
    parser.add_argument("--base", help="walk a site already served here instead of a fresh one")
    parser.add_argument("--shots", type=Path, help="save a screenshot of every page here")
    args = parser.parse_args()
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    print(f"load average before: {load_average()} ({os.cpu_count()} cores)")
    models = [f"model-{k:04d}" for k in range(args.models)]
    with contextlib.ExitStack() as stack:
        base = args.base
        if base is None:
            import web_load
            from host_helpers import free_port
            from browser_helpers import wait_until_serving

            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="site-walk-")))
            url = f"sqlite:///{folder / 'results.sqlite'}"
            web_load.fill(url, args.models, 2, folder)
            port = free_port()
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
                   "BRAINSCORE_HOME": str(folder / "home"), "MPLCONFIGDIR": str(folder / "mpl")}
            log = folder / "server.log"
            process = subprocess.Popen([sys.executable, str(ROOT / "tests/web/page_server.py"), url, str(port),
                                        str(folder / "sub")], env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)
            stack.callback(process.wait)
            stack.callback(process.terminate)
            base = f"http://127.0.0.1:{port}"
            wait_until_serving(base, process, log)
        walk(base, models, args.shots)
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
