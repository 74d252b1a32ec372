"""Behavioural metrics: error consistency, accuracy, shape bias, I1/I2, KS similarity.

Checked on hand-worked cases, against straightforward loop implementations of the reference's
procedure, and on the published Geirhos et al. (2019) texture-vs-shape data (human and network
responses to cue-conflict, edge and silhouette images).
"""
from __future__ import annotations

import itertools
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from brainscore.data.assemblies import BehavioralAssembly, DataAssembly, PropertiesAssembly
from brainscore.errors import AlignmentError, ValidationError
from brainscore.metrics.behavior import i1i2
from brainscore.metrics.behavior.accuracy import Accuracy
from brainscore.metrics.neural.distribution_similarity import (KSSimilarity, KSSimilarityCeiling, bootstrap_ks_similarity,
                                                         histogram, ks_similarity)
from brainscore.metrics.behavior.error_consistency import (ErrorConsistency, ErrorConsistencyCeiling, cohens_kappa,
                                                  error_consistency_kappa)
from brainscore.metrics.behavior.shape_bias import ShapeBias, ShapeMatch, TextureMatch
from benchmark_helpers import behavioral_assembly, read_trials

def cue_conflict_categories(images: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Shape and texture category from ``<shape><n>-<texture><m>.png``."""
    parts = images.str.extract(r"^([a-z]+)\d+-([a-z]+)\d+\.png$")
    assert not parts.isna().any().any(), "an image name does not follow <shape><n>-<texture><m>.png"
    return parts[0].to_numpy(), parts[1].to_numpy()


# ---- error consistency --------------------------------------------------------------------------
def test_kappa_on_a_tiny_trial_table():
    # both 60 % correct: c_exp = .36 + .16 = .52; they agree on trials 1, 3, 5: c_obs = .6
    correct1 = np.array([1, 1, 0, 0, 1], dtype=bool)
    correct2 = np.array([1, 0, 0, 1, 1], dtype=bool)
    assert error_consistency_kappa(correct1, correct2) == pytest.approx((0.6 - 0.52) / 0.48)
    assert error_consistency_kappa(correct1, correct1) == pytest.approx(1.0)
    assert error_consistency_kappa(correct1, ~correct1) == pytest.approx((0 - 0.48) / 0.52)
    assert cohens_kappa(0.75, 0.5) == pytest.approx(0.5)
    assert np.isnan(cohens_kappa(1.0, 1.0))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        cohens_kappa(1.2, 0.5)


def _trials_assembly(rows: list[tuple], with_subject=True) -> BehavioralAssembly:
    """Rows of (subject, condition, stimulus, truth, choice), named as in the Geirhos CSVs."""
    frame = pd.DataFrame(rows, columns=["subj", "condition", "image", "category", "object_response"])
    return behavioral_assembly(frame, with_subject)


def test_error_consistency_aggregation_by_hand():
    # condition c1: stimuli a..d (truth x); condition c2: stimuli e..h
    truth = "x"
    model = {"a": "x", "b": "x", "c": "y", "d": "y", "e": "x", "f": "y", "g": "y", "h": "y"}
    subject1 = {"a": "x", "b": "y", "c": "y", "d": "x", "e": "x", "f": "y", "g": "x", "h": "y"}
    subject2 = {"a": "x", "b": "x", "c": "y", "d": "y", "e": "y", "f": "x", "g": "x", "h": "x"}
    rows, model_rows = [], []
    for condition, stimuli in (("c1", "abcd"), ("c2", "efgh")):
        for s in stimuli:
            rows += [("s1", condition, s, truth, subject1[s]), ("s2", condition, s, truth, subject2[s])]
            model_rows.append(("m", condition, s, truth, model[s]))
    humans, source = _trials_assembly(rows), _trials_assembly(model_rows, with_subject=False)

    def kappa(m, h, stimuli):
        return error_consistency_kappa(np.array([m[s] == truth for s in stimuli]),
                                       np.array([h[s] == truth for s in stimuli]))

    # correct (truth x): c1 model 1100, s1 1001, s2 1100; c2 model 1000, s1 1010, s2 0111
    # c1: model-s1 both 50 %, agree on 2 of 4 -> 0; model-s2 identical -> 1
    # c2: model-s1 c_exp = .25*.5 + .75*.5 = .5, c_obs = .75 -> .5; model-s2 c_exp = .375, c_obs 0 -> -.6
    k = np.array([[0.0, 1.0], [0.5, -0.6]])
    np.testing.assert_allclose([[kappa(model, subject1, "abcd"), kappa(model, subject2, "abcd")],
                                [kappa(model, subject1, "efgh"), kappa(model, subject2, "efgh")]], k, atol=1e-12)
    score = ErrorConsistency()(source, humans)
    assert float(score) == pytest.approx(0.225)  # |mean over subjects of (0.25, 0.2)|
    assert score.error == pytest.approx(np.std([0.0, 1.0, 0.5, -0.6]))
    assert score.raw.dims == ("condition", "subject")
    np.testing.assert_allclose(score.raw.values, k, atol=1e-12)
    # the ceiling: the one pair (s1, s2): c1 chance (0), c2 c_exp .5, c_obs .25 -> -.5; |mean| = .25
    ceiling = ErrorConsistencyCeiling()(humans)
    np.testing.assert_allclose(ceiling.raw.values, [[0.0], [-0.5]], atol=1e-12)
    assert float(ceiling) == pytest.approx(0.25)
    assert list(ceiling.raw["subject_left"].values) == ["s1"]


def test_error_consistency_takes_the_absolute_value():
    rows = [("s1", 0, s, "x", c) for s, c in zip("abcd", "xxyy")]
    humans = _trials_assembly(rows)
    model = _trials_assembly([("m", 0, s, "x", c) for s, c in zip("abcd", "yyxx")], with_subject=False)
    # complementary errors: kappa = -1, the score is |-1|
    assert float(ErrorConsistency()(model, humans)) == pytest.approx(1.0)
    missing = model.isel(presentation=[0, 1, 2])
    with pytest.raises(AlignmentError, match="no response"):
        ErrorConsistency()(missing, humans)


def independent_human_consistency(trials: pd.DataFrame) -> float:
    """Mean over subject pairs of Cohen's kappa on correctness, written out with plain numpy."""
    correct = {s: t.set_index("image").sort_index().eval("object_response == category")
               for s, t in trials.groupby("subj")}
    values = []
    for a, b in itertools.combinations(sorted(correct), 2):
        ca, cb = correct[a].to_numpy(), correct[b].loc[correct[a].index].to_numpy()
        p1, p2 = ca.mean(), cb.mean()
        expected = p1 * p2 + (1 - p1) * (1 - p2)
        values.append(((ca == cb).mean() - expected) / (1 - expected))
    return abs(float(np.mean(values))), float(np.std(values))


@pytest.mark.parametrize("experiment, low, high", [("cue-conflict", 0.30, 0.36), ("edge", 0.29, 0.35),
                                                   ("silhouette", 0.44, 0.51)])
def test_human_error_consistency_on_geirhos2019(shared_data, experiment, low, high):
    trials = read_trials(shared_data, experiment, "subject-*")
    assert trials["subj"].nunique() == 10
    ceiling = ErrorConsistencyCeiling()(behavioral_assembly(trials))
    expected, spread = independent_human_consistency(trials)
    assert float(ceiling) == pytest.approx(expected, abs=1e-12)
    assert ceiling.error == pytest.approx(spread, abs=1e-12)
    assert ceiling.raw.shape == (1, 45)
    # cue-conflict 0.331, edge 0.318, silhouette 0.476 on these data
    assert low < float(ceiling) < high


def test_network_error_consistency_on_geirhos2019_is_below_the_human_ceiling(shared_data):
    humans = read_trials(shared_data, "cue-conflict", "subject-*")
    alexnet = read_trials(shared_data, "cue-conflict", "alexnet")
    score = ErrorConsistency()(behavioral_assembly(alexnet, with_subject=False), behavioral_assembly(humans))
    # independent: kappa of AlexNet with each subject, averaged
    model = alexnet.set_index("image").eval("object_response == category")
    kappas = []
    for _, t in humans.groupby("subj"):
        h = t.set_index("image").eval("object_response == category")
        m = model.loc[h.index].to_numpy()
        p1, p2 = m.mean(), h.to_numpy().mean()
        expected = p1 * p2 + (1 - p1) * (1 - p2)
        kappas.append(((m == h.to_numpy()).mean() - expected) / (1 - expected))
    assert float(score) == pytest.approx(abs(np.mean(kappas)), abs=1e-12)
    assert 0 < float(score) < float(ErrorConsistencyCeiling()(behavioral_assembly(humans)))


# ---- accuracy -----------------------------------------------------------------------------------
def test_accuracy_by_hand_and_on_human_data(shared_data):
    score = Accuracy()(np.array(["a", "b", "c", "d"]), np.array(["a", "b", "x", "x"]))
    assert float(score) == 0.5 and score.error == pytest.approx(0.5)
    np.testing.assert_array_equal(score.raw, [True, True, False, False])
    assert float(Accuracy().ceiling()) == 1.0
    # labelled inputs are aligned by stimulus_id
    source = BehavioralAssembly(["a", "b", "c"], dims=("presentation",),
                                coords={"stimulus_id": ("presentation", ["s1", "s2", "s3"])})
    target = BehavioralAssembly(["c", "a", "x"], dims=("presentation",),
                                coords={"stimulus_id": ("presentation", ["s3", "s1", "s2"])})
    assert float(Accuracy()(source, target)) == pytest.approx(2 / 3)
    with pytest.raises(ValidationError, match="one answer per trial"):
        Accuracy()(np.array(["a"]), np.array(["a", "b"]))
    trials = read_trials(shared_data, "edge", "subject-01")
    assert float(Accuracy()(trials["object_response"].to_numpy(), trials["category"].to_numpy())) == pytest.approx(
        143 / 160)  # subject 1 named 143 of the 160 edge images correctly


# ---- shape bias ---------------------------------------------------------------------------------
def test_shape_bias_by_hand():
    choices = np.array(["cat", "cat", "dog", "car", "cat", "car"])
    shape = np.array(["cat", "cat", "cat", "cat", "dog", "car"])
    texture = np.array(["dog", "car", "dog", "car", "cat", "car"])  # the last trial is no conflict
    source = BehavioralAssembly(choices, dims=("presentation",),
                                coords={"stimulus_id": ("presentation", np.arange(6)),
                                        "original_image_category": ("presentation", shape),
                                        "conflict_image_category": ("presentation", texture)})
    # 5 conflict trials: shape chosen on 1, 2; texture on 3, 4, 5
    assert float(ShapeMatch()(source)) == pytest.approx(2 / 5)
    assert float(TextureMatch()(source)) == pytest.approx(3 / 5)
    bias = ShapeBias()(source)
    assert float(bias) == pytest.approx(2 / 5)
    assert bias.attrs["n_trials"] == 5
    stimuli = pd.DataFrame({"stimulus_id": np.arange(6)[::-1], "original_image_category": shape[::-1],
                            "conflict_image_category": texture[::-1]})
    bare = BehavioralAssembly(choices, dims=("presentation",), coords={"stimulus_id": ("presentation", np.arange(6))})
    assert float(ShapeBias()(bare, stimuli)) == pytest.approx(2 / 5)


def _cue_conflict_source(trials: pd.DataFrame) -> BehavioralAssembly:
    shape, texture = cue_conflict_categories(trials["image"])
    return BehavioralAssembly(trials["object_response"].to_numpy(), dims=("presentation",),
                              coords={"stimulus_id": ("presentation", trials["image"].to_numpy()),
                                      "original_image_category": ("presentation", shape),
                                      "conflict_image_category": ("presentation", texture)})


def test_human_shape_bias_on_geirhos2019(shared_data):
    trials = read_trials(shared_data, "cue-conflict", "subject-*")
    shape, _ = cue_conflict_categories(trials["image"])
    np.testing.assert_array_equal(shape, trials["category"].to_numpy())  # the file's category is the shape
    biases = [float(ShapeBias()(_cue_conflict_source(t))) for _, t in trials.groupby("subj")]
    assert len(biases) == 10
    # Geirhos et al. (2019), Fig. 4: humans 95.9 % shape decisions on average; these data give 0.958
    assert np.mean(biases) == pytest.approx(0.959, abs=0.01)
    assert min(biases) > 0.9


@pytest.mark.parametrize("network, published", [("alexnet", 0.429), ("googlenet", 0.312), ("vgg", 0.172)])
def test_network_shape_bias_on_geirhos2019(shared_data, network, published):
    """Published (Geirhos et al. 2019, Fig. 4): AlexNet 42.9 %, GoogLeNet 31.2 %, VGG-16 17.2 % shape decisions."""
    trials = read_trials(shared_data, "cue-conflict", network)
    assert len(trials) == 1280
    bias = ShapeBias()(_cue_conflict_source(trials))
    assert bias.attrs["n_trials"] == 1200  # 80 images whose shape and texture agree are dropped
    assert float(bias) == pytest.approx(published, abs=0.005)
    shape, texture = cue_conflict_categories(trials["image"])
    conflict = shape != texture
    n_shape = (trials["object_response"].to_numpy() == shape)[conflict].sum()
    n_texture = (trials["object_response"].to_numpy() == texture)[conflict].sum()
    assert float(bias) == pytest.approx(n_shape / (n_shape + n_texture), abs=1e-12)


# ---- I1 / I2 ------------------------------------------------------------------------------------
def test_dprime_by_hand():
    # objects A, B; image a1 (truth A) chooses B on 20 % of trials; image b1 (truth B) chooses A on 20 %
    matrix = i1i2.ResponseMatrix(np.array(["a1", "b1"]), np.array(["A", "B"]), np.array(["A", "B"]),
                                 np.array([[np.nan, 0.2], [0.2, np.nan]]))
    d = i1i2.dprimes(matrix, normalize=False).values
    expected = scipy.stats.norm.ppf(0.8) - scipy.stats.norm.ppf(0.2)
    assert d[0, 1] == pytest.approx(expected) and d[1, 0] == pytest.approx(expected)
    assert expected == pytest.approx(1.6832, abs=1e-4)
    assert np.isnan(d[0, 0]) and np.isnan(d[1, 1])
    # a perfect image (never a false alarm): d' = +inf, clipped to 5
    matrix.values = np.array([[np.nan, 0.0], [0.2, np.nan]])
    assert i1i2.dprimes(matrix, normalize=False).values[0, 1] == 5.0


def test_human_response_matrix_by_hand():
    # image i1 of A: offered with B twice (chose B once), with C once (chose A)
    stimulus_ids = ["i1", "i1", "i1", "i2"]
    choices = ["B", "A", "A", "C"]
    truth = ["A", "A", "A", "B"]
    sample = ["A", "A", "A", "B"]
    distractor = ["B", "B", "C", "C"]
    m = i1i2.human_response_matrix(stimulus_ids, choices, truth, sample, distractor)
    assert list(m.objects) == ["A", "B", "C"] and list(m.truth) == ["A", "B"]
    np.testing.assert_allclose(m.values, [[np.nan, 0.5, 0.0], [np.nan, np.nan, 1.0]])


def synthetic_match_to_sample(seed=0, n_objects=4, images_per_object=6, trials_per_image=120):
    """Human trials and model probabilities sharing image- and distractor-specific confusions."""
    rng = np.random.default_rng(seed)
    objects = [f"obj{k}" for k in range(n_objects)]
    images = [(f"{o}_{i:02d}", o) for o in objects for i in range(images_per_object)]
    error = rng.uniform(0.02, 0.6, size=(len(images), n_objects))  # p(choose distractor d | image, d offered)
    rows = []
    for row, (img, truth) in enumerate(images):
        for _ in range(trials_per_image):
            distractor = rng.choice([o for o in objects if o != truth])
            wrong = rng.random() < error[row, objects.index(distractor)]
            rows.append((img, truth, truth, distractor, distractor if wrong else truth))
    rows = [rows[i] for i in rng.permutation(len(rows))]
    trials = pd.DataFrame(rows, columns=["stimulus_id", "truth", "sample_obj", "dist_obj", "choice"])
    target = BehavioralAssembly(trials["choice"].to_numpy(), dims=("presentation",),
                                coords={c: ("presentation", trials[c].to_numpy())
                                        for c in ("stimulus_id", "truth", "sample_obj", "dist_obj")})
    # model: logit(p(d) / (p(d) + p(truth))) = logit(error) + noise
    logits = np.log(error / (1 - error)) + rng.normal(scale=0.3, size=error.shape)
    for row, (_, truth) in enumerate(images):
        logits[row, objects.index(truth)] = 0.0
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    order = rng.permutation(len(images))
    source = DataAssembly(probabilities[order], dims=("presentation", "choice"),
                          coords={"stimulus_id": ("presentation", np.array([images[i][0] for i in order])),
                                  "choice": objects})
    return source, target


def reference_style_consistency(source, target, collapse: bool, normalize: bool, ceiling: bool, skipna=False):
    """The reference's procedure written out with dictionaries and loops (Rajalingham 2018 as Brain-Score runs it)."""
    truth_of = dict(zip(target["stimulus_id"].values, target["truth"].values))
    labels = list(source["choice"].values)
    probs = {(sid, labels[j]): source.values[i, j] for i, sid in enumerate(source["stimulus_id"].values)
             for j in range(len(labels))}
    images = sorted(set(source["stimulus_id"].values))

    def model_matrix():
        return {(img, c): (np.nan if c == truth_of[img] else probs[img, c] / (probs[img, c] + probs[img, truth_of[img]]))
                for img in images for c in labels}, images, sorted(labels)

    def human_matrix(idx):
        sids = target["stimulus_id"].values[idx]
        chosen = target.values[idx]
        offered = Counter(itertools.chain(*[[(s, a), (s, b)] for s, a, b in zip(
            sids, target["sample_obj"].values[idx], target["dist_obj"].values[idx])]))
        counts = Counter(zip(sids, chosen))
        choices = sorted(set(chosen))
        imgs = sorted(set(sids))
        return {(img, c): (np.nan if c == truth_of[img] else (counts[img, c] / offered[img, c]
                                                               if offered[img, c] > 0 else np.nan))
                for img in imgs for c in choices}, imgs, choices

    def dprime(matrix):
        values, imgs, choices = matrix
        out = {}
        for (img, c), v in values.items():
            inverse = [values[other, truth_of[img]] for other in imgs if truth_of[other] == c]
            fa = np.nanmean(inverse)
            out[img, c] = np.clip(scipy.stats.norm.ppf(1 - v) - scipy.stats.norm.ppf(fa), -5, 5)
        if normalize:
            groups = {}
            for (img, c), v in out.items():
                groups.setdefault((truth_of[img], c), []).append(v)
            out = {(img, c): v - np.nanmean(groups[truth_of[img], c]) for (img, c), v in out.items()}
        if collapse:
            return np.array([np.nanmean([out[img, c] for c in choices]) for img in imgs])
        return np.array([[out[img, c] for c in choices] for img in imgs]).reshape(-1)

    def correlate(a, b, skip):
        keep = ~np.isnan(b) & (~np.isnan(a) if skip else True)
        assert not np.isnan(a[keep]).any()
        return scipy.stats.pearsonr(a[keep], b[keep])[0]

    random_state = np.random.RandomState(0)
    values = []
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        source_d = dprime(model_matrix())
        for _ in range(2):
            indices = list(range(len(target)))
            random_state.shuffle(indices)  # a Python list, as the reference shuffles
            half0, half1 = indices[: int(len(indices) / 2)], indices[int(len(indices) / 2):]
            if ceiling:
                values.append(correlate(dprime(human_matrix(half0)), dprime(human_matrix(half1)), skipna))
            else:
                values.append(correlate(source_d, dprime(human_matrix(half0)), False))
    return np.array(values)


@pytest.mark.parametrize("collapse, normalize", [(False, True), (True, True), (True, False)])
def test_i1_i2_match_the_reference_procedure(collapse, normalize):
    source, target = synthetic_match_to_sample()
    metric = i1i2.BehavioralConsistency(collapse_distractors=collapse, normalize=normalize)
    score = metric(source, target)
    expected = reference_style_consistency(source, target, collapse, normalize, ceiling=False)
    np.testing.assert_allclose(score.raw.values, expected, atol=1e-12)
    assert float(score) == pytest.approx(expected.mean(), abs=1e-12)
    assert score.error == pytest.approx(expected.std(), abs=1e-12)
    ceiling = metric.ceiling(target)
    expected_ceiling = reference_style_consistency(source, target, collapse, normalize, ceiling=True, skipna=True)
    np.testing.assert_allclose(ceiling.raw.values, expected_ceiling, atol=1e-12)
    assert 0.3 < float(score) < 1 and 0.3 < float(ceiling) < 1


def test_i2n_ceiled_per_split_and_seeded_halves():
    source, target = synthetic_match_to_sample(seed=1)
    score, ceiling = i1i2.i2n()(source, target), i1i2.i2n_ceiling()(target)
    ceiled = i1i2.ceil_split_scores(score, ceiling)
    expected = score.raw.values / np.sqrt(ceiling.raw.values)
    assert float(ceiled) == pytest.approx(expected.mean()) and ceiled.error == pytest.approx(expected.std())
    # RandomState(0) is re-created per call: the same score twice, another seed another score
    assert float(i1i2.i2n()(source, target)) == float(score)
    assert float(i1i2.i2n(random_state=3)(source, target)) != float(score)
    # shuffling an index array draws the same permutation as shuffling a Python list
    indices = list(range(101))
    np.random.RandomState(0).shuffle(indices)
    first, second = i1i2.split_halves(101, np.random.RandomState(0))
    assert list(first) == indices[:50] and list(second) == indices[50:]


def test_i2n_rejects_unknown_stimuli():
    source, target = synthetic_match_to_sample(seed=2)
    extra = source.copy()
    extra["stimulus_id"] = ("presentation", np.array(["unknown"] + list(source["stimulus_id"].values[1:])))
    with pytest.raises(AlignmentError, match="not in the human data"):
        i1i2.i2n()(extra, target)


# ---- KS similarity ------------------------------------------------------------------------------
def test_histogram_matches_numpy():
    rng = np.random.default_rng(11)
    bins = np.array([0.0, 0.5, 1.0, 2.0, 4.0])
    values = np.concatenate([rng.uniform(0, 4, 500), bins, [np.nan, -1.0, 5.0]])
    np.testing.assert_array_equal(histogram(values, bins), np.histogram(values[~np.isnan(values)], bins=bins)[0])
    uniform = np.linspace(0, 1, 11)
    samples = rng.uniform(0, 1, size=(7, 300))
    np.testing.assert_array_equal(histogram(samples, uniform), [np.histogram(s, uniform)[0] for s in samples])


def test_ks_similarity_by_hand():
    q = np.array([0.5, 0.5])
    assert ks_similarity(q, q) == pytest.approx(1.0)
    assert ks_similarity(np.array([1.0, 0.0]), q) == pytest.approx(0.0)
    # q = (.25, .5, .25), p = (.5, .5, 0): cumsums (.25,.75,1) vs (.5,1,1): KS .25; largest KS .75 -> 1 - 1/3
    assert ks_similarity(np.array([0.5, 0.5, 0.0]), np.array([0.25, 0.5, 0.25])) == pytest.approx(2 / 3)


def reference_style_bootstrap(model, data, bins, seed, n=1000):
    model, data = np.clip(model, bins[0], bins[-1]), np.clip(data, bins[0], bins[-1])
    data_hist = np.histogram(data, bins=bins)[0]
    data_hist = data_hist / data_hist.sum()
    rs = np.random.RandomState(seed)
    values = []
    for _ in range(n):
        sample = rs.choice(model, len(data))
        hist = np.histogram(sample, bins=bins)[0]
        values.append(ks_similarity(hist / hist.sum(), data_hist))
    return np.array(values)


def test_bootstrap_ks_similarity_is_seeded_and_matches_the_reference_procedure():
    rng = np.random.default_rng(12)
    bins = np.linspace(0, 90, 10)
    data = rng.gamma(3, 10, size=120)
    model = rng.gamma(4, 10, size=500)
    properties = PropertiesAssembly(data[:, None], dims=("neuroid", "neuronal_property"),
                                    coords={"neuroid_id": ("neuroid", np.arange(120)),
                                            "neuronal_property": ["or_bandwidth"]},
                                    attrs={"or_bandwidth_bins": bins})
    model_properties = PropertiesAssembly(model[:, None], dims=("neuroid", "neuronal_property"),
                                          coords={"neuroid_id": ("neuroid", np.arange(500)),
                                                  "neuronal_property": ["or_bandwidth"]})
    score = KSSimilarity("or_bandwidth")(model_properties, properties)
    expected = reference_style_bootstrap(model, data, bins, seed=0)
    np.testing.assert_allclose(score.raw, expected, atol=1e-12)
    assert float(score) == pytest.approx(expected.mean()) and score.error == pytest.approx(expected.std())
    assert float(KSSimilarity("or_bandwidth")(model_properties, properties)) == float(score)  # reproducible
    assert float(KSSimilarity("or_bandwidth", random_state=1)(model_properties, properties)) != float(score)
    ceiling = KSSimilarityCeiling("or_bandwidth")(properties)
    assert float(ceiling) == pytest.approx(reference_style_bootstrap(data, data, bins, seed=0).mean())
    assert float(score) < float(ceiling) < 1
    center, error, _ = bootstrap_ks_similarity(model, data, bins, n_samples=50, random_state=0)
    assert center == pytest.approx(reference_style_bootstrap(model, data, bins, seed=0, n=50).mean())
    with pytest.raises(ValidationError, match="no property 'other'"):
        KSSimilarity("other")(model_properties, properties)
    with pytest.raises(ValidationError, match="no bins"):
        KSSimilarity("or_bandwidth")(model_properties, model_properties)


# ---- registered identifiers ---------------------------------------------------------------------
def test_registered_behavioral_metrics_and_ceilings():
    from brainscore.registry import load_ceiling, load_metric

    assert isinstance(load_metric("error_consistency"), ErrorConsistency)
    assert isinstance(load_ceiling("error_consistency"), ErrorConsistencyCeiling)
    assert isinstance(load_metric("accuracy"), Accuracy)
    assert [type(load_metric(i)) for i in ("shape_bias", "shape_match", "texture_match")] == [
        ShapeBias, ShapeMatch, TextureMatch]
    i2n = load_metric("i2n")
    assert (i2n.collapse_distractors, i2n.normalize, i2n.repetitions, i2n.random_state) == (False, True, 2, 0)
    assert load_metric("i1").collapse_distractors and not load_metric("i1").normalize
    assert load_ceiling("i2n").skipna
    assert load_metric("ks_similarity", "or_bandwidth").property_name == "or_bandwidth"
    assert isinstance(load_ceiling("ks_similarity", "or_bandwidth"), KSSimilarityCeiling)
    source, target = synthetic_match_to_sample(seed=4)
    assert float(load_metric("i2n")(source, target)) == float(i1i2.I2n()(source, target))


def _answers(values, ids):
    return BehavioralAssembly(list(values), coords={"stimulus_id": ("presentation", list(ids))}, dims=["presentation"])


def test_accuracy_aligns_labelled_answers_by_stimulus_id_and_names_the_odd_ones():
    """``matches`` puts the target in the source's order (brainscore.data.presentation_order, complete=True)."""
    from brainscore.metrics.behavior.accuracy import matches

    source = _answers(["dog", "cat", "car"], ["s2", "s0", "s1"])
    target = _answers(["cat", "car", "dog"], ["s0", "s1", "s2"])
    assert matches(source, target).tolist() == [True, True, True]
    assert float(Accuracy()(source, target)) == 1.0
    with pytest.raises(AlignmentError, match=r"the source has no presentation for 1 stimulus_id values of the "
                                             r"target, e.g. \['s3'\]"):
        matches(source, _answers(["cat", "car", "dog", "cow"], ["s0", "s1", "s2", "s3"]))
    with pytest.raises(AlignmentError, match=r"the target has no presentation for 1 stimulus_id values of the "
                                             r"source, e.g. \['s2'\]"):
        matches(source, target.isel(presentation=[0, 1]))
    # repeated ids (several trials per stimulus): compared position by position, as before
    repeated = _answers(["dog", "dog"], ["s0", "s0"])
    assert matches(repeated, _answers(["dog", "cat"], ["s0", "s0"])).tolist() == [True, False]
