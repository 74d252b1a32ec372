"""Issue 29: a site that explains itself, walked in headless Chromium (Playwright, Debian's ``chromium``) against a
fresh server without its queue (:mod:`page_server`), with axe-core (offline, from the pinned
``axe-playwright-python`` package).

The database: four models scored on every leaderboard benchmark (``*-top1`` with a raw value unlike its ceiled
one, a benchmark without a ceiling), a private model, a failed score whose log names the server's host and
folders, and one model scored on two days (its rank over time). Each test is one defect found on the old site,
or one thing brain-score.org's users asked for. Screenshots go to ``$BRAINSCORE_SCREENSHOTS`` (``docs/`` when
refreshing the documentation), else to the test's folder.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import socket
import subprocess
import sys

import httpx
import pytest
from sqlalchemy import update
from sqlalchemy.orm import Session

from brainscore.leaderboard import tree
from brainscore.metrics.score import Score
from brainscore.results import Database, record
from brainscore.results.schema import ScoreRow
from brainscore.scoring.outcome import Outcome
from browser_helpers import axe_violations, chromium, page_server

V4, TOP1, SHAPE = "Cowley2026.210325.V4-pls", "Geirhos2021edge-top1", "Hermann2020cueconflict-shape_bias"
MODELS = {"alpha-net": 0.9, "beta-net": 0.6, "gamma-net": 0.3, "delta-net": 0.45}
HOST = socket.gethostname()
BETA_BIBTEX = "@article{beta2026,\n  title={The beta net},\n  year={2026}\n}"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("site")
    url = f"sqlite:///{folder / 'results.sqlite'}"
    db = Database(url)
    benchmarks = sorted(tree.benchmark_parents())
    for k, (model, base) in enumerate(MODELS.items()):
        for j, benchmark in enumerate(benchmarks):
            value = round((base + 0.37 * j * (k + 1)) % 1.0, 3)  # the benchmarks disagree
            score = Score.of(value, raw=value * 0.8, ceiling=0.8, model_identifier=model,
                             benchmark_identifier=benchmark, layers={"V4": "6"})
            score.attrs["error"], score.attrs["ci95"] = 0.02, (value - 0.04, value + 0.04)
            record(Outcome.from_score(score), db)
    db.add_model("secret-net", owner="carol", public=False)
    record(Outcome.from_score(Score.of(0.99, raw=0.99, ceiling=1.0, model_identifier="secret-net",
                                       benchmark_identifier=V4)), db)
    with Session(db.engine) as session:  # alpha-net's scores recorded over two days: its rank over time
        first = dt.datetime(2026, 11, 1, 12, tzinfo=dt.timezone.utc)
        session.execute(update(ScoreRow).values(end_timestamp=first))
        session.commit()
    record(Outcome.from_score(Score.of(0.0, raw=0.0, ceiling=0.8, model_identifier="alpha-net",
                                       benchmark_identifier=V4)), db)  # today: alpha-net falls
    plugin = folder / "sub" / "beta" / "site" / "beta_net"  # beta-net's plugin gives its BibTeX
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text("from brainscore.registry import register_model\n"
                                        "register_model('beta-net', lambda: None)\n")
    (plugin / "model.py").write_text(f"BIBTEX = {BETA_BIBTEX!r}\n")
    from brainscore.web.queue import SubmissionTask

    with Session(db.engine) as session:
        session.add(SubmissionTask(owner="erin", package="beta_net", models=["beta-net"], benchmarks=[V4],
                                   status="done", folder=str(plugin.parents[1])))
        session.commit()
    db.add_model("beta-net", owner="erin", public=True)
    DATABASE["url"] = url
    with page_server(folder, url) as base:
        yield base


DATABASE: dict = {}


@pytest.fixture(scope="module")
def browser(server):
    with chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
def page(browser):
    """A 1440 x 900 pixel page."""
    return browser.new_context(viewport={"width": 1440, "height": 900}).new_page()


@pytest.fixture(scope="module")
def phone(browser):
    """A 390 x 844 pixel page (a phone)."""
    return browser.new_context(viewport={"width": 390, "height": 844}).new_page()


def test_leaderboard_headers_do_not_run_into_each_other(server, page, shots):
    """The Geirhos, Hermann and Mur leaves' names overflowed their columns and overlapped the next ones."""
    page.goto(server + "/")
    boxes = page.locator("#leaderboard thead th.col:not([hidden])").evaluate_all("""ths => ths.map(th => {
        const own = th.getBoundingClientRect(), name = th.querySelector('.name').getBoundingClientRect();
        return {node: th.dataset.node, leaf: th.classList.contains('leaf'), left: own.left, right: own.right, nameRight: name.right,
                overflow: th.scrollWidth - th.clientWidth};})""")
    leaves = [b for b in boxes if b["node"].startswith(("Geirhos", "Hermann", "Mur"))]
    assert len([b for b in leaves if b["leaf"]]) == 14  # 6 Geirhos2021, 4 Geirhos2019, 3 Hermann, 1 Mur leaves
    for box in boxes:
        assert box["nameRight"] <= box["right"] + 0.5 and box["overflow"] <= 0, box
    for a, b in zip(boxes, boxes[1:]):
        assert a["right"] <= b["left"] + 0.5, (a, b)
    page.screenshot(path=str(shots / "leaderboard_1440.png"), full_page=False)


def test_unknown_addresses_are_pages_and_the_indexes_exist(server, page, shots):
    """``/benchmarks``, ``/models`` and any unknown URL answered raw JSON; ``/favicon.ico`` was 404."""
    response = page.goto(server + "/benchmarks")
    assert response.status == 200 and page.locator("h1").text_content() == "Benchmarks"
    assert page.locator("#benchmarks tbody tr").count() == len(tree.benchmark_parents())
    row = page.locator(f'#benchmarks tr[data-benchmark="{V4}"] td')
    assert [row.nth(k).text_content() for k in range(6)][1:] == ["V4", "macaque monkey", "neural", "electrophysiology",
                                                                 "2026"]
    page.select_option('select[name="region"]', "IT")
    page.click("#facets button")
    assert sorted(page.locator("#benchmarks tbody tr").evaluate_all("rs => rs.map(r => r.dataset.benchmark)")) == [
        "Kiani2007.IT-rdm", "Kriegeskorte2008.IT-rdm"]
    page.goto(server + "/benchmarks?q=shape_")
    assert page.locator("#benchmarks tbody tr").evaluate_all("rs => rs.map(r => r.dataset.benchmark)") == [
        "Hermann2020cueconflict-shape_bias", "Hermann2020cueconflict-shape_match"]
    page.goto(server + "/benchmarks?task=engineering")
    assert page.locator(f'#benchmarks tr[data-benchmark="{TOP1}"]').count() == 1
    assert page.locator("#benchmarks tbody tr").count() == 3
    page.screenshot(path=str(shots / "benchmarks_index.png"), full_page=True)
    page.goto(server + "/models")
    assert page.locator("#models tbody tr").count() == 4  # the private model is not listed
    page.goto(server + "/models?q=beta")
    assert page.locator("#models tbody tr").evaluate_all("rs => rs.map(r => r.dataset.model)") == ["beta-net"]
    for path in ("/no/such/page", "/models/no-such-net"):
        response = page.goto(server + path)
        assert response.status == 404 and response.headers["content-type"].startswith("text/html")
        assert page.locator("header a.brand").text_content() == "brainscore"
        assert page.locator("main a[href='/benchmarks']").count() == 1
    assert "there is no page at /no/such/page" in httpx.get(server + "/no/such/page").text
    api = httpx.get(server + "/api/no/such")
    assert api.status_code == 404 and api.json() == {"detail": "Not Found"}
    icon = httpx.get(server + "/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml" and b"<svg" in icon.content


PAGES = ["/", "/models/alpha-net", f"/benchmarks/{V4}", "/benchmarks", "/models", "/agreement",
         "/compare?models=alpha-net,beta-net", "/login", "/register", "/no/such/page"]




def test_nothing_is_wider_than_a_phone(server, phone, shots):
    """At 390 px the model page was 1,145 px wide and the benchmark page 655 px; the first leaderboard row ~900 px
    down. Tables scroll in their own container."""
    for path in PAGES:
        phone.goto(server + path)
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390, path
    phone.goto(server + "/")
    assert phone.locator("#leaderboard tbody tr[data-model]").first.bounding_box()["y"] < 844
    phone.screenshot(path=str(shots / "leaderboard_390.png"), full_page=False)
    phone.goto(server + "/models/alpha-net")
    assert phone.locator("#scores").evaluate("t => t.parentElement.scrollWidth > t.parentElement.clientWidth")
    phone.screenshot(path=str(shots / "model_390.png"), full_page=False)


def test_axe_finds_no_serious_or_minor_violation_on_any_page(server, page, phone):
    """axe-core found 82 serious violations (colour contrast, a log not reachable by keyboard) and 8 minor ones
    (empty table headers)."""
    found = {}
    for viewport in (page, phone):
        for path in PAGES + ["/?fold="]:
            viewport.goto(server + path)
            violations = axe_violations(viewport)
            if violations:
                found[(viewport.viewport_size["width"], path)] = [(v["id"], v["impact"], v["nodes"][:2])
                                                                   for v in violations]
    assert found == {}


def test_one_tab_and_enter_reach_the_first_model_row(server, page):
    """Keyboard users tabbed 40+ times before the first model row."""
    page.goto(server + "/")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "skip to the leaderboard's rows"
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('tr[data-model]') === "
                         "document.querySelector('#rows tr[data-model]')")


def test_the_benchmark_page_shows_the_ranking_first_and_folds_its_provenance(server, page, shots):
    """The page listed the data files' hashes before the metric and the ranking."""
    page.goto(f"{server}/benchmarks/{V4}")
    order = page.evaluate("""['#description', '#stimuli', '#ranking', '#facts', '#provenance'].map(
        s => document.querySelector(s)).map(e => e ? e.getBoundingClientRect().top + scrollY : null)""")
    assert None not in order and order == sorted(order)
    assert page.locator("#provenance").evaluate("d => d.tagName === 'DETAILS' && !d.open")
    assert page.locator("img.plot").evaluate("i => i.complete && i.naturalWidth > 0")
    page.screenshot(path=str(shots / "benchmark_1440.png"), full_page=False)


def test_the_distribution_plot_needs_no_plotting_library():
    """Its first build took 5.25 s (matplotlib's import and font cache); now it is SVG text."""
    code = ("import sys; from brainscore.web import plots; "
            "svg = plots.distribution('B', {'m%d' % i: i / 700 for i in range(700)}, 'm3'); "
            "print(svg.count(b'<rect'), 'matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["21", "False"]  # the background and 20 bins


def test_api_leaderboard_takes_the_pages_query(server):
    """``/api/leaderboard`` ignored ``q``, ``sort`` and ``page``."""
    everything = httpx.get(server + "/api/leaderboard").json()
    assert len(everything) == 4
    asked = httpx.get(server + "/api/leaderboard", params={"q": "a-net", "sort": V4, "desc": 0, "page": 2,
                                                           "per_page": 1}).json()
    by_v4 = sorted((r for r in everything if "a-net" in r["model"]), key=lambda r: (r["scores"][V4], r["model"]))
    assert [r["model"] for r in asked] == [by_v4[1]["model"]] and asked[0]["rank"] == 2
    assert httpx.get(server + "/api/leaderboard", params={"page": 0}).status_code == 400


def test_one_value_per_score_and_no_ceiling_where_there_is_none(server, page):
    """``*-top1`` cells showed the raw value on the leaderboard and compare page, the ceiled one on the model page;
    benchmarks without a ceiling showed "ceiling 1.0000"."""
    board = {r["model"]: r for r in httpx.get(server + "/api/leaderboard").json()}
    raw = board["alpha-net"]["scores"][TOP1]
    page.goto(server + "/models/alpha-net")
    assert float(page.locator(f'#scores tr[data-benchmark="{TOP1}"] td.score').get_attribute("data-score")) == \
        pytest.approx(raw, abs=1e-6)
    assert page.locator(f'#scores tr[data-benchmark="{TOP1}"] td').nth(4).text_content() == "no ceiling"
    page.goto(f"{server}/benchmarks/{TOP1}")
    assert page.locator("#ceiling").text_content().startswith("no ceiling")
    assert "ceiling 1.0000" not in page.content()
    top = page.locator("#ranking tbody tr").first
    assert float(top.locator("td").nth(2).text_content()) == pytest.approx(max(r["scores"][TOP1] for r in board.values()),
                                                                          abs=5e-5)
    page.goto(f"{server}/benchmarks/{SHAPE}")
    assert page.locator("#ceiling").text_content().startswith("no ceiling")


def test_agreement_between_benchmarks(server, page, shots):
    """Beyond brain-score.org: benchmark x benchmark correlation over all models and a scatter of two."""
    import numpy as np

    board = httpx.get(server + "/api/leaderboard").json()
    matrix = httpx.get(server + "/api/agreement").json()
    a, b = matrix["benchmarks"].index(V4), matrix["benchmarks"].index(TOP1)
    x = [r["scores"][V4] for r in board]
    y = [r["scores"][TOP1] for r in board]
    assert matrix["r"][a][b] == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-9) and matrix["n"][a][b] == 4
    assert matrix["r"][a][a] == pytest.approx(1.0)
    page.goto(f"{server}/agreement?a={V4}&b={TOP1}")
    assert page.locator("#pair-r").text_content() == f"r = {matrix['r'][a][b]:.3f} over 4 models"
    assert page.locator("#scatter").evaluate("i => i.complete && i.naturalWidth > 0")
    svg = httpx.get(server + "/plots/scatter.svg", params={"a": V4, "b": TOP1}).text
    assert svg.count("<circle") == 4 and "secret-net" not in svg
    page.screenshot(path=str(shots / "agreement.png"), full_page=False)


def test_a_models_rank_over_time(server, page):
    """Beyond brain-score.org: a model's score and rank over time (the leaderboard as it was each day)."""
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    page.goto(server + "/models/alpha-net")
    rows = page.locator("#timeline tbody tr")
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.day)") == ["2026-11-01", today]
    for k, day in enumerate(("2026-11-01", today)):  # that day's leaderboard, and today's: the current one
        board = httpx.get(server + "/api/leaderboard", params={"at": day} if day != today else {}).json()
        ranked = sorted(board, key=lambda r: (-r["scores"]["average_vision"], r["model"]))
        rank = [r["model"] for r in ranked].index("alpha-net") + 1
        assert rows.nth(k).locator("td").nth(2).text_content() == f"{rank} of 4"
    assert page.locator("#rank-plot").evaluate("i => i.complete && i.naturalWidth > 0")


def test_the_owner_reads_logs_without_the_servers_names(server, page):
    """Submission logs shown to the user held the host name and server paths."""
    from brainscore.web.queue import SubmissionTask
    from browser_helpers import register_in_browser

    register_in_browser(page, server, "dave")
    folder = f"/srv/brainscore/submissions/7"
    log = (f"scoring on {HOST} (worker tcp://10.1.2.3:8786)\nTraceback (most recent call last):\n"
           f'  File "{folder}/site/dave_net/model.py", line 3, in get_model\n'
           f'  File "{sys.prefix}/lib/python3.11/site-packages/torch/nn/modules/module.py", line 9\n'
           f"OSError: /home/admin/weights/w.pt not found\n")
    with Session(Database(DATABASE["url"]).engine) as session:
        task = SubmissionTask(owner="dave", models=["dave-net"], benchmarks=[V4], status="failed", folder=folder,
                              log=log, failure=f"crashed on {HOST}",
                              results={f"dave-net|{V4}": {"status": "failed", "failure": f"{folder}/site/x.py"}})
        session.add(task)
        session.commit()
        key = task.key
    page.goto(f"{server}/submissions/{key}")
    shown = page.locator("#log").text_content() + page.locator("main").text_content()
    # The page names the submission by its random key, which may hold a short host name by chance
    # (CI's host "vm" was in "XpsfqyNUKvmx-EFrPS_CIQ"); the host name is redacted as a whole word.
    shown = shown.replace(key, "<key>")
    assert not re.search(rf"\b{re.escape(HOST)}\b", shown), HOST
    for secret in ("10.1.2.3", "/srv/brainscore", sys.prefix, "/home/admin"):
        assert secret not in shown, secret
    assert 'File "dave_net/model.py", line 3' in shown
    assert "…/w.pt not found" in shown
    assert page.locator("#log").get_attribute("tabindex") == "0"  # a keyboard reaches (and scrolls) the log


def test_filters_on_benchmark_metadata_score_ranges_and_dates(server, page):
    """Beyond brain-score.org: only the benchmarks of a region, species, task, data type or year count; only models
    scoring within a range on a column; only models first scored within a date range."""
    catalogue = httpx.get(server + "/api/catalogue/benchmarks").json()["rows"]
    of_humans = sorted(r["benchmark"] for r in catalogue if r["species"] == "human")
    assert "Mur2013-rdm" in of_humans and V4 not in of_humans
    human = httpx.get(server + "/leaderboard.json", params={"b.species": "human"}).json()
    assert sorted(c for c in human["columns"] if c in tree.benchmark_parents()) == of_humans
    board = httpx.get(server + "/api/leaderboard").json()
    inside = sorted(r["model"] for r in board if 0.3 <= r["scores"]["IT"] <= 0.6)
    ranged = httpx.get(server + "/api/leaderboard", params={"min.IT": 0.3, "max.IT": 0.6}).json()
    assert sorted(r["model"] for r in ranged) == inside and 0 < len(inside) < 4, [r["scores"]["IT"] for r in board]
    assert httpx.get(server + "/api/leaderboard", params={"b.species": "martian"}).status_code == 400
    assert len(httpx.get(server + "/api/leaderboard", params={"since": "2026-11-01"}).json()) == 4
    assert httpx.get(server + "/api/leaderboard", params={"since": "2026-11-02", "at": "2026-11-05"}).json() == []
    page.goto(server + "/")
    page.click("#explore summary")
    page.select_option('select[name="b.region"]', "IT")
    page.fill('input[name="range_min"]', "0.3")
    page.fill('input[name="range_max"]', "0.6")
    page.select_option('select[name="range_node"]', "IT")
    page.click("#weights button[type=submit]")
    assert "b.region=IT" in page.url and "range_node=IT" in page.url
    shown = page.locator("#leaderboard thead th.leaf:not([hidden])").evaluate_all("ts => ts.map(t => t.dataset.node)")
    assert set(shown) == {"Kiani2007.IT-rdm", "Kriegeskorte2008.IT-rdm"}
    rows = page.locator("#leaderboard tbody tr[data-model]").evaluate_all("rs => rs.map(r => r.dataset.model)")
    assert sorted(rows) == inside
    assert page.locator('input[name="range_min"]').input_value() == "0.3"  # the form keeps the range


def test_the_models_bibtex_is_in_the_exports(server):
    """Beyond brain-score.org: the model's BibTeX in the exports (with the benchmarks')."""
    bib = httpx.get(server + "/leaderboard.bib").text
    assert BETA_BIBTEX in bib and bib.count("@article{beta2026") == 1
    rows = {r["model"]: r for r in httpx.get(server + "/leaderboard.json").json()["rows"]}
    assert rows["beta-net"]["bibtex"] == BETA_BIBTEX and rows["alpha-net"]["bibtex"] is None


def test_a_display_name_and_my_models(server, page):
    """Beyond brain-score.org: a display name per account, and "my models"."""
    from browser_helpers import register_in_browser

    register_in_browser(page, server, "erin")
    page.goto(server + "/account")
    page.fill('#display-name input[name="display_name"]', "Erin Example")
    page.click("#display-name button")
    page.wait_for_url(server + "/account")
    assert page.locator("h1").text_content() == "Erin Example (@erin)"
    page.click("header a[href='/models?mine=1']")
    assert page.locator("#models tbody tr").evaluate_all("rs => rs.map(r => r.dataset.model)") == ["beta-net"]
    page.goto(server + "/models")
    assert page.locator('#models tr[data-model="beta-net"] td').nth(5).text_content() == "Erin Example (@erin)"
    anonymous = httpx.get(server + "/models/beta-net").text
    assert "submitted by Erin Example (@erin)" in anonymous
    assert httpx.get(server + "/models?mine=1").status_code == 303  # to the log-in page, like /submissions


def test_every_benchmark_page_shows_sample_stimuli(server, page, shots):
    """Beyond brain-score.org: sample stimulus images on the benchmark page (prepared in the background on the
    first visit, from the benchmark's own stimulus set)."""
    import time

    import psutil

    benchmark = "Kiani2007.IT-rdm"
    deadline = time.monotonic() + 180
    while True:
        page.goto(f"{server}/benchmarks/{benchmark}")
        if page.locator("#stimuli img").count() or time.monotonic() > deadline:
            break
        # The server prepares them at the lowest CPU priority (nice 19), which two busy test workers starve for
        # minutes (the preparation took over 120 s under a loaded run): the test raises it to the normal priority.
        for process in psutil.process_iter(["cmdline"]):
            command = process.info["cmdline"] or []
            if "brainscore.web.stimuli" in command and benchmark in command:
                with contextlib.suppress(psutil.Error):
                    process.nice(0)
        time.sleep(1)
    images = page.locator("#stimuli img")
    assert images.count() == 6
    # loading="lazy" images do not hold back the page's load event that goto waits for: under load (CI's two
    # workers) they were still loading when checked; wait for them (a broken image never gets a naturalWidth)
    page.wait_for_function("() => [...document.querySelectorAll('#stimuli img')]"
                           ".every(i => i.complete && i.naturalWidth > 0)", timeout=60_000)
    first = httpx.get(server + images.first.get_attribute("src"))
    assert first.headers["content-type"] == "image/jpeg" and first.content[:2] == b"\xff\xd8"
    page.screenshot(path=str(shots / "benchmark_stimuli.png"), full_page=False)


def test_the_submit_page_names_the_zip_layouts(server, page):
    """The submit page never named the layouts a zip may have."""
    from browser_helpers import register_in_browser

    register_in_browser(page, server, "frank")
    layouts = page.locator("#layouts li").evaluate_all("ls => ls.map(l => l.querySelector('code').textContent)")
    assert layouts[:3] == ["my_plugin/", "models/my_plugin/", "brainscore_vision/models/my_plugin/"]
