"""Exploring the leaderboard (issue 25): filters by any metadata field and by region or benchmark, re-weighting of
the aggregate, all kept in the URL, the JSON API and the exports. Every expected number is worked out by hand from
the reference's rule (a parent is the mean of its children, a missing child counts 0), written next to it."""
from __future__ import annotations

import csv
import io

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from brainscore.leaderboard.aggregate import leaderboard_records, registered_tree, reweight
from brainscore.metrics.score import Score
from brainscore.results import record
from brainscore.scoring.outcome import Outcome
from brainscore.web import create_app
from brainscore.web.queue import SubmissionTask

V4, IT_A, IT_B, BEHAVIOUR = "Cowley2026.210325.V4-pls", "Kriegeskorte2008.IT-rdm", "Kiani2007.IT-rdm", "Mur2013-rdm"
SCORES = {"deep-net": {V4: 0.6, IT_A: 0.3, IT_B: 0.1, BEHAVIOUR: 0.4},
          "wide-net": {V4: 0.2, IT_A: 0.5, IT_B: 0.5, BEHAVIOUR: 0.0}}
METADATA = {"deep-net": "architecture: DCNN\n    training_dataset: ImageNet\n    total_parameter_count: 11689512\n",
            "wide-net": "architecture: ViT\n    training_dataset: JFT-300M\n    task_specialization: self-supervised\n"}
# The tree under average_vision holds V1 (4 families, all missing here), V4, IT (two benchmarks) in neural_vision,
# and in behavior_vision six children: Geirhos2019 and Geirhos2021 (missing), three Hermann2020 benchmarks (missing)
# and Mur2013.


@pytest.fixture
def app(tmp_path):
    app = create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                     start_worker=False)
    store = app.state.store
    for model, scores in SCORES.items():
        folder = tmp_path / "submissions" / model
        package = folder / "site" / model.replace("-", "_")
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(f"from brainscore.registry import register_model\n"
                                             f"register_model({model!r}, lambda: None)\n")
        (package / "metadata.yml").write_text(f"models:\n  {model}:\n    {METADATA[model]}")
        with Session(app.state.engine) as session:
            session.add(SubmissionTask(owner="alice", package=package.name, models=[model], benchmarks=[V4],
                                       status="done", folder=str(folder)))
            session.commit()
        store.add_model(model, owner="alice", public=True)
        counted = {"model_facts": {"parameter_count": 86567656}} if model == "wide-net" else None  # ViT-B/16's
        for benchmark, value in scores.items():
            record(Outcome.from_score(Score.of(value, raw=value, ceiling=1.0, model_identifier=model,
                                               benchmark_identifier=benchmark, provenance=counted)), store)
    return app


def board(client, **params):
    response = client.get("/api/leaderboard", params=params)
    assert response.status_code == 200, response.text
    return {r["model"]: r for r in response.json()}


def test_default_weights_are_the_references_equal_weights(app):
    """No weights: exactly the reference's unweighted means (the same floats as leaderboard_records)."""
    records = leaderboard_records(app.state.store)
    again = reweight(records, registered_tree(), {})
    assert [r["scores"] for r in again] == [r["scores"] for r in records]
    deep = {r["model"]: r for r in records}["deep-net"]["scores"]
    assert deep["IT"] == pytest.approx((0.3 + 0.1) / 2)
    assert deep["neural_vision"] == pytest.approx((0 + 0.6 + 0.2) / 3)  # V1 missing counts 0
    assert deep["behavior_vision"] == pytest.approx(0.4 / 6)
    assert deep["average_vision"] == pytest.approx(((0.6 + 0.2) / 3 + 0.4 / 6) / 2)  # 0.166667


def test_region_weights_change_the_average_and_the_order(app):
    client = TestClient(app)
    deep = board(client, **{"w.IT": "2", "w.V1": "0"})["deep-net"]["scores"]
    assert deep["neural_vision"] == pytest.approx((1 * 0.6 + 2 * 0.2) / 3)  # V1 left out: weights 1 (V4) + 2 (IT)
    assert deep["average_vision"] == pytest.approx(((0.6 + 0.4) / 3 + 0.4 / 6) / 2)  # 0.2
    assert deep["IT"] == pytest.approx(0.2) and deep[V4] == pytest.approx(0.6)  # leaves and regions keep their value
    default = [r["model"] for r in client.get("/api/leaderboard").json()]
    assert default == ["deep-net", "wide-net"]  # 0.1667 > (0.2 + 0.5) / 3 / 2 = 0.1167
    it_only = client.get("/api/leaderboard", params={"w.V4": "0", "w.V1": "0"}).json()
    assert [r["model"] for r in it_only] == ["wide-net", "deep-net"]  # IT alone: 0.5 > 0.2
    assert it_only[0]["scores"]["average_vision"] == pytest.approx((0.5 + 0.0) / 2)
    behaviour = board(client, **{"w.behavior_vision": "3"})["deep-net"]["scores"]["average_vision"]
    assert behaviour == pytest.approx(((0.6 + 0.2) / 3 + 3 * 0.4 / 6) / 4)  # 0.116667


def test_benchmark_weights_within_a_region(app):
    deep = board(TestClient(app), **{f"w.{IT_A}": "3"})["deep-net"]["scores"]
    assert deep["IT"] == pytest.approx((3 * 0.3 + 1 * 0.1) / 4)  # 0.25


def test_only_some_regions_count_and_are_shown(app):
    client = TestClient(app)
    rows = board(client, only="V4,IT")
    assert rows["deep-net"]["scores"]["average_vision"] == pytest.approx((0.6 + 0.2) / 2)  # behaviour, V1 left out
    assert rows["wide-net"]["scores"]["average_vision"] == pytest.approx((0.2 + 0.5) / 2)
    assert rows["deep-net"]["missing"]["average_vision"] == 0  # the left-out V1 and behaviour leaves do not count
    one = board(client, only=IT_B)["wide-net"]["scores"]
    assert one["average_vision"] == pytest.approx(0.5) and one["IT"] == pytest.approx(0.5)
    exported = client.get("/leaderboard.json", params={"only": "V4,IT"}).json()
    assert exported["columns"] == ["average_vision", "neural_vision", "V4", V4, "IT", IT_B, IT_A]  # regions V1..IT
    assert exported["filters"] == {"only": ["V4", "IT"]}
    page = client.get("/", params={"only": "V4,IT"}).text
    assert f'data-node="{BEHAVIOUR}"' not in page and f'data-node="{IT_A}"' in page


def test_metadata_filters(app):
    client = TestClient(app)
    assert list(board(client, **{"m.architecture": "dcnn"})) == ["deep-net"]  # case-insensitive
    assert list(board(client, **{"m.training_dataset": "JFT-300M"})) == ["wide-net"]
    assert list(board(client, **{"m.task_specialization": "self-supervised"})) == ["wide-net"]
    assert sorted(board(client, **{"m.submitter": "alice"})) == ["deep-net", "wide-net"]
    assert list(board(client, params_min="10", params_max="12")) == ["deep-net"]  # 11.7 M parameters
    assert list(board(client, params_min="12")) == ["wide-net"]  # counted in its network when it was scored
    assert list(board(client, params_max="0.5")) == []
    page = client.get("/", params={"m.architecture": "ViT"}).text
    assert 'data-model="wide-net"' in page and 'data-model="deep-net"' not in page
    assert '<option value="DCNN">' in page and '<option value="ViT" selected>' in page


def test_filters_and_weights_are_in_the_address_and_the_exports(app):
    client = TestClient(app)
    params = {"m.architecture": "DCNN", "w.IT": "2", "w.V1": "0", "sort": "average_vision"}
    page = client.get("/", params=params).text
    assert "/leaderboard.csv?sort=average_vision&amp;desc=1&amp;m.architecture=DCNN&amp;w.IT=2&amp;w.V1=0" in page
    rows = list(csv.DictReader(io.StringIO(client.get("/leaderboard.csv", params=params).text)))
    assert [r["model"] for r in rows] == ["deep-net"]
    assert float(rows[0]["average_vision"]) == pytest.approx(((0.6 + 0.4) / 3 + 0.4 / 6) / 2, abs=1e-6)


def test_bad_filters_are_refused_clearly(app):
    client = TestClient(app)
    response = client.get("/api/leaderboard", params={"w.V9": "2"})
    assert response.status_code == 400 and "'V9'" in response.json()["detail"]
    assert client.get("/api/leaderboard", params={"w.IT": "-1"}).status_code == 400
    assert "params_min='many'" in client.get("/api/leaderboard", params={"params_min": "many"}).json()["detail"]
    assert client.get("/api/leaderboard", params={"only": "Nope2000"}).status_code == 400


def test_the_card_shows_the_parameters_counted_in_the_network(app):
    client = TestClient(app)
    wide = dict(client.get("/api/models/wide-net").json()["card"]["rows"])
    assert wide["parameters"] == "86,567,656 (counted in the network)"  # metadata.yml gives none
    assert dict(client.get("/api/models/deep-net").json()["card"]["rows"])["parameters"] == 11689512  # declared


def test_parameters_never_counted_are_not_known():
    from brainscore.web.cards import model_card

    assert ("parameters", "not known") in model_card("never-seen-net")["rows"]  # not 0
    assert ("parameters", 0) in model_card("pixels")["rows"]  # declared: the pixels have no parameters
    assert ("parameters", 11689512) in model_card("torchvision:resnet18")["rows"]  # counted in ResNet-18


def test_builtin_models_can_be_filtered_by_their_metadata():
    from brainscore.web.cards import model_facts

    facts = model_facts("torchvision:vit_b_16-untrained")
    assert (facts["architecture"], facts["training_dataset"], facts["parameter_count"]) == (
        "vision transformer", "none (untrained)", 86567656)


def test_the_bibtex_export_cites_the_benchmarks_that_count(app):
    client = TestClient(app)
    only_v4 = client.get("/leaderboard.bib", params={"only": "V4"}).text
    assert "@article{cowley2026compact" in only_v4 and "kriegeskorte2008matching" not in only_v4
    everything = client.get("/leaderboard.bib").text
    assert "kriegeskorte2008matching" in everything and "mur2013human" in everything
