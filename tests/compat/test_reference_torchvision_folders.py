"""The reference's ``models/alexnet`` and ``models/resnet18_random`` folders, unchanged, score through ``brainscore
score``, ``brainscore run`` and a website submission exactly as brainscore's own untrained torchvision networks
(issue 31).

``alexnet`` builds ``torchvision.models.alexnet(pretrained=True)``: its weights come from the weights mirror
(``weights_mirror``), where the test puts the untrained AlexNet (torch seed 0, brainscore's) under the official file
name ``alexnet-owt-7be5be79.pth``; it cannot have the published sha256 prefix, so it is declared a stand-in by its
own sha256 (``stand_ins``). ``resnet18_random`` builds ``resnet18(pretrained=False)``, which brainscore builds under
torch seed 0 as it builds ``torchvision:resnet18-untrained``. Each plugin score equals the native model's with the same
layer committed (``features.12`` for IT, the folder's region_layer_map; ``layer4`` of the plugin is ``layer4.1`` of
the native list: the same tensor), each computed in a home of its own (no shared cache).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from host_helpers import free_port

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SRC = ROOT / "src"
BENCHMARK = "Kriegeskorte2008.IT-rdm"  # 92 images: the cheapest IT benchmark
#: plugin model -> (native model, the native's layer that is the plugin's committed IT layer)
TWINS = {"alexnet": ("torchvision:alexnet-untrained", "features.12"),
         "resnet18_random": ("torchvision:resnet18-untrained", "layer4.1")}
PLUGIN_LAYERS = {"alexnet": "features.12", "resnet18_random": "layer4"}


@pytest.fixture(scope="module")
def folders(reference_tree, tmp_path_factory):
    """(plugin folder with the two reference model folders, environment with the weights mirror and stand-ins)."""
    base = reference_tree
    plugins = tmp_path_factory.mktemp("plugins")
    for name in TWINS:
        shutil.copytree(base / "models" / name, plugins / "models" / name)
    os.chmod(plugins, 0o755)
    import torch

    from brainscore.models.torchvision_loading import import_torchvision
    from brainscore.models.weights import seeded

    mirror = tmp_path_factory.mktemp("weights")
    os.chmod(mirror, 0o755)
    weights = mirror / "alexnet-owt-7be5be79.pth"
    torch.save(seeded(lambda: import_torchvision().models.get_model("alexnet", weights=None)).state_dict(), weights)
    os.chmod(weights, 0o644)
    stand_ins = mirror / "stand_ins.json"
    stand_ins.write_text(json.dumps({weights.name: {"sha256": hashlib.sha256(weights.read_bytes()).hexdigest(),
                                                    "note": "untrained AlexNet (torch seed 0) for a test"}}))
    os.chmod(stand_ins, 0o644)
    env = {**os.environ, "PYTHONPATH": str(SRC), "BRAINSCORE_WEIGHTS_MIRROR": str(mirror),
           "BRAINSCORE_STAND_INS": str(stand_ins), "TORCH_HOME": str(tmp_path_factory.mktemp("torch"))}
    env.pop("BRAINSCORE_PLUGIN_DIRS", None)
    return plugins, env


def cli_score(env: dict, home: Path, model: str, layer: str | None, plugins: Path | None) -> dict:
    command = [sys.executable, "-m", "brainscore", "score", "--model", model, "--benchmark", BENCHMARK,
               "--bootstrap", "0", "--no-record", "--json"]
    command += ["--layer", layer] if layer else []
    command += ["--plugin-dir", str(plugins)] if plugins else []
    result = subprocess.run(command, env={**env, "BRAINSCORE_HOME": str(home)}, capture_output=True, text=True,
                            timeout=1200)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def native(folders, tmp_path_factory) -> dict:
    """The native untrained models' scores with the plugins' layers committed, each in a home of its own."""
    _, env = folders
    return {plugin: cli_score(env, tmp_path_factory.mktemp("native-home"), model, layer, None)
            for plugin, (model, layer) in TWINS.items()}


def assert_same(plugin: dict, native: dict, what: str) -> None:
    for key in ("score", "raw", "ceiling"):
        assert plugin[key] == pytest.approx(native[key], abs=1e-6), f"{what}: {key} {plugin} != {native}"
    assert 0 < native["score"] < 1


@pytest.mark.slow
def test_brainscore_score_of_the_reference_folders_equals_the_native_untrained_networks(folders, native,
                                                                                          tmp_path_factory):
    plugins, env = folders
    for plugin in TWINS:
        layer = None if plugin == "alexnet" else f"{PLUGIN_LAYERS[plugin]}"  # alexnet commits by its json
        result = cli_score(env, tmp_path_factory.mktemp("plugin-home"), plugin, layer, plugins)
        assert result["layers"]["IT"] == PLUGIN_LAYERS[plugin]
        assert_same(result, native[plugin], f"score {plugin}")
        if plugin == "alexnet":  # the stand-in weights are named in the provenance
            files = result["provenance"]["benchmark"]["data_files"]
            assert "stand-in/alexnet-owt-7be5be79.pth" in files


@pytest.fixture(scope="module")
def by_rule(folders, tmp_path_factory) -> tuple[dict, dict]:
    """resnet18_random with IT committed by brainscore's rule (its folder maps no region; a run or a website
    submission takes no --layer), and the native network with that layer."""
    plugins, env = folders
    plugin = cli_score(env, tmp_path_factory.mktemp("rule-home"), "resnet18_random", None, plugins)
    layer = plugin["layers"]["IT"]
    twin = cli_score(env, tmp_path_factory.mktemp("rule-twin-home"), "torchvision:resnet18-untrained",
                     f"{layer}.1" if re.fullmatch(r"layer\d", layer) else layer, None)
    assert_same(plugin, twin, f"score resnet18_random, IT by the rule ({layer})")
    return plugin, twin


@pytest.mark.slow
def test_brainscore_run_of_the_reference_folders_equals_the_native_untrained_networks(folders, native, by_rule,
                                                                                        tmp_path):
    plugins, env = folders
    run_env = {**env, "BRAINSCORE_HOME": str(tmp_path / "home"), "BRAINSCORE_DB_URL": f"sqlite:///{tmp_path / 'r.sqlite'}"}
    result = subprocess.run([sys.executable, "-m", "brainscore", "run", "--models", ",".join(TWINS),
                             "--benchmarks", BENCHMARK, "--workers", "1", "--json", "--no-progress",
                             "--plugin-dir", str(plugins)], env=run_env, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stderr[-4000:]
    rows = {row["model"]: row for row in (json.loads(line) for line in result.stdout.splitlines()
                                          if line.startswith("{"))}
    assert_same(rows["alexnet"], native["alexnet"], "run alexnet")
    assert_same(rows["resnet18_random"], by_rule[1], "run resnet18_random")


@pytest.mark.slow
def test_a_website_submission_of_the_reference_folders_equals_the_native_untrained_networks(folders, native, by_rule,
                                                                                              tmp_path):
    """``brainscore serve`` with the weights mirror and the stand-in declaration; each folder zipped and submitted
    with ``brainscore submit``. A third folder imports a name of the reference's API brainscore lacks: its failure
    says the fault is the server's installation, not the submission's, and names no server path."""
    from browser_helpers import wait_until_serving
    from web_helpers import upload_token

    plugins, env = folders
    broken = tmp_path / "submitted" / "gap_model"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text(
        "from brainscore_vision import model_registry\n"
        "from brainscore_core.supported_data_standards.brainio.assemblies import NotInThisInstallation\n"
        "model_registry['gap-model'] = lambda: None\n")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server_env = {**env, "BRAINSCORE_HOME": str(tmp_path / "server-home")}
    log = open(tmp_path / "server.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "brainscore", "serve", "--port", str(port), "--db",
                               f"sqlite:///{tmp_path / 'web.sqlite'}", "--workers", "1", "--time-limit-s", "900"],
                              env=server_env, stdout=log, stderr=subprocess.STDOUT)
    bodies = {}
    try:
        wait_until_serving(url, server, tmp_path / "server.log")
        token = upload_token(url, "ref-user")
        for name, folder in [*((n, plugins / "models" / n) for n in TWINS), ("gap_model", broken)]:
            result = subprocess.run([sys.executable, "-m", "brainscore", "submit", str(folder), "--server", url,
                                     "--token", token, "--benchmarks", BENCHMARK, "--wait", "--json"],
                                    env=server_env, capture_output=True, text=True, timeout=1800)
            assert "{" in result.stdout, result.stdout + result.stderr + (tmp_path / "server.log").read_text()[-3000:]
            bodies[name] = json.loads(result.stdout[result.stdout.index("{"):])
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
    expected = {"alexnet": native["alexnet"]["score"], "resnet18_random": by_rule[1]["score"]}
    for plugin in TWINS:
        submitted = bodies[plugin]["results"][f"{plugin}|{BENCHMARK}"]
        assert submitted["status"] == "done", bodies[plugin]
        assert submitted["score"] == pytest.approx(expected[plugin], abs=1e-6), plugin
    failure = bodies["gap_model"]["results"][f"gap-model|{BENCHMARK}"]
    assert failure["status"] == "failed"
    assert "not a fault of the submission" in failure["failure"] and "NotInThisInstallation" in failure["failure"]
    assert "Fix that plugin" not in failure["failure"] and str(tmp_path) not in failure["failure"]
