"""The website takes a zip of a reference plugin folder: a requirement the server lacks is installed as a wheel
into the submission's environment before it is queued (and its child runs that environment's interpreter); one
that cannot be installed rejects the submission, naming the package. pip sees only a folder of wheels made here."""
from __future__ import annotations

import io
import re
import zipfile

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from brainscore.web import create_app, environments
from brainscore.web.queue import SubmissionTask
from test_environments import wheel
from web_helpers import csrf, register

BENCHMARK = "Cowley2026.210325.V4-pls"
INIT = """from brainscore_vision import model_registry
from .model import build

model_registry['compat-req-net'] = build
"""


def reference_zip(requirements: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("models/compat_req_net/__init__.py", INIT)
        archive.writestr("models/compat_req_net/model.py", "def build():\n    import compat_reqwheel\n")
        archive.writestr("models/compat_req_net/requirements.txt", requirements)
    return buffer.getvalue()


@pytest.fixture
def client(tmp_path, monkeypatch):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    wheel(wheels, "compat-reqwheel", "1.0", "VALUE = 7\n")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    app = create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                     start_worker=False)
    client = register(app, "ref")
    page = client.post("/account/tokens", data={"csrf_token": csrf(client, "/account")}).text
    token = re.search(r'id="token">([^<]+)<', page).group(1)
    anonymous = TestClient(app)
    anonymous.headers["Authorization"] = f"Bearer {token}"
    anonymous.app_root = tmp_path / "submissions"
    return anonymous


def test_a_missing_wheel_is_installed_before_the_submission_is_queued(client):
    response = client.post("/api/submissions", files={"file": ("net.zip", reference_zip("numpy\ncompat-reqwheel==1.0\n"))},
                           data={"benchmarks": BENCHMARK})
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["requirements"] == ["numpy", "compat-reqwheel==1.0"]
    root = client.app_root / "environments"
    python = environments.python_for(body["requirements"], root)
    assert python == str(root / environments.environment_key(["compat-reqwheel==1.0"]) / "bin" / "python")
    # the sandboxed child runs as an unprivileged user: the environment must be readable and runnable by it
    assert (root / environments.environment_key(["compat-reqwheel==1.0"])).stat().st_mode & 0o777 == 0o755
    with Session(client.app.state.engine) as session:
        task = session.query(SubmissionTask).filter_by(key=body["id"]).one()  # ids in the API are the unguessable keys
        assert task.status == "queued" and task.models == ["compat-req-net"]


def test_a_requirement_that_cannot_be_installed_rejects_the_submission_naming_it(client):
    response = client.post("/api/submissions",
                           files={"file": ("net.zip", reference_zip("compat-reqwheel==1.0\ncompat-nowhere==3\n"))},
                           data={"benchmarks": BENCHMARK})
    assert response.status_code == 400
    problems = response.json()["problems"]
    assert len(problems) == 1 and problems[0].startswith("requirements.txt: 'compat-nowhere==3' cannot be installed")
    with Session(client.app.state.engine) as session:
        assert session.query(SubmissionTask).count() == 0  # nothing queued
