"""The benchmarks of the ``compat_cowley2026`` plugin (settings as the Cowley 2026 benchmarks': 11.2 degrees,
14 trials, PLS with plain shuffle splits, the internal consistency of even/odd repetitions as the ceiling)."""
import numpy as np

from brainscore_core.supported_data_standards.brainio.assemblies import PropertiesAssembly
from brainscore_vision import load_ceiling, load_dataset, load_metric
from brainscore_vision.benchmark_helpers.neural_common import NeuralBenchmark, average_repetition, explained_variance
from brainscore_vision.benchmark_helpers.properties_common import PropertiesBenchmark
from brainscore_vision.benchmark_helpers.screen import place_on_screen
from brainscore_vision.benchmarks import BenchmarkBase
from brainscore_vision.model_interface import BrainModel
from brainscore_vision.utils import LazyLoad

BIBTEX = """@article{cowley2026compact,
  title={Compact deep neural network models of the visual cortex},
  author={Cowley, Benjamin R. and Stan, Patricia L. and Pillow, Jonathan W. and Smith, Matthew A.},
  journal={Nature}, volume={652}, pages={947}, year={2026}
}"""
VISUAL_DEGREES = 11.2
NUMBER_OF_TRIALS = 14
SPARSENESS_BINS = np.linspace(0, 1, 21)


def load_assembly(average_repetitions):
    assembly = load_dataset('CompatCowley2026.210325')
    if average_repetitions:
        return average_repetition(assembly)
    # the split-half halves are even and odd repetitions, so every image is in both
    assembly = assembly.squeeze('time_bin')
    return assembly.assign_coords(repetition=('presentation', assembly['repetition'].values % 2))


def pls():
    return load_metric('pls', crossvalidation_kwargs=dict(stratification_coord=None))  # no object categories


def CompatCowleyV4PLS():
    assembly = load_assembly(average_repetitions=True)
    assembly_repetition = load_assembly(average_repetitions=False)
    ceiler = load_ceiling('internal_consistency')
    return NeuralBenchmark(identifier='CompatCowley2026.210325.V4-pls', version=1, assembly=assembly,
                           similarity_metric=pls(), visual_degrees=VISUAL_DEGREES, number_of_trials=NUMBER_OF_TRIALS,
                           ceiling_func=lambda: ceiler(assembly_repetition), parent='V4', bibtex=BIBTEX)


def lifetime_sparseness(responses):
    """``(1 - mean(r)^2 / mean(r^2)) / (1 - 1/n)`` of each neuroid's non-negative responses to ``n`` images
    (Vinje & Gallant 2000, Science 287:1273); ``responses``: images x neuroids."""
    responses = np.clip(np.asarray(responses, dtype=float), 0, None)
    n = responses.shape[0]
    with np.errstate(invalid='ignore', divide='ignore'):
        ratio = responses.mean(axis=0) ** 2 / (responses ** 2).mean(axis=0)
    return (1 - ratio) / (1 - 1 / n)


def sparseness_property(responses):
    """The model's lifetime sparseness per neuroid (units that never respond have none and are left out)."""
    values = lifetime_sparseness(responses.transpose('presentation', 'neuroid').values)
    keep = np.isfinite(values)
    return PropertiesAssembly(values[keep, np.newaxis], coords={
        'neuroid_id': ('neuroid', np.asarray(responses['neuroid_id'].values)[keep]),
        'neuronal_property': ('neuronal_property', ['lifetime_sparseness'])}, dims=['neuroid', 'neuronal_property'])


def CompatCowleyV4Sparseness():
    assembly = LazyLoad(lambda: load_dataset('CompatCowley2026.210325.sparseness'))
    similarity_metric = load_metric('ks_similarity', property_name='lifetime_sparseness', bins=SPARSENESS_BINS)
    ceiler = load_ceiling('ks_similarity', property_name='lifetime_sparseness', bins=SPARSENESS_BINS)
    return PropertiesBenchmark(identifier='CompatCowley2026.210325.V4-sparseness', assembly=assembly,
                               neuronal_property=sparseness_property, similarity_metric=similarity_metric,
                               timebins=[(70, 170)], ceiling_func=ceiler, parent='V4', bibtex=BIBTEX,
                               visual_degrees=VISUAL_DEGREES, number_of_trials=1)


class CompatCowleyV4ByHand(BenchmarkBase):
    """The PLS benchmark with its own ``__call__``, as the guide's Kar2019 and Bracci2019 examples."""

    def __init__(self):
        self._assembly = LazyLoad(lambda: load_assembly(average_repetitions=True).squeeze('time_bin'))
        self._assembly_repetition = LazyLoad(lambda: load_assembly(average_repetitions=False))
        self._similarity_metric = pls()
        self._visual_degrees = VISUAL_DEGREES
        ceiler = load_ceiling('internal_consistency')
        super().__init__(identifier='CompatCowley2026.210325.V4-pls_by_hand', version=1,
                         ceiling_func=lambda: ceiler(self._assembly_repetition), parent='V4', bibtex=BIBTEX)

    def __call__(self, candidate: BrainModel):
        candidate.start_recording('V4', time_bins=[(50, 150)])
        stimulus_set = place_on_screen(self._assembly.stimulus_set, target_visual_degrees=candidate.visual_degrees(),
                                       source_visual_degrees=self._visual_degrees)
        recordings = candidate.look_at(stimulus_set, number_of_trials=NUMBER_OF_TRIALS).squeeze('time_bin')
        raw_score = self._similarity_metric(recordings, self._assembly)
        return explained_variance(raw_score, self.ceiling)
