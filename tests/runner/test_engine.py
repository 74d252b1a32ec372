"""A run on a LocalCluster of worker processes: the same scores as one after the other, even when a worker dies.

Small fast cases on real benchmarks: the pixel baseline and a tiny seeded network (``runner_helpers``,
imported by every worker with ``preload``) on an RSA, a PLS and a label benchmark. Each side starts
from its own empty cache, so the Dask side really extracts, selects and computes ceilings on workers.
"""
import os
import signal
import threading
import time
from pathlib import Path

import pytest

import brainscore

from brainscore import runner
from brainscore.runner import clusters

TESTS = Path(__file__).resolve().parent.parent
BENCHMARKS = "Kriegeskorte2008.IT-rdm,Geirhos2021edge-top1,Cowley2026.210325.V4-pls"
# the tiny network on all three, the pixel baseline where it is fast (RSA) and where it fails (no logits)
GRID = ("tiny-seeded", BENCHMARKS), ("pixels", "Kriegeskorte2008.IT-rdm,Geirhos2021edge-top1")
FIELDS = ("model", "benchmark", "status", "score", "raw", "ceiling", "error", "layer")


@pytest.fixture
def worker_environment(tmp_path, monkeypatch):
    """Workers import the test plugin and use a cache of their own, empty."""
    import runner_helpers  # noqa: F401 - registers tiny-seeded in this process too

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "dask-home"))
    return tmp_path


def sequential(tmp_path, monkeypatch, pairs):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "sequential-home"))
    monkeypatch.delenv("BRAINSCORE_TEST_FORWARD_SLEEP", raising=False)
    return runner.run_sequential(pairs)


def table(summaries):
    """One row per pair; floats as ``float.hex`` so that rows compare equal only when bit-identical."""
    return [tuple(float.hex(v) if isinstance(v, float) else v for v in (s[k] for k in FIELDS)) for s in summaries]


# nightly while a two-worker CI run can stall it: alone it passes in 72 s; beside another test file's real server
# (pytest -n 2) the nanny's replacement of the killed worker registered only when the cluster closed, 15 minutes later
# (2026-11-29); the cause is not yet found (docs/development.md)
@pytest.mark.nightly
def test_a_worker_killed_mid_task_is_retried_and_the_table_equals_a_sequential_run_bit_for_bit(
        worker_environment, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_TEST_FORWARD_SLEEP", "0.1")  # seconds per batch: tasks last long enough to kill
    pairs = [pair for models, benchmarks in GRID for pair in runner.pairs(models, benchmarks)]
    from distributed import Client

    cluster = clusters.local_cluster(3, preload=["runner_helpers"])
    client = Client(cluster)
    out: dict = {}
    try:
        thread = threading.Thread(target=lambda: out.update(results=runner.run(pairs, client, progress=False)))
        thread.start()
        killed = None
        deadline = time.monotonic() + 300
        while killed is None and time.monotonic() < deadline and thread.is_alive():
            for address, keys in client.processing().items():
                if any(key[0] in ("brainscore-activations", "brainscore-score") for key in keys):
                    pid = client.run(os.getpid, workers=[address])[address]
                    os.kill(pid, signal.SIGKILL)
                    killed = pid
                    break
            time.sleep(0.2)
        thread.join(900)
    finally:
        client.close()
        cluster.close()
    assert killed is not None, "no model task was seen running to kill"
    with pytest.raises(ProcessLookupError):
        os.kill(killed, 0)
    results = out["results"]
    assert [r["status"] for r in results] == ["done", "done", "done", "done", "failed"]
    assert "logits of shape (n_images, 1000)" in results[4]["failure"]  # pixels have no ImageNet logits
    expected = sequential(worker_environment, monkeypatch, pairs)
    # bit for bit: workers run torch and BLAS on as many threads as this process (clusters.worker_environment)
    assert table(results) == table(expected)
    assert results[0]["score"] == pytest.approx(0.07986019888403255, abs=0)  # tiny-seeded on Kriegeskorte


def test_pairs_already_recorded_are_skipped_and_rerun_forces_them(worker_environment, monkeypatch):
    store = runner.open_outcome_store(worker_environment / "records.jsonl")
    pairs = runner.pairs("tiny-seeded", "Kriegeskorte2008.IT-rdm,Geirhos2021edge-top1")
    first = runner.run_sequential(pairs, store=store)
    assert [r["status"] for r in first] == ["done", "done"]
    seen = []
    again = runner.run_sequential(pairs, store=store, on_result=seen.append)
    assert [r["status"] for r in again] == ["skipped", "skipped"]
    assert [r["score"] for r in again] == [r["score"] for r in first]
    assert len(seen) == 2
    forced = runner.run_sequential(pairs[:1], store=store, rerun=True)
    assert forced[0]["status"] == "done" and forced[0]["score"] == first[0]["score"]
    assert len(store.path.read_text().splitlines()) == 3


def run_on_two_workers(pairs):
    """``pairs`` run on a LocalCluster of 2 worker processes (which import the test plugin)."""
    from distributed import Client

    cluster = clusters.local_cluster(2, preload=["runner_helpers"])
    client = Client(cluster)
    try:
        return runner.run(pairs, client, progress=False)
    finally:
        client.close()
        cluster.close()


@pytest.mark.slow  # every benchmark but the V1 gratings, twice from an empty cache (150,528 features per image)
# nightly: 1,228 s in the two-worker CI run. It failed there once: the Dask workers' pixels score on
# Cowley2026.190923.V4-pls was 0x1.a0754c0950e0ap-6, the in-process one 0x1.a07544337cd64p-6 (7th digit). Cause:
# test_watch.py's plain LocalCluster, on the same xdist worker before, left OMP_NUM_THREADS=1 in this process's
# environment (a nanny writes Dask's pre-spawn-environ into its parent), which the workers then took as the lone
# process's setting; with OMP_NUM_THREADS=1 set the pair gives exactly those two values, without it they are equal.
# tests/conftest.py now undoes it after every file; test_every_cluster.py checks Dask against brainscore score on
# one pair in every run
@pytest.mark.nightly
def test_run_on_every_benchmark_gives_the_scores_of_brainscore_score(worker_environment, monkeypatch):
    """pixels on the 17 benchmarks of the photographs and V4 images: a Dask run equals sequential scoring bit for bit.

    Left out only for CI time: the Marques 2020 V1 benchmarks (pixels' V1 recording is a 5.5 GB activation file) and
    three of the four Geirhos 2019 instructed benchmarks (their readouts on 150,528 pixel features take 1-3.5 min
    each, twice); the shape accuracy-distance one keeps the fitted readout's path in the comparison.
    EfficientNet-Lite0: :func:`test_efficientnet_lite0_run_equals_brainscore_score_bit_for_bit`.
    """
    benchmarks = [b for b in brainscore.list_benchmarks() if not b.startswith("Marques2020")
                  and (not b.startswith("Geirhos2019") or b == "Geirhos2019shapeinstructed-accuracy_distance")]
    pairs = runner.pairs("pixels", ",".join(benchmarks))
    results = run_on_two_workers(pairs)
    assert len(results) == len(pairs) == 17
    expected = sequential(worker_environment, monkeypatch, pairs)
    assert table(results) == table(expected)  # bit for bit (float.hex)
    for result, alone in zip(results, expected):
        assert result.get("failure") == alone.get("failure")


#: A PLS, an RSA and a label benchmark: 640 + 92 + 160 images through EfficientNet-Lite0.
LITE0_BENCHMARKS = ("Cowley2026.210325.V4-pls", "Kriegeskorte2008.IT-rdm", "Geirhos2021edge-top1")


@pytest.mark.slow  # EfficientNet-Lite0 over 892 images, twice from an empty cache
def test_efficientnet_lite0_run_equals_brainscore_score_bit_for_bit(worker_environment, monkeypatch):
    """``brainscore run`` on 2 workers gives each pair the score of a ``brainscore score`` process, to the last bit.

    float32 convolutions sum in an order that depends on torch's thread count, and the metric's BLAS products
    on BLAS's: the workers compute with the thread counts of a lone process (``clusters.worker_environment``),
    so even EfficientNet-Lite0's neural scores match (with 1 thread per worker they differed at ~1e-7).
    """
    import json
    import subprocess
    import sys

    pairs = runner.pairs("efficientnet-lite0", ",".join(LITE0_BENCHMARKS))
    results = run_on_two_workers(pairs)
    env = {**os.environ, "BRAINSCORE_HOME": str(worker_environment / "score-home")}
    env.pop("BRAINSCORE_TORCH_THREADS", None)  # what a user's shell has: the default, every usable core
    for result, benchmark in zip(results, LITE0_BENCHMARKS):
        assert result["status"] == "done", result.get("log")
        out = subprocess.run([sys.executable, "-m", "brainscore", "score", "--model", "efficientnet-lite0",
                              "--benchmark", benchmark, "--json", "--no-record"], env=env, capture_output=True,
                             text=True, timeout=1800)
        assert out.returncode == 0, out.stderr
        alone = json.loads(out.stdout.splitlines()[-1])
        assert table([result]) == table([alone]), benchmark  # float.hex of score, raw, ceiling, error


class FakeDatabase:
    """The documented surface of brainscore.results.Database that the runner uses, in memory."""

    def __init__(self):
        self.rows = []

    identity = "fake://memory"

    def record(self, outcome, submission_id=None):
        from types import SimpleNamespace

        self.rows.append(SimpleNamespace(model=outcome.model, benchmark=outcome.benchmark, status=outcome.status,
                                         score=outcome.score, raw=outcome.raw, ceiling=outcome.ceiling,
                                         error=outcome.error, ci95=outcome.ci95, layers=outcome.layers,
                                         failure=outcome.failure, log=outcome.log, provenance=dict(outcome.provenance),
                                         provenance_key=outcome.provenance_key, benchmark_version=1))
        return len(self.rows)

    def scores(self, model=None, benchmark=None, include_failed=False):
        return [r for r in self.rows if r.model == model and r.benchmark == benchmark
                and (include_failed or r.status == "done")]


def test_the_database_backend_records_scores_and_failures_and_skips_by_run_key():
    from brainscore.results.records import DatabaseOutcomeStore

    database = FakeDatabase()
    store = DatabaseOutcomeStore(database)
    pairs = runner.pairs("tiny-seeded,pixels", "Kiani2007.IT-rdm,Geirhos2021edge-top1")
    import runner_helpers  # noqa: F401

    first = runner.run_sequential(pairs, store=store)
    assert [r["status"] for r in first] == ["done", "done", "done", "failed"]
    assert [r.status for r in database.rows] == ["done", "done", "done", "failed"]
    assert database.rows[3].log.startswith("Traceback") and "ValidationError" in database.rows[3].failure
    assert len({r.provenance["run_key"] for r in database.rows}) == 4
    again = runner.run_sequential(pairs, store=store)
    assert [r["status"] for r in again] == ["skipped", "skipped", "skipped", "failed"]  # failures are retried
    assert [r["score"] for r in again[:3]] == [r["score"] for r in first[:3]]
