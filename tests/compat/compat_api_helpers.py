"""Helpers of the compat-API tests: real data and cheap, deterministic models."""
from __future__ import annotations

import functools

import brainscore
from benchmark_helpers import pixel_features
from brainscore.models.precomputed import PrecomputedFeatures

#: The native Cowley 2026 V4 benchmark's settings (src/brainscore/plugins/benchmarks/cowley2026).
COWLEY = "Cowley2026.210325"
COWLEY_BENCHMARK = "Cowley2026.210325.V4-pls"
COWLEY_DEGREES = 11.2
COWLEY_TRIALS = 14


@functools.lru_cache(maxsize=None)
def cowley_pixels(region: str = "V4") -> PrecomputedFeatures:
    """A real, deterministic 'model' of the Cowley images: 7x7-pixel block means (768 features), at 11.2 degrees."""
    stimuli = brainscore.load_stimulus_set(COWLEY)
    return PrecomputedFeatures(pixel_features(stimuli, region=region), visual_degrees=COWLEY_DEGREES,
                               identifier="cowley-pixels")


def even_odd(assembly):
    """The native Cowley ceiling's relabelling: each presentation's repetition becomes ``repetition % 2``."""
    return assembly.assign_coords(repetition=("presentation", assembly["repetition"].values % 2))
