"""The website takes a zip of a reference plugin folder whose requirements.txt names allowed packages only: the
upload returns at once and installs nothing; a requirement the server lacks is installed as a wheel by the queue
before the submission's first pair (and its child runs that environment's interpreter); one that cannot be
installed fails the pair, naming the package. A package that is not allowed, or another version of one the server
has, is refused at upload with the reason. pip sees only a folder of wheels made here."""
from __future__ import annotations

import io
import re
import zipfile

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from brainscore.web import checks, create_app, environments
from brainscore.web.queue import SubmissionTask, run_pair
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
                     start_worker=False,
                     allowed_requirements={*checks.ALLOWED_REQUIREMENTS, "compat-reqwheel", "compat-nowhere"})
    client = register(app, "ref")
    page = client.post("/account/tokens", data={"csrf_token": csrf(client, "/account")}).text
    token = re.search(r'id="token">([^<]+)<', page).group(1)
    anonymous = TestClient(app)
    anonymous.headers["Authorization"] = f"Bearer {token}"
    anonymous.app_root = tmp_path / "submissions"
    return anonymous


def test_a_missing_wheel_is_installed_by_the_queue_not_by_the_upload(client, monkeypatch):
    def no_pip(*args):
        raise AssertionError("pip ran inside the upload's request")

    with monkeypatch.context() as patched:
        patched.setattr(environments, "_build", no_pip)
        response = client.post("/api/submissions",
                               files={"file": ("net.zip", reference_zip("numpy\ncompat-reqwheel==1.0\n"))},
                               data={"benchmarks": BENCHMARK})
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["requirements"] == ["numpy", "compat-reqwheel==1.0"]
    root = client.app_root / "environments"
    assert not root.exists() or not any(root.iterdir())  # nothing installed yet
    with Session(client.app.state.engine) as session:
        task = session.query(SubmissionTask).filter_by(key=body["id"]).one()  # ids in the API are the unguessable keys
        assert task.status == "queued" and task.models == ["compat-req-net"]
        assert "requirements: numpy, compat-reqwheel==1.0 (to install as wheels before scoring: " \
               "compat-reqwheel==1.0)" in task.log
    # the queue's step: the Dask task of the first pair builds it
    python = environments.python_for(body["requirements"], root)
    assert python == str(root / environments.environment_key(["compat-reqwheel==1.0"]) / "bin" / "python")
    # the sandboxed child runs as an unprivileged user: the environment must be readable and runnable by it
    assert (root / environments.environment_key(["compat-reqwheel==1.0"])).stat().st_mode & 0o777 == 0o755


def test_a_requirement_that_cannot_be_installed_fails_its_pairs_naming_it(client):
    response = client.post("/api/submissions",
                           files={"file": ("net.zip", reference_zip("compat-reqwheel==1.0\ncompat-nowhere==3\n"))},
                           data={"benchmarks": BENCHMARK})
    assert response.status_code == 201, response.text
    with Session(client.app.state.engine) as session:
        task = session.query(SubmissionTask).filter_by(key=response.json()["id"]).one()
    result = run_pair(str(client.app.state.store.url), task.id, 1, "compat-req-net", BENCHMARK)
    assert result["status"] == "failed"
    assert result["failure"].startswith("requirements.txt: 'compat-nowhere==3' cannot be installed")
    with Session(client.app.state.engine) as session:
        task = session.get(SubmissionTask, task.id)
        assert "installing compat-reqwheel==1.0, compat-nowhere==3 (wheels only" in task.log
        assert task.results[f"compat-req-net|{BENCHMARK}"] == result


def test_a_package_off_the_allow_list_is_refused_at_once_with_the_list(client, monkeypatch):
    """tensorflow==2.15 was accepted and pip built a 1.7 GB environment while the upload's POST hung ~10 minutes."""
    monkeypatch.setattr(environments, "_build", lambda *a: pytest.fail("pip ran for a refused package"))
    response = client.post("/api/submissions", files={"file": ("net.zip", reference_zip("tensorflow==2.15\n"))},
                           data={"benchmarks": BENCHMARK})
    assert response.status_code == 400
    allowed = ", ".join(sorted(client.app.state.site.allowed_requirements))
    assert response.json()["problems"] == [
        f"requirements.txt asks for 'tensorflow', which is not on the server's allow-list ({allowed}); leave it "
        f"out, or ask the site's administrators to allow it"]
    import numpy

    older = client.post("/api/submissions", files={"file": ("net.zip", reference_zip("numpy<2\n"))},
                        data={"benchmarks": BENCHMARK})
    assert older.status_code == 400 and older.json()["problems"][0].startswith(
        f"requirements.txt asks for 'numpy<2', but the server has numpy {numpy.__version__}")
    with Session(client.app.state.engine) as session:
        assert session.query(SubmissionTask).count() == 0  # nothing queued


def upload_requirements(client, text: str):
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("models/compat_req_net/__init__.py", INIT)
        archive.writestr("models/compat_req_net/model.py", "def build():\n    import compat_reqwheel\n")
        archive.writestr("models/compat_req_net/requirements.txt", text)
    return client.post("/api/submissions", files={"file": ("net.zip", zipped.getvalue())}, data={"benchmarks": BENCHMARK})


@pytest.mark.parametrize("text, problem", [
    ("numpy\n" * 100_000, f"requirements.txt has {100_000 * 6:,} bytes; the limit is 16 KiB"),
    ("#\n" * 100_000, "requirements.txt has 200,000 bytes; the limit is 16 KiB"),
    ("\n" * 10_000, "requirements.txt has 10,000 lines; the limit is 200"),
], ids=["100000-requirements", "100000-comments", "10000-blank-lines"])
def test_a_huge_requirements_file_is_refused_before_it_is_parsed(client, text, problem):
    """A 2 KB upload whose requirements.txt had 100,000 lines took 99.6 s of the web process's CPU."""
    import time

    started = time.process_time()
    response = upload_requirements(client, text)
    spent = time.process_time() - started
    assert response.status_code == 400 and response.json()["problems"] == [
        problem + " (name the packages the plugin imports, one a line)"]
    assert spent < 5, spent  # CPU of this process (the app runs in it): 99.6 s before


def test_extras_are_refused_and_names_compare_as_pep_503_says(client):
    extras = upload_requirements(client, "pandas[all]\n")
    assert extras.status_code == 400 and extras.json()["problems"] == [
        "requirements.txt: 'pandas[all]' asks for extras (all), which install further packages; extras are not "
        "supported: name each package you need (from the allow-list) on a line of its own, e.g. pandas"]
    # scikit.learn and Scikit_Learn are scikit-learn (PEP 503), which is allowed
    for spelling in ("scikit.learn", "Scikit_Learn"):
        assert checks._normalise(spelling) == "scikit-learn"
        found = checks.check_zip(reference_zip(f"{spelling}\n"), allowed=client.app.state.site.allowed_requirements)
        assert found.requirements == [spelling]
