"""The RDM and CKA metrics on the reference's own test inputs (brainscore-vision 2.4.2, metrics/{rdm,cka}/test.py).

- ``cka`` of an assembly with itself is 1 to the reference's tolerance (1e-6): float64 Gram products by
  default (float32 gave 1.0000126 on these 300 x 10 uniform responses).
- ``rdm`` takes a precomputed RDM built the reference's way, one dim name twice
  (``('presentation', 'presentation')``), and scores it as the same RDM with dims ``presentation``/``presentation_b``.
- ``cka_cv``/``rdm_cv`` take the reference's ``crossvalidation_kwargs``.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.random import RandomState

from brainscore import registry
from brainscore.data.assemblies import DataAssembly, NeuroidAssembly
from brainscore.metrics.similarity.cka import CKACrossValidated, CKAMetric
from brainscore.metrics.similarity.rdm import RDMCrossValidated, RDMMetric, as_rdm_dims


def uniform(seed=1, n=300, m=10) -> DataAssembly:
    """The reference's cka test data: uniform responses, n stimuli x m neuroids."""
    rnd = RandomState(seed)
    return DataAssembly(rnd.uniform(size=(n, m)), dims=["presentation", "neuroid"], coords={
        "stimulus_id": ("presentation", np.arange(n)), "neuroid_id": ("neuroid", np.arange(m))})


def test_cka_identity_to_the_reference_tolerance():
    assembly = uniform()
    assert float(registry.load_metric("cka")(assembly, assembly)) == pytest.approx(1, abs=1e-9)
    assert float(CKAMetric(dtype=np.float32)(assembly, assembly)) != pytest.approx(1, abs=1e-6)  # why float64


def test_cka_cv_takes_crossvalidation_kwargs():
    assembly = uniform()
    score = registry.load_metric("cka_cv", crossvalidation_kwargs=dict(stratification_coord=None))(assembly, assembly)
    assert float(score) == pytest.approx(1, abs=1e-9) and "error" in score.attrs
    other = uniform(seed=2)
    by_kwargs = registry.load_metric("cka_cv", crossvalidation_kwargs=dict(stratification_coord=None, splits=3))
    direct = CKACrossValidated(stratification_coord=None, splits=3)
    assert float(by_kwargs(assembly, other)) == float(direct(assembly, other))
    assert len(by_kwargs(assembly, other).raw) == 3
    with pytest.raises(TypeError, match="unknown keys"):
        RDMCrossValidated(crossvalidation_kwargs=dict(train_sz=0.5))


def _repeated_dim_rdm(n: int, seed: int = 0) -> NeuroidAssembly:
    rdm = np.random.RandomState(seed).rand(n, n)  # not symmetric, as in the reference's test
    np.fill_diagonal(rdm, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # xarray warns about the repeated dim name
        return NeuroidAssembly(rdm, dims=["presentation", "presentation"], coords={
            "stimulus_id": ("presentation", list(range(n))), "object_name": ("presentation", ["A", "B"] * (n // 2))})


@pytest.mark.parametrize("n", [20, 100])
def test_rdm_of_a_precomputed_rdm_with_a_repeated_dim(n):
    rdm = _repeated_dim_rdm(n)
    assert float(registry.load_metric("rdm")(rdm, rdm)) == pytest.approx(1.0)
    converted = as_rdm_dims(rdm)
    assert converted.dims == ("presentation", "presentation_b")
    assert list(converted["stimulus_id_b"].values) == list(range(n))
    other = _repeated_dim_rdm(n, seed=1)
    assert float(RDMMetric()(rdm, other)) == float(RDMMetric()(converted, as_rdm_dims(other)))
