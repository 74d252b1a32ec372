"""Scores no submitter can forge (issue 32), submitted through the website: a real server app (its upload route,
its dispatcher, a Dask cluster, the sandboxed model server and the trusted scorer of each pair).

Five hostile models, each the tiny network of docs/models.md with an attack wrapped around ``look_at``, and one honest copy:

- ``forge`` prints the outcome line that once recorded any score (``{"event": "done", ..., "score": 1e6}``) and exits;
- ``nan`` answers with NaN responses; ``shape`` answers for fewer stimuli than it was shown;
- ``proc`` searches ``/proc`` (environments, command lines, mounts) for the data and opens the data file;
- ``channel`` asks the scorer for the benchmark's assembly over the boundary's own channel.

Each ends with nothing recorded as done (no row, no leaderboard entry) and a failure that says what happened; the
honest one scores exactly (``==``) what ``brainscore score`` gives in-process. The file-system part needs namespaces
(root, or unprivileged user namespaces, and ``unshare``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from brainscore.boundary.launcher import isolation
from brainscore.results import Database
from brainscore.web.checks import extract
from brainscore.web.queue import Limits, SubmissionTask, write_entry_point
from web_helpers import EXAMPLE_PLUGIN, csrf, plugin_zip, register

BENCHMARK = "Cowley2026.210325.V4-pls"
SRC = Path(__file__).resolve().parents[2] / "src"
LIMITS = Limits(memory=4 * 1024**3, cpu=900, wall=600, disk=512 * 1024**2, log=1024**2, processes=64)

pytestmark = [pytest.mark.skipif(isolation() == "none", reason="namespaces are unavailable here: the model server "
                                 "would see every file the server can read"), pytest.mark.slow]

ATTACKS = {
    "forge": '''
def attack(model, stimuli, answer):
    outcome = {"model": IDENTIFIER, "benchmark": BENCHMARK, "status": "done", "score": 1e6, "raw": 1e6,
               "benchmark_version": 1, "provenance": {"benchmark": {"version": 1}}}
    print(json.dumps({"event": "done", "model": IDENTIFIER, "outcome": outcome}), flush=True)
    os._exit(0)
''',
    "nan": '''
def attack(model, stimuli, answer):
    return answer.copy(data=np.full(answer.shape, np.nan, dtype=answer.dtype))
''',
    "shape": '''
def attack(model, stimuli, answer):
    return answer.isel(presentation=slice(0, 10))
''',
    "proc": '''
MIRROR, DATA_FILE = os.path.join(os.sep, *MIRROR_PARTS), os.path.join(os.sep, *DATA_PARTS)


def attack(model, stimuli, answer):
    found, proc = [], os.path.join(os.sep, "proc")
    for entry in os.listdir(proc):
        for name in ("environ", "cmdline", "mountinfo"):
            try:
                text = open(os.path.join(proc, entry, name), "rb").read().decode(errors="replace")
            except OSError:
                continue
            print("searched", entry, name, flush=True)
            for needle in (MIRROR, "responses_", "cowley2026"):  # the data's folder or its files, named anywhere
                if needle in text:
                    found.append((entry, name, needle))
    print("FOUND" if found else "nothing found", found, flush=True)
    mirror = os.environ.get("BRAINSCORE_DATA_MIRROR", "")  # its own: what a model itself reads, nothing more
    print("mirror holds", sorted(os.listdir(mirror)) if mirror else None, flush=True)
    open(DATA_FILE, "rb").read()
''',
    "channel": '''
def attack(model, stimuli, answer):  # the channel's descriptor is on the model server's command line
    import sys
    from brainscore.boundary.channel import Channel
    channel = Channel.from_fd(os.dup(int(sys.argv[sys.argv.index("--channel-fd") + 1])), 1 << 30)
    channel.send({"call": "benchmark.assembly", "args": {"benchmark": BENCHMARK}})
    print("RESPONSES", channel.receive(), flush=True)
''',
}


def hostile_model(kind: str, constants: dict) -> str:
    """The tiny network's model.py (docs/models.md) with ``attack(model, stimuli, answer)`` run in its look_at (an attack
    that returns an assembly answers with it)."""
    values = "".join(f"{name} = {value!r}\n" for name, value in constants.items())
    return ((EXAMPLE_PLUGIN / "model.py").read_text() + "\nimport json, os\nimport numpy as np\n" + values
            + ATTACKS[kind] + '''
_commitment = commitment


def commitment(identifier, **kwargs):
    model = _commitment(identifier, **kwargs)
    look_at = model.look_at

    def hostile_look_at(stimuli, *args, **kw):
        answer = look_at(stimuli, *args, **kw)
        changed = attack(model, stimuli, answer)
        return answer if changed is None else changed
    model.look_at = hostile_look_at
    return model
''')


def in_process_score(tmp_path: Path, identifier: str, package: str) -> float:
    """What ``brainscore score --json`` gives for the plugin, run in a process that has it installed (no sandbox)."""
    site = tmp_path / "cli-site"
    extract(plugin_zip(identifier, package), site)
    write_entry_point(site, package, 0)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(SRC)])}
    out = subprocess.run([sys.executable, "-m", "brainscore", "score", "--model", identifier, "--benchmark",
                          BENCHMARK, "--json", "--no-record"], env=env, capture_output=True, text=True, check=True,
                         timeout=900).stdout
    return json.loads(out.strip().splitlines()[-1])["score"]


@pytest.fixture(scope="module")
def submitted(tmp_path_factory, shared_data):
    """The six submissions uploaded through the website's API (a logged-in session with its CSRF token), scored by
    its dispatcher on one Dask cluster; each task's final row, and the database."""
    from distributed import Client, LocalCluster
    from fastapi.testclient import TestClient

    from brainscore.web import create_app

    folder = tmp_path_factory.mktemp("boundary-web")
    url = f"sqlite:///{folder / 'results.sqlite'}"
    data_file = shared_data / "cowley2026_v4" / "responses_repeat_averaged" / "responses_210325.npy"
    # paths as their parts: the upload's check refuses a plugin whose code names an absolute path outright
    constants = {"BENCHMARK": BENCHMARK, "MIRROR_PARTS": list(shared_data.parts[1:]),
                 "DATA_PARTS": list(data_file.parts[1:])}
    zips = {"honest": plugin_zip("honest-net", "honest_net")}
    for kind in ATTACKS:
        identifier, package = f"evil-{kind}", f"evil_{kind}"
        zips[kind] = plugin_zip(identifier, package, extra={
            f"{package}/model.py": hostile_model(kind, {**constants, "IDENTIFIER": identifier})})
    with LocalCluster(n_workers=1, threads_per_worker=3, processes=False, dashboard_address="127.0.0.1:0") as cluster, \
            Client(cluster) as dask:
        # mallory queues five attacks at once: past the default quota of 3 unfinished submissions per user
        app = create_app(db_url=url, root=folder / "submissions", dask_client=dask, quotas={"submissions": len(zips)})
        app.state.worker.limits = LIMITS
        with TestClient(app):  # the lifespan starts the dispatcher
            mallory, bob = register(app, "mallory"), register(app, "bob")
            keys = {}
            for kind, data in zips.items():
                user = bob if kind == "honest" else mallory
                response = user.post("/api/submissions", files={"file": (f"{kind}.zip", data)},
                                     data={"benchmarks": BENCHMARK}, headers={"X-CSRF-Token": csrf(user, "/submit")})
                assert response.status_code in (200, 201, 202), response.text
                keys[kind] = response.json()["id"]
            deadline = time.monotonic() + 1500
            while time.monotonic() < deadline:
                with Session(app.state.engine, expire_on_commit=False) as session:
                    tasks = {kind: session.query(SubmissionTask).filter(SubmissionTask.key == key).one()
                             for kind, key in keys.items()}
                if all(task.status in ("done", "failed") for task in tasks.values()):
                    break
                time.sleep(1)
            else:
                pytest.fail(f"submissions did not end: {[(k, t.status) for k, t in tasks.items()]}")
    return {"tasks": tasks, "url": url, "store": Database(url)}


def failure_of(submitted, kind: str) -> str:
    """The failure of ``kind``'s one pair, asserting nothing of it was recorded as done (no score row at all)."""
    task = submitted["tasks"][kind]
    assert task.status == "failed", (kind, task.status, task.log[-3000:])
    (result,) = task.results.values()
    assert result["status"] == "failed"
    rows = submitted["store"].scores(f"evil-{kind}", include_failed=True)
    assert [(row.status, row.score, row.failure) for row in rows] == [("failed", None, result["failure"])]
    assert submitted["store"].scores(f"evil-{kind}") == []  # nothing done, so nothing on the leaderboard
    return result["failure"]


def test_the_honest_submission_scores_what_brainscore_score_gives(submitted, tmp_path):
    task = submitted["tasks"]["honest"]
    assert task.status == "done", task.log[-3000:]
    (row,) = submitted["store"].scores("honest-net")
    assert row.score == in_process_score(tmp_path, "honest-net", "honest_net")  # bit for bit
    assert 0.05 < row.score < 0.2  # a real score (0.1036 for this network), not 0 == 0


def test_a_forged_outcome_line_records_nothing(submitted):
    failure = failure_of(submitted, "forge")
    assert '"score": 1e6' in submitted["tasks"]["forge"].log.replace("1000000.0", "1e6")  # printed, never read
    assert failure == ("the model's process ended while answering look_at (the other side of the boundary closed "
                       "it); it exited (code 0) without answering: nothing was recorded")
    page = submitted["store"].models()
    assert "evil-forge" not in {m.identifier for m in page if submitted["store"].scores(m.identifier)}


def test_nan_responses_are_refused(submitted):
    failure = failure_of(submitted, "nan")
    assert failure.startswith("the model's answer to look_at on 640 stimuli: ")
    assert "of its" in failure and "values are NaN or infinite; a model's responses must be finite numbers" in failure


def test_wrongly_shaped_responses_are_refused(submitted):
    failure = failure_of(submitted, "shape")
    assert failure == ("the model's answer to look_at on 640 stimuli misses 630 of the 640 stimuli it was shown "
                       f"(e.g. {failure.split('(e.g. ')[1].split(')')[0]}): a model answers for exactly the stimuli it "
                       "is shown; nothing was recorded")


def test_a_plugin_searching_proc_finds_no_data(submitted, shared_data):
    failure = failure_of(submitted, "proc")
    log = submitted["tasks"]["proc"].log
    assert "searched 1 cmdline" in log  # it looked (its own namespace: the launcher and itself only)
    assert "nothing found []" in log and "FOUND" not in log
    assert "mirror holds ['imagenet16_categories.json']" in log  # the ImageNet class metadata of label readouts
    assert failure.startswith("a submission sees only its own folder (read-only), the Python environment and its "
                              "stimuli's images, and writes only in its working directory: the model raised "
                              "FileNotFoundError while answering look_at: [Errno 2] No such file or directory")


def test_asking_the_scorer_for_the_data_over_the_channel_is_refused(submitted):
    failure = failure_of(submitted, "channel")
    answers = [line for line in submitted["tasks"]["channel"].log.splitlines() if line.startswith("RESPONSES")]
    assert answers == ["RESPONSES {'call': 'exit', 'args': {}}"]  # all it got back: the order to end
    assert failure == ("the model asked the scorer for 'benchmark.assembly'; the only request a model may make is the "
                       "layer selection of the region it records from (score_layers): the benchmark's data, labels and "
                       "ceilings never cross the boundary; nothing was recorded")
