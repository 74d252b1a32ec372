"""Models behind a ``get_activations`` function (the reference's ``ActivationsExtractorHelper``; issue 39).

A plugin folder whose model is a few lines of numpy scores ``Kriegeskorte2008.IT-rdm`` through the registry; its
stored activations are keyed by the folder's content and the function's qualified name, so editing any file of the
folder (code or not) gives new entries and new values, never the old ones; a function that is not defined in a
file (an interactive session, ``exec``) is computed on every call and nothing is stored. On main the helper raised
``NotImplementedError`` and :mod:`brainscore.models.extraction.function` did not exist.
"""
from __future__ import annotations

import importlib
import os
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from authoring_helpers import isolated_registrations
from brainscore import registry
from brainscore.errors import ValidationError

MODEL_INIT = """
from brainscore_vision import model_registry
from brainscore_vision.model_helpers.brain_transformation import ModelCommitment
from .model import TinyModel

model_registry['compat-tinyfn'] = lambda: ModelCommitment(identifier='compat-tinyfn', activations_model=TinyModel(),
                                                          layers=['means'], region_layer_map={'IT': 'means'})


def with_weights():
    import os
    from pathlib import Path
    from brainscore.data import locator

    locator.note('tiny/weights.bin', Path(os.environ['COMPAT_TINY_WEIGHTS']))  # what load_weight_file does
    return ModelCommitment(identifier='compat-tinyfn-w', activations_model=TinyModel('compat-tinyfn-w'),
                           layers=['means'], region_layer_map={'IT': 'means'})


model_registry['compat-tinyfn-w'] = with_weights
"""

MODEL_CODE = """
from collections import OrderedDict
import numpy as np
from PIL import Image
from brainscore_vision.model_helpers.activations.core import ActivationsExtractorHelper

SCALE = 1.0


def channel_means(paths):
    return np.stack([np.asarray(Image.open(p).convert('RGB').resize((16, 16)), dtype=np.float32).mean(axis=(0, 1))
                     for p in paths])


class TinyModel:
    def __init__(self, identifier='compat-tinyfn'):
        self._extractor = ActivationsExtractorHelper(identifier=identifier, preprocessing=None,
                                                     get_activations=self._get_activations)
        self._extractor.insert_attrs(self)

    @property
    def identifier(self):
        return self._extractor.identifier

    def __call__(self, *args, **kwargs):
        return self._extractor(*args, **kwargs)

    def _get_activations(self, paths, layer_names):
        return OrderedDict([('means', SCALE * channel_means(paths))])
"""

#: the tiny model's score on Kriegeskorte2008.IT-rdm, measured with `brainscore score --model tinyfn --benchmark
#: Kriegeskorte2008.IT-rdm --bootstrap 0 --plugin-dir ...` (raw 0.09785350766791118, ceiling 0.5194592681464003)
TINY_SCORE = 0.18837570848833698


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """A plugin folder models/tinyfn on the plugin path; its modules and registrations are gone after the test."""
    folder = tmp_path / "plugins" / "models" / "tinyfn"
    write(folder / "__init__.py", MODEL_INIT)
    write(folder / "model.py", MODEL_CODE)
    with isolated_registrations():
        monkeypatch.setenv("BRAINSCORE_PLUGIN_DIRS", str(tmp_path / "plugins"))
        registry.reset_discovery()
        yield folder
        monkeypatch.delenv("BRAINSCORE_PLUGIN_DIRS", raising=False)
        registry.reset_discovery()


@pytest.fixture
def images(tmp_path):
    """Three small image files (distinct colours) as a StimulusSet."""
    from brainscore.data.stimuli import StimulusSet

    paths = {}
    for i, colour in enumerate([(255, 0, 0), (0, 128, 255), (10, 200, 30)]):
        path = tmp_path / "images" / f"im{i}.png"
        path.parent.mkdir(exist_ok=True)
        Image.new("RGB", (20, 20), colour).save(path)
        paths[f"im{i}"] = str(path)
    return StimulusSet({"stimulus_id": list(paths)}, stimulus_paths=paths)


def plugin_model(folder: Path):
    """The plugin's ``model`` module, imported afresh through the registry's package (as the registry imports it)."""
    from brainscore.plugin_sources import package_name

    registry.models.load("compat-tinyfn")
    return sys.modules[f"{package_name(folder.parent.parent)}.models.tinyfn.model"]


def test_a_get_activations_plugin_scores_kriegeskorte(plugin, images92):
    from brainscore.scoring.job import score

    model = registry.models.load("compat-tinyfn")
    features = model.activations_model(images92, layers=["means"])
    expected = plugin_model(plugin).channel_means([str(images92.get_stimulus(i)) for i in features["stimulus_id"].values])
    np.testing.assert_allclose(features.values, expected, rtol=1e-6)  # the function's values, in stimulus order
    assert model.activations_model.cacheable and model.architecture_fingerprint is not None

    result = score("compat-tinyfn", "Kriegeskorte2008.IT-rdm", bootstrap=0)
    assert float(result) == pytest.approx(TINY_SCORE, abs=1e-6)


def test_editing_the_plugin_changes_the_key_and_the_values(plugin, images):
    module = plugin_model(plugin)
    first = module.TinyModel()
    path = first.cache_paths(images, ["means"])["means"]
    values = first.extract(images, ["means"])["means"].matrix().copy()
    assert path.is_file() and first._extractor._core.forward_passes == 1

    again = module.TinyModel()  # same files: the stored entry is served, the function is not called
    assert again.cache_paths(images, ["means"])["means"] == path
    np.testing.assert_array_equal(again.extract(images, ["means"])["means"].matrix(), values)
    assert again._extractor._core.forward_passes == 0

    code = plugin / "model.py"
    code.write_text(code.read_text().replace("SCALE = 1.0", "SCALE = 2.50"))  # another size: no stale bytecode
    module = importlib.reload(module)
    edited = module.TinyModel()
    edited_path = edited.cache_paths(images, ["means"])["means"]
    assert edited_path != path
    np.testing.assert_allclose(edited.extract(images, ["means"])["means"].matrix(), 2.5 * values, rtol=1e-6)
    assert edited._extractor._core.forward_passes == 1  # computed anew, not the old entry

    write(plugin / "notes.json", '{"threshold": 3}')  # a file the code may read: in the key too
    assert module.TinyModel().cache_paths(images, ["means"])["means"] not in (path, edited_path)
    (plugin / "notes.json").unlink()
    code.write_text(code.read_text().replace("SCALE = 2.50", "SCALE = 1.0"))  # the same bytes: the same key
    assert module.TinyModel().cache_paths(images, ["means"])["means"] == path

    other = module.TinyModel(identifier="compat-tinyfn-other")  # another identifier: its own entries
    assert other.cache_paths(images, ["means"])["means"] != path


def test_a_function_not_defined_in_a_file_is_computed_every_time_and_not_stored(images):
    from brainscore.models.extraction.function import function_source_key
    from brainscore_vision.model_helpers.activations.core import ActivationsExtractorHelper

    namespace: dict = {}
    exec(compile("import numpy as np\n"
                 "def get_activations(paths, layers):\n"
                 "    return {'x': np.arange(len(paths) * 2, dtype=float).reshape(len(paths), 2)}\n",
                 "<stdin>", "exec"), namespace)
    key, why = function_source_key(namespace["get_activations"])
    assert key is None and "interactive session" in why and "<stdin>" in why
    with pytest.warns(UserWarning, match="computed on every call and not stored"):
        helper = ActivationsExtractorHelper(namespace["get_activations"], None, identifier="compat-stdin")
    assert not helper.cacheable and helper.architecture_fingerprint is None
    for expected_passes in (1, 2):
        features = helper(images, ["x"])
        np.testing.assert_array_equal(features.values, np.arange(6.0).reshape(3, 2))
        assert helper._core.forward_passes == expected_passes
    with pytest.raises(ValidationError, match="not stored .*interactive session"):
        helper._core.cache_paths(images, ["x"])


def test_identifier_false_stores_nothing(plugin, images):
    model = plugin_model(plugin).TinyModel(identifier=False)
    assert not model.cacheable and not hasattr(model, "cache_paths")
    model.extract(images, ["means"])
    model.extract(images, ["means"])
    assert model._extractor._core.forward_passes == 2


def test_a_folder_too_large_to_hash_is_not_stored(plugin, images, monkeypatch):
    from brainscore.models.extraction import function

    module = plugin_model(plugin)
    monkeypatch.setattr(function, "MAX_SOURCE_FILES", 1)  # the folder holds two files
    with pytest.warns(UserWarning, match="more than 1 files"):
        model = module.TinyModel()
    assert not model.cacheable


def test_bad_answers_of_get_activations_are_errors_naming_the_model_and_layer(images):
    from brainscore.models.extraction.function import FunctionExtractor

    def answer_with(value):
        return FunctionExtractor(lambda paths, layers: value(len(paths)), "compat-bad", source_key=None)

    cases = [(lambda n: [1, 2], "not a mapping"),
             (lambda n: {"other": np.zeros((n, 2))}, "no layer 'x'"),
             (lambda n: {"x": np.zeros((n + 1, 2))}, "one row per input"),
             (lambda n: {"x": np.array(["a"] * n)}, "numeric array"),
             (lambda n: {"x": np.full((n, 2), np.nan)}, "NaN or infinite")]
    for value, message in cases:
        with pytest.raises(ValidationError, match=f"model 'compat-bad'.*{message}"):
            answer_with(value).extract(images, ["x"])
    good = answer_with(lambda n: {"x": np.ones((n, 2))})
    with pytest.raises(ValidationError, match="microsaccade"):
        good.extract(images, ["x"], number_of_trials=3, require_variance=True)
    one_trial = good(images, ["x"], number_of_trials=1, require_variance=True)  # one trial: the unshifted image
    assert one_trial.shape == (3, 2)


def test_hooks_are_refused_because_the_key_cannot_see_them(plugin):
    model = plugin_model(plugin).TinyModel()
    with pytest.raises(NotImplementedError, match="without changing their key"):
        model.register_batch_activations_hook(lambda activations: activations)
    with pytest.raises(NotImplementedError, match="inside get_activations"):
        model.register_stimulus_set_hook(lambda stimuli: stimuli)


def test_list_of_paths_as_the_reference_calls_it(plugin, images):
    model = plugin_model(plugin).TinyModel()
    paths = [str(images.get_stimulus("im1")), str(images.get_stimulus("im0")), str(images.get_stimulus("im1"))]
    features = model.from_paths(paths, ["means"])
    assert list(features["stimulus_path"].values) == paths
    np.testing.assert_allclose(features.values[0], [0, 128, 255], atol=1e-4)
    np.testing.assert_array_equal(features.values[0], features.values[2])
    assert os.fspath(paths[1]) in features["stimulus_id"].values


def test_a_weights_file_the_factory_loads_is_in_the_key(plugin, images, tmp_path, monkeypatch):
    """hmax loads its patch set with load_weight_file from outside its folder: another file (a stand-in) is another
    key, so features of one file are never served for the other."""
    weights = tmp_path / "weights.bin"
    monkeypatch.setenv("COMPAT_TINY_WEIGHTS", str(weights))
    weights.write_bytes(b"first")
    first = registry.models.load("compat-tinyfn-w").activations_model.cache_paths(images, ["means"])["means"]
    assert registry.models.load("compat-tinyfn-w").activations_model.cache_paths(images, ["means"])["means"] == first
    weights.write_bytes(b"other")
    other = registry.models.load("compat-tinyfn-w").activations_model.cache_paths(images, ["means"])["means"]
    assert other != first
    plain = plugin_model(plugin).TinyModel("compat-tinyfn-w")  # built outside the registry: no file recorded
    assert plain.cache_paths(images, ["means"])["means"] not in (first, other)
