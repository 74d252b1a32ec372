"""The website's pages in headless Chromium (Playwright for Python, Debian's ``chromium``), against a fresh
server without its queue (:mod:`page_server`) on a database of three models' scores.

What a visitor sees and does: plots drawn on the first visit (issue 25 #11), benchmark columns that link to
their pages and read horizontally (#8), folded columns kept in the address and in the exports, two models
compared side by side, radio buttons on the line of their words (#15), a 404 page with the site's header
(#15). Screenshots go to ``$BRAINSCORE_SCREENSHOTS`` (``docs/`` when refreshing the documentation), else to
the test's folder.
"""
from __future__ import annotations

import pytest

from brainscore.metrics.score import Score
from brainscore.results import Database, record
from brainscore.scoring.outcome import Outcome
from browser_helpers import page_server, register_in_browser

V4 = "Cowley2026.210325.V4-pls"
IT = "Kriegeskorte2008.IT-rdm"


def _score(db, model, benchmark, value, error, provenance=None):
    score = Score.of(value, raw=value * 0.9, ceiling=0.9, model_identifier=model, benchmark_identifier=benchmark,
                     layers={"V4": "6"}, provenance=provenance)
    score.attrs["error"], score.attrs["ci95"] = error, (value - 2 * error, value + 2 * error)
    record(Outcome.from_score(score), db)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pages")
    url = f"sqlite:///{folder / 'results.sqlite'}"
    db = Database(url)
    selection = {"V4": {"layer": "6", "scores": [["1", 0.21], ["3", 0.24], ["6", 0.30]]}}
    provenance = {"code": {"brainscore": "0.1"}, "environment": {"python": "3.11.7", "device": "cpu"},
                  "benchmark": {"identifier": V4, "version": 1, "data_files": {}}, "duration_s": 41.0,
                  "layer_selection": selection}
    for model, (v4, it) in {"alexnet-like": (0.31, 0.22), "resnet-like": (0.42, 0.28), "tiny-net": (0.12, None)}.items():
        _score(db, model, V4, v4, 0.02, provenance)
        if it is not None:
            _score(db, model, IT, it, 0.015)
    with page_server(folder, url) as base:
        yield base


def _loaded(page, selector):
    return page.locator(selector).evaluate_all("imgs => imgs.map(i => i.complete && i.naturalWidth > 0)")


def test_plots_are_drawn_on_the_first_visit(server, page, shots):
    """#11: plots were blank on the first visit of a model or benchmark page (shown after a reload)."""
    page.goto(f"{server}/models/resnet-like")
    assert _loaded(page, "img.plot") == [True]
    page.screenshot(path=str(shots / "model.png"), full_page=True)
    page.goto(f"{server}/benchmarks/{V4}")
    assert _loaded(page, "img.plot") == [True]
    assert "CrossRegressedCorrelation" in page.locator("#metric").text_content()
    page.screenshot(path=str(shots / "benchmark.png"), full_page=True)


def test_benchmark_columns_link_to_their_pages_and_read_horizontally(server, page, shots):
    """#8: the links of the columns were hidden; the headers were rotated."""
    page.goto(server + "/")
    header = page.locator(f'th[data-node="{V4}"] a.name')
    assert header.is_visible()
    assert page.locator(f'th[data-node="{V4}"]').evaluate("th => getComputedStyle(th).writingMode") == "horizontal-tb"
    page.screenshot(path=str(shots / "leaderboard.png"), full_page=False)
    header.click()
    page.wait_for_url(f"{server}/benchmarks/{V4}")
    assert page.locator("h1").text_content() == V4


def test_folded_columns_stay_in_the_address_and_the_export(server, page):
    page.goto(server + "/")
    page.click('button.fold[data-node="IT"]')
    assert "fold=" in page.url and "IT" in page.url.split("fold=")[1]
    assert not page.locator(f'th[data-node="{IT}"]').is_visible()
    assert "IT" in page.locator("#export-csv").get_attribute("href")
    page.reload()  # the state comes back from the address
    assert not page.locator(f'th[data-node="{IT}"]').is_visible()
    assert page.locator('button.fold[data-node="IT"]').text_content() == "+"
    href = page.locator("#export-csv").get_attribute("href")
    from urllib.parse import parse_qs, urlsplit

    assert href.startswith("/leaderboard.csv?")  # as the server renders it
    assert "IT" in parse_qs(urlsplit(href).query)["fold"][0].split(",")
    csv_text = page.request.get(server + href).text()
    assert IT not in csv_text.splitlines()[0] and V4 in csv_text.splitlines()[0]


def test_two_ticked_models_are_compared(server, page, shots):
    page.goto(server + "/")
    page.check('tr[data-model="alexnet-like"] input[type=checkbox]')
    assert page.locator("#compare button").is_disabled()
    page.check('tr[data-model="resnet-like"] input[type=checkbox]')
    page.click("#compare button")
    page.wait_for_url(f"{server}/compare?models=*")
    row = page.locator(f'tr[data-node="{V4}"]')
    assert page.url.endswith("/compare?models=resnet-like%2Calexnet-like")  # in the leaderboard's order
    # 0.31 - 0.42, ±1.96 sqrt(0.02² + 0.02²) = ±0.055
    assert " ".join(row.locator("td.difference").text_content().split()) == "-0.110 [-0.165, -0.055]"
    page.screenshot(path=str(shots / "compare.png"), full_page=True)


def test_radio_buttons_sit_on_the_line_of_their_words(server, page, tmp_path):
    """#15: each radio button sat above its words (the form's labels are columns)."""
    register_in_browser(page, server, "alice")
    for value in ("public", "private"):
        label = page.locator(f"label:has(input[value={value}])")
        radio = page.locator(f"input[value={value}]").bounding_box()
        box = label.bounding_box()
        assert box["height"] < 2 * radio["height"] + 8, value  # one line, not radio above text
        assert abs((radio["y"] + radio["height"] / 2) - (box["y"] + box["height"] / 2)) < 4, value


def test_the_404_page_has_the_site_header(server, page):
    response = page.goto(server + "/models/no-such-net")
    assert response.status == 404
    assert page.locator("header a.brand").text_content() == "brainscore"
    assert "no model 'no-such-net'" in page.locator("#detail").text_content()
