"""Shared test fixtures.

The tests use the real published data in ``../shared/data`` (override with
``BRAINSCORE_TEST_DATA``) as the data mirror, and a fresh ``BRAINSCORE_HOME`` and configuration folder
(``XDG_CONFIG_HOME``) per test session,
so nothing outside the session's temporary folder is read from or written to a cache.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import brainscore

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("BRAINSCORE_TEST_DATA", REPO.parent / "shared" / "data")).resolve()

pytest_plugins = ["database_fixtures"]  # ``db_url`` (SQLite and PostgreSQL) and ``postgres`` for any test


@pytest.fixture(scope="session", autouse=True)
def brainscore_environment(tmp_path_factory):
    """Point the store at a session-scoped home and the mirror at the shared data."""
    if not SHARED_DATA.is_dir():
        pytest.exit(f"the real data folder {SHARED_DATA} is missing; set BRAINSCORE_TEST_DATA", returncode=2)
    home = tmp_path_factory.mktemp("brainscore_home")
    saved = {k: os.environ.get(k) for k in ("BRAINSCORE_HOME", "BRAINSCORE_DATA_MIRROR", "BRAINSCORE_OFFLINE",
                                             "XDG_CONFIG_HOME", "BRAINSCORE_DB_URL")}
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("xdg_config"))  # never the user's config file
    os.environ["BRAINSCORE_HOME"] = str(home)
    os.environ.pop("BRAINSCORE_DB_URL", None)  # results go to the session home's results.sqlite
    os.environ["BRAINSCORE_DATA_MIRROR"] = str(SHARED_DATA)
    os.environ["BRAINSCORE_OFFLINE"] = "1"
    yield home
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


#: What a Dask nanny writes into the environment of the process that starts its workers: distributed's
#: ``WorkerProcess.start`` updates ``os.environ`` with ``distributed.nanny.pre-spawn-environ`` (OMP_NUM_THREADS=1,
#: MALLOC_TRIM_THRESHOLD_=65536, ...) and PYTHONHASHSEED before it spawns, and our LocalCluster adds the lone
#: process's variables (:func:`brainscore.runner.workers.lone_environment`).
NANNY_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MALLOC_TRIM_THRESHOLD_",
                   "PYTHONHASHSEED", "OMP_WAIT_POLICY", "BRAINSCORE_TORCH_THREADS")


@pytest.fixture(scope="module", autouse=True)
def no_nanny_environment_between_files():
    """Undo what a test file's in-process Dask nannies wrote into this process's environment, when the file ends.

    Every later test starts its subprocesses (``brainscore run``, ``dask worker``) with this environment: a
    cluster started by an earlier file (``test_watch.py``) once left OMP_NUM_THREADS=1 here, and the plain
    ``dask worker`` test of ``test_every_cluster.py`` then saw its client ask the workers for 1 BLAS thread.
    """
    saved = {name: os.environ.get(name) for name in NANNY_VARIABLES}
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture
def weights_mirror(tmp_path, monkeypatch) -> Path:
    """An empty weights mirror (setting ``weights_mirror``) for one test, with no stand-in weights allowed."""
    folder = tmp_path / "weights"
    folder.mkdir()
    monkeypatch.setenv("BRAINSCORE_WEIGHTS_MIRROR", str(folder))
    monkeypatch.delenv("BRAINSCORE_STAND_INS", raising=False)
    return folder


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of real published data."""
    return SHARED_DATA


@pytest.fixture(scope="session")
def images92():
    return brainscore.load_stimulus_set("Kriegeskorte2008")


@pytest.fixture(scope="session")
def pixels92(images92):
    from benchmark_helpers import pixel_features

    return pixel_features(images92)
