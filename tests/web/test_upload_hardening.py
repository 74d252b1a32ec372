"""What an upload may hold beyond its zip's structure (issue 32, "also found"): a ``metadata.yml`` is bounded
(aliases, nesting, size) at upload and wherever a page reads one stored before; a deeply nested source is a
refusal, not a 500."""
from __future__ import annotations

import json
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


# ------------------------------------------------------------------ issue 36: code the administrator never saw
REVIEWED = "import os, pathlib\npathlib.Path(os.environ['MARKS'], 'reviewed').write_text('ran')\n"
"""The reviewed ``__init__.py``: writes ``$MARKS/reviewed`` when it runs."""
PLANTED = "import os, pathlib\npathlib.Path(os.environ['MARKS'], 'planted').write_text('ran')\n"
"""The code compiled into the planted bytecode: writes ``$MARKS/planted``."""


def planted_bytecode(tmp_path) -> bytes:
    """``PLANTED`` compiled with ``invalidation_mode=UNCHECKED_HASH``: Python runs it without reading the source."""
    import py_compile

    source, compiled = tmp_path / "planted_src.py", tmp_path / "planted.pyc"
    source.write_text(PLANTED)
    py_compile.compile(str(source), cfile=str(compiled), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
                       doraise=True)
    return compiled.read_bytes()


@pytest.mark.parametrize("member", [
    "my_tiny_net/__pycache__/__init__.cpython-311.pyc", "my_tiny_net/__init__.pyc", "my_tiny_net/model.pyo",
    "my_tiny_net/__pycache__/notes.txt", "my_tiny_net/model.cpython-311-x86_64-linux-gnu.so", "my_tiny_net/model.so",
    "my_tiny_net/model.PYD", "my_tiny_net/evil.pth", "my_tiny_net/model.pyw", "my_tiny_net/model.abi3.so",
    "my_tiny_net/helper.dylib"])
def test_bytecode_and_native_code_are_refused_at_upload(app, tmp_path, member):
    alice = register(app, "alice")
    response = upload(alice, plugin_zip(extra={member: planted_bytecode(tmp_path)}))
    assert response.status_code == 400, response.text
    problems = response.json()["problems"]
    assert len(problems) == 1 and problems[0].startswith(f"{member!r} is "), problems
    assert "instead of the source that is checked and reviewed" in problems[0]
    with Session(app.state.engine) as session:
        assert session.query(SubmissionTask).count() == 0



@pytest.mark.parametrize("member", ["my_tiny_net/archive_name.zip", "my_tiny_net/weights/lib.whl"])
def test_an_archive_is_data_a_reviewed_source_would_have_to_import_from(app, member):
    """The reference's own ``resnet18_random`` folder ships ``archive_name.zip``: Python imports from an archive only
    when a reviewed source puts it on ``sys.path``, so archives upload like any data file."""
    import io
    import zipfile

    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as archive:
        archive.writestr("weights.bin", b"\0" * 64)
    response = upload(register(app, "alice"), plugin_zip(extra={member: inner.getvalue()}))
    assert response.status_code == 201, response.text

def test_the_reviewed_source_runs_not_a_pyc_planted_beside_it(tmp_path):
    """The attack of the audit: an approved benchmark plugin's benign reviewed ``__init__.py`` beside
    ``__pycache__/__init__.cpython-311.pyc`` compiled from other code with UNCHECKED_HASH. Plain Python runs the pyc
    (the attack is real); the trusted scorer, through its own ``main`` (as the queue starts it), runs the reviewed
    source when it loads the benchmark, and writes no bytecode beside it."""
    import os
    import socket
    import subprocess
    import sys
    from pathlib import Path

    from brainscore.boundary.channel import Channel

    plugins = tmp_path / "plugins"
    package = plugins / "benchmarks" / "approved_bench"
    (package / "__pycache__").mkdir(parents=True)
    (package / "__init__.py").write_text(REVIEWED + "from brainscore_vision import benchmark_registry\n"
                                         "benchmark_registry['approved-bench'] = lambda: None\n")
    tag = sys.implementation.cache_tag
    (package / "__pycache__" / f"__init__.{tag}.pyc").write_bytes(planted_bytecode(tmp_path))
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, str(package.parent)]),
           "BRAINSCORE_PLUGIN_DIRS": str(plugins), "BRAINSCORE_HOME": str(tmp_path / "home")}
    env.pop("PYTHONPYCACHEPREFIX", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    plain, ours = tmp_path / "plain", tmp_path / "ours"
    plain.mkdir(), ours.mkdir()
    subprocess.run([sys.executable, "-c", "import approved_bench"], env={**env, "MARKS": str(plain)}, check=True,
                   timeout=120)
    assert sorted(p.name for p in plain.iterdir()) == ["planted"]  # plain Python: the pyc ran, not the source

    mine, theirs = socket.socketpair()
    scorer = subprocess.Popen([sys.executable, "-m", "brainscore.boundary.scorer", "--model", "some-net",
                               "--benchmark", "approved-bench", "--channel-fd", str(theirs.fileno()),
                               "--stimuli", str(tmp_path / "stimuli"), "--max-bytes", str(1 << 20)],
                              env={**env, "MARKS": str(ours)}, pass_fds=(theirs.fileno(),),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    theirs.close()
    channel = Channel(mine, 1 << 20)  # the model server's side: hello, then the conversation ends
    channel.send({"reply": {"identifier": "some-net", "visual_degrees": 8.0, "commits_layers": False}})
    mine.settimeout(120)
    try:
        mine.recv(1 << 16)  # the scorer's first request: it has loaded the benchmark by then (or failed)
    except OSError:
        pass
    channel.close()
    output = scorer.communicate(timeout=120)[0].decode(errors="replace")
    assert sorted(p.name for p in ours.iterdir()) == ["reviewed"], output
    assert not list(package.joinpath("__pycache__").glob("*.py")) and len(list(package.rglob("*.pyc"))) == 1


def test_private_bytecode_sets_a_prefix_the_queue_hands_to_the_scorer(tmp_path, monkeypatch):
    import subprocess
    import sys

    from brainscore.web import pairs

    code = ("import sys; from brainscore.plugin_sources import private_bytecode; p = private_bytecode(); "
            "print(sys.pycache_prefix == str(p), oct(p.stat().st_mode & 0o777))")
    env = {"PATH": "/usr/bin:/bin", "BRAINSCORE_HOME": str(tmp_path / "home"),
           "PYTHONPATH": str(pairs.PACKAGE_ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["True", "0o700"]
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    assert pairs._scorer_environment(tmp_path)["PYTHONPYCACHEPREFIX"] == str(tmp_path / "prefix")


# ------------------------------------------------------------------ issue 36: uploads that answered 500
def bad_crc_zip() -> bytes:
    """The example plugin plus a stored ``weights.bin`` whose bytes no longer match its CRC (checks read .py only)."""
    import io
    import zipfile

    buffer = io.BytesIO(plugin_zip())
    payload = b"WEIGHTS-" * 512
    with zipfile.ZipFile(buffer, "a", zipfile.ZIP_STORED) as archive:
        archive.writestr("my_tiny_net/weights.bin", payload)
    data = buffer.getvalue()
    assert data.count(payload) == 1
    return data.replace(payload, b"X" + payload[1:])


def raw_zip(name: str) -> bytes:
    """The example plugin plus one entry called ``name`` (written as is, however long)."""
    import io
    import zipfile

    buffer = io.BytesIO(plugin_zip())
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.writestr(zipfile.ZipInfo(name), b"x")
    return buffer.getvalue()


@pytest.mark.parametrize("zipped, problem", [
    (lambda: raw_zip("my_tiny_net/" + "d/" * 2100 + "f.txt"), "the limits are 1024 characters and 32 folders deep"),
    (lambda: raw_zip("my_tiny_net/" + "n" * 300 + ".txt"), "has a name of 304 bytes; the limit is 255 bytes"),
    (bad_crc_zip, "'my_tiny_net/weights.bin' could not be unpacked: Bad CRC-32"),
], ids=["2100-levels", "300-byte-name", "bad-crc"])
def test_an_upload_that_cannot_be_unpacked_is_a_400_and_leaves_no_task_preparing(app, zipped, problem):
    alice = register(app, "alice")
    response = upload(alice, zipped())
    assert response.status_code == 400, response.text[:500]
    assert any(problem in p for p in response.json()["problems"]), response.json()
    with Session(app.state.engine) as session:
        statuses = [t.status for t in session.query(SubmissionTask)]
    assert "preparing" not in statuses
    # the model it named can be uploaded again and deleted: nothing holds it
    again = upload(alice, plugin_zip())
    assert again.status_code == 201, again.text
    with Session(app.state.engine) as session:
        task = session.query(SubmissionTask).filter_by(key=again.json()["id"]).one()
        task.status = "done"
        session.commit()
    gone = alice.delete("/api/models/my-tiny-net", params={"confirm": "my-tiny-net"},
                        headers={"X-CSRF-Token": csrf(alice, "/submit")})
    assert gone.status_code == 200, gone.text


def test_a_bad_crc_found_while_unpacking_marks_its_task_failed_with_the_reason(app, monkeypatch):
    """A damage the checks cannot see (they read .py members only) shows while unpacking, after the task row was
    made: that task is failed with the reason, never left ``preparing``; its files are gone."""
    alice = register(app, "alice")
    response = upload(alice, bad_crc_zip())
    assert response.status_code == 400
    with Session(app.state.engine) as session:
        (task,) = session.query(SubmissionTask).all()
        assert task.status == "failed" and "Bad CRC-32" in task.failure and task.finished is not None
        assert not (app.state.site.root / str(task.id)).exists()


def test_a_model_whose_task_stuck_preparing_can_be_deleted(app):
    """A task left ``preparing`` by a server that died while unpacking no longer holds its model once the queue
    passes it over; a live one is named by its key (the address of its page), never a row number."""
    import datetime as dt

    alice = register(app, "alice")
    add_scored_model(app.state.store, "alice-net", 0.5)
    with Session(app.state.engine) as session:
        task = SubmissionTask(owner="alice", models=["alice-net"], benchmarks=[BENCHMARK], status="preparing")
        session.add(task)
        session.commit()
        key, task_id = task.key, task.id
    token = csrf(alice, "/submit")
    busy = alice.delete("/api/models/alice-net", params={"confirm": "alice-net"}, headers={"X-CSRF-Token": token})
    assert busy.status_code == 409
    assert busy.json()["detail"] == (f"your submission {key} of alice-net is still preparing; delete the model when "
                                     f"it has ended (its page: /submissions/{key})")
    with Session(app.state.engine) as session:
        session.get(SubmissionTask, task_id).created = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) \
            - dt.timedelta(hours=1)
        session.commit()
    gone = alice.delete("/api/models/alice-net", params={"confirm": "alice-net"}, headers={"X-CSRF-Token": token})
    assert gone.status_code == 200 and gone.json() == {"model": "alice-net", "deleted_scores": 1}


@pytest.mark.parametrize("identifier", ["alice/net", "alice\\\\net", "net?v=2", "net#1", "net%2F", "my net", ".."])
def test_an_identifier_the_site_cannot_address_is_refused_at_upload(app, identifier):
    """``alice/net`` was scored through the website, but its owner could never delete it (no route reaches it)."""
    alice = register(app, "alice")
    response = upload(alice, plugin_zip(identifier=identifier, package="alice_net"))
    assert response.status_code == 400, response.text
    assert response.json()["problems"] == [
        f"the identifier {identifier!r} cannot be a model's on this site (its page, its deletion and its visibility "
        f"are addressed by it): an identifier is {checks.IDENTIFIER_RULE}"]


def test_an_identifier_with_a_colon_and_dots_is_addressed_and_deleted_through_the_site(app):
    alice = register(app, "alice")
    response = upload(alice, plugin_zip(identifier="lab:alice-net_v2.1", package="alice_net"))
    assert response.status_code == 201, response.text
    with Session(app.state.engine) as session:
        session.query(SubmissionTask).one().status = "done"
        session.commit()
    assert alice.get("/models/lab:alice-net_v2.1").status_code == 200
    gone = alice.delete("/api/models/lab:alice-net_v2.1", params={"confirm": "lab:alice-net_v2.1"},
                        headers={"X-CSRF-Token": csrf(alice, "/submit")})
    assert gone.status_code == 200 and gone.json()["model"] == "lab:alice-net_v2.1"
    assert app.state.store.model("lab:alice-net_v2.1") is None


# ------------------------------------------------------------------ issue 36: metadata.yml read as written
def test_a_flat_metadata_file_is_refused_with_the_expected_layout(app):
    """Fields at the top level (not under ``models: {identifier: ...}``) were ignored silently."""
    alice = register(app, "alice")
    flat = "architecture: DCNN\ntotal_parameter_count: 2496\n"
    response = upload(alice, plugin_zip(extra={"my_tiny_net/metadata.yml": flat}))
    assert response.status_code == 400
    assert response.json()["problems"] == [
        "my_tiny_net/metadata.yml has no models: section (it has architecture, total_parameter_count at its top "
        "level); put each model's fields under models: and its identifier, laid out as models: /   my-model: /     "
        "architecture: DCNN /     total_parameter_count: 11689512"]
    listed = upload(alice, plugin_zip(extra={"my_tiny_net/metadata.yml": "models: [my-tiny-net]\n"}))
    assert listed.status_code == 400 and "models: must map each model identifier to its fields" in \
        listed.json()["problems"][0]


def test_a_stored_flat_metadata_file_is_a_problem_on_the_card(app, tmp_path):
    stored_submission(app, tmp_path, "architecture: DCNN\n")
    card = TestClient(app).get("/api/models/alice-yaml").json()["card"]
    assert card["problem"].startswith("metadata.yml has no models: section (it has architecture at its top level)")


def test_the_card_shows_the_counted_parameters_and_flags_a_different_declared_count(app, tmp_path):
    """A declared count (1,000) was shown over the one counted in the network (86,567,656), unflagged; the
    leaderboard's size filter used it too."""
    stored_submission(app, tmp_path, "models:\n  alice-yaml:\n    total_parameter_count: 1000\n")
    add_scored_model(app.state.store, "alice-yaml", 0.5, provenance={"model_facts": {"parameter_count": 86567656}})
    client = TestClient(app)
    rows = dict(client.get("/api/models/alice-yaml").json()["card"]["rows"])
    assert rows["parameters"] == "86,567,656 (counted in the network; its metadata.yml declares 1,000)"
    page = client.get("/models/alice-yaml").text
    assert "<th>parameters</th><td>86,567,656 (counted in the network; its metadata.yml declares 1,000)</td>" in page
    assert "alice-yaml" in json.dumps(client.get("/api/leaderboard").json())
    small = client.get("/api/leaderboard", params={"params_max": "1"})  # millions: the declared 1,000 would pass
    assert small.status_code == 200 and "alice-yaml" not in json.dumps(small.json())
    large = client.get("/api/leaderboard", params={"params_min": "80"})
    assert large.status_code == 200 and "alice-yaml" in json.dumps(large.json())
