"""Database fixtures for every test (``tests/conftest.py`` loads this module as a plugin): the same tests on
SQLite and on a real, throw-away PostgreSQL server (:mod:`postgres_server`)."""
from __future__ import annotations

import itertools

import pytest

from postgres_server import PostgresServer, PostgresUnavailable

_names = itertools.count()


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL server for the session; fails (never skips) when it cannot start."""
    try:
        server = PostgresServer().start()
    except PostgresUnavailable as error:
        pytest.fail(f"the PostgreSQL database tests need a server and none could be started: {error}", pytrace=False)
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    """A fresh, empty results database URL on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'results.sqlite'}"
    return request.getfixturevalue("postgres").create_database(f"test_{next(_names)}")
