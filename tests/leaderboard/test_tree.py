"""Every benchmark sits in the leaderboard tree; a benchmark whose data are missing names the files."""
from __future__ import annotations

import pytest

import brainscore
from brainscore.leaderboard.tree import ROOTS, TREE, children, nodes, path_to_root, root_of
from brainscore.errors import DataNotFoundError, UnknownIdentifierError
from brainscore.models.precomputed import PrecomputedFeatures

OURS = {
    "Kriegeskorte2008.IT-rdm": "IT", "Kiani2007.IT-rdm": "IT", "Mur2013-rdm": "behavior_vision",
    "Geirhos2021cueconflict-error_consistency": "Geirhos2021", "Geirhos2021edge-error_consistency": "Geirhos2021",
    "Geirhos2021silhouette-error_consistency": "Geirhos2021", "Geirhos2021cueconflict-top1": "Geirhos2021-top1",
    "Geirhos2021edge-top1": "Geirhos2021-top1", "Geirhos2021silhouette-top1": "Geirhos2021-top1",
    "Hermann2020cueconflict-shape_bias": "behavior_vision", "Hermann2020cueconflict-shape_match": "behavior_vision",
    "Hermann2020cueconflict-texture_match": "behavior_vision",
    "Geirhos2019shapeinstructed-accuracy_distance": "Geirhos2019", "Geirhos2019textureinstructed-accuracy_distance":
    "Geirhos2019", "Geirhos2019shapeinstructed-error_consistency": "Geirhos2019",
    "Geirhos2019textureinstructed-error_consistency": "Geirhos2019",
}


def test_tree_shape():
    assert path_to_root("V4") == ["V4", "neural_vision", "average_vision"]
    assert path_to_root("Geirhos2021") == ["Geirhos2021", "behavior_vision", "average_vision"]
    assert root_of("Geirhos2021-top1") == "engineering_vision"
    assert children("neural_vision") == ["IT", "V1", "V2", "V4"]
    assert set(ROOTS) <= set(nodes()) and not set(ROOTS) & set(TREE)
    with pytest.raises(UnknownIdentifierError, match="not a node"):
        path_to_root("V5")


def test_our_benchmarks_are_registered_with_their_parents():
    assert set(OURS) <= set(brainscore.list_benchmarks())
    for identifier, parent in OURS.items():
        benchmark = brainscore.load_benchmark(identifier)
        assert benchmark.identifier == identifier and benchmark.parent == parent and benchmark.version == 1
        assert benchmark.bibtex.startswith("@")


def test_every_registered_benchmark_has_a_parent_in_the_tree():
    for identifier in brainscore.list_benchmarks():
        assert brainscore.load_benchmark(identifier).parent in nodes(), identifier


@pytest.fixture
def empty_mirror(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_DATA_MIRROR", str(tmp_path / "empty"))
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    return tmp_path / "empty"


@pytest.mark.parametrize("identifier, file", [
    ("Kriegeskorte2008.IT-rdm", "kriegeskorte2008/92_brainRDMs.mat"),
    ("Mur2013-rdm", "kriegeskorte2008/92_behavRDMs.mat"),
    ("Geirhos2021edge-error_consistency", "geirhos2019_texture_vs_shape/raw-data/edge-experiment/"),
])
def test_missing_data_names_the_files(identifier, file, empty_mirror):
    benchmark = brainscore.load_benchmark(identifier)  # constructing reads nothing
    with pytest.raises(DataNotFoundError) as error:
        benchmark.ceiling
    message = str(error.value)
    assert file in message and str(empty_mirror) in message and "BRAINSCORE_DATA_MIRROR" in message


@pytest.mark.parametrize("identifier, file", [
    ("Kiani2007.IT-rdm", "kriegeskorte2008/92_modelRDMs.mat"),
    ("Hermann2020cueconflict-shape_bias", "geirhos2019_texture_vs_shape/stimuli/style-transfer-preprocessed-512/"),
    ("Geirhos2021silhouette-top1", "geirhos2019_texture_vs_shape/stimuli/filled-silhouettes/"),
])
def test_missing_data_surfaces_when_a_model_is_scored(identifier, file, pixels92, empty_mirror):
    benchmark = brainscore.load_benchmark(identifier)
    with pytest.raises(DataNotFoundError, match=file):
        benchmark(PrecomputedFeatures(pixels92, visual_degrees=8))


def test_missing_data_message_counts_what_a_dataset_needs(shared_data, tmp_path, monkeypatch):
    """With the edge CSVs but no images, the error says the stimulus set needs 160 files, all missing, under stimuli/edges/."""
    folder = "geirhos2019_texture_vs_shape/raw-data/edge-experiment"
    (tmp_path / "mirror" / folder).mkdir(parents=True)
    for csv in (shared_data / folder).glob("*.csv"):
        (tmp_path / "mirror" / folder / csv.name).symlink_to(csv)
    monkeypatch.setenv("BRAINSCORE_DATA_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    with pytest.raises(DataNotFoundError) as error:
        brainscore.load_benchmark("Geirhos2021edge-error_consistency").ceiling
    message = str(error.value)
    assert message.count(" needs ") == 1
    assert "stimulus set Geirhos2019.edge needs 160 files" in message and "160 are missing" in message
    assert "under <mirror>/geirhos2019_texture_vs_shape/stimuli/edges/." in message
    assert "brainscore data fetch Geirhos2019" in message


def test_empty_mirror_message_counts_responses_and_images(empty_mirror):
    with pytest.raises(DataNotFoundError) as error:
        brainscore.load_dataset("Geirhos2019.edge")
    assert "dataset Geirhos2019.edge needs 170 files" in str(error.value) and "170 are missing" in str(error.value)


def test_kriegeskorte_message_names_the_upstream_files(empty_mirror):
    with pytest.raises(DataNotFoundError) as error:
        brainscore.load_benchmark("Kiani2007.IT-rdm").rdms
    message = str(error.value)
    assert "92_modelRDMs.mat" in message and "rsagroup/rsatoolbox" in message and "demos/92imageData" in message


def test_built_benchmarks_sit_where_their_plugins_declare():
    """The parent a plugin declares at registration (read without importing it) is the built benchmark's parent."""
    from brainscore import registry
    from brainscore.leaderboard.tree import benchmark_parents

    parents = benchmark_parents(include_selection=True)
    assert set(parents) == set(brainscore.list_benchmarks())
    for identifier, parent in parents.items():
        assert brainscore.load_benchmark(identifier).parent == parent, identifier
    assert registry.benchmarks.declaring("selection_for", "V4") == [
        "Cowley2026.190923.V4-pls", "Cowley2026.201025.V4-pls", "Cowley2026.210224.V4-pls"]
    assert "Cowley2026.190923.V4-pls" not in benchmark_parents()  # selection-only: never in the leaderboard


def test_layer_selection_reads_the_plugins_declarations():
    from brainscore.scoring.selection import selection_benchmarks

    assert selection_benchmarks()["V4"] == ("Cowley2026.190923.V4-pls", "Cowley2026.201025.V4-pls",
                                            "Cowley2026.210224.V4-pls")


def test_framework_code_names_no_study():
    """Outside plugins/, no string in the code names a registered study (docstrings, comments and examples
    given to the user with "e.g." aside)."""
    import ast
    import re
    from pathlib import Path

    studies = {match.group(0) for kind in ("benchmarks", "datasets", "stimulus_sets")
               for identifier in getattr(brainscore, f"list_{kind}")()
               if (match := re.match(r"[A-Z][A-Za-z]+\d{4}", identifier))}
    assert {"Cowley2026", "Geirhos2021", "Kriegeskorte2008"} <= studies
    package = Path(brainscore.__file__).parent
    offending = []
    for path in package.rglob("*.py"):
        if "plugins" in path.relative_to(package).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                    and "e.g." not in node.value):
                offending += [f"{path.relative_to(package)}:{node.lineno} {study}" for study in studies
                              if study in node.value]
    assert not offending, offending
