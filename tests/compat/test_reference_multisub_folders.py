"""The reference's ``laion_fmri`` and ``marques2020`` benchmark folders, unchanged, on brainscore's plugin path
(issue 39): they import (``benchmark_helpers.multi_subject``, the per-unit Marques property functions) and build what
can be built here. The LAION-fMRI data are on the reference's S3, so its benchmarks are only constructed, which must
not touch the data; the numbers of the aggregate classes are tested in ``test_multi_subject.py``.
"""
from __future__ import annotations

import shutil

import pytest

from brainscore import registry
from brainscore.errors import UnknownIdentifierError

SUBJECTS = ["sub-01", "sub-03", "sub-05", "sub-06", "sub-07"]


@pytest.fixture
def folders(reference_tree, tmp_path, monkeypatch):
    """A plugin tree holding only the two benchmark folders, the data folder marques2020 imports a name of, and the
    reference's regression metrics (``dual_ridgecv_split``, which laion_fmri loads, is theirs; brainscore has none)."""
    for part in ("benchmarks/laion_fmri", "benchmarks/marques2020", "data/freemanziemba2013",
                 "metrics/regression_correlation"):
        shutil.copytree(reference_tree / part, tmp_path / part)
    monkeypatch.setenv("BRAINSCORE_PLUGIN_DIRS", str(tmp_path))
    registry._discovery.reset()
    yield tmp_path
    monkeypatch.delenv("BRAINSCORE_PLUGIN_DIRS", raising=False)
    registry._discovery.reset()


def test_laion_fmri_builds_multi_subject_benchmarks_without_its_data(folders, monkeypatch):
    from brainscore_vision.benchmark_helpers.multi_subject import MultiSubjectNeuralBenchmark

    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9")  # any download would fail loudly
    zerbe = registry.benchmarks.list("Zerbe2026_fmri*")
    assert len(zerbe) == 24 and "Zerbe2026_fmri_persubject.IT-ood-ridgecv" in zerbe
    benchmark = registry.load_benchmark("Zerbe2026_fmri_persubject.IT-ood-ridgecv")
    assert isinstance(benchmark, MultiSubjectNeuralBenchmark)
    assert benchmark._subjects == SUBJECTS and (benchmark.region, benchmark.parent, benchmark.version) == ("IT", "IT", 1)
    assert benchmark.identifier == "Zerbe2026_fmri_persubject.IT-ood-ridgecv" and "zerbe_laion-fmri_2026" in benchmark.bibtex


def test_marques2020_imports_and_points_at_the_builtin_twins(folders):
    marques = registry.benchmarks.list("Marques2020*")
    assert len(marques) == 22
    # the folder imports: a benchmark without a built-in twin stops on its data set, which is not here
    with pytest.raises(UnknownIdentifierError, match="no dataset is registered as 'Ringach2002'"):
        registry.load_benchmark("Marques2020_Ringach2002-max_dc")
    # its benchmarks need the reference's calibrated blank responses; brainscore's twin of the same name has them
    with pytest.raises(TypeError, match=r"needs arguments \['baseline'\].*load 'builtin:Marques2020_DeValois1982-pref_or'"):
        registry.load_benchmark("Marques2020_DeValois1982-pref_or")
    assert "builtin:Marques2020_DeValois1982-pref_or" in registry.benchmarks.list("builtin:*")
    twin = registry.load_benchmark("builtin:Marques2020_DeValois1982-pref_or")
    assert type(twin).__module__ == "brainscore.benchmarks.properties" and twin.parent == "V1-orientation"
