"""Plugins written in the reference Brain-Score's style (``plugin_folder/``: a ModelCommitment + PytorchWrapper
model, a NeuralBenchmark, a PropertiesBenchmark, a BenchmarkBase subclass with its own __call__ and a data plugin
packaged with package_data_assembly_locally) load through BRAINSCORE_PLUGIN_DIRS / --plugin-dir and score, through
brainscore_vision.score, ``brainscore score``, ``brainscore run`` and a website submission, what their native twins
(``native_twins/``: the same network, data and settings in brainscore's own API) score, to 1e-6.

The network is small (1,800 / 784 / 256 units at 64 pixels) and the data are Cowley et al. (2026) V4 session 210325
(640 images, 50 neurons), repackaged from the raw files by the data plugin's own packaging script.
"""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from brainscore import registry
from host_helpers import free_port

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"
PLUGINS = HERE / "plugin_folder"
TWINS = HERE / "native_twins"
MODEL, NATIVE_MODEL = "compat-smallnet", "native-smallnet"
#: reference-style benchmark -> its native twin
PAIRS = {"CompatCowley2026.210325.V4-pls": "Cowley2026.210325.V4-pls",
         "CompatCowley2026.210325.V4-pls_by_hand": "Cowley2026.210325.V4-pls",
         "CompatCowley2026.210325.V4-sparseness": "NativeCowley2026.210325.V4-sparseness"}
TOLERANCE = 1e-6


def registered_sha1s() -> dict[tuple[str, str], dict[str, str]]:
    """(registry, identifier) -> sha1s registered in the data plugin's __init__.py (read as a reviewer reads it)."""
    tree = ast.parse((PLUGINS / "data" / "compat_cowley2026" / "__init__.py").read_text())
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
            call = node.value.body
            keywords = {k.arg: ast.literal_eval(k.value) for k in call.keywords
                        if k.arg.endswith("sha1") or k.arg == "identifier"}
            found[(node.targets[0].value.id, keywords.pop("identifier"))] = keywords
    return found


@pytest.fixture(scope="module")
def plugin_dirs(shared_data):
    """The data plugin packaged (into $BRAINSCORE_HOME/packages) and both folders on BRAINSCORE_PLUGIN_DIRS."""
    sys.path.insert(0, str(PLUGINS / "data" / "compat_cowley2026"))
    try:
        import data_packaging
    finally:
        sys.path.pop(0)
    packaged = data_packaging.package(shared_data)
    saved = os.environ.get("BRAINSCORE_PLUGIN_DIRS")
    os.environ["BRAINSCORE_PLUGIN_DIRS"] = os.pathsep.join([str(PLUGINS), str(TWINS)])
    registry._discovery.reset()
    yield packaged
    if saved is None:
        os.environ.pop("BRAINSCORE_PLUGIN_DIRS", None)
    else:
        os.environ["BRAINSCORE_PLUGIN_DIRS"] = saved
    registry._discovery.reset()


def assert_equal_scores(compat: dict, native: dict, what: str) -> None:
    for key in ("score", "raw", "ceiling"):
        assert compat[key] == pytest.approx(native[key], abs=TOLERANCE), f"{what}: {key} {compat} != {native}"
    assert 0 < native["score"] < 1 and 0 < native["ceiling"] <= 1.5  # real numbers, not a vacuous 0 == 0


def values(score) -> dict:
    raw = score.attrs.get("raw")
    return {"score": float(score), "ceiling": float(score.attrs["ceiling"]),
            "raw": float(raw) if raw is not None and getattr(raw, "ndim", 0) == 0 else float(score.attrs.get(
                "raw_center", raw.mean()))}


def test_the_packaged_files_are_the_registered_ones(plugin_dirs):
    stimuli, assembly, properties = plugin_dirs
    registered = registered_sha1s()
    assert registered == {
        ("stimulus_set_registry", "CompatCowley2026.210325"): {"csv_sha1": stimuli["csv_sha1"],
                                                                "zip_sha1": stimuli["zip_sha1"]},
        ("data_registry", "CompatCowley2026.210325"): {"sha1": assembly["sha1"]},
        ("data_registry", "CompatCowley2026.210325.sparseness"): {"sha1": properties["sha1"]}}
    assert [p["cls"] for p in (assembly, properties)] == ["NeuroidAssembly", "PropertiesAssembly"]


def test_the_plugins_are_declared_without_being_imported(plugin_dirs):
    index = registry._discovery.index()
    for kind, identifier in [("model", MODEL), ("dataset", "CompatCowley2026.210325"),
                             ("stimulus_set", "CompatCowley2026.210325"), *[("benchmark", b) for b in PAIRS]]:
        assert index.modules[kind][identifier].startswith("brainscore_plugindir_"), identifier
    import brainscore_vision

    assert set(PAIRS) <= set(brainscore_vision.benchmark_registry) and MODEL in brainscore_vision.model_registry


def test_the_model_commits_its_region_layer_map_json(plugin_dirs):
    import brainscore_vision

    model = brainscore_vision.load_model(MODEL)
    assert model.region_layer_map == {"V1": "relu1", "V4": "relu2", "IT": "pool"}


@pytest.mark.parametrize("identifier", sorted(PAIRS))
def test_brainscore_vision_score_equals_the_native_twin(plugin_dirs, identifier):
    import brainscore
    import brainscore_vision

    compat = brainscore_vision.score(model_identifier=MODEL, benchmark_identifier=identifier, bootstrap=0)
    native = brainscore.score(NATIVE_MODEL, PAIRS[identifier], bootstrap=0)
    assert_equal_scores(values(compat), values(native), identifier)
    assert compat.attrs["benchmark_identifier"] == identifier and compat.attrs["layers"]["V4"] == "relu2"


def test_brainscore_score_with_plugin_dir_equals_the_native_twin(plugin_dirs, monkeypatch, capsys):
    from brainscore.cli import main

    monkeypatch.delenv("BRAINSCORE_PLUGIN_DIRS")  # the folders come from --plugin-dir alone
    registry._discovery.reset()
    results = {}
    try:
        for model, benchmarks in ((MODEL, sorted(PAIRS)), (NATIVE_MODEL, sorted(set(PAIRS.values())))):
            for benchmark in benchmarks:
                assert main(["score", "--model", model, "--benchmark", benchmark, "--bootstrap", "0", "--no-record",
                             "--json", "--plugin-dir", str(PLUGINS), "--plugin-dir", str(TWINS)]) == 0
                results[benchmark] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    finally:
        monkeypatch.setenv("BRAINSCORE_PLUGIN_DIRS", os.pathsep.join([str(PLUGINS), str(TWINS)]))
        registry._discovery.reset()
    for benchmark, twin in PAIRS.items():
        assert_equal_scores(results[benchmark], results[twin], benchmark)


def test_brainscore_layers_with_plugin_dir_scores_the_committed_layer_as_score_does(plugin_dirs, monkeypatch, capsys):
    import brainscore
    from brainscore.cli import main

    monkeypatch.delenv("BRAINSCORE_PLUGIN_DIRS")
    registry._discovery.reset()
    try:
        assert main(["layers", "--model", MODEL, "--benchmark", "CompatCowley2026.210325.V4-pls", "--json",
                     "--plugin-dir", str(PLUGINS)]) == 0
        rows = json.loads(capsys.readouterr().out)
    finally:
        monkeypatch.setenv("BRAINSCORE_PLUGIN_DIRS", os.pathsep.join([str(PLUGINS), str(TWINS)]))
        registry._discovery.reset()
    assert [(r["layer"], r["committed"]) for r in rows] == [("relu1", False), ("relu2", True), ("pool", False)]
    native = brainscore.score(NATIVE_MODEL, "Cowley2026.210325.V4-pls", bootstrap=0)
    assert_equal_scores(rows[1], values(native), "layers relu2")


def test_the_plugins_own_tests_pass(plugin_dirs):
    """Each plugin's test.py, as its author runs it (pytest, the plugin folder on BRAINSCORE_PLUGIN_DIRS)."""
    tests = [str(PLUGINS / kind / name / "test.py") for kind, name in
             (("models", "compat_smallnet"), ("data", "compat_cowley2026"), ("benchmarks", "cowley2026_v4_benchmarks"))]
    env = {**os.environ, "PYTHONPATH": str(SRC), "BRAINSCORE_PLUGIN_DIRS": str(PLUGINS)}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "--noconftest", "--import-mode=importlib",
                             "-p", "no:cacheprovider", "-m", "not slow", *tests], env=env, capture_output=True,
                            text=True, timeout=600, cwd=HERE)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"\b4 passed, 1 deselected\b", result.stdout), result.stdout


@pytest.mark.slow
def test_the_reference_shaped_plugins_score_the_same_through_the_boundary(plugin_dirs):
    """Issue 32: the reference-shaped model (a ModelCommitment of a PytorchWrapper) in a sandboxed model server, the
    reference-shaped benchmarks (a NeuralBenchmark, a PropertiesBenchmark, a BenchmarkBase subclass with its own
    ``__call__``) in this process: every score bit for bit what the same plugins give in-process."""
    import brainscore
    from brainscore.boundary import Limits, ModelServer

    here = {benchmark: brainscore.score(MODEL, benchmark, bootstrap=0) for benchmark in PAIRS}
    with ModelServer(MODEL, Limits(memory=4 * 1024**3, wall=900)) as server:
        there = {benchmark: brainscore.score(MODEL, benchmark, bootstrap=0, model=server.model) for benchmark in PAIRS}
    for benchmark in PAIRS:
        assert values(there[benchmark]) == values(here[benchmark]), benchmark
        assert 0 < float(here[benchmark]) and here[benchmark].attrs["layers"] == there[benchmark].attrs["layers"]


@pytest.mark.slow
def test_brainscore_run_with_plugin_dir_equals_the_native_twins(plugin_dirs, tmp_path):
    """``brainscore run`` on its Dask workers (which receive the folders through the environment)."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "BRAINSCORE_DB_URL": f"sqlite:///{tmp_path / 'run.sqlite'}"}
    env.pop("BRAINSCORE_PLUGIN_DIRS")
    benchmarks = ",".join(sorted(set(PAIRS) | set(PAIRS.values())))
    result = subprocess.run([sys.executable, "-m", "brainscore", "run", "--models", f"{MODEL},{NATIVE_MODEL}",
                             "--benchmarks", benchmarks, "--workers", "1", "--json", "--no-progress",
                             "--plugin-dir", str(PLUGINS), "--plugin-dir", str(TWINS)],
                            env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    by_pair = {(r["model"], r["benchmark"]): r for r in rows}
    for benchmark, twin in PAIRS.items():
        assert_equal_scores(by_pair[(MODEL, benchmark)], by_pair[(NATIVE_MODEL, twin)], f"run {benchmark}")


@pytest.mark.slow
@pytest.mark.nightly  # a real server and its sandbox on a real pair (5 min on 2 cores); the twins' equality
# through `brainscore run --plugin-dir` runs in every CI run
def test_a_website_submission_of_the_reference_model_folder_equals_the_native_twins(plugin_dirs, tmp_path):
    """``brainscore serve`` with the benchmark and data plugins on its plugin_dirs; the model folder is zipped and
    submitted with ``brainscore submit``; its scores equal the native twins' (scored here). The submitted copy also
    requires a package the server lacks (a wheel in a local folder, PIP_FIND_LINKS): its scoring children run in the
    environment made for it."""
    import brainscore
    from browser_helpers import wait_until_serving
    from web_helpers import upload_token
    from test_environments import wheel

    server_plugins = tmp_path / "server_plugins"  # benchmarks and data only: the model comes by submission
    for kind in ("benchmarks", "data"):
        shutil.copytree(PLUGINS / kind, server_plugins / kind, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(TWINS / "benchmarks", server_plugins / "benchmarks", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    submitted = tmp_path / "submitted" / "compat_smallnet"
    shutil.copytree(PLUGINS / "models" / "compat_smallnet", submitted, ignore=shutil.ignore_patterns("__pycache__"))
    with open(submitted / "requirements.txt", "a") as requirements:
        requirements.write("compat-webwheel==1.0\n")
    model_code = (submitted / "model.py").read_text()
    (submitted / "model.py").write_text(model_code.replace("import torch\n", "import torch\n\nimport compat_webwheel  # noqa: F401\n", 1))
    (tmp_path / "wheels").mkdir()
    wheel(tmp_path / "wheels", "compat-webwheel", "1.0", "VALUE = 1\n")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(SRC), "BRAINSCORE_PLUGIN_DIRS": str(server_plugins), "PIP_NO_INDEX": "1",
           "PIP_FIND_LINKS": str(tmp_path / "wheels")}
    log = open(tmp_path / "server.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "brainscore", "serve", "--port", str(port), "--db",
                               f"sqlite:///{tmp_path / 'web.sqlite'}", "--workers", "1", "--time-limit-s", "600",
                               "--allow-package", "compat-webwheel"],
                              env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until_serving(url, server, tmp_path / "server.log")
        token = upload_token(url, "ref-user")
        result = subprocess.run([sys.executable, "-m", "brainscore", "submit", str(submitted),
                                 "--server", url, "--token", token, "--benchmarks", ",".join(sorted(PAIRS)), "--wait", "--json"],
                                env=env, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, result.stdout + result.stderr + (tmp_path / "server.log").read_text()[-3000:]
        body = json.loads(result.stdout[result.stdout.index("{"):])
        assert body["status"] == "done", body
        environments = list((Path(os.environ["BRAINSCORE_HOME"]) / "submissions" / "environments").glob("*/bin/python"))
        assert len(environments) == 1  # made for compat-webwheel, used by the scoring children
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    for benchmark, twin in PAIRS.items():
        native = brainscore.score(NATIVE_MODEL, twin, bootstrap=0)
        submitted = body["results"][f"{MODEL}|{benchmark}"]
        assert submitted["status"] == "done"
        assert submitted["score"] == pytest.approx(float(native), abs=TOLERANCE), benchmark
