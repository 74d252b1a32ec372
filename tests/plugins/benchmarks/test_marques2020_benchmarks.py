"""Marques 2020 V1 property benchmarks: property functions on synthetic units with closed-form tuning,
the reference's ceilings, registration, one pass over the gratings for all seven (EfficientNet-Lite0's scores:
tests/scoring/test_published_scores.py)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.interpolate import UnivariateSpline

import brainscore
from brainscore import registry
from brainscore.plugins.benchmarks.marques2020 import properties as prop
from brainscore.plugins.data.marques2020 import gratings

ORIENTATIONS = gratings.ORIENTATIONS
PHASES = np.deg2rad(gratings.PHASES)
SF = gratings.SPATIAL_FREQUENCIES
RADII = gratings.RADII

#: The reference's ceilings (its test file, tolerance 0.005; data README).
REFERENCE_CEILINGS = {
    "Marques2020_DeValois1982-pref_or": 0.962,
    "Marques2020_DeValois1982-peak_sf": 0.967,
    "Marques2020_Schiller1976-sf_selective": 0.963,
    "Marques2020_Schiller1976-sf_bandwidth": 0.933,
    "Marques2020_Cavanaugh2002-surround_suppression_index": 0.958,
    "Marques2020_Cavanaugh2002-grating_summation_field": 0.956,
    "Marques2020_Cavanaugh2002-surround_diameter": 0.955,
}
PARENTS = {
    "Marques2020_DeValois1982-pref_or": "V1-orientation",
    "Marques2020_DeValois1982-peak_sf": "V1-spatial_frequency",
    "Marques2020_Schiller1976-sf_selective": "V1-spatial_frequency",
    "Marques2020_Schiller1976-sf_bandwidth": "V1-spatial_frequency",
    "Marques2020_Cavanaugh2002-surround_suppression_index": "V1-surround_modulation",
    "Marques2020_Cavanaugh2002-grating_summation_field": "V1-receptive_field_size",
    "Marques2020_Cavanaugh2002-surround_diameter": "V1-receptive_field_size",
}


# ---- receptive fields, selection, firing rates -------------------------------------------------
def test_receptive_field_centre_of_a_gaussian_unit():
    grid = np.linspace(-2.5, 2.5, 21)
    iy, ix = np.meshgrid(np.arange(21), np.arange(21), indexing="ij")

    def unit(cy, cx, sigma=1.5):
        rf = np.exp(-((iy - cy) ** 2 + (ix - cx) ** 2) / (2 * sigma ** 2))
        return 3 + rf[:, :, None] * np.linspace(1, 10, 8)  # blank response 3, best condition 10 x rf
    responses = np.stack([unit(12, 9), unit(12.5, 9), np.full((21, 21, 8), 3.0), unit(3, 4)])
    blank = np.array([3.0, 3.0, 3.0, 3.0])
    centres = prop.receptive_field_centres(responses, blank, grid, grid)
    # symmetric kept region -> the centroid is the Gaussian's centre; index 12 -> 0.5 deg, 9 -> -0.25 deg
    np.testing.assert_allclose(centres[0], [0.5, -0.25], atol=1e-12)
    np.testing.assert_allclose(centres[1], [0.625, -0.25], atol=1e-12)
    assert np.isnan(centres[2]).all()  # never responds above its blank
    assert prop.near(centres, (0.5, 0.5)).tolist() == [False, False, False, False]
    assert prop.near(centres, (0.5, -0.25)).tolist() == [True, True, False, False]


def test_firing_rate_affine_maps_medians_to_v1_rates():
    rng = np.random.default_rng(0)
    peak = rng.uniform(1, 5, size=51)
    blank = rng.uniform(0, 0.5, size=51)
    responses = blank[:, None, None] + peak[:, None, None] * (1 + np.cos(PHASES))[None, None, :] / 2 * np.ones((1, 3, 1))
    # max phase-averaged response = blank + peak / 2
    responses = np.concatenate([responses, np.zeros((1, 3, 8))])  # a silent unit is not responsive
    blank = np.append(blank, 0.0)
    slope, offset = prop.firing_rate_affine(responses, blank)
    m = (blank + np.append(peak, 0) / 2)[:-1]
    assert slope * np.median(m) + offset == pytest.approx(33.8)
    assert slope * np.median(blank[:-1]) + offset == pytest.approx(0.82)
    np.testing.assert_allclose(prop.firing_rates(np.array([-1.0, 0.0, 2.0]), 2.0, -1.0), [0.0, 0.0, 3.0])
    with pytest.raises(ValueError, match="no units"):
        prop.firing_rate_affine(np.zeros((0, 3, 8)), np.zeros(0))


def test_dc_and_first_harmonic():
    responses = 4 + 1.5 * np.cos(PHASES - 0.7) + 0.3 * np.cos(2 * PHASES)
    dc, ac = prop.dc_ac(responses[None])
    assert dc[0] == pytest.approx(4)
    assert ac[0] == pytest.approx(1.5)


# ---- splines ------------------------------------------------------------------------------------
def test_vectorised_spline_equals_the_references_univariate_spline():
    rng = np.random.default_rng(3)
    curves = rng.uniform(0, 10, size=(5, 36))
    x = np.concatenate([ORIENTATIONS - 180, ORIENTATIONS, ORIENTATIONS + 180])
    degrees, fitted = prop.orientation_tuning_fit(curves[:, :12], ORIENTATIONS)
    for row, curve in zip(fitted, curves[:, :12]):
        smoothed = np.convolve(np.array([0, 1 / 5, 1, 1 / 5, 0]) / 1.4, np.tile(curve, 3), mode="same")
        np.testing.assert_allclose(row, UnivariateSpline(x, smoothed, s=0.0)(degrees), rtol=1e-9, atol=1e-9)
    log_sf = np.log2(SF)
    peak, bandwidth = prop.spatial_frequency_tuning_fit(curves[:, :22], SF)
    grid = np.linspace(log_sf[0], log_sf[-1], 100)
    for p, curve in zip(peak, curves[:, :22]):
        padded = np.concatenate([[curve[0]] * 2, curve, [curve[-1]] * 2])
        smoothed = np.convolve(np.array([0, 1 / 5, 1, 1 / 5, 0]) / 1.4, padded, mode="valid")
        assert p == 2 ** grid[np.argmax(UnivariateSpline(log_sf, smoothed, s=0.0)(grid))]
    fitted = prop.spatial_frequency_spline(curves[:, :22], SF)(grid)
    octaves = prop.spatial_frequency_cutoffs(grid, fitted, mode="oct")[1]
    np.testing.assert_allclose(octaves, 100 / bandwidth - 1, rtol=1e-12)  # f_high / f_low - 1 of the same cut-offs
    with pytest.raises(ValueError, match="'ratio' or 'oct'"):
        prop.spatial_frequency_cutoffs(grid, fitted, mode="octave")


# ---- per-study properties ------------------------------------------------------------------------
def _orientation_units(preferred, width=20.0, amplitude=30.0):
    """Units with periodic Gaussian orientation tuning; shape (unit, m=3, sf=4, orientation=12, phase=8)."""
    delta = (ORIENTATIONS[None, :] - np.asarray(preferred)[:, None] + 90) % 180 - 90
    curve = amplitude * np.exp(-delta ** 2 / (2 * width ** 2))
    gain = np.array([0.5, 1.0, 0.7])[:, None] * np.array([0.2, 1.0, 0.6, 0.3])[None, :]
    return (2 + gain[None, :, :, None, None] * curve[:, None, None, :, None]) * np.ones(8)


def test_preferred_orientation_of_gaussian_tuning():
    preferred = np.array([0.0, 45.0, 90.0, 150.0, 165.0, 52.0])
    values, kept = prop.preferred_orientation(_orientation_units(preferred), np.full(6, 2.0), ORIENTATIONS)
    np.testing.assert_array_equal(values[:5], [0, 45, 90, 150, -15])  # >= 157.5 wraps to the first bin
    assert abs(values[5] - 52) <= 2
    assert kept.all()
    _, kept = prop.preferred_orientation(_orientation_units(preferred, amplitude=4.0), np.full(6, 2.0), ORIENTATIONS)
    assert not kept.any()  # peak 2 + 4 is not above baseline + 5


def _sf_units(peak_log2, sigma, radius_gain=(1.0, 0.6), amplitude=40.0, ac=0.0):
    """(unit, radius=2, sf=22, orientation=6, phase=8): Gaussian in log2(sf), best at orientation index 2."""
    curve = amplitude * np.exp(-(np.log2(SF)[None, :] - np.asarray(peak_log2)[:, None]) ** 2
                               / (2 * np.asarray(sigma)[:, None] ** 2))
    orientation_gain = np.array([0.1, 0.5, 1.0, 0.5, 0.1, 0.05])
    dc = np.asarray(radius_gain)[None, :, None, None] * curve[:, None, :, None] * orientation_gain
    return dc[..., None] * (1 + ac * np.cos(PHASES))


def test_peak_spatial_frequency_of_log_gaussian_tuning():
    true = np.log2(np.array([1.0, 2.5, 6.0]))
    values, kept = prop.peak_spatial_frequency(_sf_units(true, [1.0, 1.0, 1.5]), np.zeros(3), SF)
    step = (np.log2(SF[-1]) - np.log2(SF[0])) / 99
    np.testing.assert_array_less(np.abs(np.log2(values) - true), step / 2 + 1e-9)
    assert kept.all()
    # a modulated (simple-cell-like) unit whose AC exceeds its DC - baseline: the AC curve is used, same peak
    values, _ = prop.peak_spatial_frequency(_sf_units(true, [1.0, 1.0, 1.5], ac=1.0), np.full(3, 5.0), SF)
    np.testing.assert_array_less(np.abs(np.log2(values) - true), step / 2 + 1e-9)


def test_spatial_frequency_bandwidth_of_log_gaussian_tuning():
    sigma = np.array([0.6, 1.0])
    selective, bandwidth, kept = prop.spatial_frequency_bandwidth(_sf_units([1.2, 1.2], sigma), np.zeros(2), SF)
    # cut-offs at 70.7 % of the peak: +-sigma * sqrt(2 ln(1/0.707)) octaves (widened a little by the smoothing)
    half_width = np.sqrt(sigma ** 2 + 2 * 0.25 ** 2 / 7) * np.sqrt(2 * np.log(1 / 0.707))
    expected = 100 * 2.0 ** (-2 * half_width)
    step = (np.log2(SF[-1]) - np.log2(SF[0])) / 99
    np.testing.assert_array_less(np.abs(np.log2(bandwidth / expected)), 2 * step + 0.01)
    assert selective.tolist() == [1.0, 1.0] and kept.all()
    # low-pass: no cut-off below the peak -> not selective, no bandwidth
    low_pass = _sf_units([np.log2(SF[0]) - 1.0], [1.0])
    selective, bandwidth, _ = prop.spatial_frequency_bandwidth(low_pass, np.zeros(1), SF)
    assert selective.tolist() == [0.0] and np.isnan(bandwidth).all()


def test_size_tuning_by_hand():
    curve = np.array([[1, 2, 4, 8, 10, 9, 7, 6, 5, 5, 5, 5.0], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10.0]])
    values = prop.size_tuning_curve_properties(curve, RADII)
    assert values["surround_suppression_index"].tolist() == [0.5, 0.0]
    assert values["strongly_suppressed"].tolist() == [1.0, 0.0]
    assert values["grating_summation_field"][0] == 2 * RADII[4]  # first radius with r >= 9.5
    assert values["surround_diameter"][0] == 2 * RADII[8]  # first radius beyond the peak with r <= 5.25
    assert values["surround_grating_summation_field_ratio"][0] == pytest.approx(RADII[8] / RADII[4])
    assert np.isnan(values["grating_summation_field"][1]) and np.isnan(values["surround_diameter"][1])


def test_difference_of_gaussians_size_tuning_gives_its_suppression_index_back():
    """Integrated DoG (Sceniak et al. 1999): r(R) = ke erf(R/a)^2 - ki erf(R/b)^2, plateau ke - ki."""
    from scipy.special import erf

    def dog(radius, ke, a, ki, b):
        return ke * erf(radius / a) ** 2 - ki * erf(radius / b) ** 2

    ke, a, b = 60.0, 0.4, 1.2
    units = []
    for ki in (0.0, 15.0, 30.0, 45.0):
        curve = dog(RADII, ke, a, ki, b)  # (12,)
        gain = np.zeros((4, 6))
        gain[1, 3] = 1.0
        gain[2, 3] = 0.5
        units.append(curve[:, None, None, None] * gain[None, :, :, None] * np.ones(8))
    values, kept = prop.size_tuning(np.stack(units), np.zeros(4), RADII)
    for i, ki in enumerate((0.0, 15.0, 30.0, 45.0)):
        curve = dog(RADII, ke, a, ki, b)
        expected = (curve.max() - curve[-1]) / curve.max()
        assert values["surround_suppression_index"][i] == pytest.approx(expected, abs=1e-12)
        # the sampled largest radius (4.76 deg) lies on the plateau: the index is the DoG's own
        plateau = ke - ki
        fine = dog(np.geomspace(0.01, 10, 20001), ke, a, ki, b).max()
        assert values["surround_suppression_index"][i] == pytest.approx((fine - plateau) / fine, abs=0.02)
    assert values["surround_suppression_index"][0] == pytest.approx(0.0, abs=1e-9)
    assert np.isnan(values["grating_summation_field"][0])
    assert (values["grating_summation_field"][1:] < values["surround_diameter"][1:]).all()
    assert kept.all()


# ---- the benchmarks ---------------------------------------------------------------------------------
def test_seven_benchmarks_with_their_parents():
    assert sorted(brainscore.list_benchmarks("Marques2020*")) == sorted(REFERENCE_CEILINGS)
    nodes = registry.tree_nodes()
    for family in set(PARENTS.values()):
        assert nodes[family] == "V1"
    for identifier, parent in PARENTS.items():
        assert registry.benchmarks.metadata(identifier)["parent"] == parent


@pytest.mark.parametrize("identifier", sorted(REFERENCE_CEILINGS))
def test_ceilings_agree_with_the_reference(identifier):
    benchmark = brainscore.load_benchmark(identifier)
    assert float(benchmark.ceiling) == pytest.approx(REFERENCE_CEILINGS[identifier], abs=0.005)
    assert benchmark.region == "V1" and benchmark.version == 1 and benchmark.visual_degrees == 12
    assert benchmark.time_bins == [(70, 170)] and benchmark.number_of_trials == 20
    assert benchmark.bibtex.count("@article") == 2


def test_a_model_without_a_v1_layer_commits_v1_by_the_layer_rule():
    """No V1 selection data here: V1 is committed by the relative-depth rule (issue 22), not refused.

    With two candidates the rule's V1 depth (0.270, ``models/layer_rule.json``) rounds to the first.
    """
    from brainscore.models import layer_rule
    from brainscore.models.commitment import pytorch_commitment
    from brainscore.scoring.selection import layer_scorer
    import torch

    network = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU())
    model = pytorch_commitment("tiny", network, ["0", "1"], layer_scorer=layer_scorer)
    model.start_recording("V1", time_bins=[(70, 170)])
    features = model.look_at(brainscore.load_stimulus_set("Marques2020_blank"))
    depth = layer_rule.load()["rule"]["relative_depth"]["V1"]
    assert round(depth * (2 - 1)) == 0
    assert model.layer_methods["V1"]["method"] == "rule"
    assert set(map(str, features["layer"].values)) == {"0"}


# ---- the whole analysis on synthetic units with known tuning -------------------------------------------
def _table():
    import pandas as pd

    parts = []
    for name in gratings.NAMES:
        part = gratings.parameters(name)
        part["stimulus_set"] = name
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _synthetic_responses(table, units):
    """Responses of units with separable tuning: blank 1, plus gain x orientation x sf x size x position x phase."""
    from brainscore.data.assemblies import NeuroidAssembly

    values = np.ones((len(table), len(units)))
    grating = np.isfinite(table["radius"].to_numpy())
    t = table[grating]
    for j, unit in enumerate(units):
        delta = (t["orientation"].to_numpy() - unit["orientation"] + 90) % 180 - 90
        orientation = np.exp(-delta ** 2 / (2 * 20.0 ** 2))
        sf = np.exp(-(np.log2(t["spatial_frequency"].to_numpy()) - np.log2(unit["sf"])) ** 2 / 2)
        radius = t["radius"].to_numpy()
        from scipy.special import erf
        size = erf(radius / 0.3) ** 2 - unit["suppression"] * erf(radius / 1.0) ** 2
        distance2 = (t["position_y"].to_numpy() - unit["y"]) ** 2 + (t["position_x"].to_numpy() - unit["x"]) ** 2
        position = np.exp(-distance2 / (2 * 0.3 ** 2))
        phase = (1 + 0.2 * np.cos(np.deg2rad(t["phase"].to_numpy())))
        values[grating, j] = 1 + 50 * orientation * sf * np.maximum(size, 0) * position * phase
    return NeuroidAssembly(values, dims=("presentation", "neuroid"),
                           coords={"stimulus_id": ("presentation", table["stimulus_id"].to_numpy()),
                                   "neuroid_id": ("neuroid", np.array([f"u{j}" for j in range(len(units))]))})


def test_the_analysis_recovers_synthetic_tuning():
    from brainscore.plugins.benchmarks.marques2020.benchmark import study_properties
    from scipy.special import erf

    units = [dict(y=0.5, x=0.5, orientation=o, sf=f, suppression=s)
             for o, f, s in [(30, 1.5, 0.0), (90, 3.0, 0.3), (135, 0.8, 0.6), (0, 2.0, 0.45)]]
    units.append(dict(y=-1.0, x=1.5, orientation=45, sf=2.0, suppression=0.3))  # receptive field elsewhere
    table = _table()
    responses = _synthetic_responses(table, units)
    orientation = study_properties(responses, table, "DeValois1982a")
    assert orientation.attrs["n_selected"] == 4 and orientation.attrs["n_units"] == 5
    assert orientation["neuroid_id"].values.tolist() == ["u0", "u1", "u2", "u3"]
    np.testing.assert_array_equal(orientation.sel(neuronal_property="preferred_orientation").values, [30, 90, 135, 0])
    peak = study_properties(responses, table, "DeValois1982b").sel(neuronal_property="peak_spatial_frequency").values
    np.testing.assert_array_less(np.abs(np.log2(peak) - np.log2([1.5, 3.0, 0.8, 2.0])), 0.03)
    size = study_properties(responses, table, "Cavanaugh2002a")
    ssi = size.sel(neuronal_property="surround_suppression_index").values
    for value, s in zip(ssi, [0.0, 0.3, 0.6, 0.45]):
        curve = np.maximum(erf(RADII / 0.3) ** 2 - s * erf(RADII / 1.0) ** 2, 0)
        assert value == pytest.approx((curve.max() - curve[-1]) / curve.max(), abs=1e-6)  # affine-invariant ratio
    schiller = study_properties(responses, table, "Schiller1976c")
    assert schiller.sel(neuronal_property="spatial_frequency_selective").values.tolist() == [1.0, 1.0, 1.0, 1.0]


def test_the_seven_benchmarks_show_one_stimulus_set_so_a_model_sees_the_gratings_once():
    """Every benchmark places the same 9097 gratings (``Marques2020_V1``) on the model's screen, so the content-keyed
    activations cache (tests/models/test_extraction.py) serves the later six from the first one's single pass.

    EfficientNet-Lite0's seven scores are checked against docs/benchmarks.md in tests/scoring/test_published_scores.py.
    """
    from types import SimpleNamespace

    candidate = SimpleNamespace(visual_degrees=lambda: 12)  # the benchmarks' own 12 degrees: no resizing
    shown = {}
    for identifier in sorted(REFERENCE_CEILINGS):
        presentation, = brainscore.load_benchmark(identifier).presentations(candidate)
        assert presentation.region == "V1" and presentation.number_of_trials == 20
        shown[identifier] = presentation.stimuli
    first, *others = shown.values()
    assert len(first) == 9097 and first.identifier.startswith("Marques2020_V1")
    for stimuli in others:
        assert stimuli.identifier == first.identifier
        assert stimuli["stimulus_id"].tolist() == first["stimulus_id"].tolist()


def test_unresponsive_layers_raise_clear_errors():
    from brainscore.errors import ValidationError
    from brainscore.plugins.benchmarks.marques2020.benchmark import study_properties

    table = _table()
    silent = _synthetic_responses(table, [dict(y=0.5, x=0.5, orientation=0, sf=2.0, suppression=0.0)])
    silent.values[:] = 1.0  # answers every grating as the blank
    with pytest.raises(ValidationError, match="no unit of the model's V1 layer"):
        study_properties(silent, table, "Cavanaugh2002a")
    with pytest.raises(ValueError, match="none of the 3 units responds"):
        prop.firing_rate_affine(np.ones((3, 2, 8)), np.ones(3))


def test_marques_scores_have_a_bootstrap_error_and_interval():
    """Issue 25 #5: Marques 2020 scores were recorded with ``"error": null, "ci95": null`` (no bootstrap). The
    bootstrap resamples the recorded neurons; with every neuron drawn once it gives back the raw similarity and the
    ceiling exactly (the metric's own model draws and seed)."""
    from brainscore.benchmarks.properties import _ks_against_resamples
    from brainscore.metrics.neural.distribution_similarity import property_values
    from brainscore.scoring.bootstrap import attach, confidence_interval

    benchmark = brainscore.load_benchmark("Marques2020_DeValois1982-pref_or")
    data = benchmark.assembly
    rng = np.random.RandomState(1)
    model_properties = data.copy(data=np.where(np.isnan(data.values), np.nan, rng.uniform(0, 180, data.shape)))
    score = benchmark.score_properties(model_properties)
    metric = benchmark.metric
    model = property_values(model_properties, metric.property_name)
    measured = property_values(data, metric.property_name)
    bins = metric._bins(data)
    once = np.ones((1, len(measured)))
    assert _ks_against_resamples(model, measured, bins, once, metric.n_samples, metric.random_state)[0] == \
        pytest.approx(float(score.attrs["raw"]), abs=1e-12)
    assert _ks_against_resamples(measured, measured, bins, once, metric.n_samples, metric.random_state)[0] == \
        pytest.approx(float(benchmark.ceiling), abs=1e-12)
    samples = confidence_interval(benchmark, score, resamples=200, seed=0)
    assert samples.unit == "neuron" and samples.score.shape == samples.ceiling.shape == (200,)
    assert np.isfinite(samples.score).all()
    attach(score, samples)
    low, high = score.attrs["ci95"]
    assert 0 < score.attrs["error"] < 0.2 and low < float(score) < high
    assert score.attrs["ceiling_error"] > 0 and "model_properties" not in score.attrs


# ---- a layer larger than memory: read in blocks of units, the same numbers (issue 22) ---------------------------
def _hexes(score) -> tuple[str, str, str]:
    return float(score).hex(), float(score.attrs["raw"]).hex(), float(score.attrs["ceiling"]).hex()


def test_a_tiny_memory_budget_reads_the_layer_from_disk_in_blocks_with_the_same_numbers(tmp_path, monkeypatch):
    """40 synthetic units (float32, in a features file as a model's cache keeps them) measured with a budget of 3
    units per block from the file and with the whole layer in memory: properties and scores are bit-identical."""
    from brainscore.data.assemblies import NeuroidAssembly
    from brainscore.models.extraction.core import LayerFeatures, NpyWriter
    from brainscore.plugins.benchmarks.marques2020 import benchmark as marques

    rng = np.random.default_rng(3)
    units = [dict(y=0.5 + rng.choice([0, 0.05, 0.6]), x=0.5 + rng.choice([0, -0.05, 0.9]), orientation=rng.uniform(0, 180),
                  sf=rng.uniform(0.7, 4), suppression=rng.uniform(0, 0.7)) for _ in range(40)]
    table = _table()
    values = _synthetic_responses(table, units).values.astype(np.float32)
    ids = np.asarray(sorted(table["stimulus_id"].astype(str)))
    order = np.argsort(table["stimulus_id"].astype(str).to_numpy(), kind="stable")
    writer = NpyWriter(tmp_path / "layer.npy", len(ids), checksum=False)
    writer.append(values[order])
    features = LayerFeatures("layer", writer.commit(), ids)
    in_memory = NeuroidAssembly(values, dims=("presentation", "neuroid"),
                                coords={"stimulus_id": ("presentation", table["stimulus_id"].to_numpy()),
                                        "neuroid_id": ("neuroid", np.array([f"layer.{j}" for j in range(40)]))})
    n_receptive_field = len(gratings.parameters("Marques2020_receptive_field"))
    per_unit = 4 * len(table) + 24 * n_receptive_field
    for study, identifier in [("DeValois1982a", "Marques2020_DeValois1982-pref_or"),
                              ("DeValois1982b", "Marques2020_DeValois1982-peak_sf"),
                              ("Schiller1976c", "Marques2020_Schiller1976-sf_bandwidth"),
                              ("Cavanaugh2002a", "Marques2020_Cavanaugh2002-surround_diameter")]:
        monkeypatch.setattr(marques, "MEMORY_BYTES", None)
        whole = marques.study_properties(in_memory, table, study)
        monkeypatch.setattr(marques, "MEMORY_BYTES", 3 * per_unit + per_unit // 2)
        assert marques.units_per_block(len(table), n_receptive_field) == 3
        streamed = marques.study_properties(features.blocks(table), table, study)
        assert 0 < whole.attrs["n_selected"] < 40
        np.testing.assert_array_equal(streamed.values, whole.values)
        assert streamed["neuroid_id"].values.tolist() == whole["neuroid_id"].values.tolist()
        assert streamed.attrs == whole.attrs
        benchmark = registry.load_benchmark(identifier)
        assert _hexes(benchmark.score_properties(streamed)) == _hexes(benchmark.score_properties(whole))


@pytest.mark.slow
@pytest.mark.nightly  # 9097 gratings through a network twice (2-4 min); the blocks' equality on one layer's
# file runs in every CI run (test_a_tiny_memory_budget_reads_the_layer_from_disk_in_blocks_with_the_same_numbers)
def test_a_small_model_scores_the_same_bits_with_a_tiny_memory_budget(monkeypatch):
    """End to end: a small network's V1 (2,916 units) scored from its features file 40 units at a time and with the
    layer in memory (``streams`` off: ``look_at``) gives the same score, raw and ceiling to the last bit."""
    import torch
    from brainscore.models.commitment import pytorch_commitment
    from brainscore.plugins.benchmarks.marques2020 import benchmark as marques

    torch.manual_seed(0)
    network = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 16, stride=8), torch.nn.ReLU())
    # on the benchmarks' own 12 degrees the 9097 gratings are not resized; 27 x 27 units, the middle one centred
    model = pytorch_commitment("small-v1", network, ["1"], region_layer_map={"V1": "1"}, visual_degrees=12)
    benchmark = registry.load_benchmark("Marques2020_DeValois1982-pref_or")
    assert benchmark.streams
    monkeypatch.setattr(marques, "MEMORY_BYTES", 40 * (4 * 9097 + 24 * 3528))
    streamed = benchmark(model)
    assert streamed.attrs["model_properties"].attrs["n_units"] == 2916  # 4 channels of 27 x 27
    monkeypatch.setattr(marques, "MEMORY_BYTES", None)
    monkeypatch.setattr(benchmark, "streams", False)
    whole = benchmark(model)
    assert _hexes(streamed) == _hexes(whole)
    assert 0 < float(whole) < 1
