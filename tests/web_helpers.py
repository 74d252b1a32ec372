"""What the website's tests share: zips (the example plugin of docs/examples and hostile archives), scored models in a
results database, and registering or reading a form's CSRF token through a test client."""
from __future__ import annotations

import io
import re
import stat
import zipfile
from pathlib import Path

from brainscore.metrics.score import Score
from brainscore.results import Database, record
from brainscore.scoring.outcome import Outcome

EXAMPLE_PLUGIN = Path(__file__).resolve().parent.parent / "docs" / "examples" / "my_tiny_net"
BENCHMARK = "Cowley2026.210325.V4-pls"
PASSWORD = "correct horse"
"""The password of every account the website's tests register through the form."""


def add_scored_model(store: Database, model: str, value: float, *, owner: str = "alice", public: bool = True,
                     provenance: dict | None = None) -> None:
    """Add ``model`` of ``owner`` to ``store`` with one score ``value`` on :data:`BENCHMARK` (error 0.01, ceiling
    0.8, raw ``0.8 * value``, V4 mapped to layer ``"3"``; ``provenance`` attached when given)."""
    store.add_model(model, owner=owner, public=public)
    extra = {} if provenance is None else {"provenance": provenance}
    record(Outcome.from_score(Score.of(value, error=0.01, raw=value * 0.8, ceiling=0.8, model_identifier=model,
                                       benchmark_identifier=BENCHMARK, layers={"V4": "3"}, **extra)), store)


def csrf(client, page: str = "/login") -> str:
    """The CSRF token of the first form on ``page``, as ``client`` (a TestClient or an httpx.Client) gets it."""
    return re.search(r'name="csrf_token" value="([^"]+)"', client.get(page).text).group(1)


def register(app, name: str, *, email: str | None = None):
    """Register ``name`` (password :data:`PASSWORD`, address ``email`` or ``name@example.org``) through the form
    of ``app``, asserting the redirect (303) that means success; return the logged-in TestClient."""
    from fastapi.testclient import TestClient

    client = TestClient(app)
    response = client.post("/register", data={"username": name, "password": PASSWORD,
                                              "email": email or f"{name}@example.org", "csrf_token": csrf(client)},
                           follow_redirects=False)
    assert response.status_code == 303, response.text
    return client


def upload_token(url: str, name: str) -> str:
    """Register ``name`` on the running server at ``url`` (an httpx client through the form) and return a new upload
    token of the account (what ``brainscore submit --token`` takes)."""
    import httpx

    with httpx.Client(base_url=url) as client:
        client.post("/register", data={"username": name, "password": PASSWORD, "email": f"{name}@example.org",
                                       "csrf_token": csrf(client, "/register")})
        page = client.post("/account/tokens", data={"csrf_token": csrf(client, "/account")}).text
    return re.search(r'id="token">([^<]+)<', page).group(1)


def plugin_zip(identifier: str = "my-tiny-net", package: str = "my_tiny_net", extra: dict | None = None) -> bytes:
    """The tiny network of docs/models.md as a plugin zip, registering ``identifier`` in folder ``package``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(EXAMPLE_PLUGIN.iterdir()):
            if path.is_file() and f"{package}/{path.name}" not in (extra or {}):
                text = path.read_text()
                if path.name == "__init__.py":
                    text = text.replace('"my-tiny-net"', repr(identifier).replace("'", '"'))
                archive.writestr(f"{package}/{path.name}", text)
        for name, content in (extra or {}).items():
            archive.writestr(name, content)
    return buffer.getvalue()


def zip_bomb(megabytes: int = 20) -> bytes:
    """A valid plugin plus one entry of zeros that deflates about 1000-fold."""
    buffer = io.BytesIO(plugin_zip(identifier="bomb-net", package="bomb_net"))
    with zipfile.ZipFile(buffer, "a", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bomb_net/weights.bin", b"\0" * (megabytes * 2**20))
    return buffer.getvalue()


def traversal_zip() -> bytes:
    """A plugin with an entry that climbs out of its folder."""
    return plugin_zip(identifier="evil-net", package="evil_net", extra={"evil_net/../../evil.py": "print('owned')"})


def symlink_zip() -> bytes:
    """A plugin with a symbolic link to /etc/passwd."""
    buffer = io.BytesIO(plugin_zip(identifier="link-net", package="link_net"))
    with zipfile.ZipFile(buffer, "a") as archive:
        info = zipfile.ZipInfo("link_net/weights.pt")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def approving_app(tmp_path):
    """A website (no scoring worker) whose approvals may add plugin folders: yields the app, then puts
    ``BRAINSCORE_PLUGIN_DIRS`` back as it was and forgets the plugins found (an approval adds its folder there)."""
    import os

    from brainscore import registry
    from brainscore.web import create_app

    before = os.environ.get("BRAINSCORE_PLUGIN_DIRS")
    yield create_app(db_url=f"sqlite:///{tmp_path / 'results.sqlite'}", root=tmp_path / "submissions",
                     start_worker=False)
    if before is None:
        os.environ.pop("BRAINSCORE_PLUGIN_DIRS", None)
    else:
        os.environ["BRAINSCORE_PLUGIN_DIRS"] = before
    registry._discovery.reset()
