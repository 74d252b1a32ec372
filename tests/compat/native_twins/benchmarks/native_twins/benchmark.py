"""The native twin of ``CompatCowleyV4Sparseness``: same property, data, metric, bins and settings."""
import numpy as np

from brainscore.benchmarks.properties import PropertiesBenchmark
from brainscore.data import PropertiesAssembly
from brainscore.data.assemblies import average_repetition
from brainscore.registry import load_ceiling, load_dataset, load_metric, load_stimulus_set

BINS = np.linspace(0, 1, 21)


def lifetime_sparseness(responses):
    responses = np.clip(np.asarray(responses, dtype=float), 0, None)
    n = responses.shape[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = responses.mean(axis=0) ** 2 / (responses ** 2).mean(axis=0)
    return (1 - ratio) / (1 - 1 / n)


def _properties(values, neuroid_ids):
    keep = np.isfinite(values)
    return PropertiesAssembly(values[keep, np.newaxis], dims=("neuroid", "neuronal_property"), coords={
        "neuroid_id": ("neuroid", np.asarray(neuroid_ids)[keep]),
        "neuronal_property": ("neuronal_property", ["lifetime_sparseness"])})


def _data():
    averaged = average_repetition(load_dataset("Cowley2026.210325")).squeeze("time_bin", drop=True)
    return _properties(lifetime_sparseness(averaged.transpose("presentation", "neuroid").values),
                       averaged["neuroid_id"].values)


def _model_property(responses, stimuli):
    return _properties(lifetime_sparseness(responses.transpose("presentation", "neuroid").values),
                       responses["neuroid_id"].values)


def sparseness_benchmark():
    return PropertiesBenchmark(
        identifier="NativeCowley2026.210325.V4-sparseness", version=1, assembly=_data,
        stimulus_set=lambda: load_stimulus_set("Cowley2026.210325"), property_func=_model_property,
        similarity_metric=load_metric("ks_similarity", "lifetime_sparseness", bins=BINS),
        ceiling_func=load_ceiling("ks_similarity", "lifetime_sparseness", bins=BINS), visual_degrees=11.2,
        number_of_trials=1, region="V4", parent="V4", time_bins=[(70, 170)])
