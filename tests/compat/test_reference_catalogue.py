"""The reference's catalogue, for users who have its data (issue 31): with the files its data plugins name placed in a
data mirror, its benchmark plugin folders score here unchanged.

The ``brainscore_vision/`` tree of the ``brainscore-vision==2.4.2`` wheel, unchanged but for its ``metrics/`` (left
out so that brainscore's metrics score it: a folder on the plugin path replaces a built-in's identifier), is the
plugin folder. Its
S3 data are not here, so stand-ins in its formats are written (:mod:`reference_stand_ins`: BrainIO stimulus CSV +
zip and netCDF assemblies, under the reference's file names and bucket prefix) for a neural benchmark
(``MajajHong2015public.IT-pls``) and a behavioural one (``Rajalingham2018public-i2n``). They cannot have the
registered sha1s, so the test declares them with the ``stand_ins`` setting: each stand-in by its own sha256, for the
sha1 the reference registers (read from its data plugin). Verification is unchanged: without the declaration the
same files are refused, and the score names the stand-ins in its provenance.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from brainscore import registry
from brainscore.errors import DataNotFoundError, HashMismatchError

HERE = Path(__file__).resolve().parent
SMALLNET = HERE / "plugin_folder"
NEURAL, BEHAVIOURAL = "MajajHong2015public.IT-pls", "Rajalingham2018public-i2n"


@pytest.fixture(scope="module")
def reference(reference_tree, tmp_path_factory):
    """The wheel's brainscore_vision/ (extracted) without its metrics/ (brainscore's metrics score its benchmark
    folders: a folder on the plugin path replaces the built-in of the same identifier, so the wheel's own metrics
    folders would replace brainscore's ``pls``, ``i2n``, ...), the stand-ins written into a mirror, and their
    declarations."""
    base = tmp_path_factory.mktemp("reference_without_metrics") / "brainscore_vision"
    base.mkdir()
    for folder in ("data", "benchmarks", "models"):
        (base / folder).symlink_to(reference_tree / folder, target_is_directory=True)
    sys.path.insert(0, str(HERE))
    try:
        import reference_stand_ins
    finally:
        sys.path.remove(str(HERE))
    mirror, scratch = tmp_path_factory.mktemp("mirror"), tmp_path_factory.mktemp("scratch")
    declared = {**reference_stand_ins.majajhong2015_public(base, mirror, scratch),
                **reference_stand_ins.rajalingham2018_public(base, mirror, scratch)}
    stand_ins = tmp_path_factory.mktemp("stand_ins") / "stand_ins.json"
    stand_ins.write_text(json.dumps(declared))
    saved = {key: os.environ.get(key) for key in ("BRAINSCORE_PLUGIN_DIRS", "BRAINSCORE_DATA_MIRROR",
                                                 "BRAINSCORE_STAND_INS")}
    os.environ["BRAINSCORE_PLUGIN_DIRS"] = os.pathsep.join([str(base), str(SMALLNET)])
    os.environ["BRAINSCORE_DATA_MIRROR"] = os.pathsep.join([str(mirror), saved["BRAINSCORE_DATA_MIRROR"] or ""])
    registry._discovery.reset()
    yield base, mirror, stand_ins, declared
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    registry._discovery.reset()


@pytest.fixture
def declared_stand_ins(reference, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_STAND_INS", str(reference[2]))


def test_the_stand_ins_are_refused_unless_declared(reference, monkeypatch):
    monkeypatch.delenv("BRAINSCORE_STAND_INS", raising=False)
    with pytest.raises(HashMismatchError, match="not the registered one"):
        registry.load_dataset("MajajHong2015.public")
    with pytest.raises(DataNotFoundError) as missing:  # a file that is not in the mirror: named, with its sha1
        registry.load_dataset("MajajHong2015.private")
    assert "assy_dicarlo" in str(missing.value) and "7a40d16148d6f82939155f0bd976d310857fb156" in str(missing.value)


def test_the_reference_neural_benchmark_scores_unchanged_as_brainscores_own(reference, declared_stand_ins):
    import brainscore_vision
    from brainscore.benchmarks.neural import NeuralBenchmark

    score = brainscore_vision.score(model_identifier="compat-smallnet", benchmark_identifier=NEURAL, bootstrap=0)
    # its native twin: brainscore's NeuralBenchmark on the same data, metric, ceiling and settings
    recordings = registry.load_dataset("MajajHong2015.public")
    recordings = recordings.isel(neuroid=np.flatnonzero(recordings["region"].values == "IT"))
    twin = NeuralBenchmark("twin", 1, recordings, registry.load_metric(
        "pls", crossvalidation_kwargs={"stratification_coord": "object_name"}), visual_degrees=8,
                           number_of_trials=50, ceiling_func=registry.load_ceiling("internal_consistency"), region="IT")
    native = twin(brainscore_vision.load_model("compat-smallnet"))
    assert float(score) == pytest.approx(float(native), abs=1e-6) and 0 < float(native)
    assert float(score.attrs["ceiling"]) == pytest.approx(float(native.attrs["ceiling"]), abs=1e-6)
    files = score.attrs["provenance"]["benchmark"]["data_files"]
    for sha1 in reference[3]:
        if f"stand-in/{sha1}" in files:
            assert files[f"stand-in/{sha1}"] == reference[3][sha1]["sha256"]
    assert sum(key.startswith("stand-in/") for key in files) == 3  # the assembly, the csv and the zip


def test_the_reference_behavioural_benchmark_scores_unchanged(reference, declared_stand_ins):
    import brainscore_vision
    from brainscore.metrics.behavior.i1i2 import ceil_split_scores

    score = brainscore_vision.score(model_identifier="compat-smallnet", benchmark_identifier=BEHAVIOURAL, bootstrap=0)
    raw, ceiling = score.attrs["raw"], score.attrs["ceiling"]
    # the reference's benchmark ceils per split (score / sqrt(ceiling)) with its own code: brainscore's equals it
    assert float(score) == pytest.approx(float(ceil_split_scores(raw, ceiling)), abs=1e-12)
    humans = registry.load_dataset("Rajalingham2018.public")
    assert float(ceiling) == pytest.approx(float(registry.load_ceiling("i2n")(humans)), abs=1e-12)
    assert 0 < float(ceiling) <= 1 and np.isfinite(float(score))
    files = score.attrs["provenance"]["benchmark"]["data_files"]
    assert sum(key.startswith("stand-in/") for key in files) == 3
