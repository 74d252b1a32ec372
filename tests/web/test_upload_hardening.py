"""What an upload may hold beyond its zip's structure (issue 32, "also found"): a ``metadata.yml`` is bounded
(aliases, nesting, size) at upload and wherever a page reads one stored before; a deeply nested source is a
refusal, not a 500."""
from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from brainscore.web import checks, create_app, plugin_metadata
from brainscore.web.queue import SubmissionTask
from web_helpers import BENCHMARK, add_scored_model, csrf, plugin_zip, register


def laughs(levels: int) -> str:
    """A "billion laughs" metadata.yml: ``levels`` anchors of nine aliases of the one before, the last as the
    model's architecture (9**levels strings of "lol" once expanded)."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + f"\nmodels:\n  alice-yaml:\n    architecture: *a{levels - 1}\n"


@pytest.fixture
def app(tmp_path):
    app = create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                     start_worker=False)
    return app


def upload(client, zipped: bytes):
    return client.post("/api/submissions", files={"file": ("p.zip", zipped)}, data={"benchmarks": BENCHMARK},
                       headers={"X-CSRF-Token": csrf(client, "/submit")})


def test_the_362_byte_alias_bomb_is_refused_at_upload(app):
    text = laughs(9)
    assert len(text) < 700  # the file of the finding was 362 bytes; 9**9 strings once expanded
    alice = register(app, "alice")
    response = upload(alice, plugin_zip(identifier="alice-yaml", package="alice_yaml",
                                        extra={"alice_yaml/metadata.yml": text}))
    assert response.status_code == 400
    assert response.json()["problems"] == [
        f"alice_yaml/metadata.yml uses aliases (*name) more than {plugin_metadata.MAX_ALIASES} times; write the "
        f"values out (a model card needs no aliases)"]
    with Session(app.state.engine) as session:
        assert session.query(SubmissionTask).count() == 0


@pytest.mark.parametrize("text, problem", [
    # few aliases, each of a long string: small on disk, 10 x 30,000 characters expanded
    ('a: &a "' + "x" * 30_000 + '"\nb: [' + ",".join(["*a"] * 10) + "]\n",
     "expands to more than 256 KiB once its aliases (*name) are expanded"),
    ("models:\n  m:\n    x: " + "[" * 20 + "]" * 20 + "\n", "nests mappings and lists more than 12 levels deep"),
    ("a: &a [*a]\nmodels: {m: {architecture: *a}}\n", "nests more than 12 levels deep once its aliases"),
    ("models:\n  m:\n    total_parameter_count: " + "1" * 5000 + "\n", "holds a value that cannot be read"),
    ("models: [unclosed\n", "is not valid YAML"),
    ("models:\n  m:\n    extra_notes: " + "x" * (plugin_metadata.MAX_BYTES + 1) + "\n", "the limit is 64 KiB"),
], ids=["expanded-size", "depth", "self-alias", "long-integer", "not-yaml", "file-size"])
def test_each_bound_is_a_refusal_naming_the_file(text, problem):
    zipped = plugin_zip(extra={"my_tiny_net/metadata.yml": text})
    with pytest.raises(checks.SubmissionRejected) as rejected:
        checks.check_zip(zipped)
    assert len(rejected.value.problems) == 1
    assert rejected.value.problems[0].startswith("my_tiny_net/metadata.yml ") and problem in rejected.value.problems[0]


def test_a_card_with_a_few_aliases_and_merge_keys_is_read_as_written():
    text = ("common: &common {model_family: resnet, training_dataset: imagenet}\n"
            "models:\n  r18: {<<: *common, architecture: DCNN, total_parameter_count: 11689512}\n"
            "  r34: {<<: *common, architecture: DCNN}\n")
    assert checks.check_zip(plugin_zip(extra={"my_tiny_net/metadata.yml": text})).identifiers == ["my-tiny-net"]
    assert plugin_metadata.parse(text)["models"]["r18"] == {
        "model_family": "resnet", "training_dataset": "imagenet", "architecture": "DCNN",
        "total_parameter_count": 11689512}


def stored_submission(app, tmp_path, metadata: str) -> None:
    """alice's model ``alice-yaml``, scored, whose plugin folder (stored before uploads were bounded) holds
    ``metadata``."""
    plugin = tmp_path / "stored" / "site" / "alice_yaml"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text('from brainscore.registry import register_model\nregister_model("alice-yaml")\n')
    (plugin / "metadata.yml").write_text(metadata)
    add_scored_model(app.state.store, "alice-yaml", 0.5)
    with Session(app.state.engine) as session:
        session.add(SubmissionTask(owner="alice", package="alice_yaml", models=["alice-yaml"], benchmarks=[BENCHMARK],
                                   status="done", folder=str(tmp_path / "stored")))
        session.commit()


def test_a_stored_alias_bomb_does_not_blow_up_the_model_page_or_the_leaderboard_filter(app, tmp_path):
    """Six levels (531,441 strings expanded) made the model page megabytes long; now the card says what is wrong."""
    stored_submission(app, tmp_path, laughs(6))
    client = TestClient(app)
    started = time.perf_counter()
    page = client.get("/models/alice-yaml")
    assert page.status_code == 200 and len(page.content) < 100_000, len(page.content)
    assert "metadata.yml could not be read: metadata.yml uses aliases (*name) more than 32 times" in page.text
    card = client.get("/api/models/alice-yaml").json()["card"]
    assert card["problem"].startswith("metadata.yml could not be read")
    board = client.get("/?m.architecture=lol")
    assert board.status_code == 200 and len(board.content) < 200_000, len(board.content)
    assert time.perf_counter() - started < 60  # minutes before (a generous bound on a loaded machine)


@pytest.mark.parametrize("source", ["x = " + "-" * 100_000 + "1\n", "x = a" + ".b" * 200_000 + "\n"],
                         ids=["MemoryError", "RecursionError"])
def test_a_deeply_nested_source_is_refused_not_a_500(app, source):
    alice = register(app, "alice")
    response = upload(alice, plugin_zip(extra={"my_tiny_net/__init__.py": source}))
    assert response.status_code == 400
    assert "my_tiny_net/__init__.py is not valid Python" in response.json()["problems"][0]
    assert "nests too deeply for Python's parser" in response.json()["problems"][0]
