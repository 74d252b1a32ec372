"""Issue 36: a walk through every page type of the real website (headless Chromium through Playwright, Debian's
``chromium``), at 1440 and 390 px, logged out and logged in, with axe-core (offline, from the pinned
``axe-playwright-python`` package).

The database: four models scored on every leaderboard benchmark (two tied on every score, so ranks are shared),
one score id for ``/scores/{id}``, and a submission of the walker's own (its page, ``/submissions``). Each test is a
defect the walk found on main.
"""
from __future__ import annotations

import pytest
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from brainscore.leaderboard import tree
from brainscore.metrics.score import Score
from brainscore.results import Database, record
from brainscore.results.schema import ScoreRow
from brainscore.scoring.outcome import Outcome
from browser_helpers import axe_violations, chromium, page_server, register_in_browser

V4 = "Cowley2026.210325.V4-pls"
MODELS = {"alpha-net": 0.9, "beta-net": 0.6, "gamma-net": 0.3, "gamma-twin": 0.3}  # the twins tie everywhere
WALKER, PHONE = "walker", "walkerphone"
STATE: dict = {}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("walk")
    url = f"sqlite:///{folder / 'results.sqlite'}"
    db = Database(url)
    for model, base in MODELS.items():
        for j, benchmark in enumerate(sorted(tree.benchmark_parents())):
            value = round((base + 0.37 * j) % 1.0, 3)
            score = Score.of(value, raw=value * 0.8, ceiling=0.8, model_identifier=model,
                             benchmark_identifier=benchmark, layers={"V4": "6"})
            score.attrs["error"], score.attrs["ci95"] = 0.02, (value - 0.04, value + 0.04)
            record(Outcome.from_score(score), db)
    from brainscore.web.queue import SubmissionTask

    commitment = {"region": "V4", "layer": "features.6", "method": "selection",  # a long line: the table scrolls
                  "benchmarks": ["FreemanZiemba2013.V4-selection-public", "MajajHong2015.V4-selection-public"]}
    with Session(db.engine) as session:
        session.execute(update(ScoreRow).values(provenance={"model": {"commitment": commitment}}))
        STATE["score"] = session.scalars(select(ScoreRow.id).limit(1)).one()
        for owner in (WALKER, PHONE):
            task = SubmissionTask(owner=owner, package="walker_net",
                                  models=["walker-resnet50-trained-on-imagenet-21k", "walker-vit-base"],
                                  benchmarks=[V4], status="failed", folder=str(folder / "sub" / owner),
                                  log="Traceback (most recent call last):\nOSError: weights not found\n",
                                  failure="the model could not be loaded")
            session.add(task)
            session.commit()
            STATE[owner] = task.key
    with page_server(folder, url) as base:
        yield base


@pytest.fixture(scope="module")
def browser(server):
    with chromium() as browser:
        yield browser


def pages() -> list[str]:
    """Every page type the walk reaches (with the states it reached them in)."""
    return ["/", "/?q=net&sort=average_vision&desc=1", "/?b.region=IT", "/?w.neural_vision=2&w.behavior_vision=0",
            "/?only=V1&min.average_vision=0.1", "/?fold=", "/?q=&sort=", "/benchmarks", f"/benchmarks/{V4}",
            "/models", "/models/alpha-net", "/compare?models=alpha-net,beta-net", "/compare",
            f"/scores/{STATE['score']}", "/agreement", "/login", "/register", "/forgot", "/reset?token=forged",
            "/no/such/page", "/models/no-such-net"]


PERSONAL = ["/submissions", "/account", "/submit", f"/submissions/{{task}}", "/models?mine=1"]


def walk(server, browser, logged_in: bool) -> dict:
    """axe-core's serious and critical violations at 1440 and 390 px on every page logged out, on the personal
    pages and two others logged in: ``{"<width> <path>": "<rule> at <target> ..."}``."""
    found = {}
    for width, height in ((1440, 900), (390, 844)):
        page = browser.new_context(viewport={"width": width, "height": height}).new_page()
        paths = pages()
        if logged_in:  # a visitor's pages differ only in the header once logged in: two of them show it, then
            # every personal page (the logged-out walk covers the rest; each axe run costs seconds)
            register_in_browser(page, server, f"{WALKER}{width}" if width != 1440 else WALKER)
            paths = ["/", "/models/alpha-net"] + ([p.format(task=STATE[WALKER]) for p in PERSONAL] if width == 1440
                                                  else [p for p in PERSONAL if "{" not in p])
        for path in paths:
            page.goto(server + path)
            violations = axe_violations(page, impacts=("critical", "serious"))
            if violations:
                found[f"{width} {path}"] = " ".join(f'{v["id"]} at {v["nodes"][0]["target"]}' for v in violations)
        page.context.close()
    return found


def test_axe_finds_nothing_serious_logged_out(server, browser):
    """Filtered leaderboards had a link inside the explore panel's summary (``nested-interactive``), the model page
    at 390 px a scrolling table no keyboard reaches (``scrollable-region-focusable``)."""
    found = walk(server, browser, logged_in=False)
    assert found == {}, "\n".join(f"{k}: {v}" for k, v in found.items())


def test_axe_finds_nothing_serious_logged_in(server, browser):
    """``/account`` had an empty table header; the logged-in pages (submissions, a submission, submit) too."""
    found = walk(server, browser, logged_in=True)
    assert found == {}, "\n".join(f"{k}: {v}" for k, v in found.items())


@pytest.fixture(scope="module")
def phone(server, browser):
    """A 390 x 844 pixel page (a phone), logged in as :data:`PHONE` (who has a submission)."""
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    register_in_browser(page, server, PHONE)
    return page


def test_nothing_personal_is_wider_than_a_phone(server, phone):
    """At 390 px ``/submissions`` was 607 px wide and ``/account`` 437 px: their tables now scroll in their own
    container (which a keyboard reaches)."""
    phone.goto(server + "/account")
    phone.click("#tokens ~ form button, form[action='/account/tokens'] button")  # a new token, shown once
    for path in ("/submissions", "/account", "/submit", f"/submissions/{STATE[PHONE]}"):
        phone.goto(server + path)
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390, path
    phone.goto(server + "/submissions")
    assert phone.locator("#submissions tbody tr").count() == 1
    assert phone.locator("#submissions").evaluate("t => t.parentElement.tabIndex") == 0


def test_the_model_column_stays_in_view_on_a_phone(server, phone):
    """Below 700 px the model column scrolled away with the scores (``position: static``): a phone's reader saw
    numbers without the model's name."""
    phone.goto(server + "/")
    cell = phone.locator("#leaderboard tbody tr[data-model] td.model").first
    assert cell.evaluate("c => getComputedStyle(c).position") == "sticky"
    assert phone.locator("#leaderboard thead th.model").evaluate("c => getComputedStyle(c).position") == "sticky"
    wrap = phone.locator("#leaderboard").evaluate_handle("t => t.parentElement")
    assert wrap.evaluate("w => w.scrollWidth > w.clientWidth")  # there is something to scroll
    wrap.evaluate("w => { w.scrollLeft = 400; }")
    assert wrap.evaluate("w => w.scrollLeft") == 400
    left = wrap.evaluate("w => w.getBoundingClientRect().left + w.clientLeft")
    assert cell.bounding_box()["x"] == pytest.approx(left, abs=1)  # stuck to the container's left edge, in view
    assert cell.locator("a").first.evaluate("a => a.textContent") in MODELS  # its name (the completeness follows)


def test_sortable_headers_say_their_order_and_fold_buttons_their_state(server, browser):
    """The leaderboard's sorted header had no ``aria-sort`` and its fold buttons no ``aria-expanded``: a screen
    reader could not tell the order nor whether a column's children were shown."""
    page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    page.goto(server + "/")
    sorted_by = "th.col[aria-sort]"
    assert page.locator(sorted_by).evaluate_all("ts => ts.map(t => [t.dataset.node, t.getAttribute('aria-sort')])") \
        == [["average_vision", "descending"]]
    page.click(f'th.col[data-node="{V4}"] a.sort')
    assert page.locator(sorted_by).evaluate_all("ts => ts.map(t => [t.dataset.node, t.getAttribute('aria-sort')])") \
        == [[V4, "descending"]]
    page.click(f'th.col[data-node="{V4}"] a.sort')
    assert page.locator(sorted_by).evaluate_all("ts => ts.map(t => [t.dataset.node, t.getAttribute('aria-sort')])") \
        == [[V4, "ascending"]]
    fold = page.locator('button.fold[data-node="IT"]')
    assert fold.get_attribute("aria-expanded") == "true"
    fold.click()
    assert fold.get_attribute("aria-expanded") == "false" and fold.text_content() == "+"
    fold.click()
    assert fold.get_attribute("aria-expanded") == "true"
    page.goto(server + "/?fold=IT")
    assert page.locator('button.fold[data-node="IT"]').get_attribute("aria-expanded") == "false"
    buttons = page.locator("button.fold").evaluate_all("bs => bs.map(b => b.getAttribute('aria-expanded'))")
    assert buttons and set(buttons) <= {"true", "false"}
    page.context.close()
