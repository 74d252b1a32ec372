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


def rank_matching_features(rdms: np.ndarray, stimulus_ids, region: str = "IT"):
    """Features whose RDM (1 - Pearson r) has the ranks of the mean of the measured RDMs' ranks, as a submitter
    who reads the public RDMs can build them (issue 36).

    Off the diagonal the stimuli's correlations are ``0.01 (1 - rank / max rank)``: a diagonally dominant
    (so positive definite) matrix ``C``; its Cholesky factor ``L`` (``L Lᵀ = C``) and ``-L`` side by side give
    rows of zero mean whose Pearson correlations are ``C``.
    """
    from scipy.stats import rankdata

    from brainscore.data.assemblies import NeuroidAssembly

    ranked = np.stack([rankdata(r[IU]) for r in rdms]).mean(axis=0)
    ranks = rankdata(ranked)
    correlation = np.eye(92)
    correlation[IU] = 0.01 * (1 - ranks / ranks.max())
    correlation = correlation + np.triu(correlation, 1).T
    factor = np.linalg.cholesky(correlation)
    values = np.concatenate([factor, -factor], axis=1)
    n = values.shape[1]
    return NeuroidAssembly(values, dims=("presentation", "neuroid"),
                           coords={"stimulus_id": ("presentation", np.asarray(stimulus_ids)),
                                   "neuroid_id": ("neuroid", [f"n{i}" for i in range(n)]),
                                   "region": ("neuroid", [region] * n)})


@pytest.mark.parametrize("identifier, dataset, degrees", [("Kriegeskorte2008.IT-rdm", "Kriegeskorte2008.IT", 2.9),
                                                          ("Mur2013-rdm", "Mur2013.judgements", 2.9),
                                                          ("Kiani2007.IT-rdm", "Kiani2007.IT", 7.0)])
def test_a_model_copying_the_public_rdms_ranks_scores_at_most_one(identifier, dataset, degrees, tmp_path, monkeypatch):
    """Issue 36: features whose RDM reproduces the public RDMs' ranks got Kriegeskorte2008.IT-rdm 1.0106 and
    Mur2013-rdm 1.0027 as done scores. A ceiled score lies in [0, 1]: it is clipped, the unclipped value is kept
    (attrs and the record's provenance), and the results database refuses a done RSA score above 1."""
    from brainscore.results import Database, InvalidScore, record
    from brainscore.scoring.outcome import Outcome

    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    data = brainscore.load_dataset(dataset)
    rdms = np.asarray(data.transpose("rdm", "presentation", "presentation_b").values)
    features = rank_matching_features(rdms, data["stimulus_id"].values)
    score = brainscore.score("copy-net", identifier, model=PrecomputedFeatures(features, visual_degrees=degrees),
                             bootstrap=50)
    unclipped = float(score.raw) / float(score.ceiling)
    assert float(score.raw) > 0.5 and float(score) == pytest.approx(min(unclipped, 1.0), abs=1e-12)
    assert 0.0 <= float(score) <= 1.0 and score.attrs["unbounded"] == pytest.approx(unclipped, abs=1e-12)
    assert score.attrs["provenance"]["unclipped_score"] == pytest.approx(unclipped, abs=1e-12)
    assert score.attrs["formula"] == ("raw" if identifier == "Kiani2007.IT-rdm" else "raw_over_ceiling_clipped")
    low, high = score.attrs["ci95"]
    assert 0.0 <= low <= high <= 1.0  # the bootstrap's samples are clipped as the score is
    if identifier == "Kriegeskorte2008.IT-rdm":
        assert unclipped > 1.0  # the raw/ceiling above 1 the issue saw: clipped to 1
    assert brainscore.load_benchmark(identifier).score_range == (0.0, 1.0)
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    record(Outcome.from_score(score), url)
    stored, = Database(url).scores("copy-net")
    assert stored.score <= 1.0 and stored.raw == pytest.approx(float(score.raw))
    assert stored.ceiling == pytest.approx(float(score.ceiling))
    assert stored.provenance["unclipped_score"] == pytest.approx(unclipped, abs=1e-12)
    forged = Outcome.from_score(score).replace(score=unclipped if unclipped > 1 else 1.01)
    with pytest.raises(InvalidScore, match="outside"):  # a done RSA score above 1 is never recorded
        record(forged, url)
