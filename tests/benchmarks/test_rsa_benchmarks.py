"""RSA benchmarks on the 92 images: ceilings and scores against an independent scipy computation."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

import brainscore
from brainscore.benchmarks.rsa import RSABenchmark
from brainscore.models.precomputed import PrecomputedFeatures

IU = np.triu_indices(92, 1)


def nili_upper_bound(rdms: np.ndarray) -> float:
    """Mean over RDMs of Spearman(RDM, mean of all RDMs), upper triangles (Nili et al. 2014)."""
    mean = rdms.mean(axis=0)
    return float(np.mean([spearmanr(r[IU], mean[IU]).statistic for r in rdms]))


def nili_lower_bound(rdms: np.ndarray) -> float:
    n = len(rdms)
    return float(np.mean([spearmanr(rdms[i][IU], np.delete(rdms, i, axis=0).mean(axis=0)[IU]).statistic
                          for i in range(n)]))


def mean_rsa(features: np.ndarray, rdms: np.ndarray) -> float:
    """Mean over RDMs of Spearman(1 - Pearson r of the features' rows, RDM), upper triangles."""
    model = 1 - np.corrcoef(features)
    return float(np.mean([spearmanr(model[IU], r[IU]).statistic for r in rdms]))


@pytest.mark.parametrize("identifier, dataset", [("Kriegeskorte2008.IT-rdm", "Kriegeskorte2008.IT"),
                                                 ("Mur2013-rdm", "Mur2013.judgements")])
def test_rsa_ceiling_is_the_nili_upper_bound(identifier, dataset):
    benchmark = brainscore.load_benchmark(identifier)
    rdms = brainscore.load_dataset(dataset).values
    ceiling = benchmark.ceiling
    assert float(ceiling) == pytest.approx(nili_upper_bound(rdms), abs=1e-9)
    assert ceiling.attrs["lower_bound_loo"] == pytest.approx(nili_lower_bound(rdms), abs=1e-9)
    assert ceiling.attrs["lower_bound_loo"] < float(ceiling) < 1


@pytest.mark.parametrize("identifier, upper, lower", [("Kriegeskorte2008.IT-rdm", 0.5195, 0.3266),
                                                     ("Mur2013-rdm", 0.5751, 0.4776)])
def test_ceiling_values(identifier, upper, lower):
    """Measured on the real RDMs: 8 human IT session RDMs, 16 judgement RDMs."""
    ceiling = brainscore.load_benchmark(identifier).ceiling
    assert float(ceiling) == pytest.approx(upper, abs=5e-5)
    assert ceiling.attrs["lower_bound_loo"] == pytest.approx(lower, abs=5e-5)


def test_kiani_has_no_ceiling():
    benchmark = brainscore.load_benchmark("Kiani2007.IT-rdm")
    assert float(benchmark.ceiling) == 1 and benchmark.parent == "IT"


@pytest.mark.parametrize("identifier, dataset, degrees", [("Kriegeskorte2008.IT-rdm", "Kriegeskorte2008.IT", 2.9),
                                                          ("Kiani2007.IT-rdm", "Kiani2007.IT", 7.0),
                                                          ("Mur2013-rdm", "Mur2013.judgements", 2.9)])
def test_score_of_pixel_features(identifier, dataset, degrees, pixels92):
    """The pixels of the 92 images as a model: score = mean Spearman over RDMs / ceiling, computed with scipy."""
    benchmark = brainscore.load_benchmark(identifier)
    assert benchmark.visual_degrees == degrees
    model = PrecomputedFeatures(pixels92, visual_degrees=degrees)  # no placing on screen: the features fit as stored
    score = benchmark(model)
    rdms = brainscore.load_dataset(dataset).values
    order = np.argsort(pixels92["stimulus_id"].values)
    expected_raw = mean_rsa(pixels92.values[order], rdms)
    assert float(score.raw) == pytest.approx(expected_raw, abs=1e-6)
    ceiling = nili_upper_bound(rdms) if len(rdms) > 1 else 1.0
    assert float(score) == pytest.approx(expected_raw / ceiling, abs=1e-6)
    assert float(score.ceiling) == pytest.approx(ceiling, abs=1e-9)
    assert len(score.raw.raw) == len(rdms)


def test_identical_rdms_score_one():
    """A model whose RDM is each subject's RDM: every Spearman is 1, so raw 1 and score 1 / ceiling."""
    rdms = brainscore.load_dataset("Kriegeskorte2008.IT")
    twin = rdms.isel(rdm=[0, 0, 0])
    benchmark = RSABenchmark("test-rdm", 1, rdms=twin.assign_coords(subject=("rdm", ["a", "b", "c"])), region="IT",
                             visual_degrees=2.9, similarity_metric=brainscore.load_metric("rdm"),
                             noise_ceiling=brainscore.load_ceiling("rsa_noise_ceiling"))
    # features whose correlation distance is the RDM itself are hard to build; score the RDM directly
    value = float(benchmark.metric(twin.isel(rdm=0).drop_vars(["subject", "session", "name", "region", "species"]),
                                   twin.isel(rdm=1)))
    assert value == pytest.approx(1.0)
    assert float(benchmark.ceiling) == pytest.approx(1.0)
