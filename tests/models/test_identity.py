"""Cached activations without building the network: the stored identity of a network recipe.

A tiny plugin (written to a temporary folder so its code and weights can be edited) builds a seeded
network whose weights are a ``.npy`` file. The first extraction builds it and stores its identity;
later ones key the cache on the identity and never build it, unless something that builds it
changed: the weights file (rewritten with the same size and modification time), the plugin's code,
a library's version, or the thread count (which changes the activations' key).

An identity is stored only for weights files written at least ``SETTLE_NS`` (3 s) before the build
(a rewrite in the same clock tick keeps a file's stamp); the tests here write their weights and build
at once, so in this process that wait is 0 (``settled_at_once``), except in the test of the rule itself.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import time

from brainscore.caching import CacheWarning, file_state
from brainscore.caching import files as caching_files
from brainscore.models import identity
from brainscore.models.extraction import ActivationsExtractor
from brainscore.models.preprocessing import Preprocessing
from model_fixtures import make_stimuli

PRE = Preprocessing("imagenet", 16)


@pytest.fixture(autouse=True)
def settled_at_once(monkeypatch):
    """Weights written by a test count as settled at once in this process (the rule has its own test)."""
    monkeypatch.setattr(caching_files, "SETTLE_NS", 0)


SETTLE_NS = caching_files.SETTLE_NS  # the real rule, which a new process applies
#: A settle window no test outlasts, for a file "just written" however slow the machine is.
RECENT_NS = 3600 * 10**9


def wait_until_settled(path, timeout: float = 30.0) -> None:
    """Wait until ``path`` was last written :data:`SETTLE_NS` ago (a new process stores its identity then)."""
    deadline = time.monotonic() + timeout
    while time.time_ns() - max(file_state(path).mtime_ns, file_state(path).ctime_ns) < SETTLE_NS:
        assert time.monotonic() < deadline, f"{path} did not settle"
        time.sleep(0.2)

PLUGIN = '''"""A tiny network whose weights are one .npy file of 0.5 * (seeded normal) values."""
import functools

import numpy as np

from brainscore.models.identity import NetworkRecipe

BUILDS = []


def build(path):
    import torch

    BUILDS.append(path)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, stride=2), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(2),
                              torch.nn.Flatten(), torch.nn.Linear(16, 5))
    flat = torch.from_numpy(np.load(path))
    start = 0
    with torch.no_grad():
        for parameter in net.parameters():
            parameter.copy_(flat[start:start + parameter.numel()].reshape(parameter.shape))
            start += parameter.numel()
    return net.eval()


def recipe(path, libraries=()):
    return NetworkRecipe(build=functools.partial(build, str(path)), arguments={"name": "tiny"}, code=[__name__],
                         libraries=list(libraries), files=lambda: [path])
'''
N_PARAMETERS = 4 * 3 * 9 + 4 + 16 * 5 + 5


def write_weights(path, seed):
    np.save(path, (0.5 * np.random.default_rng(seed).standard_normal(N_PARAMETERS)).astype(np.float32))


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """The tiny plugin module (``tinyplug.net``), a fake distribution ``tinylib`` 1.0, and a weights file."""
    package = tmp_path / "tinyplug"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "net.py").write_text(PLUGIN)
    site = tmp_path / "site"
    (site / "tinylib-1.0.dist-info").mkdir(parents=True)
    (site / "tinylib-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: tinylib\nVersion: 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("BRAINSCORE_TORCH_THREADS", "2")
    fresh_code()
    module = importlib.import_module("tinyplug.net")
    write_weights(tmp_path / "weights.npy", 0)
    yield module, tmp_path / "weights.npy", site
    sys.modules.pop("tinyplug.net", None)
    sys.modules.pop("tinyplug", None)
    fresh_code()


def fresh_code():
    """Forget the code hashes this process computed (they are memoised per process)."""
    from brainscore.caching import code as code_module

    importlib.invalidate_caches()
    for cached in (code_module._parsed, code_module.module_closure, code_module._module_file):
        cached.cache_clear()


def extract(module, weights, stimuli, **recipe_kwargs):
    """(features of layer "1" as an array, the extractor, the builds it caused, the recipe's identity key)."""
    builds = len(module.BUILDS)
    recipe = module.recipe(weights, **recipe_kwargs)
    extractor = ActivationsExtractor(recipe, "tiny", PRE, device="cpu", progress=False)
    features = extractor.extract(stimuli, ["1"])["1"]
    return np.asarray(features.matrix()), extractor, len(module.BUILDS) - builds, identity.identity_key(recipe), \
        features.path


def test_cached_activations_are_found_without_building_the_network(plugin, tmp_path):
    module, weights, _ = plugin
    stimuli = make_stimuli(tmp_path / "images", 6)
    first, extractor, builds, key, path = extract(module, weights, stimuli)
    assert builds == 1 and extractor.forward_passes > 0
    again, cached, builds, key_again, path_again = extract(module, weights, stimuli)
    assert builds == 0 and cached.forward_passes == 0 and cached._model is None
    assert key_again == key and path_again == path
    np.testing.assert_array_equal(again, first)
    # the identity gives exactly the values the built network gives
    assert cached.weights_hash == extractor.weights_hash
    assert cached.architecture_fingerprint == extractor.architecture_fingerprint
    assert cached.numerics() == extractor.numerics() == {"device": "cpu", "dtypes": ["torch.float32"], "threads": 2}
    assert cached.layers() == extractor.layers()
    # a layer not cached yet builds the network, once, and computes only that layer
    _, _, builds, _, _ = extract(module, weights, stimuli)
    more = ActivationsExtractor(module.recipe(weights), "tiny", PRE, device="cpu", progress=False)
    assert more.extract(stimuli, ["4"])["4"].matrix().shape == (6, 5)
    assert more._model is not None and more.forward_passes > 0


def test_a_weights_file_rewritten_with_the_same_size_and_mtime_is_built_again(plugin, tmp_path):
    module, weights, _ = plugin
    stimuli = make_stimuli(tmp_path / "images", 6)
    first, extractor, _, key, path = extract(module, weights, stimuli)
    before = weights.stat()
    write_weights(weights, 1)
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert weights.stat().st_size == before.st_size and weights.stat().st_mtime_ns == before.st_mtime_ns
    second, rebuilt, builds, new_key, new_path = extract(module, weights, stimuli)
    assert builds == 1 and new_key != key and rebuilt.forward_passes > 0 and new_path != path
    assert rebuilt.weights_hash != extractor.weights_hash
    assert not np.allclose(second, first)


def test_a_weights_file_rewritten_in_the_clock_tick_of_its_build_is_built_again(plugin, tmp_path, monkeypatch):
    """A same-size rewrite in the same tick of the kernel's coarse clock keeps the file's whole stamp (simulated by
    freezing it): the first build must not be remembered, or the second would serve the old weights' activations."""
    import brainscore.caching

    module, weights, _ = plugin
    stimuli = make_stimuli(tmp_path / "images", 6)
    monkeypatch.setattr(caching_files, "SETTLE_NS", RECENT_NS)  # the build falls within the write's settle window
    write_weights(weights, 0)
    frozen, real = file_state(weights), brainscore.caching.file_state
    monkeypatch.setattr(brainscore.caching, "file_state",
                        lambda path: frozen if str(path) == str(weights) else real(path))
    first, extractor, builds, key, _ = extract(module, weights, stimuli)
    assert builds == 1 and key is not None and identity.cached_identity(module.recipe(weights)) == (key, None)
    write_weights(weights, 1)  # same size, same (frozen) stamp
    second, rebuilt, builds, key_again, _ = extract(module, weights, stimuli)
    assert key_again == key and builds == 1 and rebuilt.forward_passes > 0
    assert rebuilt.weights_hash != extractor.weights_hash
    assert not np.allclose(second, first)


def test_an_edited_plugin_is_built_again(plugin, tmp_path):
    module, weights, _ = plugin
    stimuli = make_stimuli(tmp_path / "images", 6)
    first, _, _, key, _ = extract(module, weights, stimuli)
    source = tmp_path / "tinyplug" / "net.py"
    source.write_text(source.read_text() + "\n# an edit\n")
    fresh_code()
    second, _, builds, new_key, _ = extract(module, weights, stimuli)
    assert builds == 1 and new_key != key
    np.testing.assert_array_equal(second, first)  # same network: its activations were cached


def test_a_new_library_version_is_built_again(plugin, tmp_path):
    module, weights, site = plugin
    stimuli = make_stimuli(tmp_path / "images", 6)
    _, _, builds, key, _ = extract(module, weights, stimuli, libraries=["tinylib"])
    assert builds == 1
    _, _, builds, same_key, _ = extract(module, weights, stimuli, libraries=["tinylib"])
    assert builds == 0 and same_key == key
    info = site / "tinylib-1.0.dist-info"
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tinylib\nVersion: 2.0\n")
    info.rename(site / "tinylib-2.0.dist-info")
    importlib.invalidate_caches()
    _, _, builds, new_key, _ = extract(module, weights, stimuli, libraries=["tinylib"])
    assert builds == 1 and new_key != key


def test_another_thread_count_computes_fresh_under_another_key(plugin, tmp_path, monkeypatch):
    module, weights, _ = plugin
    stimuli = make_stimuli(tmp_path / "images", 6)
    first, extractor, _, _, path = extract(module, weights, stimuli)
    monkeypatch.setenv("BRAINSCORE_TORCH_THREADS", "1")
    second, one_thread, builds, _, other_path = extract(module, weights, stimuli)
    assert one_thread.numerics()["threads"] == 1 and other_path != path
    assert builds == 1 and one_thread.forward_passes > 0  # built only because a layer was missing
    np.testing.assert_allclose(second, first, rtol=1e-5, atol=1e-6)


def test_an_identity_that_disagrees_with_the_built_network_is_discarded(plugin, tmp_path):
    module, weights, _ = plugin
    stimuli = make_stimuli(tmp_path / "images", 6)
    first, extractor, _, key, path = extract(module, weights, stimuli)
    true = identity.network_identity(extractor.model, extractor.weights_hash)
    recipe = module.recipe(weights)
    identity.store_identity(recipe, key, identity.NetworkIdentity(true.weights_hash, "0" * 64, true.dtypes,
                                                                  true.modules))
    with pytest.warns(CacheWarning, match="stored identity"):
        again, checked, builds, _, again_path = extract(module, weights, stimuli)
    assert builds == 1 and again_path == path and checked.forward_passes == 0  # keyed on the built network
    np.testing.assert_array_equal(again, first)
    assert identity.cached_identity(recipe)[1] is None  # the bad entry is gone


def test_a_package_defining_the_network_is_hashed_by_its_sources_without_importing_it(plugin, tmp_path):
    sys.modules.pop("tinyplug.net", None)
    sys.modules.pop("tinyplug", None)
    before = identity.package_sources_hash("tinyplug")
    assert "tinyplug" not in sys.modules
    (tmp_path / "tinyplug" / "layers.py").write_text("X = 1\n")
    added = identity.package_sources_hash("tinyplug")
    (tmp_path / "tinyplug" / "layers.py").write_text("X = 2\n")
    assert len({before, added, identity.package_sources_hash("tinyplug")}) == 3


def test_no_identity_without_a_weights_file_or_with_non_json_arguments(plugin):
    module, weights, _ = plugin
    recipe = module.recipe(weights)
    assert identity.identity_key(recipe) is not None
    assert identity.identity_key(identity.NetworkRecipe(recipe.build, {"name": "tiny"}, [module.__name__])) is None
    assert identity.identity_key(identity.NetworkRecipe(recipe.build, {"net": object()}, [module.__name__],
                                                        files=recipe.files)) is None
    missing = identity.NetworkRecipe(recipe.build, {"name": "tiny"}, [module.__name__],
                                     files=lambda: [weights.with_name("absent.npy")])
    assert identity.identity_key(missing) is None


def test_the_installed_torch_build_is_read_without_importing_torch():
    script = ("import sys; from brainscore.models.identity import cpu_only_torch; cpu = cpu_only_torch(); "
              "import torch; print(cpu, torch.version.cuda is None and torch.version.hip is None, "
              "'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    cpu, expected, _ = out.stdout.split()
    assert cpu == expected


def run_twice(script: str, home, timeout: int) -> list[dict]:
    """The JSON last lines of ``script`` run in two new Python processes, one after the other, on ``home``."""
    env = {**os.environ, "BRAINSCORE_HOME": str(home)}
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, env=env)
        assert out.returncode == 0, out.stderr
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return runs


def test_a_cached_extraction_in_a_new_process_does_not_import_torch(plugin, tmp_path):
    module, weights, _ = plugin
    make_stimuli(tmp_path / "images", 6)
    wait_until_settled(weights)
    script = textwrap.dedent(f"""
        import hashlib, json, sys
        sys.path[:0] = [{str(tmp_path)!r}]
        import numpy as np
        from brainscore.data import StimulusSet
        from brainscore.models.extraction import ActivationsExtractor
        from brainscore.models.preprocessing import Preprocessing
        from tinyplug.net import recipe
        ids = [f"s{{i:02d}}" for i in range(6)]
        stimuli = StimulusSet({{"stimulus_id": ids, "category": [f"c{{i % 3}}" for i in range(6)],
                               "stimulus_path": [{str(tmp_path / "images")!r} + f"/{{i}}.png" for i in ids]}})
        extractor = ActivationsExtractor(recipe({str(weights)!r}), "tiny", Preprocessing("imagenet", 16))
        values = np.ascontiguousarray(extractor(stimuli, ["1", "4"]).values)
        print(json.dumps({{"sha256": hashlib.sha256(values.tobytes()).hexdigest(), "torch": "torch" in sys.modules,
                          "passes": extractor.forward_passes}}))
    """)
    runs = run_twice(script, tmp_path / "home", timeout=300)
    assert runs[0]["torch"] and runs[0]["passes"] > 0
    assert not runs[1]["torch"] and runs[1]["passes"] == 0
    assert runs[1]["sha256"] == runs[0]["sha256"]


@pytest.mark.slow
def test_the_cached_quick_start_does_not_import_torch_and_gives_the_same_score(tmp_path):
    """``brainscore.score`` of the quick start twice in new processes: the second builds no network."""
    script = textwrap.dedent("""
        import json, sys
        import brainscore
        score = brainscore.score("efficientnet-lite0", "Cowley2026.210325.V4-pls")
        print(json.dumps({"score": float(score).hex(), "error": float(score.attrs["error"]).hex(),
                          "model": score.attrs["provenance"]["model"], "host": score.attrs["provenance"]["host"],
                          "torch": "torch" in sys.modules}))
    """)
    runs = run_twice(script, tmp_path / "home", timeout=1800)
    assert runs[0]["torch"] and not runs[1]["torch"]
    assert runs[1]["score"] == runs[0]["score"] and runs[1]["error"] == runs[0]["error"]
    assert runs[1]["model"] == runs[0]["model"] and runs[1]["host"]["threads"] == runs[0]["host"]["threads"]
    assert runs[0]["model"]["weights_sha256"] == "579344248a93e23026e6b78f1f6faf0bc1d282386f6c881cdbaacd49cabf77db"


def test_a_torchvision_network_from_a_weights_file_is_not_built_when_its_activations_are_cached(tmp_path):
    if importlib.util.find_spec("torchvision") is None:
        pytest.skip("torchvision is not installed (python -m pip install -e \".[zoo]\")")
    import torch

    import brainscore
    from brainscore.models.torchvision_loading import import_torchvision

    torchvision = import_torchvision()
    from brainscore.data import file_sha256

    torch.manual_seed(0)
    path = tmp_path / "my-resnet18.pth"
    torch.save(torchvision.models.resnet18().state_dict(), path)
    sha256 = file_sha256(path)
    stimuli = make_stimuli(tmp_path / "images", 4, size=32)

    def features():
        model = brainscore.load_model("torchvision:resnet18", weights_path=path, weights_sha256=sha256,
                                      region_layer_map={"IT": "layer4.1"}, device="cpu")
        model.start_recording("IT", [(70, 170)])
        return np.asarray(model.look_at(stimuli).values), model.activations_model

    first, built = features()
    again, cached = features()
    assert built._model is not None and built.forward_passes > 0
    assert cached._model is None and cached.forward_passes == 0 and cached.weights_hash == sha256
    assert cached.architecture_fingerprint == built.architecture_fingerprint
    np.testing.assert_array_equal(again, first)
    with pytest.raises(brainscore.HashMismatchError):  # the file is still checked when the model is loaded
        brainscore.load_model("torchvision:resnet18", weights_path=path, weights_sha256="0" * 64)
