"""Benchmark cards (issue 25): species, counts from the data, metric and ceiling in words with the formula, data
source, licence and BibTeX, for every shipped benchmark."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from brainscore import registry
from brainscore.benchmarks.card import data_counts
from brainscore.leaderboard import tree
from brainscore.web import create_app
from brainscore.web.cards import BENCHMARK_FIELDS, benchmark_card

SHIPPED = sorted(tree.benchmark_parents(include_selection=True))


def test_every_shipped_benchmark_has_a_whole_card():
    assert len(SHIPPED) == 27
    for identifier in SHIPPED:
        card = benchmark_card(identifier)
        assert "problem" not in card, identifier
        assert all(card[field] for field in BENCHMARK_FIELDS), (identifier, card)
        assert card["formula"].startswith("score = ") and card["counts"]["stimuli"] > 0, identifier
        assert "@" in registry.load_benchmark(identifier).bibtex, identifier


def test_cards_give_the_studies_numbers():
    """The counts written by tools/benchmark_cards.py, against what the papers and data READMEs say."""
    assert benchmark_card("Cowley2026.210325.V4-pls")["counts"] == {"stimuli": 640, "neuroids": 50,
                                                                    "repetitions_min": 6, "repetitions_max": 10}
    assert benchmark_card("Kriegeskorte2008.IT-rdm")["counts"] == {"stimuli": 92, "rdms": 8, "subjects": 4,
                                                                   "species": "human"}
    assert benchmark_card("Geirhos2021edge-error_consistency")["counts"] == {"stimuli": 160, "subjects": 10,
                                                                             "trials": 1600}
    assert benchmark_card("Marques2020_DeValois1982-pref_or")["counts"] == {"stimuli": 9097, "neuroids": 385}
    assert benchmark_card("Kiani2007.IT-rdm")["ceiling"].startswith("none")
    # the instructed experiments: the 1,280 images shown (fitting and asked), 1,200 cue-conflict ones scored
    assert benchmark_card("Geirhos2019textureinstructed-accuracy_distance")["counts"] == {"stimuli": 1280,
                                                                                        "subjects": 10, "trials": 12000}


def test_the_benchmark_page_shows_the_card(tmp_path):
    app = create_app(db_url=f"sqlite:///{tmp_path / 'r.sqlite'}", root=tmp_path / "sub", start_worker=False)
    page = TestClient(app).get("/benchmarks/Cowley2026.210325.V4-pls").text
    assert '<td id="species">macaque monkey</td>' in page
    assert '<td id="counts">640 stimuli · 50 neuroids · 6–10 repetitions per stimulus</td>' in page
    assert "<code>score = r² / c</code>" in page and "Spearman-Brown" in page
    assert '<td id="licence">GPL-3.0</td>' in page and "cowleygroup/V4_compact_models" in page
    body = TestClient(app).get("/api/benchmarks/Mur2013-rdm").json()["card"]
    assert body["species"] == "human" and body["counts"]["subjects"] == 16


@pytest.mark.slow
@pytest.mark.parametrize("identifier", SHIPPED)
def test_the_counts_are_the_datas(identifier, shared_data):
    """Counted again in the loaded data: the card's numbers are the data's, not typed in."""
    counted = data_counts(registry.load_benchmark(identifier))
    assert benchmark_card(identifier)["counts"] == counted
