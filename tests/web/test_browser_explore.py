"""Exploring the leaderboard and reading a benchmark's card in headless Chromium (Playwright for Python, Debian's
``chromium``), against a fresh server without its queue (:mod:`page_server`), issue 25.

A visitor filters the leaderboard by a model's metadata, keeps only some regions, re-weights the average (the
numbers checked against the reference's rule worked by hand), and reads a benchmark's card and the progress of a
new benchmark queued for every public model. Screenshots go to ``$BRAINSCORE_SCREENSHOTS`` (``docs/`` when
refreshing the documentation), else to the test's folder.
"""
from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import httpx
import pytest
from sqlalchemy.orm import Session

from brainscore.metrics.score import Score
from brainscore.results import Database, record
from brainscore.scoring.outcome import Outcome
from browser_helpers import page_server

V4, IT, KIANI = "Cowley2026.210325.V4-pls", "Kriegeskorte2008.IT-rdm", "Kiani2007.IT-rdm"
MODELS = {  # model: (scores, metadata.yml entry, parameters counted in its network)
    "alexnet-like": ({V4: 0.31, IT: 0.22}, "architecture: DCNN\n    training_dataset: ImageNet\n", None),
    "resnet-like": ({V4: 0.42, IT: 0.28, KIANI: 0.50},
                    "architecture: DCNN\n    training_dataset: ImageNet\n    total_parameter_count: 11689512\n", None),
    "tiny-vit": ({V4: 0.12}, "architecture: ViT\n    training_dataset: none (untrained)\n", 2496),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from brainscore.web.queue import SubmissionTask

    folder = tmp_path_factory.mktemp("explore")
    url = f"sqlite:///{folder / 'results.sqlite'}"
    db = Database(url)
    for model, (scores, metadata, counted) in MODELS.items():
        plugin = folder / "sub" / model / "site" / model.replace("-", "_")
        plugin.mkdir(parents=True)
        (plugin / "__init__.py").write_text(f"from brainscore.registry import register_model\n"
                                            f"register_model({model!r}, lambda: None)\n")
        (plugin / "metadata.yml").write_text(f"models:\n  {model}:\n    {metadata}")
        with Session(db.engine) as session:
            session.add(SubmissionTask(owner="alice", package=plugin.name, models=[model], benchmarks=[V4],
                                       status="done", folder=str(plugin.parents[1])))
            session.commit()
        db.add_model(model, owner="alice", public=True)
        facts = {"model_facts": {"parameter_count": counted}} if counted else None
        for benchmark, value in scores.items():
            score = Score.of(value, raw=value, ceiling=1.0, model_identifier=model, benchmark_identifier=benchmark,
                             provenance=facts)
            score.attrs["error"], score.attrs["ci95"] = 0.01, (value - 0.02, value + 0.02)
            record(Outcome.from_score(score), db)
    with Session(db.engine) as session:  # Kiani2007 queued for every public model: resnet-like had it, two queued
        for model, status in (("alexnet-like", "queued"), ("tiny-vit", "failed")):
            session.add(SubmissionTask(owner="alice", models=[model], benchmarks=[KIANI], status=status,
                                       filename=f"new benchmark {KIANI} v1", folder=str(folder / "sub" / model)))
        session.commit()
    with page_server(folder, url) as base:
        yield base


def rows(page) -> list[str]:
    return page.locator("#leaderboard tbody tr[data-model]").evaluate_all("trs => trs.map(t => t.dataset.model)")


def cell(page, model: str, node: str) -> float | None:
    text = page.locator(f'tr[data-model="{model}"] td[data-node="{node}"]').get_attribute("data-score")
    return float(text) if text else None


def test_filter_by_metadata_and_parameters(server, page, shots):
    page.goto(server + "/")
    assert rows(page) == ["resnet-like", "alexnet-like", "tiny-vit"]
    page.click("#explore summary")
    page.select_option('select[name="m.architecture"]', "DCNN")
    page.click("#weights button[type=submit]")
    query = parse_qs(urlparse(page.url).query)
    assert query["m.architecture"] == ["DCNN"] and not [k for k in query if k.startswith("w.")]  # defaults left out
    assert rows(page) == ["resnet-like", "alexnet-like"]
    assert page.locator('select[name="m.architecture"]').input_value() == "DCNN"  # the form keeps the state
    page.screenshot(path=str(shots / "leaderboard_filters.png"), full_page=False)
    page.goto(server + "/?params_max=0.01")  # at most 10,000 parameters: tiny-vit's 2,496, counted in its network
    assert rows(page) == ["tiny-vit"]


def test_reweighting_the_average(server, page, shots):
    page.goto(server + "/")
    # the reference's equal weights: alexnet-like = (neural (0 + 0.31 + 0.22 / 2) / 3 + behaviour 0) / 2
    assert cell(page, "alexnet-like", "average_vision") == pytest.approx((0.31 + 0.11) / 3 / 2, abs=1e-6)
    page.click("#explore summary")
    page.fill('input[name="w.behavior_vision"]', "0")  # no behavioural scores here: leave behaviour out
    page.fill('input[name="w.IT"]', "0")
    page.click("#weights button[type=submit]")
    query = parse_qs(urlparse(page.url).query)
    assert query["w.behavior_vision"] == ["0"] and query["w.IT"] == ["0"] and "w.V4" not in query
    # neural = (V1 0 + V4) / 2 with IT left out; the average is neural alone
    assert cell(page, "alexnet-like", "average_vision") == pytest.approx(0.31 / 2, abs=1e-6)
    assert cell(page, "resnet-like", "average_vision") == pytest.approx(0.42 / 2, abs=1e-6)
    assert cell(page, "resnet-like", "IT") == pytest.approx((0.28 + 0.50) / 2, abs=1e-6)  # its own value is kept
    assert "2 active" in page.locator("#explore .active").text_content()
    assert page.locator('th[data-node="IT"] .weight').text_content() == "×0"  # the header says it is weighted
    page.screenshot(path=str(shots / "leaderboard_weights.png"), full_page=False)
    csv_href = page.locator("#export-csv").get_attribute("href")
    exported = httpx.get(server + csv_href).text.splitlines()
    assert exported[0].startswith("rank,model,average_vision") and exported[1].startswith("1,resnet-like,0.210000")


def test_only_some_regions(server, page):
    page.goto(server + "/")
    page.click("#explore summary")
    page.check('#only-filters input[value="IT"]')
    page.click("#weights button[type=submit]")
    assert parse_qs(urlparse(page.url).query)["only"] == ["IT"]
    headers = page.locator("#leaderboard thead th[data-node]").evaluate_all("ths => ths.map(t => t.dataset.node)")
    assert headers == ["average_vision", "neural_vision", "IT", KIANI, IT]
    assert rows(page)[0] == "resnet-like" and cell(page, "resnet-like", "average_vision") == pytest.approx(0.39)
    assert cell(page, "tiny-vit", "average_vision") is None  # no IT score: nothing to average


def test_benchmark_card_and_progress(server, page, shots):
    page.goto(f"{server}/benchmarks/{V4}")
    assert page.locator("#species").text_content() == "macaque monkey"
    assert page.locator("#counts").text_content() == "640 stimuli · 50 neuroids · 6–10 repetitions per stimulus"
    assert "2ρ/(1 + ρ)" in page.locator("#ceiling-words").text_content()
    assert page.locator("#formula code").text_content() == "score = r² / c"
    assert page.locator("#licence").text_content() == "GPL-3.0" and "@article{cowley2026compact" in page.content()
    page.screenshot(path=str(shots / "benchmark_card.png"), full_page=True)
    page.goto(f"{server}/benchmarks/{KIANI}")
    section = page.locator("#rescoring")
    assert section.is_visible() and "1 of 3 models scored" in " ".join(section.text_content().split())
    assert page.locator("#rescoring-failed").text_content() == "1" and page.locator("#rescoring-queued").text_content() == "1"
    assert page.locator("#counts").text_content() == "92 stimuli · 1 subject · 1 RDM"
    page.screenshot(path=str(shots / "benchmark_progress.png"), full_page=False)
