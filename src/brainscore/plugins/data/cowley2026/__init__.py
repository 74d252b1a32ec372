"""Cowley, Stan, Pillow & Smith (2026): macaque V4 spike counts to natural images.

Cowley, B. R., Stan, P. L., Pillow, J. W. & Smith, M. A. "Compact deep neural network models of
the visual cortex." Nature 652:947 (2026), doi:10.1038/s41586-026-10150-1 (preprint bioRxiv
2023.11.22.568315). Data: github.com/cowleygroup/V4_compact_models (GPL-3.0), ``data_V4_responses``.

Registered
----------
- ``Cowley2026.210325``: per-repetition spike counts (50 neurons, 640 images, 6-10 repeats), one
  presentation per (image, repeat), NaN repeats dropped. Used by ``Cowley2026.210325.V4-pls``.
- ``Cowley2026.190923`` (33 x 1200), ``Cowley2026.201025`` (89 x 1200), ``Cowley2026.210224``
  (67 x 800): repeat-averaged counts only (one presentation per image, no ``repetition``), used
  to choose a model's V4 layer without touching the benchmark's session.
- Stimulus sets of the same names: 112 x 112 RGB JPEGs ``image0001.jpg`` ... in response order.

Packaging follows the reference's for this study: ``stimulus_id`` ``image0001``... (1-based, in
response order), ``object_name`` the 4-digit image number, ``repetition`` counted from 0,
``neuroid_id`` ``neuron_<i>`` (0-based), ``region`` ``V4``, one time bin 50-150 ms (the counts are
in a 100 ms window). Packaged assemblies are cached by the content hash of their source files.
"""
from brainscore.data.store import Source, declare
from brainscore.registry import register_dataset, register_stimulus_set

_COMMIT = "f4552ad9d34a466ebc66658f72a08a8e5038f1cf"
_URL = f"https://raw.githubusercontent.com/cowleygroup/V4_compact_models/{_COMMIT}/data_V4_responses"

IMAGES = {
    "190923": "e99a4df1c7476bdc4d565ff4408bc421976ecc3a22c41af6bfd0cfbddb508c0c",
    "201025": "3abb63679107665eab7220bdeaf7863832a1df943bf3d7792501f5082a55b2e8",
    "210224": "e2690810bee34c2e2821e5dd504c7970f3441579bc57659f27d2c11678b52c6b",
    "210325": "992774eca3508a2ad01accb1a31f5f3e3d90248c49f4eec314f2a915a263e454",
}
AVERAGED = {
    "190923": "741672d36541ce39930c8a3b5bd1cfd33c187aa47b1549c9c5569bc21aa97a28",
    "201025": "f729f3dc0d29aa38bd380c0da9e39aba916f9e2580949929b65d1714e7217a8a",
    "210224": "4dbb7367707a5ca47ab4cea863bbf4e9765b8409cb30216693721bddfad7abfe",
    "210325": "555e67037182611969ab90da291dcc39601de4411f651a64ad60e90572cf59d3",
}
RAW = {"210325": "4008dbbf31a47d9b1b8d8da609f4a7a3433c7071f0e45c611c220b217dd75b76"}

SOURCES = {
    **{f"images_{s}": Source(f"cowley2026_v4/images/images_{s}.zip", h, f"{_URL}/images/images_{s}.zip")
       for s, h in IMAGES.items()},
    **{f"averaged_{s}": Source(f"cowley2026_v4/responses_repeat_averaged/responses_{s}.npy", h,
                               f"{_URL}/responses_repeat_averaged/responses_{s}.npy")
       for s, h in AVERAGED.items()},
    **{f"raw_{s}": Source(f"cowley2026_v4/responses_raw/responses_{s}.npy", h,
                          f"{_URL}/responses_raw/responses_{s}.npy")
       for s, h in RAW.items()},
}
declare("Cowley2026", *SOURCES.values())


@register_stimulus_set("Cowley2026.210325")
def _stimuli_210325():
    from .packaging import load_stimulus_set
    return load_stimulus_set("210325")


@register_stimulus_set("Cowley2026.190923")
def _stimuli_190923():
    from .packaging import load_stimulus_set
    return load_stimulus_set("190923")


@register_stimulus_set("Cowley2026.201025")
def _stimuli_201025():
    from .packaging import load_stimulus_set
    return load_stimulus_set("201025")


@register_stimulus_set("Cowley2026.210224")
def _stimuli_210224():
    from .packaging import load_stimulus_set
    return load_stimulus_set("210224")


@register_dataset("Cowley2026.210325")
def _data_210325():
    from .packaging import load_repetitions
    return load_repetitions("210325")


@register_dataset("Cowley2026.190923")
def _data_190923():
    from .packaging import load_averaged
    return load_averaged("190923")


@register_dataset("Cowley2026.201025")
def _data_201025():
    from .packaging import load_averaged
    return load_averaged("201025")


@register_dataset("Cowley2026.210224")
def _data_210224():
    from .packaging import load_averaged
    return load_averaged("210224")
