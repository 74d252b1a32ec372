"""Marques 2020 data plugin: histograms against the published counts, gratings against closed forms."""
from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

import brainscore
from brainscore.metrics.neural.distribution_similarity import histogram
from brainscore.plugins.data.marques2020 import gratings, histograms


@pytest.fixture(scope="module")
def published(shared_data):
    data = json.loads((shared_data / "marques2020_v1_properties" / "properties.json").read_text())
    return {s["study_id"]: s for s in data["studies"]}


@pytest.fixture(scope="module")
def stimuli_json(shared_data):
    return json.loads((shared_data / "marques2020_v1_properties" / "stimuli.json").read_text())


def test_shipped_histograms_are_the_published_counts(published):
    assert set(histograms.STUDIES) == set(published)
    total = 0
    for study, entry in published.items():
        shipped = histograms.HISTOGRAMS["studies"][study]
        assert shipped["n_rows"] == entry["n_rows"]
        assert shipped["stimulus_set"] == entry["stimulus_set"]
        assert shipped["citation"]["year"] == entry["citation"]["year"]
        assert [p["name"] for p in entry["properties"]] == list(shipped["properties"])
        for prop in entry["properties"]:
            mine = shipped["properties"][prop["name"]]
            assert mine["counts"] == prop["counts"]
            assert mine["nan_rows"] == prop["n_nan_rows"]
            assert mine["scale"] == prop["bin_scale"]
            np.testing.assert_allclose(histograms.bin_edges(study, prop["name"]), prop["bin_edges"], rtol=0, atol=1e-12)
            for group, counts in prop.get("subgroup_counts", {}).items():
                assert mine["subgroup_counts"][group] == counts
            if "subgroup_counts" in mine:
                assert np.sum(list(mine["subgroup_counts"].values()), axis=0).tolist() == mine["counts"]
            total += len(prop["counts"])
    assert total == 61  # 9 properties, 61 bins (data README)


@pytest.mark.parametrize("study,rows", [("DeValois1982a", 385), ("DeValois1982b", 363), ("Schiller1976c", 87),
                                        ("Cavanaugh2002a", 190)])
def test_assembly_histograms_equal_the_counts(study, rows, published):
    assembly = brainscore.load_dataset(study)
    assert assembly.dims == ("neuroid", "neuronal_property")
    assert assembly.sizes["neuroid"] == rows
    assert set(assembly["region"].values) == {"V1"}
    assert assembly.attrs["number_of_trials"] == 20
    for prop in published[study]["properties"]:
        values = assembly.sel(neuronal_property=prop["name"]).values
        assert np.isnan(values[:prop["n_nan_rows"]]).all()
        assert not np.isnan(values[prop["n_nan_rows"]:]).any()
        edges = assembly.attrs[f"{prop['name']}_bins"]
        assert histogram(values, edges).tolist() == prop["counts"]


def test_binary_properties_are_zeros_then_ones():
    values = brainscore.load_dataset("Schiller1976c").sel(neuronal_property="spatial_frequency_selective").values
    assert values.tolist() == [0.0] * 14 + [1.0] * 73


def test_linspace_edges_are_bit_identical_to_numpy():
    edges = histograms.bin_edges("Cavanaugh2002a", "surround_suppression_index")
    assert edges[3] == np.linspace(0, 2, 11)[3] == 0.6000000000000001


def test_log2_bins_are_drawn_uniformly_in_log2():
    rng = np.random.default_rng(1)
    values = histograms.sample_values([0, 20000], np.array([1.0, 2.0, 8.0]), "log2", "uniform_within_bin", rng)
    # uniform in log2 over [1, 3]: median at 2**2 = 4 (in linear space it would be 5)
    assert np.median(values) == pytest.approx(4.0, rel=0.02)


def test_seed_changes_values_but_not_the_ceiling():
    a, b = histograms.load("Cavanaugh2002a", seed=0), histograms.load("Cavanaugh2002a", seed=1)
    assert not np.allclose(a.values[~np.isnan(a.values)], b.values[~np.isnan(b.values)])
    ceiling = brainscore.load_ceiling("ks_similarity", "grating_summation_field")
    assert float(ceiling(a)) == float(ceiling(b))


# ---- gratings -----------------------------------------------------------------------------------
def test_parameter_tables_match_stimuli_json(stimuli_json):
    for name, spec in stimuli_json["stimulus_sets"].items():
        if not spec.get("available_here", True):
            continue
        table = gratings.parameters(name)
        assert len(table) == spec["n_images"]
        assert table["stimulus_id"].is_unique
        for column, key in [("radius", "radius_deg"), ("spatial_frequency", "spatial_frequency_cpd"),
                            ("orientation", "orientation_deg"), ("phase", "phase_deg"),
                            ("position_x", "position_x_deg"), ("position_y", "position_y_deg")]:
            if key in spec:
                np.testing.assert_allclose(np.unique(table[column]), spec[key], rtol=1e-12)
    orientation = gratings.parameters("Marques2020_orientation")
    pairs = {(p["cycles_in_diameter"], round(p["spatial_frequency"], 9), round(p["radius"], 9))
             for p in stimuli_json["stimulus_sets"]["Marques2020_orientation"]["size_pairs"]}
    assert {(m, round(f, 9), round(r, 9)) for m, f, r in
            orientation[["number_of_cycles", "spatial_frequency", "radius"]].itertuples(index=False)} == pairs


def test_rows_nest_with_phase_fastest():
    table = gratings.parameters("Marques2020_receptive_field")
    assert table["phase"].tolist()[:4] == [0, 180, 0, 180]
    assert table["orientation"].tolist()[:8] == [0, 0, 45, 45, 90, 90, 135, 135]
    assert table["position_x"].tolist()[7:9] == [-2.5, -2.25]  # x changes after the 8 conditions
    assert table["position_y"].tolist()[167:169] == [-2.5, -2.25]  # y changes after 21 x positions
    size = gratings.parameters("Marques2020_size")
    assert size["spatial_frequency"].tolist()[47:49] == pytest.approx([0.7711054127, 1.5422108254])
    assert size["radius"].iloc[192] == pytest.approx(0.14865088937534013)


def _one(name, **values):
    table = gratings.parameters(name)
    mask = np.ones(len(table), dtype=bool)
    for column, value in values.items():
        mask &= np.isclose(table[column], value)
    assert mask.sum() == 1
    return table[mask]


def test_pixel_values_follow_the_grating_formula():
    # orientation 0, phase 90, sf 3.0844: at the grating centre (pixel 364, 364) s = sin(90 deg) = 1 -> 255
    row = _one("Marques2020_orientation", orientation=0, phase=90, spatial_frequency=3.0844216508158815,
               number_of_cycles=4)
    image = gratings.render(row)[0]
    assert image[364, 364] == 255
    # a quarter cycle to the right (x = 1/(4 sf) degrees) sin(180 deg) = 0 -> truncated 127.5 -> 127
    # half a cycle: sin(270 deg) = -1 -> 0; 7 pixels right: x = 0.125 deg
    sf = 3.0844216508158815
    x = 7 / 56
    assert image[364, 364 + 7] == int((np.sin(2 * np.pi * sf * x + np.pi / 2) + 1) / 2 * 255)
    # orientation 90 varies along y only: a whole row through the centre has the same value
    row = _one("Marques2020_orientation", orientation=90, phase=0, spatial_frequency=sf, number_of_cycles=4)
    image = gratings.render(row)[0]
    assert image[364, 364] == 127  # s = 0 maps to 127 (uint8 truncation of 127.5)
    y = 5 / 56
    assert image[364 + 5, 364] == int((np.sin(2 * np.pi * sf * y) + 1) / 2 * 255)
    assert image[0, 0] == 128


@pytest.mark.parametrize("radius", gratings.RADII[:6])
def test_window_radius_in_pixels(radius):
    # horizontal stripes (orientation 90) at phase 90: the centre row is 255 wherever the disc is
    row = _one("Marques2020_size", radius=radius, orientation=90, phase=90, spatial_frequency=0.7711054127039704)
    image = gratings.render(row)[0]
    inside = np.flatnonzero(image[364] != 128)
    assert (image[364, inside] == 255).all()
    half = int(np.floor(radius * 56 + 1e-9))
    assert inside.tolist() == list(range(364 - half, 364 + half + 1))
    # the disc is round: pixels with x^2 + y^2 <= r^2, nothing else
    yy, xx = np.mgrid[:672, :672]
    disc = ((xx - 364) / 56) ** 2 + ((yy - 364) / 56) ** 2 <= radius ** 2
    assert ((image != 128) <= disc).all()


def test_receptive_field_grating_position():
    # the grating at position (y, x) = (-2.5, 2.5) degrees is centred at row 336 - 140, column 336 + 140
    row = _one("Marques2020_receptive_field", position_y=-2.5, position_x=2.5, orientation=90, phase=0)
    image = gratings.render(row)[0]
    ys, xs = np.nonzero(image != 128)
    assert ys.mean() == pytest.approx(196, abs=0.5) and xs.mean() == pytest.approx(476, abs=0.5)
    assert xs.max() - xs.min() == 2 * int(56 / 6)  # radius 1/6 degree = 9.33 pixels


def test_stimulus_sets_render_once_and_read_back(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path))
    blank = brainscore.load_stimulus_set("Marques2020_blank")
    image = np.asarray(Image.open(blank.get_stimulus(blank["stimulus_id"].iloc[0])))
    assert image.shape == (448, 448) and (image == 128).all()
    assert blank["degrees"].tolist() == [12.0]
    stimuli = gratings.stimulus_set("Marques2020_orientation")
    first = stimuli.get_stimulus(stimuli["stimulus_id"].iloc[100])
    mtime = first.stat().st_mtime_ns
    again = gratings.stimulus_set("Marques2020_orientation")
    assert again.get_stimulus(stimuli["stimulus_id"].iloc[100]).stat().st_mtime_ns == mtime
    np.testing.assert_array_equal(np.asarray(Image.open(first)), gratings.render(stimuli.iloc[[100]])[0])
    assert stimuli.validate() is stimuli
