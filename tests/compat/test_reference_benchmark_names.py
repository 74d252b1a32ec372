"""Benchmark-helper names the reference's benchmark folders import (found by tools/reference_census.py):
``bound_score`` clips in place as theirs (their benchmarks call it for its effect), ``flatten_timebins_into_neuroids``,
``apply_keep_attrs``, ``RSABenchmark`` on per-subject responses (the same numbers as brainscore's RSABenchmark on the
subjects' RDMs), the assembly loaders and ``brainscore_core.benchmarks.BenchmarkBase``."""
from __future__ import annotations

import numpy as np
import pytest

from brainscore_core import Score
from brainscore_core.supported_data_standards.brainio.assemblies import NeuroidAssembly


def test_bound_score_clips_in_place_as_the_reference_benchmarks_expect():
    from brainscore_vision.benchmark_helpers import bound_score

    score = Score(1.25)
    score.attrs["raw"] = 0.5
    bound_score(score)  # the reference's benchmarks ignore the return value
    assert float(score) == 1.0 and score.attrs["unbounded"] == 1.25 and score.attrs["raw"] == 0.5
    low = Score(-0.1)
    assert bound_score(low) is low and float(low) == 0.0
    inside = Score(0.4)
    assert float(bound_score(inside)) == 0.4


def test_flatten_timebins_into_neuroids_makes_each_time_bin_a_neuroid():
    from brainscore_vision.benchmark_helpers.neural_common import flatten_timebins_into_neuroids

    values = np.arange(2 * 3 * 4, dtype=float).reshape(2, 3, 4)
    assembly = NeuroidAssembly(values, dims=("presentation", "neuroid", "time_bin"),
                               coords={"stimulus_id": ("presentation", ["a", "b"]),
                                       "neuroid_id": ("neuroid", ["n0", "n1", "n2"]),
                                       "region": ("neuroid", ["IT"] * 3),
                                       "time_bin_start": ("time_bin", [0, 10, 20, 30]),
                                       "time_bin_end": ("time_bin", [10, 20, 30, 40])})
    assembly.attrs["stimulus_set_identifier"] = "s"
    flat = flatten_timebins_into_neuroids(assembly)
    assert flat.shape == (2, 12, 1) and flat.attrs == assembly.attrs
    assert flat.values[1, 5, 0] == values[1, 1, 1]  # neuroid n1, time bin 10 ms
    assert list(flat["neuroid_id"].values[4:8]) == ["n1@0", "n1@10", "n1@20", "n1@30"]
    assert list(flat["recording_time"].values[:4]) == [0, 10, 20, 30]
    assert int(flat["time_bin_start"].values[0]) == 0 and int(flat["time_bin_end"].values[0]) == 40


def three_subjects(images92, rng):
    """Responses of 3 subjects x 20 neuroids to 30 of the 92 images (a shared 5-dimensional signal plus noise), with
    ``subject`` on the neuroids and the stimulus set attached; -> (ids, signal, subjects, responses)."""
    ids = list(images92["stimulus_id"].values[:30])
    signal = rng.normal(size=(30, 5))
    subjects = np.repeat(["s1", "s2", "s3"], 20)
    responses = NeuroidAssembly(signal @ rng.normal(size=(5, 60)) + rng.normal(scale=2.0, size=(30, 60)),
                                dims=("presentation", "neuroid"),
                                coords={"stimulus_id": ("presentation", ids),
                                        "neuroid_id": ("neuroid", [f"n{i}" for i in range(60)]),
                                        "subject": ("neuroid", subjects)})
    responses.attrs["stimulus_set"] = images92
    return ids, signal, subjects, responses


def test_rsa_benchmark_on_responses_equals_brainscores_on_the_subjects_rdms(images92):
    from brainscore.benchmarks.rsa import RSABenchmark as NativeRSABenchmark
    from brainscore.metrics.similarity.rdm import rdm
    from brainscore.models.precomputed import PrecomputedFeatures
    from brainscore import registry
    from brainscore_vision.benchmark_helpers.neural_common import RSABenchmark, _subject_rdms

    rng = np.random.default_rng(0)
    ids, signal, subjects, responses = three_subjects(images92, rng)
    model = NeuroidAssembly(signal @ rng.normal(size=(5, 40)) + rng.normal(size=(30, 40)),
                            dims=("presentation", "neuroid"),
                            coords={"stimulus_id": ("presentation", ids),
                                    "neuroid_id": ("neuroid", [f"m{i}" for i in range(40)])})
    reference = RSABenchmark(identifier="Test.IT-rdm", version=1, assembly=responses, region="IT", visual_degrees=8,
                             number_of_trials=1, bibtex="")
    rdms = _subject_rdms(responses)
    for i, subject in enumerate(["s1", "s2", "s3"]):
        own = rdm(responses.isel(neuroid=np.flatnonzero(subjects == subject)))
        assert np.array_equal(rdms.values[i], own.values)
    native = NativeRSABenchmark("Test.IT-rdm", 1, rdms, "IT", 8, similarity_metric=registry.load_metric("rdm"),
                                noise_ceiling=registry.load_ceiling("rsa_noise_ceiling"), label_coords=("subject",))
    candidate = PrecomputedFeatures(model, visual_degrees=8)
    ours, theirs = reference(candidate), native(candidate)
    assert float(ours) == float(theirs) and float(ours.attrs["ceiling"]) == float(theirs.attrs["ceiling"])
    assert 0 < float(ours.attrs["raw"]) < float(ours.attrs["ceiling"]) <= 1


def test_rsa_benchmark_with_the_plugins_own_stages_runs_the_reference_procedure(images92):
    """The reference's LAION fMRI CKA benchmarks pass ``rdm=`` (the identity) and ``similarity=load_metric('cka')``
    (refused here before): the score is the mean over subjects of ``similarity(rdm(model), rdm(subject))`` over the
    plugin's ceiling. Given brainscore's own RDM and Spearman as the stages, it equals the default fast path."""
    from brainscore import registry
    from brainscore.metrics.similarity.rdm import rdm
    from brainscore.models.precomputed import PrecomputedFeatures
    from brainscore_vision.benchmark_helpers.neural_common import RSABenchmark
    from brainscore_vision.utils import LazyLoad

    ids, signal, subjects, responses = three_subjects(images92, np.random.default_rng(1))
    s2 = responses.isel(neuroid=np.flatnonzero(subjects == "s2"))
    model = NeuroidAssembly(s2.values[::-1].copy(), dims=("presentation", "neuroid"),  # s2's responses, rows reversed
                            coords={"stimulus_id": ("presentation", ids[::-1]),
                                    "neuroid_id": ("neuroid", [f"m{i}" for i in range(20)])})
    candidate = PrecomputedFeatures(model, visual_degrees=8)
    cka = registry.load_metric("cka")
    def neutral_ceiler(assembly):  # the plugin's ceiler is given the responses themselves, not their loader
        assert assembly.dims == responses.dims and np.array_equal(assembly.values, responses.values)
        return Score(1.0)

    # as the LAION fMRI plugin gives it: the responses in a LazyLoad
    benchmark = RSABenchmark(identifier="Test.IT-cka", version=1, assembly=LazyLoad(lambda: responses), region="IT",
                             visual_degrees=8, number_of_trials=1, bibtex="", ceiler=neutral_ceiler,
                             rdm=lambda assembly: assembly, similarity=cka)
    score = benchmark(candidate)
    per_subject = [float(cka(model, responses.isel(neuroid=np.flatnonzero(subjects == s)))) for s in ("s1", "s2", "s3")]
    assert per_subject[1] == pytest.approx(1.0, abs=1e-12)  # CKA of a representation with itself (rows aligned by id)
    assert list(score.attrs["raw"].attrs["raw"].values) == per_subject
    assert float(score.attrs["raw"]) == pytest.approx(np.mean(per_subject), abs=1e-15) == float(score)
    assert 0 < min(per_subject) < 1

    staged = RSABenchmark(identifier="Test.IT-rdm", version=1, assembly=responses, region="IT", visual_degrees=8,
                          number_of_trials=1, bibtex="", rdm=rdm, similarity=registry.load_metric("rdm"))
    default = RSABenchmark(identifier="Test.IT-rdm", version=1, assembly=LazyLoad(lambda: responses), region="IT",
                           visual_degrees=8, number_of_trials=1, bibtex="")
    ours, fast = staged(candidate), default(candidate)
    assert float(ours.attrs["raw"]) == pytest.approx(float(fast.attrs["raw"]), abs=1e-12)
    assert float(ours) == pytest.approx(float(fast), abs=1e-12)
    with pytest.raises(ValueError, match="similarity= must be a callable"):
        RSABenchmark(identifier="Test.IT-x", version=1, assembly=responses, region="IT", visual_degrees=8,
                     number_of_trials=1, bibtex="", similarity="cka")


def test_assembly_loaders_and_core_benchmark_base(tmp_path, images92):
    from brainscore_core.benchmarks import BenchmarkBase
    from brainscore_core.supported_data_standards.brainio.assemblies import (NeuronRecordingAssembly,
                                                                            StimulusMergeAssemblyLoader,
                                                                            StimulusReferenceAssemblyLoader)
    from brainscore_core.supported_data_standards.brainio.packaging import package_data_assembly_locally

    ids = list(images92["stimulus_id"].values[:4])
    assembly = NeuroidAssembly(np.arange(8.0).reshape(4, 2), dims=("presentation", "neuroid"),
                               coords={"stimulus_id": ("presentation", ids),
                                       "neuroid_id": ("neuroid", ["a", "b"]), "region": ("neuroid", ["IT", "IT"])})
    packaged = package_data_assembly_locally(assembly, "Test.loaders", "Kriegeskorte2008", downloads_path=tmp_path)
    stimuli = images92.restricted_to(ids)
    merged = StimulusMergeAssemblyLoader(cls=NeuronRecordingAssembly, file_path=packaged["path"],
                                         stimulus_set_identifier="Kriegeskorte2008", stimulus_set=stimuli).load()
    assert isinstance(merged, NeuronRecordingAssembly) and np.array_equal(merged.values, assembly.values)
    assert set(stimuli.columns) - {"stimulus_id"} <= set(merged.coords)  # the stimulus set's columns merged on
    kept = StimulusReferenceAssemblyLoader(cls="NeuroidAssembly", file_path=packaged["path"], stimulus_set=stimuli).load()
    assert kept.attrs["stimulus_set"] is stimuli

    class Fixed(BenchmarkBase):
        def __call__(self, candidate):
            return Score(0.5)

    benchmark = Fixed(identifier="Test-fixed", ceiling=Score(0.8), version=2, parent="behavior")
    assert float(benchmark.ceiling) == pytest.approx(0.8) and benchmark.version == 2 and benchmark.parent == "behavior"
