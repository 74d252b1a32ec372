"""Per-neuron property values of four V1 studies, from the published histograms (``histograms.json``).

Each study's figures give neuron counts per bin, not per-neuron values. The reference
(Marques, Schrimpf & DiCarlo 2021; ``gen_sample`` in brain-score/vision) turns counts into values
by drawing ``count`` values uniformly inside each bin (uniformly in log2 for log2 bins) from
numpy's global generator *without a seed*, so its stored values are one unrepeatable draw. Here
the same draw is made with a fixed seed (:data:`SEED`, one generator per study, properties in
file order). This choice cannot change a score or a ceiling: every value lies strictly inside its
bin, and ``ks_similarity`` only ever sees the data through their histogram over the same bins (and
their number of rows), which equals the published counts whatever the seed (tested).

Binary properties (``spatial_frequency_selective``, ``strongly_suppressed``) are ``count[0]``
zeros followed by ``count[1]`` ones, as the reference stores them. A property measured on fewer
cells than the study has rows gets NaN rows first, so that every column has the study's row count
(the bootstrap of ``ks_similarity`` draws as many model values as there are rows, NaN included).
Row i of one property has nothing to do with row i of another.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from brainscore.data.assemblies import PropertiesAssembly

HISTOGRAMS = json.loads(Path(__file__).with_name("histograms.json").read_text())
#: Seed of the within-bin draws (any seed gives the same histograms, hence the same scores).
SEED = 0
STUDIES = tuple(HISTOGRAMS["studies"])


def bin_edges(study: str, property_name: str) -> np.ndarray:
    """The bin edges of a property, bit-identical to the reference's (``numpy.linspace`` where it uses one)."""
    entry = HISTOGRAMS["studies"][study]["properties"][property_name]
    if "edges_linspace" in entry:
        start, stop, num = entry["edges_linspace"]
        return np.linspace(start, stop, int(num))
    return np.asarray(entry["edges"], dtype=float)


def sample_values(counts, edges, scale: str, kind: str, rng: np.random.Generator) -> np.ndarray:
    """Values with histogram ``counts`` over ``edges``.

    Parameters
    ----------
    counts : sequence of int, length K
    edges : ndarray of shape (K + 1,)
    scale : {"linear", "log2"}
        Space in which values are uniform inside a bin.
    kind : {"uniform_within_bin", "binary"}
        ``binary``: ``counts[0]`` zeros then ``counts[1]`` ones.
    rng : numpy Generator

    Returns
    -------
    ndarray of shape (sum(counts),)
    """
    counts = np.asarray(counts, dtype=int)
    if kind == "binary":
        return np.repeat([0.0, 1.0], counts)
    low, high = np.repeat(edges[:-1], counts), np.repeat(edges[1:], counts)
    if scale == "log2":
        return 2.0 ** rng.uniform(np.log2(low), np.log2(high))
    return rng.uniform(low, high)


def load(study: str, seed: int = SEED) -> PropertiesAssembly:
    """The PropertiesAssembly of ``study`` (``DeValois1982a``, ``DeValois1982b``, ``Schiller1976c``, ``Cavanaugh2002a``).

    Returns
    -------
    PropertiesAssembly
        ``neuroid x neuronal_property`` (n_rows x properties, NaN rows first where a property was
        measured on fewer cells), coordinates ``neuroid_id``, ``region`` ("V1"); attrs
        ``<property>_bins`` (edges), ``number_of_trials`` (20), ``stimulus_set_identifier``,
        ``citation``, ``seed``.

    Raises
    ------
    ValueError
        For an unknown study.
    """
    if study not in HISTOGRAMS["studies"]:
        raise ValueError(f"unknown Marques 2020 study {study!r}; known: {list(STUDIES)}")
    entry = HISTOGRAMS["studies"][study]
    n_rows = int(entry["n_rows"])
    rng = np.random.default_rng(seed)
    names = list(entry["properties"])
    values = np.full((n_rows, len(names)), np.nan)
    attrs = {}
    for j, name in enumerate(names):
        prop = entry["properties"][name]
        edges = bin_edges(study, name)
        column = sample_values(prop["counts"], edges, prop["scale"], prop["values"], rng)
        if len(column) + int(prop["nan_rows"]) != n_rows:
            raise ValueError(f"{study}.{name}: {len(column)} counted + {prop['nan_rows']} NaN rows != {n_rows} rows")
        values[int(prop["nan_rows"]):, j] = column
        attrs[f"{name}_bins"] = edges
    assembly = PropertiesAssembly(values, dims=("neuroid", "neuronal_property"),
                                  coords={"neuroid_id": ("neuroid", np.array([f"{study}.{i}" for i in range(n_rows)],
                                                                             dtype=object)),
                                          "region": ("neuroid", np.full(n_rows, "V1", dtype=object)),
                                          "neuronal_property": names})
    assembly.attrs.update(attrs)
    assembly.attrs.update(number_of_trials=int(entry["number_of_trials"]), stimulus_set_identifier=entry["stimulus_set"],
                          citation=entry["citation"], seed=seed, identifier=study)
    return assembly
