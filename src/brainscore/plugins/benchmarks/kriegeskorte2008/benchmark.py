"""Construction of the Kriegeskorte 2008 RSA benchmarks (settings in ``__init__``)."""
from __future__ import annotations

from brainscore.registry import load_ceiling, load_dataset, load_metric
from brainscore.benchmarks.rsa import RSABenchmark

from . import BIBTEX_KIANI2007, BIBTEX_KRIEGESKORTE2008, BIBTEX_MUR2013

VERSION = 1
FMRI_VISUAL_DEGREES = 2.9  # Kriegeskorte et al. 2008: images 2.9 degrees wide in the scanner
MONKEY_VISUAL_DEGREES = 7.0  # Kiani et al. 2007, as read (see __init__)
TIME_BINS = [(70, 170)]


def human_it() -> RSABenchmark:
    """``Kriegeskorte2008.IT-rdm``: 8 human IT RDMs (4 subjects x 2 sessions), RSA noise ceiling over them."""
    return RSABenchmark(identifier="Kriegeskorte2008.IT-rdm", version=VERSION,
                        rdms=lambda: load_dataset("Kriegeskorte2008.IT"), region="IT",
                        visual_degrees=FMRI_VISUAL_DEGREES, number_of_trials=1, parent="IT",
                        similarity_metric=load_metric("rdm"), noise_ceiling=load_ceiling("rsa_noise_ceiling"),
                        bibtex=BIBTEX_KRIEGESKORTE2008, time_bins=TIME_BINS)


def monkey_it() -> RSABenchmark:
    """``Kiani2007.IT-rdm``: the single monkey IT RDM; no ceiling (1)."""
    return RSABenchmark(identifier="Kiani2007.IT-rdm", version=VERSION, rdms=lambda: load_dataset("Kiani2007.IT"),
                        region="IT", visual_degrees=MONKEY_VISUAL_DEGREES, number_of_trials=1,
                        similarity_metric=load_metric("rdm"), noise_ceiling=None,
                        parent="IT", bibtex=BIBTEX_KIANI2007, time_bins=TIME_BINS)


def judgements() -> RSABenchmark:
    """``Mur2013-rdm``: 16 subjects' judgement RDMs against the model's IT RDM, RSA noise ceiling over subjects."""
    return RSABenchmark(identifier="Mur2013-rdm", version=VERSION, rdms=lambda: load_dataset("Mur2013.judgements"),
                        region="IT", visual_degrees=FMRI_VISUAL_DEGREES, number_of_trials=1,
                        similarity_metric=load_metric("rdm"), noise_ceiling=load_ceiling("rsa_noise_ceiling"),
                        parent="behavior_vision", bibtex=BIBTEX_MUR2013, time_bins=TIME_BINS, label_coords=("subject",))
