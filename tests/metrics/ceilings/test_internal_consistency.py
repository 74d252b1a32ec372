"""Internal consistency (split-half, Spearman-Brown): against an independent straightforward
implementation on synthetic data and on the real Cowley et al. 2026 V4 recordings."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from sklearn.model_selection import ShuffleSplit

from brainscore.registry import load_ceiling, load_metric
from brainscore.data import NeuroidAssembly
from brainscore.errors import ValidationError
from brainscore.metrics.ceilings.internal_consistency import InternalConsistency


def _trials(n_stimuli=40, n_neuroids=6, n_reps=7, seed=0, missing=0.0):
    """Single trials: a stimulus signal per neuroid plus trial noise; a fraction of trials removed."""
    rng = np.random.default_rng(seed)
    signal = rng.standard_normal((n_stimuli, n_neuroids))
    stim = np.repeat(np.arange(n_stimuli), n_reps)
    rep = np.tile(np.arange(n_reps), n_stimuli)
    values = signal[stim] + 1.5 * rng.standard_normal((len(stim), n_neuroids))
    keep = rng.random(len(stim)) >= missing
    keep[::n_reps] = True                      # every stimulus keeps its first repetition ...
    keep[1::n_reps] = True                     # ... and its second
    order = rng.permutation(keep.sum())        # presentations in no particular order
    stim, rep, values = stim[keep][order], rep[keep][order], values[keep][order]
    return NeuroidAssembly(values, dims=("presentation", "neuroid"),
                           coords={"stimulus_id": ("presentation", [f"s{i:03d}" for i in stim]),
                                   "repetition": ("presentation", rep),
                                   "neuroid_id": ("neuroid", [f"n{i}" for i in range(n_neuroids)])})


def _independent(assembly, split_coord="repetition"):
    """Straightforward: per split, pandas groupby-mean per half, scipy pearsonr per neuroid, SB, median."""
    frame = pd.DataFrame(assembly.values)
    frame["stimulus_id"] = assembly["stimulus_id"].values
    reps = assembly[split_coord].values
    unique = np.unique(reps)
    medians, raw = [], []
    for first, _ in ShuffleSplit(n_splits=10, train_size=0.5, test_size=None, random_state=1).split(unique):
        in_first = np.isin(reps, unique[first])
        half1 = frame[in_first].groupby("stimulus_id").mean()        # NaN ignored by the mean
        half2 = frame[~in_first].groupby("stimulus_id").mean()
        common = half1.index.intersection(half2.index)
        half1, half2 = half1.loc[common], half2.loc[common]
        corrected = []
        for j in range(assembly.sizes["neuroid"]):
            a, b = half1[j].to_numpy(), half2[j].to_numpy()
            ok = ~(np.isnan(a) | np.isnan(b))
            r = scipy.stats.pearsonr(a[ok], b[ok])[0]
            corrected.append(2 * r / (1 + r))
        raw.append(corrected)
        medians.append(np.median(corrected))
    medians = np.array(medians)
    return medians.mean(), medians.std() / np.sqrt(len(medians)), np.array(raw)


@pytest.mark.parametrize("n_reps,missing", [(7, 0.0), (8, 0.0), (10, 0.25)])
def test_matches_independent_implementation(n_reps, missing):
    assembly = _trials(n_reps=n_reps, missing=missing)
    ceiling = InternalConsistency()(assembly)
    center, error, raw = _independent(assembly)
    assert float(ceiling) == pytest.approx(center, abs=1e-10)
    assert ceiling.attrs["error"] == pytest.approx(error, abs=1e-10)
    np.testing.assert_allclose(ceiling.attrs["raw"].values, raw, atol=1e-10)
    assert ceiling.attrs["raw"].dims == ("split", "neuroid")
    np.testing.assert_array_equal(ceiling.attrs["raw"]["neuroid_id"].values, assembly["neuroid_id"].values)


def test_odd_repetition_count_puts_floor_half_in_the_first_half():
    unique, halves = InternalConsistency().halves(np.arange(7))
    np.testing.assert_array_equal(unique, np.arange(7))
    assert (halves.sum(axis=1) == 3).all()                        # floor(7 / 2)
    expected = [sorted(first) for first, _ in ShuffleSplit(10, train_size=0.5, random_state=1).split(np.zeros(7))]
    assert [sorted(np.flatnonzero(h)) for h in halves] == expected


def test_nan_trials_are_ignored_in_the_averages():
    assembly = _trials(n_reps=6, seed=3)
    values = assembly.values.copy()
    values[::5, 2] = np.nan                                         # missing trials of one neuroid
    with_nan = assembly.copy(data=values)
    ceiling = InternalConsistency()(with_nan)
    center, _, raw = _independent(with_nan)
    assert np.isfinite(float(ceiling))
    assert float(ceiling) == pytest.approx(center, abs=1e-10)
    np.testing.assert_allclose(ceiling.attrs["raw"].values, raw, atol=1e-10)


def test_perfectly_reliable_data_has_ceiling_one():
    stim = np.repeat(np.arange(20), 4)
    values = np.random.default_rng(4).standard_normal((20, 3))[stim]
    assembly = NeuroidAssembly(values, dims=("presentation", "neuroid"),
                               coords={"stimulus_id": ("presentation", stim), "repetition": ("presentation", np.tile(np.arange(4), 20)),
                                       "neuroid_id": ("neuroid", ["a", "b", "c"])})
    ceiling = InternalConsistency()(assembly)
    assert float(ceiling) == pytest.approx(1.0, abs=1e-12) and ceiling.attrs["error"] == pytest.approx(0, abs=1e-12)


def test_errors():
    assembly = _trials()
    with pytest.raises(ValidationError, match="repetition"):
        InternalConsistency()(assembly.drop_vars("repetition"))
    with pytest.raises(ValidationError, match="at least 2"):
        InternalConsistency()(assembly.assign_coords(repetition=("presentation", np.zeros(assembly.sizes["presentation"]))))
    with pytest.raises(ValidationError, match="internal_consistency_temporal"):
        InternalConsistency()(assembly.expand_dims(time_bin=2).transpose("presentation", "neuroid", "time_bin"))


def test_registered_as_ceiling_and_metric():
    assembly = _trials(seed=5)
    a = load_ceiling("internal_consistency")(assembly)
    b = load_metric("internal_consistency")(assembly)
    assert float(a) == float(b) == float(InternalConsistency()(assembly))


def test_temporal_gives_one_ceiling_per_time_bin():
    early = _trials(seed=6)
    late = early.copy(data=early.values + 2 * np.random.default_rng(7).standard_normal(early.shape))  # noisier
    values = np.stack([early.values, late.values], axis=-1)
    assembly = NeuroidAssembly(values, dims=("presentation", "neuroid", "time_bin"),
                               coords={**{k: (c.dims[0], c.values) for k, c in early.coords.items()},
                                       "time_bin_start": ("time_bin", [50, 100]), "time_bin_end": ("time_bin", [100, 150])})
    ceiling = load_ceiling("internal_consistency_temporal")(assembly)
    assert ceiling.dims == ("time_bin",)
    for t, single in enumerate((early, late)):
        expected = InternalConsistency()(single)
        assert float(ceiling[t]) == pytest.approx(float(expected), abs=1e-12)
        assert float(ceiling.attrs["error"][t]) == pytest.approx(expected.attrs["error"], abs=1e-12)


def test_torch_gives_the_numpy_numbers():
    assembly = _trials(n_reps=9, missing=0.2, seed=8)
    expected = InternalConsistency()(assembly)
    got = InternalConsistency(device="cpu")(assembly)
    assert float(got) == pytest.approx(float(expected), abs=1e-5)
    np.testing.assert_allclose(got.attrs["raw"].values, expected.attrs["raw"].values, atol=1e-5)


# ---- real data: Cowley et al. 2026, session 210325 ------------------------------------------------
def _cowley(shared_data):
    responses = np.load(shared_data / "cowley2026_v4" / "responses_raw" / "responses_210325.npy")
    n_neurons = responses.shape[0]
    image, repeat = np.nonzero(~np.isnan(responses[0]))            # one presentation per recorded trial
    values = responses[:, image, repeat].T
    assert not np.isnan(values).any()
    return NeuroidAssembly(values, dims=("presentation", "neuroid"),
                           coords={"stimulus_id": ("presentation", [f"image{i + 1:04d}" for i in image]),
                                   "repetition": ("presentation", repeat),
                                   "neuroid_id": ("neuroid", [f"neuron_{i}" for i in range(n_neurons)])})


def test_cowley_even_odd_ceiling_matches_independent_computation(shared_data):
    assembly = _cowley(shared_data)
    # 640 images with 6 (36 images), 7 (261), 8 (294), 9 (45) or 10 (4) recorded repeats: 4840 trials
    assert assembly.shape == (4840, 50)
    relabelled = assembly.assign_coords(repetition=("presentation", assembly["repetition"].values % 2))
    ceiling = load_ceiling("internal_consistency")(relabelled)
    center, error, raw = _independent(relabelled)
    assert float(ceiling) == pytest.approx(center, abs=1e-10)
    assert ceiling.attrs["error"] == pytest.approx(0.0, abs=1e-12)     # both halvings of {0, 1} give the same r
    np.testing.assert_allclose(ceiling.attrs["raw"].values, raw, atol=1e-10)
    assert float(ceiling) == pytest.approx(0.7731, abs=5e-5)
    # without relabelling: halves of the 10 repeat indices (images with fewer repeats are in both)
    plain = InternalConsistency()(assembly)
    center, error, _ = _independent(assembly)
    assert float(plain) == pytest.approx(center, abs=1e-10)
    assert plain.attrs["error"] == pytest.approx(error, abs=1e-10)
