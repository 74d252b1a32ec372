"""V1 single-neuron property data of four macaque studies and the grating stimuli that measure them.

The data behind the Marques, Schrimpf & DiCarlo (2021) V1 property benchmarks ("Multi-scale
hierarchical neural network models that bridge from single neurons in the primate primary visual
cortex to object recognition behavior", bioRxiv 2021.03.01.433495):

- De Valois, Yund & Hepler (1982), Vision Research 22:531-544: preferred orientation (385 cells);
- De Valois, Albrecht & Thorell (1982), Vision Research 22:545-559: peak spatial frequency (363);
- Schiller, Finlay & Volman (1976), J. Neurophysiol. 39:1334-1351: spatial-frequency selectivity
  and bandwidth (87);
- Cavanaugh, Bair & Movshon (2002), J. Neurophysiol. 88:2530-2546: surround suppression index,
  grating summation field, surround diameter (190).

Registered
----------
Datasets (:class:`~brainscore.data.PropertiesAssembly`, ``neuroid x neuronal_property``, built
from the published histograms shipped in ``histograms.json``; see :mod:`.histograms`):
``DeValois1982a``, ``DeValois1982b``, ``Schiller1976c``, ``Cavanaugh2002a`` (the reference's
names).

Stimulus sets (rendered from parameters on first use; see :mod:`.gratings`):
``Marques2020_blank`` (1), ``Marques2020_receptive_field`` (3528), ``Marques2020_orientation``
(1152), ``Marques2020_spatial_frequency`` (2112), ``Marques2020_size`` (2304), and
``Marques2020_V1``, all five in one (9097 images), which the benchmarks record in one pass.
"""
from brainscore.registry import register_dataset, register_stimulus_set


@register_dataset("DeValois1982a")
def _devalois1982a():
    from .histograms import load
    return load("DeValois1982a")


@register_dataset("DeValois1982b")
def _devalois1982b():
    from .histograms import load
    return load("DeValois1982b")


@register_dataset("Schiller1976c")
def _schiller1976c():
    from .histograms import load
    return load("Schiller1976c")


@register_dataset("Cavanaugh2002a")
def _cavanaugh2002a():
    from .histograms import load
    return load("Cavanaugh2002a")


@register_stimulus_set("Marques2020_blank")
def _blank():
    from .gratings import stimulus_set
    return stimulus_set("Marques2020_blank")


@register_stimulus_set("Marques2020_receptive_field")
def _receptive_field():
    from .gratings import stimulus_set
    return stimulus_set("Marques2020_receptive_field")


@register_stimulus_set("Marques2020_orientation")
def _orientation():
    from .gratings import stimulus_set
    return stimulus_set("Marques2020_orientation")


@register_stimulus_set("Marques2020_spatial_frequency")
def _spatial_frequency():
    from .gratings import stimulus_set
    return stimulus_set("Marques2020_spatial_frequency")


@register_stimulus_set("Marques2020_size")
def _size():
    from .gratings import stimulus_set
    return stimulus_set("Marques2020_size")


@register_stimulus_set("Marques2020_V1")
def _all():
    from .gratings import stimulus_set
    return stimulus_set("Marques2020_V1")
