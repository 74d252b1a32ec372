"""The reference's per-unit Marques (2021) property functions in ``brainscore_vision.benchmark_helpers.properties_common``
(its ``marques2020`` benchmark folder imports them), against values computed by hand."""
from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from brainscore.errors import ValidationError
from brainscore_vision.benchmark_helpers import properties_common as pc

ORIENTATIONS = np.arange(0, 180, 22.5)


def test_circular_variance_and_orthogonal_ratio():
    only_one = np.array([4.0, 0, 0, 0, 0, 0, 0, 0])
    assert pc.calc_circular_variance(only_one, ORIENTATIONS) == pytest.approx(0.0)
    assert pc.calc_circular_variance(np.ones(8), ORIENTATIONS) == pytest.approx(1.0, abs=1e-12)
    assert pc.calc_orthogonal_preferred_ratio(np.array([1, 2, 8, 2, 1, 0.5, 3, 1.0]), ORIENTATIONS) == 3 / 8  # 45 + 90 degrees


def test_bandwidth_of_a_tuning_curve():
    curve = np.exp(-0.5 * (np.minimum(np.abs(ORIENTATIONS - 90), 180 - np.abs(ORIENTATIONS - 90)) / 20) ** 2)
    full, preferred, degrees, fitted = pc.calc_bandwidth(curve, ORIENTATIONS, filt_type=None, thrsh=0.5)
    assert preferred == 90 and len(degrees) == len(fitted) == 180
    assert 40 < full < 56  # a Gaussian of sd 20 degrees: full width at half height 47.1, sampled every 22.5
    half = pc.calc_bandwidth(curve, ORIENTATIONS, filt_type=None, thrsh=0.5, mode="half")[0]
    assert half == full / 2
    assert np.isnan(pc.calc_bandwidth(np.ones(8), ORIENTATIONS, filt_type="hanning")[0])  # flat: no half height
    with pytest.raises(ValueError, match="unknown filt_type"):
        pc.calc_bandwidth(curve, ORIENTATIONS, filt_type="box")


def test_spatial_frequency_size_and_texture_properties():
    sf = np.array([0.5, 1, 2, 4, 8])
    bandwidth, peak, r2, _, _ = pc.calc_spatial_frequency_tuning(np.array([0, 1, 4, 1, 0.0]), sf, filt_type=None)
    assert peak == pytest.approx(2.0, rel=0.05) and r2 == pytest.approx(1.0) and 0 < bandwidth < 100
    gsf, surround, ratio, ssi = pc.calc_size_tuning(np.array([1, 4, 10, 6, 5.0]), np.array([0.5, 1, 2, 3, 4]))
    assert (gsf, surround, ratio, ssi) == (4.0, 8.0, 2.0, 0.5)  # 6 > 5 + 0.05 * 5, 5 is not
    assert all(np.isnan(v) for v in pc.calc_size_tuning(np.array([1, 2, 3.0]), np.array([1, 2, 3.0]))[:3])
    texture = np.array([[1.0, 2.0], [3.0, 2.0]])  # rows: noise, texture; columns: families
    mean, per_family = pc.calc_texture_modulation(texture)
    np.testing.assert_allclose(per_family, [0.5, 0.0])
    assert mean == pytest.approx(0.25)
    assert pc.calc_sparseness(np.array([0, 0, 0, 1.0])) == pytest.approx(1.0)
    assert pc.calc_sparseness(np.ones(5)) == pytest.approx(0.0)
    ratio, sample_share, family_share = pc.calc_variance_ratio(np.array([[1.0, 1.0], [3.0, 3.0]]))
    assert (sample_share, family_share) == (0.0, 1.0) and ratio == pytest.approx(1.02 / 0.02)


def _gratings(order):
    names = ("position_y", "position_x", "contrast", "radius", "spatial_frequency", "orientation", "phase")
    levels = dict(position_y=[0.5], position_x=[0.5], contrast=[1.0], radius=[1.0], spatial_frequency=[1.0, 2.0],
                  orientation=[0.0, 90.0], phase=[0.0, 180.0])
    grid = np.meshgrid(*[levels[n] for n in names], indexing="ij")
    coords = {n: ("presentation", g.ravel()[order]) for n, g in zip(names, grid)}
    return xr.DataArray(np.zeros((3, 8)), dims=("neuroid", "presentation"), coords=coords)


def test_grating_order_is_checked():
    pc._assert_grating_activations(_gratings(np.arange(8)))
    with pytest.raises(ValidationError, match="not a grid over"):
        pc._assert_grating_activations(_gratings(np.arange(8)[::-1]))


@pytest.mark.parametrize("filt_type", ["hanning", "flat", "smooth", "triangle"])
def test_fits_with_every_kernel_equal_the_references_convolution_and_univariate_spline(filt_type):
    """One home for the tuning fits: the per-unit functions run brainscore's vectorised Marques 2020 fits with the
    ``filt_type`` kernel; they equal the reference's procedure (``np.convolve`` of the normalised kernel, then
    FITPACK's interpolating spline) computed here step by step."""
    from scipy.interpolate import UnivariateSpline

    rng = np.random.default_rng(7)
    weights = np.asarray(pc._KERNELS[filt_type], dtype=float)
    weights /= weights.sum()
    orientations, sf = np.arange(0, 180, 15.0), np.array([0.5, 0.7, 1, 1.4, 2, 2.8, 4, 5.6, 8])
    for _ in range(5):
        curve = rng.uniform(0, 10, len(orientations))
        _, preferred, degrees, fitted = pc.calc_bandwidth(curve, orientations, filt_type=filt_type)
        smoothed = np.convolve(weights, np.tile(curve, 3), mode="same")
        expected = UnivariateSpline(np.concatenate([orientations - 180, orientations, orientations + 180]),
                                    smoothed, s=0.0)(degrees)
        np.testing.assert_allclose(fitted, expected, rtol=1e-9, atol=1e-9)
        assert preferred == np.argmax(expected)
        y = rng.uniform(0, 10, len(sf))
        bandwidth, peak, r2, frequencies, fitted = pc.calc_spatial_frequency_tuning(y, sf, filt_type=filt_type)
        padded = np.concatenate([[y[0]] * 2, y, [y[-1]] * 2])
        spline = UnivariateSpline(np.log2(sf), np.convolve(weights, padded, mode="valid"), s=0.0)
        np.testing.assert_allclose(fitted, spline(np.log2(frequencies)), rtol=1e-9, atol=1e-9)
        assert peak == frequencies[np.argmax(fitted)]
        assert r2 == pytest.approx(1 - np.sum((y - spline(np.log2(sf))) ** 2) / np.sum((y - y.mean()) ** 2), rel=1e-9)

