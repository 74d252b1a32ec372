"""Score colours under ``style-src 'self'`` in headless Chromium (Playwright for Python, Debian's ``chromium``),
against a fresh server without its queue (:mod:`page_server`), issue 23.

The Content-Security-Policy allows no inline style: a browser refuses a ``style`` attribute and says so on the
console ("Refused to apply inline style ..."). The leaderboard and a model page load without one such message,
their score cells show the colour of their value from the stylesheet's classes, and folding a leaderboard
column hides and shows its cells (the ``hidden`` attribute, no inline style).
"""
from __future__ import annotations

import colorsys
from urllib.parse import parse_qs, urlparse

import pytest

from brainscore.metrics.score import Score
from brainscore.results import Database, record
from brainscore.scoring.outcome import Outcome
from browser_helpers import chromium, page_server

V4, IT = "Cowley2026.210325.V4-pls", "Kriegeskorte2008.IT-rdm"
SCORES = {"alexnet-like": {V4: 0.31, IT: 0.22}, "resnet-like": {V4: 0.42, IT: 0.28}, "tiny-net": {V4: 0.12}}
LISTEN = """window.violations = [];
document.addEventListener("securitypolicyviolation", e => window.violations.push(e.violatedDirective));"""
"""Run before each page's own code: the browser's CSP violation events, kept for the test to read."""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("styles")
    url = f"sqlite:///{folder / 'results.sqlite'}"
    db = Database(url)
    for model, scores in SCORES.items():
        for benchmark, value in scores.items():
            record(Outcome.from_score(Score.of(value, raw=value * 0.9, ceiling=0.9, model_identifier=model,
                                               benchmark_identifier=benchmark, layers={"V4": "6"})), db)
    with page_server(folder, url) as base:
        yield base


@pytest.fixture(scope="module")
def browser(server):
    with chromium() as browser:
        yield browser


@pytest.fixture
def page(browser):
    """A fresh page whose console messages and CSP violation events are kept (``page.messages``)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.messages = []
    page.on("console", lambda message: page.messages.append(message.text))
    page.add_init_script(LISTEN)
    yield page
    context.close()


def _rgb(value: float) -> str:
    """The computed background of a score ``value`` (a hundredth): ``colour``'s hsl(120 v, 65%, 88 - 30 v %)."""
    hue, lightness = int(120 * value), round(88 - 30 * value)
    r, g, b = colorsys.hls_to_rgb(hue / 360, lightness / 100, 0.65)
    return f"rgb({round(255 * r)}, {round(255 * g)}, {round(255 * b)})"


def _refusals(page) -> list[str]:
    return [m for m in page.messages if "Refused to apply inline style" in m or "Content Security Policy" in m] + \
        page.evaluate("window.violations")


def test_the_leaderboard_has_its_colours_without_a_csp_violation(server, page):
    page.goto(server + "/")
    page.wait_for_load_state("load")
    cell = page.locator(f'tr[data-model="resnet-like"] td[data-node="{V4}"]')
    assert cell.get_attribute("class") == "score c42 leaf"
    assert cell.evaluate("td => getComputedStyle(td).backgroundColor") == _rgb(0.42) == "rgb(233, 219, 150)"  # hsl(50, 65%, 75%)
    tiny = page.locator(f'tr[data-model="tiny-net"] td[data-node="{IT}"]')  # no score: grey
    assert tiny.evaluate("td => getComputedStyle(td).backgroundColor") == "rgb(238, 238, 238)"
    assert _refusals(page) == []
    # the detector works: an inline style added now is refused, and the browser says so
    page.evaluate("document.body.insertAdjacentHTML('beforeend', '<p id=probe style=\"color: red\">x</p>')")
    page.wait_for_function("window.violations.length > 0")
    assert page.evaluate("window.violations") == ["style-src-attr"]
    assert page.locator("#probe").evaluate("p => getComputedStyle(p).color") != "rgb(255, 0, 0)"


def test_folding_a_column_hides_and_shows_its_cells(server, page):
    page.goto(server + "/")
    cells = page.locator(f'td[data-node="{V4}"]')
    assert cells.first.is_visible()
    page.locator('button.fold[data-node="V4"]').click()
    assert [cells.nth(i).is_visible() for i in range(cells.count())] == [False] * 3
    assert "V4" in parse_qs(urlparse(page.url).query)["fold"][0].split(",")  # kept in the address
    page.locator('button.fold[data-node="V4"]').click()
    assert [cells.nth(i).is_visible() for i in range(cells.count())] == [True] * 3
    page.goto(server + "/?fold=V4")  # rendered folded by the server: the hidden attribute, unfolded by a click
    assert not cells.first.is_visible() and cells.first.get_attribute("hidden") == ""
    page.locator('button.fold[data-node="V4"]').click()
    assert cells.first.is_visible()
    assert _refusals(page) == []


def test_a_model_page_has_its_colours_without_a_csp_violation(server, page):
    page.goto(server + "/models/alexnet-like")
    page.wait_for_load_state("load")
    cell = page.locator(f'tr[data-benchmark="{V4}"] td.score')
    assert cell.evaluate("td => getComputedStyle(td).backgroundColor") == _rgb(0.31)
    pills = page.locator("span.pill")
    assert pills.count() >= 1 and all(
        pills.nth(i).evaluate("p => getComputedStyle(p).backgroundColor") not in ("rgba(0, 0, 0, 0)", "")
        for i in range(pills.count()))
    assert _refusals(page) == []


def test_the_compare_page_indents_its_rows_by_depth_from_the_stylesheet(server, page):
    """The rows' indentation was an inline ``padding-left: (0.7 + depth)em``; now ``tr.depthN td.indent``."""
    page.goto(server + "/compare?models=alexnet-like,resnet-like")
    font = float(page.locator("table.compare td.indent").first.evaluate("td => getComputedStyle(td).fontSize")[:-2])
    for depth in (0, 1, 2, 3):
        cell = page.locator(f"table.compare tr.depth{depth} td.indent").first
        assert cell.evaluate("td => parseFloat(getComputedStyle(td).paddingLeft)") == pytest.approx((0.7 + depth) * font)
    assert page.locator(f'tr[data-node="{V4}"] td.score').first.evaluate(
        "td => getComputedStyle(td).backgroundColor") == _rgb(0.31)
    assert _refusals(page) == []
