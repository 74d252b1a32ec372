"""The reference's model helpers (PytorchWrapper, load_preprocess_images, ModelCommitment, check_models) and
PropertiesBenchmark give brainscore's native numbers."""
from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

import brainscore
from brainscore.benchmarks.properties import PropertiesBenchmark as NativeProperties
from brainscore.data.assemblies import PropertiesAssembly
from brainscore.models.commitment import ModelCommitment as NativeCommitment
from brainscore.models.commitment import pytorch_commitment
from brainscore.models.precomputed import PrecomputedFeatures
from brainscore.models.preprocessing import Preprocessing
from compat_api_helpers import COWLEY_BENCHMARK
from model_fixtures import SmallConvNet, make_stimuli

from brainscore_vision import _names
from brainscore_vision.benchmark_helpers.properties_common import PropertiesBenchmark
from brainscore_vision.model_helpers.activations.pytorch import PytorchWrapper, load_preprocess_images
from brainscore_vision.model_helpers.brain_transformation import ModelCommitment
from brainscore_vision.model_helpers.check_submission import check_models

LAYERS = ["relu1", "relu2", "pool"]


def reference_model(identifier="compat-smallconv", size=64, **kwargs):
    """A model plugin's body as the reference's model tutorial writes it."""
    preprocessing = functools.partial(load_preprocess_images, image_size=size)
    wrapper = PytorchWrapper(identifier=identifier, model=SmallConvNet(), preprocessing=preprocessing)
    return ModelCommitment(identifier=identifier, activations_model=wrapper, layers=LAYERS,
                           region_layer_map={"V4": "relu2"}, **kwargs)


def test_load_preprocess_images_is_brainscores_preprocessing(images92):
    paths = [str(p) for p in images92.paths()[:3]]
    ours = load_preprocess_images(paths, image_size=32)
    assert ours.shape == (3, 3, 32, 32) and ours.dtype == np.float32
    np.testing.assert_array_equal(ours, Preprocessing("imagenet", 32)(paths).numpy())
    custom = load_preprocess_images(paths, image_size=32, normalize_mean=(0.5,) * 3, normalize_std=(0.5,) * 3)
    np.testing.assert_array_equal(custom, Preprocessing("imagenet", 32, mean=(.5,) * 3, std=(.5,) * 3)(paths).numpy())
    with pytest.raises(TypeError, match="unknown keyword"):
        load_preprocess_images(paths, image_size=32, crop=True)


def test_model_commitment_signature():
    model = reference_model(visual_degrees=10, behavioral_readout_layer="pool")
    assert isinstance(model, NativeCommitment) and model.identifier == "compat-smallconv"
    assert model.visual_degrees() == 10 and model.behavioral_readout_layer == "pool"
    assert model.region_layer_map == {"V4": "relu2"} and model.layers == LAYERS
    assert model.activations_model.preprocessing == Preprocessing("imagenet", 64)
    positional = ModelCommitment("m", model.activations_model, LAYERS, "relu1")  # 4th: the readout layer
    assert positional.behavioral_readout_layer == "relu1" and positional.region_layer_map == {}


def test_reference_model_scores_as_the_native_model(monkeypatch):
    """ModelCommitment + PytorchWrapper equals brainscore's pytorch_commitment of the same network and layer.

    Caching is off, so each model runs its network (the two would otherwise share one activations entry).
    """
    monkeypatch.setenv("BRAINSCORE_CACHE", "0")
    benchmark = brainscore.load_benchmark(COWLEY_BENCHMARK)
    native = pytorch_commitment("native-smallconv", SmallConvNet(), LAYERS, preprocessing=Preprocessing("imagenet", 64),
                                region_layer_map={"V4": "relu2"})
    expected = benchmark(native)
    result = benchmark(reference_model())
    assert float(result) == pytest.approx(float(expected), abs=1e-6)
    assert float(result.attrs["raw"]) == pytest.approx(float(expected.attrs["raw"]), abs=1e-6)
    assert 0 < float(result.attrs["raw"]) < 1


def test_own_preprocessing_function(images92):
    def preprocess(paths, image_size):
        return load_preprocess_images(paths, image_size=image_size) * 2

    stimuli = images92.iloc[:4]
    stimuli = type(images92)(stimuli, identifier="k4", stimulus_paths=images92.stimulus_paths)
    # the reference's positional order: model, preprocessing, identifier
    wrapper = PytorchWrapper(SmallConvNet(), functools.partial(preprocess, image_size=64), "compat-own-pre")
    plain = PytorchWrapper(SmallConvNet(), functools.partial(load_preprocess_images, image_size=64), "compat-plain-pre")
    assert wrapper.identifier == "compat-own-pre" and wrapper._extractor is wrapper
    assert PytorchWrapper(SmallConvNet()).identifier == "SmallConvNet"  # the class name, as the reference
    with pytest.raises(NotImplementedError, match="forward_kwargs"):
        PytorchWrapper(SmallConvNet(), forward_kwargs={"train": False})
    assert wrapper.preprocessing.image_size == 64
    assert wrapper.preprocessing.key() != plain.preprocessing.key()
    doubled = wrapper(stimuli, layers=["relu1"]).values
    single = plain(stimuli, layers=["relu1"]).values
    assert not np.allclose(doubled, single) and doubled.shape == single.shape


def test_check_models(tmp_path):
    check_models.check_brain_model_processing(reference_model("compat-check"))

    class Constant(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.out = torch.nn.Identity()

        def forward(self, x):
            return self.out(x * 0)

    wrapper = PytorchWrapper(identifier="compat-constant", model=Constant(),
                             preprocessing=functools.partial(load_preprocess_images, image_size=16))
    constant = ModelCommitment("compat-constant", wrapper, ["out"], region_layer_map={"IT": "out"})
    with pytest.raises(AssertionError, match="IT: activations are constant"):
        check_models.check_brain_model_processing(constant)


def test_check_base_models_on_a_plugin_module(monkeypatch):
    """``check_models.check_base_models(__name__)`` at the bottom of a plugin's model.py."""
    import sys
    import types

    module = types.ModuleType("compat_check_model_module")
    module.get_model_list = lambda: ["compat-module-net"]
    module.get_layers = lambda name: ["relu1", "relu2"]
    module.get_model = lambda name: PytorchWrapper(identifier=name, model=SmallConvNet(),
                                                   preprocessing=functools.partial(load_preprocess_images, image_size=32))
    monkeypatch.setitem(sys.modules, module.__name__, module)
    check_models.check_base_models(module.__name__)

    module.get_layers = lambda name: []
    with pytest.raises(AssertionError, match=r"get_layers\('compat-module-net'\) must return a non-empty list"):
        check_models.check_base_models(module.__name__)
    del module.get_model_list
    with pytest.raises(AssertionError, match="no get_model_list"):
        check_models.check_base_models(module.__name__)

    brain_models = types.ModuleType("compat_check_brain_models")
    brain_models.get_model_list = lambda: ["compat-brain-net"]
    brain_models.get_model = lambda name: reference_model(name, size=32)
    monkeypatch.setitem(sys.modules, brain_models.__name__, brain_models)
    check_models.check_brain_models(brain_models.__name__)  # recording and the probabilities task
    brain_models.get_model = lambda name: PytorchWrapper(model=SmallConvNet(), identifier=name)
    with pytest.raises(AssertionError, match="is not a BrainModel"):
        check_models.check_brain_models(brain_models.__name__)


def test_reference_helper_names():
    from brainscore.metrics.normalisation import bound_score as native_bound_score
    from brainscore.models.precomputed import PrecomputedFeatures as NativePrecomputed

    from brainscore_vision.benchmark_helpers import PrecomputedFeatures
    from brainscore_vision.benchmarks import bound_score

    assert PrecomputedFeatures is NativePrecomputed and bound_score is native_bound_score
    from brainscore.metrics.score import Score
    assert float(bound_score(Score.of(1.2))) == 1.0 and float(bound_score(Score.of(-0.1))) == 0.0


def test_properties_benchmark_equals_native(tmp_path):
    """A reference-style PropertiesBenchmark (neuronal_property by keywords, ceiling of the data) against brainscore's."""
    stimuli = make_stimuli(tmp_path / "stimuli", 12, size=16, identifier="compat-props")
    data = brainscore.load_dataset("Cavanaugh2002a")
    name = "surround_suppression_index"
    rng = np.random.default_rng(0)
    n = 300
    features = PrecomputedFeatures(
        brainscore.NeuroidAssembly(rng.random((12, n)), dims=("presentation", "neuroid"),
                                   coords={"stimulus_id": ("presentation", stimuli["stimulus_id"].values),
                                           "neuroid_id": ("neuroid", [f"u{i}" for i in range(n)])}),
        visual_degrees=8, identifier="random-units")

    def suppression(responses, stimuli):  # a stand-in property in the data's range: max over mean response
        values = responses.transpose("presentation", "neuroid").values
        index = 1 - values.mean(axis=0) / values.max(axis=0)
        return PropertiesAssembly(index[:, None], dims=("neuroid", "neuronal_property"),
                                  coords={"neuroid_id": ("neuroid", responses["neuroid_id"].values),
                                          "neuronal_property": [name]})

    seen = []

    def reference_property(model_identifier, responses, stimuli):
        seen.append(model_identifier)
        return suppression(responses, stimuli)

    settings = dict(similarity_metric=_names.load_metric("ks_similarity", property_name=name), parent="V1-surround")
    ours = PropertiesBenchmark(identifier="CompatTest-ssi", assembly=data, neuronal_property=reference_property,
                               timebins=[(70, 170)], ceiling_func=_names.load_ceiling("ks_similarity", property_name=name),
                               bibtex="", stimulus_set=stimuli, visual_degrees=8, **settings)
    native = NativeProperties(identifier="CompatTest-ssi-native", version=1, assembly=data, stimulus_set=stimuli,
                              property_func=suppression, ceiling_func=_names.load_ceiling("ks_similarity", name),
                              visual_degrees=8, number_of_trials=1, region="V1", **settings)
    result, expected = ours(features), native(features)
    assert seen == ["random-units"] and ours.region == "V1"
    assert float(result) == pytest.approx(float(expected), abs=1e-6)
    assert float(ours.ceiling) == pytest.approx(float(native.ceiling), abs=1e-6)
    assert 0 < float(result.attrs["raw"]) < 1
    # visual degrees and trials default as the reference reads them: stimuli's 'degrees', assembly's attrs
    with_defaults = data.copy()
    with_defaults.attrs["number_of_trials"] = 3
    stimuli_with_degrees = stimuli.copy()
    stimuli_with_degrees["degrees"] = 12.0
    defaults = PropertiesBenchmark(identifier="CompatTest-ssi-defaults", assembly=with_defaults,
                                   neuronal_property=suppression, stimulus_set=stimuli_with_degrees, **settings)
    assert defaults.visual_degrees == 12.0 and defaults.number_of_trials == 3
    assert ours.visual_degrees == 8 and ours.number_of_trials == data.attrs["number_of_trials"] == 20
    with pytest.raises(TypeError, match=r"needs arguments \['baseline'\].*Marques 2020 benchmarks"):
        PropertiesBenchmark(identifier="x", assembly=data, neuronal_property=lambda responses, baseline: None,
                            similarity_metric=settings["similarity_metric"])


def test_layer_selection_chooses_as_brainscores_selection(monkeypatch):
    """The reference's ``LayerSelection`` path (``__call__`` -> ``_call`` -> ``_layer_scoring`` -> best score) over
    brainscore's selection: the first of equal maxima in depth order, non-finite scores skipped, a region without
    selection data committed by the layer rule, and a cached score without attributes accepted."""
    from brainscore.errors import NoSelectionDataError
    from brainscore.metrics.score import Score
    from brainscore.scoring import selection as native_selection
    from brainscore_vision.model_helpers.brain_transformation.neural import LayerSelection

    table = {"V4": {"relu1": 0.1, "relu2": 0.3, "pool": 0.3}, "V1": {"relu1": np.nan, "relu2": 0.1, "pool": -np.inf}}

    def scorer(region, candidates):
        if region not in table:
            raise NoSelectionDataError(f"no selection data for {region}")
        return table[region]

    monkeypatch.setenv("BRAINSCORE_CACHE", "0")
    monkeypatch.setattr(native_selection, "layer_scorer", scorer)
    wrapper = reference_model().activations_model
    selection = LayerSelection("compat-smallconv", wrapper, LAYERS)
    assert selection(selection_identifier="V4") == "relu2"
    assert selection(selection_identifier="V1") == "relu2"
    rule = NativeCommitment("compat-smallconv", wrapper, LAYERS).commit_by_rule("IT")
    assert selection(selection_identifier="IT") == rule
    with pytest.raises(NotImplementedError, match="selection benchmarks"):
        selection(selection_identifier="V4", benchmark=object())

    scores = Score([0.1, 0.3, 0.2], coords={"layer": LAYERS}, dims=["layer"])  # as read back from a file: no attrs
    selection._layer_scoring = lambda **kwargs: scores
    assert LayerSelection._call.__wrapped__(selection, model_identifier="m", selection_identifier="IT",
                                            benchmark=None) == "relu2"
    selection._layer_scoring = lambda **kwargs: Score([np.nan, np.inf, np.nan], coords={"layer": LAYERS},
                                                      dims=["layer"])
    with pytest.raises(brainscore.errors.BrainScoreError, match="no layer has a finite score"):
        selection(selection_identifier="V4")
