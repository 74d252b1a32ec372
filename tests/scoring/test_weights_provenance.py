"""Weights provenance (issue 37): a weights file not verified against a published hash is recorded as unverified,
a declared stand-in as a stand-in, in the score's provenance (``weights``: status, files, sha256), and shown by
``brainscore score``, ``brainscore records``, the record's page and the leaderboard, never as the pretrained
network. (The defect: a timm model's Hugging Face file with no published hash beside it was used unchecked and
unflagged; a record of random weights standing in for ``convnext_tiny.in12k_ft_in1k`` read like a pretrained
score.)"""
from __future__ import annotations

import hashlib
import json
import re

import pytest
from fastapi.testclient import TestClient

import brainscore.registry  # noqa: F401 - the import hook that guards downloads, as in every process of plugins
from brainscore import registry
from brainscore.metrics.score import Score
from brainscore.results import Database, record
from brainscore.scoring.outcome import Outcome

REPO = "timm/convnext_tiny.in12k_ft_in1k"
FAKE_BENCHMARK = "WeightsCheck2026.V4-fake"


class FakeBenchmark:
    """Scores any model 0.5 at once (what is tested is the provenance, not the number)."""

    identifier, version, region = FAKE_BENCHMARK, 1, None

    def __call__(self, model):
        return Score.of(0.5, raw=0.4, ceiling=0.8)


class Net:
    identifier = "convnext-standin"


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    folder = tmp_path / "weights"
    (folder / REPO).mkdir(parents=True)
    (folder / REPO / "model.safetensors").write_bytes(b"random weights, not the published ones")
    monkeypatch.setenv("BRAINSCORE_WEIGHTS_MIRROR", str(folder))
    monkeypatch.delenv("BRAINSCORE_STAND_INS", raising=False)
    monkeypatch.setitem(registry.benchmarks._factories, FAKE_BENCHMARK, FakeBenchmark)
    return folder


def build_from_hub():
    from huggingface_hub import hf_hub_download

    hf_hub_download(REPO, "model.safetensors")  # what timm.create_model(..., pretrained=True) calls
    return Net()


def score(monkeypatch):
    from brainscore.scoring import job

    monkeypatch.setitem(registry.models._factories, "convnext-standin", build_from_hub)
    return job.score("convnext-standin", FAKE_BENCHMARK, bootstrap=0)


def test_a_hub_file_without_a_published_hash_is_recorded_unverified(mirror, monkeypatch):
    result = score(monkeypatch)
    weights = result.attrs["provenance"]["weights"]
    digest = hashlib.sha256(b"random weights, not the published ones").hexdigest()
    assert weights == {"status": "unverified", "files": {f"{REPO}/model.safetensors": {"sha256": digest,
                                                                                       "status": "unverified"}}}
    (mirror / REPO / "model.safetensors.sha256").write_text(digest)
    assert score(monkeypatch).attrs["provenance"]["weights"]["status"] == "verified"


def test_a_declared_stand_in_is_named_on_every_surface(mirror, monkeypatch, tmp_path, capsys):
    digest = hashlib.sha256(b"random weights, not the published ones").hexdigest()
    declared = tmp_path / "stand_ins.json"
    declared.write_text(json.dumps({f"{REPO}/model.safetensors": {"sha256": digest, "note": "test"}}))
    monkeypatch.setenv("BRAINSCORE_STAND_INS", str(declared))
    with pytest.warns(UserWarning, match="in place of the registered file"):
        result = score(monkeypatch)
    provenance = result.attrs["provenance"]
    assert provenance["weights"]["status"] == "stand-in"
    assert provenance["weights"]["files"][f"{REPO}/model.safetensors"] == {"sha256": digest, "status": "stand-in"}

    from brainscore.cli import main
    from brainscore.web import create_app
    from brainscore.web.mail import Mailer, MailSettings
    from web_helpers import add_scored_model

    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    with Database(url) as db:
        record(Outcome.from_score(result), db)
        add_scored_model(db, "standin-net", 0.4, owner=None, provenance=provenance)  # on a leaderboard benchmark
        add_scored_model(db, "verified-net", 0.3, owner=None,
                         provenance={**provenance, "weights": {"status": "verified", "files": {}}})
        ids = {r.model: r.id for r in db.scores()}
    assert main(["records", "--db", url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(f"#{ids['convnext-standin']}\t" in line and "0.5000 [stand-in weights]" in line for line in lines)
    assert any("verified-net" in line and "weights]" not in line for line in lines)
    assert main(["records", "--db", url, "--json", "--model", "standin-net"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["weights"] == "stand-in"

    app = create_app(db_url=url, root=tmp_path / "submissions", start_worker=False, mailer=Mailer(MailSettings()))
    client = TestClient(app)
    page = client.get(f"/scores/{ids['convnext-standin']}").text
    assert 'data-weights="stand-in"' in page
    note = re.search(r'id="weights-note">([^<]+)<', page).group(1)
    assert f"STAND-IN: {REPO}/model.safetensors (sha256 {digest[:12]})" in note
    assert "not a score of the pretrained network" in note
    board = client.get("/").text
    row = re.search(r'<tr data-model="standin-net">.*?</tr>', board, re.S).group(0)
    assert 'class="weights-flag error" data-weights="stand-in"' in row and "stand-in weights" in row
    verified_row = re.search(r'<tr data-model="verified-net">.*?</tr>', board, re.S).group(0)
    assert "weights-flag" not in verified_row


def test_brainscore_score_prints_the_weights_line(mirror, monkeypatch, capsys):
    from brainscore.cli import main

    monkeypatch.setitem(registry.models._factories, "convnext-standin", build_from_hub)
    assert main(["score", "--model", "convnext-standin", "--benchmark", FAKE_BENCHMARK, "--no-record",
                 "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    assert f"weights: UNVERIFIED: {REPO}/model.safetensors (sha256 " in out
    assert "not known to be the pretrained network" in out


def test_a_sandboxed_model_s_report_is_read_by_its_files_not_its_claimed_status(monkeypatch):
    from brainscore.boundary.remote import RemoteModel
    from brainscore.scoring.job import _remote_weights

    remote = object.__new__(RemoteModel)  # no server: its facts are what the test says it reported
    claimed = {"status": "verified", "files": {f"{REPO}/model.safetensors": {"sha256": "ab" * 32, "status": "stand-in"},
                                               "config.json": {"sha256": "cd" * 32, "status": "bogus"}}}
    monkeypatch.setattr(RemoteModel, "facts", lambda self: {"weights": claimed})
    assert _remote_weights(remote) == {"status": "stand-in", "files": {
        "config.json": {"sha256": "cd" * 32, "status": "unverified"},
        f"{REPO}/model.safetensors": {"sha256": "ab" * 32, "status": "stand-in"}}}
    monkeypatch.setattr(RemoteModel, "facts", lambda self: {"weights": "verified"})
    assert _remote_weights(remote) is None
