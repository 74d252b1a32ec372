"""RDM, Spearman, CKA kernels; the rdm/cka metrics; the RSA noise ceiling.

Checked against hand-worked cases, scipy, brute-force definitions, reference-style computations
(``np.corrcoef`` + ``scipy.stats.spearmanr``, CKA with explicit centring matrices, scikit-learn's
splitters) and the Kriegeskorte et al. (2008) human IT and behavioural RDMs.
"""
from __future__ import annotations

import itertools
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.stats
import torch
from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit

from brainscore.data.assemblies import DataAssembly, NeuroidAssembly
from brainscore.errors import AlignmentError, ValidationError
from brainscore.metrics.ceilings.rsa import RSANoiseCeiling
from brainscore.metrics.similarity import rdm as rsa
from brainscore.metrics.similarity.cka import CKACrossValidated, CKAMetric
from brainscore.metrics.kernels import cka as CK
from brainscore.metrics.kernels import rdm as RK


# ---- helpers: reference-style computations ------------------------------------------------------
def reference_rdm_triangle(values: np.ndarray, ids: np.ndarray) -> np.ndarray:
    order = np.argsort(ids)
    rdm = 1 - np.corrcoef(values[order])
    return rdm[np.triu_indices(len(ids), k=1)]


def centring_matrix(n: int) -> np.ndarray:
    return np.eye(n) - np.ones((n, n)) / n


def reference_cka_biased(X: np.ndarray, Y: np.ndarray) -> float:
    H = centring_matrix(len(X))

    def hsic(A, B):
        return np.sum((H @ (A @ A.T) @ H) * (H @ (B @ B.T) @ H))

    return hsic(X, Y) / (np.sqrt(hsic(X, X)) * np.sqrt(hsic(Y, Y)))


def reference_hsic_unbiased(Kx: np.ndarray, Ly: np.ndarray) -> float:
    n = len(Kx)
    Kt, Lt = Kx.copy(), Ly.copy()
    np.fill_diagonal(Kt, 0)
    np.fill_diagonal(Lt, 0)
    one = np.ones(n)
    return (np.trace(Kt @ Lt) + (one @ Kt @ one) * (one @ Lt @ one) / ((n - 1) * (n - 2))
            - 2 / (n - 2) * (one @ Kt @ Lt @ one)) / (n * (n - 3))


def reference_cka_unbiased(X: np.ndarray, Y: np.ndarray) -> float:
    Kx, Ly = X @ X.T, Y @ Y.T
    xx, yy = reference_hsic_unbiased(Kx, Kx), reference_hsic_unbiased(Ly, Ly)
    if xx * yy <= 0:
        return 0.0
    return reference_hsic_unbiased(Kx, Ly) / (np.sqrt(xx * yy) + 1e-12)


def neuroid_assembly(values: np.ndarray, ids, **presentation_coords) -> NeuroidAssembly:
    coords = {"stimulus_id": ("presentation", np.asarray(ids)),
              "neuroid_id": ("neuroid", np.arange(values.shape[1]))}
    coords.update({k: ("presentation", np.asarray(v)) for k, v in presentation_coords.items()})
    return NeuroidAssembly(values, dims=("presentation", "neuroid"), coords=coords)


@pytest.fixture
def pair():
    """Two related representations of 80 stimuli, in different presentation orders, 4 objects."""
    rng = np.random.default_rng(0)
    n = 80
    ids = np.array([f"im{i:03d}" for i in rng.permutation(n)])
    objects = np.array(list("abcd") * (n // 4))
    X = rng.normal(size=(n, 50))
    Y = X[:, :10] @ rng.normal(size=(10, 15)) + rng.normal(size=(n, 15))
    perm = rng.permutation(n)
    source = neuroid_assembly(X, ids, object_name=objects)
    target = neuroid_assembly(Y[perm], ids[perm], object_name=objects[perm])
    return dict(X=X, Y=Y, ids=ids, objects=objects, perm=perm, source=source, target=target)


# ---- RDM kernel ---------------------------------------------------------------------------------
def test_rdm_of_three_stimuli_by_hand():
    X = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0], [1.0, 2.0, 4.0]])
    r02 = 3 / (np.sqrt(2) * np.sqrt(42) / 3)  # centred (-1,0,1)·(-4/3,-1/3,5/3) / norms
    expected = np.array([[0, 2, 1 - r02], [2, 0, 1 + r02], [1 - r02, 1 + r02, 0]])
    np.testing.assert_allclose(RK.correlation_rdm(X), expected, atol=1e-12)


def test_rdm_four_stimuli_perfectly_correlated_pairs():
    X = np.array([[0.0, 1.0], [0.0, 2.0], [1.0, 0.0], [5.0, 3.0]])
    rdm = RK.correlation_rdm(X)
    # with 2 neuroids every pattern is +-1 correlated: 0 or 2
    np.testing.assert_allclose(rdm, [[0, 0, 2, 2], [0, 0, 2, 2], [2, 2, 0, 0], [2, 2, 0, 0]], atol=1e-12)


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 1e-6)])
def test_rdm_matches_corrcoef(dtype, tol):
    X = np.random.default_rng(1).normal(size=(120, 300))
    expected = 1 - np.corrcoef(X)
    np.fill_diagonal(expected, 0)
    np.testing.assert_allclose(RK.correlation_rdm(X, dtype=dtype), expected, atol=tol)
    np.testing.assert_allclose(RK.stimulus_correlation_matrix(X, dtype=dtype), np.corrcoef(X), atol=tol)


def test_rdm_torch_equals_numpy():
    X = np.random.default_rng(2).normal(size=(60, 40))
    np.testing.assert_allclose(RK.correlation_rdm(torch.from_numpy(X)).numpy(), RK.correlation_rdm(X), atol=1e-12)


def test_rdm_constant_stimulus_is_nan_like_corrcoef():
    X = np.random.default_rng(3).normal(size=(5, 10))
    X[2] = 4.0
    rdm = RK.correlation_rdm(X)
    assert np.isnan(rdm[2]).all() and np.isnan(rdm[:, 2]).all()
    assert not np.isnan(np.delete(np.delete(rdm, 2, 0), 2, 1)).any()


def test_rdm_rejects_bad_shapes():
    with pytest.raises(ValueError, match="2-D"):
        RK.correlation_rdm(np.zeros(5))
    with pytest.raises(ValueError, match="at least 2 neuroids"):
        RK.correlation_rdm(np.zeros((5, 1)))


# ---- ranks and Spearman -------------------------------------------------------------------------
@pytest.mark.parametrize("ties", [False, True])
def test_rank_and_spearman_match_scipy(ties):
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=2000), rng.normal(size=2000) + 0.0
    y = y + 0.3 * x
    if ties:
        x, y = np.round(x, 1), np.round(y, 1)
    np.testing.assert_array_equal(RK.rankdata_average(x), scipy.stats.rankdata(x))
    np.testing.assert_array_equal(RK.rankdata_average(torch.from_numpy(x)).numpy(), scipy.stats.rankdata(x))
    expected = scipy.stats.spearmanr(x, y)[0]
    assert RK.spearman(x, y) == pytest.approx(expected, abs=1e-12)
    assert RK.spearman(torch.from_numpy(x), torch.from_numpy(y)) == pytest.approx(expected, abs=1e-12)
    assert RK.pearson(x, y) == pytest.approx(scipy.stats.pearsonr(x, y)[0], abs=1e-12)


def test_spearman_by_hand_and_nan():
    assert RK.spearman(np.array([1.0, 2, 3, 4]), np.array([10.0, 20, 30, 40])) == pytest.approx(1.0)
    assert RK.spearman(np.array([1.0, 2, 3, 4]), np.array([4.0, 3, 2, 1])) == pytest.approx(-1.0)
    # ranks (1, 2, 3.5, 3.5) vs (1, 2, 3, 4): Pearson = 2.5/ sqrt(4.5 * 5) ... computed by hand
    a, b = np.array([1.0, 2.0, 3.5, 3.5]) - 2.5, np.array([1.0, 2, 3, 4]) - 2.5
    assert RK.spearman(np.array([1.0, 2, 5, 5]), np.array([1.0, 2, 3, 4])) == pytest.approx(
        (a @ b) / np.sqrt((a @ a) * (b @ b)))
    assert np.isnan(RK.spearman(np.array([1.0, np.nan, 3]), np.array([1.0, 2, 3])))


@pytest.mark.parametrize("ties", [False, True])
def test_subset_ranks_equal_ranks_of_the_subset(ties):
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=3000), rng.normal(size=3000)
    if ties:
        x, y = np.round(x, 1), np.round(y, 1)
    rx, ry = RK.SubsetRanks(x), RK.SubsetRanks(y)
    for _ in range(3):
        select = rng.random(3000) < 0.8
        np.testing.assert_array_equal(rx.ranks(select), scipy.stats.rankdata(x[select]))
        assert RK.subset_spearman(rx, ry, select) == pytest.approx(
            scipy.stats.spearmanr(x[select], y[select])[0], abs=1e-12)


# ---- CKA kernel ---------------------------------------------------------------------------------
def test_cka_identical_and_invariances():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(40, 12))
    Q, _ = np.linalg.qr(rng.normal(size=(12, 12)))
    for unbiased in (True, False):
        assert CK.linear_cka(X, X, unbiased=unbiased) == pytest.approx(1.0, abs=1e-9)
        assert CK.linear_cka(X, 3.0 * X @ Q, unbiased=unbiased) == pytest.approx(1.0, abs=1e-9)
        # a constant shift of the features changes nothing (centring; the U-statistic is shift invariant)
        assert CK.linear_cka(X, X + 5.0, unbiased=unbiased) == pytest.approx(1.0, abs=1e-9)


def test_cka_orthogonal_representations_by_hand():
    # centred patterns (1,-1,0,0) and (0,0,1,-1): centred Gram matrices are orthogonal, biased CKA 0
    X = np.array([[1.0], [-1.0], [0.0], [0.0]])
    Y = np.array([[0.0], [0.0], [1.0], [-1.0]])
    assert CK.linear_cka_biased(X, Y) == pytest.approx(0.0, abs=1e-15)
    # unbiased, n=4: hsic = [tr(K̃L̃) + 1ᵀK̃1 1ᵀL̃1/6 - 1ᵀK̃L̃1] / 4; K̃ has -1 at (0,1),(1,0), L̃ at (2,3),(3,2):
    # tr = 0, sums -2 and -2, K̃1 = (-1,-1,0,0), L̃1 = (0,0,-1,-1) -> 1ᵀK̃L̃1 = 0: hsic_xy = (4/6)/4 = 1/6
    # hsic_xx = [2 + 4/6 - 2·2/2] / 4 = (2/3)/4 = 1/6, the same for Y: CKA = 1
    assert CK.hsic_unbiased(X @ X.T, Y @ Y.T) == pytest.approx(1 / 6)
    assert CK.hsic_unbiased(X @ X.T, X @ X.T) == pytest.approx(1 / 6)
    assert CK.linear_cka_unbiased(X, Y) == pytest.approx(1.0, abs=1e-9)


def test_unbiased_hsic_equals_its_u_statistic_definition():
    """Song et al. (2012): HSIC_u = 1/(n)_4 sum over distinct (i,j,q,r) of k_ij l_ij + k_ij l_qr - 2 k_ij l_iq."""
    rng = np.random.default_rng(7)
    n = 7
    X, Y = rng.normal(size=(n, 3)), rng.normal(size=(n, 2))
    Kx, Ly = X @ X.T, Y @ Y.T
    total = 0.0
    for i, j, q, r in itertools.permutations(range(n), 4):
        total += Kx[i, j] * Ly[i, j] + Kx[i, j] * Ly[q, r] - 2 * Kx[i, j] * Ly[i, q]
    expected = total / (n * (n - 1) * (n - 2) * (n - 3))
    assert CK.hsic_unbiased(Kx, Ly) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("method", ["gram", "features", "auto"])
@pytest.mark.parametrize("n_features", [60, 400])
def test_cka_matches_reference_style_and_torch(method, n_features):
    rng = np.random.default_rng(8)
    X = rng.normal(size=(90, n_features)) + 1.5  # non-zero means: centring matters for the biased estimator
    Y = X[:, :5] @ rng.normal(size=(5, 20)) + 2 * rng.normal(size=(90, 20))
    unbiased, biased = reference_cka_unbiased(X, Y), reference_cka_biased(X, Y)
    assert CK.linear_cka(X, Y, unbiased=False, method=method) == pytest.approx(biased, abs=1e-10)
    assert CK.linear_cka(X, Y, unbiased=True, method=method) == pytest.approx(unbiased, abs=1e-10)
    assert CK.linear_cka(X.astype(np.float32), Y.astype(np.float32), method=method) == pytest.approx(unbiased, abs=2e-6)
    tx, ty = torch.from_numpy(X), torch.from_numpy(Y)
    assert CK.linear_cka(tx, ty, unbiased=True, method=method) == pytest.approx(unbiased, abs=1e-10)
    assert CK.linear_cka(tx, ty, unbiased=False, method=method) == pytest.approx(biased, abs=1e-10)


def test_unbiased_cka_is_zero_when_a_self_hsic_is_not_positive():
    X = np.ones((6, 3))  # constant: K is all 3, hsic_xx = 0
    Y = np.random.default_rng(9).normal(size=(6, 2))
    assert CK.linear_cka_unbiased(X, Y) == 0.0
    with pytest.raises(ValueError, match="at least 4"):
        CK.linear_cka_unbiased(X[:3], Y[:3])


# ---- RDM metrics --------------------------------------------------------------------------------
def test_rdm_metric_matches_reference_style(pair):
    expected = scipy.stats.spearmanr(reference_rdm_triangle(pair["X"], pair["ids"]),
                                     reference_rdm_triangle(pair["Y"][pair["perm"]], pair["ids"][pair["perm"]]))[0]
    score = rsa.RDMMetric(dtype=np.float64)(pair["source"], pair["target"])
    assert float(score) == pytest.approx(expected, abs=1e-12)
    assert score.error is None
    assert float(rsa.RDMMetric()(pair["source"], pair["target"])) == pytest.approx(expected, abs=1e-6)  # float32


def reference_test_only_cv(pair, metric, stratify: bool):
    """TestOnlyCrossValidation(test_size=.9) as the reference runs it, on the target's order."""
    target_ids = pair["ids"][pair["perm"]]
    splitter = (StratifiedShuffleSplit if stratify else ShuffleSplit)(
        n_splits=10, train_size=None, test_size=0.9, random_state=1)
    values = []
    labels = pair["objects"][pair["perm"]] if stratify else None
    for _, test in splitter.split(np.zeros(len(target_ids)), labels):
        keep = np.isin(pair["ids"], target_ids[test])
        values.append(metric(pair["X"][keep], pair["Y"][keep], pair["ids"][keep]))
    return np.array(values)


def _ref_rdm_similarity(X, Y, ids):
    return scipy.stats.spearmanr(reference_rdm_triangle(X, ids), reference_rdm_triangle(Y, ids))[0]


def _ref_cka(X, Y, ids):
    order = np.argsort(ids)
    return reference_cka_unbiased(X[order], Y[order])


def test_rdm_cv_matches_reference_style_stratified(pair):
    score = rsa.RDMCrossValidated(dtype=np.float64)(pair["source"], pair["target"])
    expected = reference_test_only_cv(pair, _ref_rdm_similarity, stratify=True)
    np.testing.assert_allclose(score.raw.values, expected, atol=1e-12)
    assert float(score) == pytest.approx(expected.mean(), abs=1e-12)
    assert score.error == pytest.approx(expected.std() / np.sqrt(10), abs=1e-12)
    assert score.attrs["stratification_coord"] == "object_name"


def test_rdm_cv_without_object_name_is_unstratified(pair):
    source = pair["source"].drop_vars("object_name")
    target = pair["target"].drop_vars("object_name")
    score = rsa.RDMCrossValidated(dtype=np.float64)(source, target)
    expected = reference_test_only_cv(pair, _ref_rdm_similarity, stratify=False)
    np.testing.assert_allclose(score.raw.values, expected, atol=1e-12)
    with pytest.raises(ValidationError, match="cannot stratify"):
        rsa.RDMCrossValidated(stratification_coord="object_name")(source, target)


def test_cka_cv_matches_reference_style(pair):
    score = CKACrossValidated(dtype=np.float64)(pair["source"], pair["target"])
    expected = reference_test_only_cv(pair, _ref_cka, stratify=True)
    np.testing.assert_allclose(score.raw.values, expected, atol=1e-10)
    assert score.error == pytest.approx(expected.std() / np.sqrt(10), abs=1e-10)


def test_cka_metrics_match_reference_style(pair):
    order = np.argsort(pair["ids"])
    X, Y = pair["X"][order], pair["Y"][order]
    assert float(CKAMetric(unbiased=True, dtype=np.float64)(pair["source"], pair["target"])) == pytest.approx(
        reference_cka_unbiased(X, Y), abs=1e-12)
    assert float(CKAMetric(unbiased=False, dtype=np.float64)(pair["source"], pair["target"])) == pytest.approx(
        reference_cka_biased(X, Y), abs=1e-12)


def test_precomputed_rdm_assemblies_give_the_same_score(pair):
    rdm1, rdm2 = rsa.rdm(pair["source"]), rsa.rdm(pair["target"])
    assert rdm1.dims == rsa.RDM_DIMS
    assert list(rdm1["stimulus_id"].values) == sorted(pair["ids"])
    metric = rsa.RDMMetric(dtype=np.float64)
    assert float(metric(rdm1, rdm2)) == pytest.approx(float(metric(pair["source"], pair["target"])), abs=1e-12)
    assert float(metric(rdm1, pair["target"])) == pytest.approx(float(metric(pair["source"], pair["target"])),
                                                                abs=1e-12)


def test_metrics_reject_mismatched_input(pair):
    other = pair["target"].isel(presentation=slice(1, None))
    with pytest.raises(AlignmentError, match="same stimuli"):
        rsa.RDMMetric()(pair["source"], other)
    with pytest.raises(AlignmentError, match="same stimuli"):
        CKAMetric()(pair["source"], other)
    doubled = pair["source"].isel(presentation=[0, 0, 1, 2, 3])
    with pytest.raises(AlignmentError, match="average over repetitions"):
        rsa.RDMMetric()(doubled, doubled)
    similarity = DataAssembly(1 - rsa.rdm(pair["source"]).values, dims=rsa.RDM_DIMS,
                              coords={"stimulus_id": ("presentation", np.sort(pair["ids"]))})
    with pytest.raises(ValidationError, match="diagonal"):
        rsa.RDMMetric()(similarity, pair["target"])


# ---- RSA noise ceiling --------------------------------------------------------------------------
def reference_rsa_ceiling(rdms: np.ndarray) -> tuple[float, float]:
    """Upper and leave-one-out lower bound (Nili et al. 2014) with scipy, as the reference describes."""
    iu = np.triu_indices(rdms.shape[1], k=1)
    upper, lower = [], []
    for s in range(len(rdms)):
        others = np.delete(rdms, s, axis=0).mean(axis=0)
        upper.append(scipy.stats.spearmanr(rdms[s][iu], rdms.mean(axis=0)[iu])[0])
        lower.append(scipy.stats.spearmanr(rdms[s][iu], others[iu])[0])
    return float(np.mean(upper)), float(np.mean(lower))


def load_kriegeskorte_brain_rdms(shared_data: Path) -> np.ndarray:
    """(4 subjects, 2 sessions, 92, 92) human IT RDMs of Kriegeskorte et al. (2008)."""
    struct = scipy.io.loadmat(shared_data / "kriegeskorte2008" / "92_brainRDMs.mat")["RDMs"]
    assert struct.shape == (1, 4, 2)
    names = [[str(struct[0, s, k]["name"][0]) for k in range(2)] for s in range(4)]
    assert names[1] == ["hIT | KO | Session: 1", "hIT | KO | Session: 2"]
    return np.array([[struct[0, s, k]["RDM"] for k in range(2)] for s in range(4)], dtype=float)


def test_rsa_ceiling_on_kriegeskorte2008_human_it(shared_data):
    sessions = load_kriegeskorte_brain_rdms(shared_data)
    subject_rdms = sessions.mean(axis=1)  # one RDM per subject, sessions averaged
    ids = [f"img{i:02d}" for i in range(1, 93)]
    ceiling = RSANoiseCeiling()(rsa.stack_rdms(subject_rdms, ids, subjects=["BE", "KO", "SN", "TI"]))
    upper, lower = reference_rsa_ceiling(subject_rdms)
    assert float(ceiling) == pytest.approx(upper, abs=1e-12)
    assert ceiling.attrs["lower_bound_loo"] == pytest.approx(lower, abs=1e-12)
    assert 0.6 < float(ceiling) < 0.7 and 0.33 < lower < 0.43  # 0.661 and 0.379 on these data
    assert list(ceiling.raw["subject"].values) == ["BE", "KO", "SN", "TI"]
    # the eight session RDMs as "subjects": the same computation from a plain ndarray
    flat = sessions.reshape(8, 92, 92)
    assert float(RSANoiseCeiling()(flat)) == pytest.approx(reference_rsa_ceiling(flat)[0], abs=1e-12)


def test_rsa_ceiling_on_kriegeskorte2008_judgements(shared_data):
    struct = scipy.io.loadmat(shared_data / "kriegeskorte2008" / "92_behavRDMs.mat")["rdms_behav_92"]
    rdms = np.array([struct[0, i]["RDM"] for i in range(struct.shape[1])], dtype=float)
    assert rdms.shape == (16, 92, 92)
    ceiling = RSANoiseCeiling()(list(rdms))
    upper, lower = reference_rsa_ceiling(rdms)
    assert float(ceiling) == pytest.approx(upper, abs=1e-12)
    assert ceiling.attrs["lower_bound_loo"] == pytest.approx(lower, abs=1e-12)
    assert upper > lower


def test_rsa_ceiling_from_responses_with_subject_coordinate():
    rng = np.random.default_rng(10)
    n, per_subject = 30, 20
    signal = rng.normal(size=(n, per_subject))
    blocks = [signal + rng.normal(scale=s, size=(n, per_subject)) for s in (0.5, 1.0, 1.5)]
    values = np.concatenate(blocks, axis=1)
    ids = rng.permutation([f"s{i:02d}" for i in range(n)])
    assembly = NeuroidAssembly(values, dims=("presentation", "neuroid"),
                               coords={"stimulus_id": ("presentation", ids),
                                       "neuroid_id": ("neuroid", np.arange(values.shape[1])),
                                       "subject": ("neuroid", np.repeat(["a", "b", "c"], per_subject))})
    ceiling = RSANoiseCeiling()(assembly)
    order = np.argsort(ids)
    rdms = np.array([1 - np.corrcoef(block[order]) for block in blocks])
    upper, lower = reference_rsa_ceiling(rdms)
    assert float(ceiling) == pytest.approx(upper, abs=1e-12)
    assert ceiling.attrs["lower_bound_loo"] == pytest.approx(lower, abs=1e-12)
    # the least noisy subject agrees best with the group
    assert np.argmax(ceiling.raw.values) == 0
    with pytest.raises(ValidationError, match="at least 2 subjects"):
        RSANoiseCeiling()(rdms[:1])


# ---- registered identifiers ---------------------------------------------------------------------
def test_registered_similarity_metrics_and_ceilings(pair):
    from brainscore.registry import load_ceiling, load_metric

    assert isinstance(load_metric("rdm"), rsa.RDMMetric) and isinstance(load_metric("rdm_cv"), rsa.RDMCrossValidated)
    assert load_metric("cka").unbiased and not load_metric("cka_biased").unbiased
    assert isinstance(load_metric("cka_cv"), CKACrossValidated)
    order = np.argsort(pair["ids"])
    assert float(load_metric("cka", dtype=np.float64)(pair["source"], pair["target"])) == pytest.approx(
        reference_cka_unbiased(pair["X"][order], pair["Y"][order]), abs=1e-12)
    for identifier in ("rsa_noise_ceiling", "rsa_ceiling"):
        assert isinstance(load_ceiling(identifier), RSANoiseCeiling)
    assert isinstance(load_metric("rsa_ceiling"), RSANoiseCeiling)  # the reference's metric identifier


def test_an_rdm_comparison_of_a_handful_of_stimuli_warns_that_it_means_little():
    """On 3 stimuli the RDM metric returned 0.5 (one of the four values rho takes on 3 pairs) without a word."""
    from brainscore.metrics.base import MetricWarning

    values = np.array([[1.0, 2.0, 3.0, 0.0], [0.0, 1.0, 5.0, 2.0], [4.0, 1.0, 0.0, 2.0]])
    model = NeuroidAssembly(values, dims=("presentation", "neuroid"),
                            coords={"stimulus_id": ("presentation", ["a", "b", "c"]), "neuroid_id": ("neuroid", list("wxyz"))})
    data = model.copy(data=values[:, ::-1])
    with pytest.warns(MetricWarning, match=r"the RDMs compare 3 stimuli, 3 pairs: Spearman's rho over 3 pairs takes "
                                           r"only a few values \(0.5 is one of them\), so the score means little"):
        rho = float(rsa.RDMMetric(dtype=np.float64)(model, data))
    assert rho == scipy.stats.spearmanr(reference_rdm_triangle(values, np.array(["a", "b", "c"])),
                                        reference_rdm_triangle(values[:, ::-1], np.array(["a", "b", "c"])))[0]
    many = NeuroidAssembly(np.random.default_rng(0).normal(size=(5, 4)), dims=("presentation", "neuroid"),
                           coords={"stimulus_id": ("presentation", list("abcde")), "neuroid_id": ("neuroid", list("wxyz"))})
    with warnings.catch_warnings():
        warnings.simplefilter("error", MetricWarning)  # 5 stimuli, 10 pairs: no warning
        rsa.RDMMetric()(many, many)


def test_integer_against_string_stimulus_ids_in_an_rdm_comparison_names_the_type():
    values = np.random.default_rng(1).normal(size=(6, 4))
    numbered = NeuroidAssembly(values, dims=("presentation", "neuroid"),
                               coords={"stimulus_id": ("presentation", np.arange(6)), "neuroid_id": ("neuroid", list("wxyz"))})
    named = numbered.assign_coords(stimulus_id=("presentation", np.arange(6).astype(str)))
    with pytest.raises(AlignmentError, match=r"the first assembly's stimulus_id values are numbers \(e.g. \[0, 1\]\) "
                                             r"and the second assembly's are strings"):
        rsa.RDMMetric()(numbered, named)
