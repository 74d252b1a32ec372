"""Issue 37 (items 2 and 3): a folder on the user's plugin path runs under its own names, also where a built-in declares
the same identifier (its twin); the built-in stays reachable as ``builtin:ID``; the folders' test.py files collect and
run under pytest, in a plugin tree and in a clone of the reference's repository."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from brainscore import registry
from brainscore.cli import main
from brainscore.errors import DataNotFoundError, PluginConflictError

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"
BENCHMARK = "Geirhos2021edge-top1"

# an edited copy of a benchmark folder: its own metric gives a number no built-in gives
EDITED_BENCHMARK = """
from brainscore_vision import benchmark_registry
from brainscore_vision.benchmarks import BenchmarkBase
from brainscore_core.metrics import Score


class Edited(BenchmarkBase):
    def __init__(self):
        super().__init__(identifier='Geirhos2021edge-top1', version=1, ceiling_func=lambda: Score(0.5),
                         parent='Geirhos2021-top1', bibtex=None)

    def __call__(self, candidate):
        raw = Score(0.2121)
        score = Score(0.4242)
        score.attrs['raw'], score.attrs['ceiling'] = raw, self.ceiling
        return score


benchmark_registry['Geirhos2021edge-top1'] = Edited
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def use_dirs(monkeypatch):
    """Point BRAINSCORE_PLUGIN_DIRS at the given folders and scan anew (and again after the test)."""
    def use(*folders):
        monkeypatch.setenv("BRAINSCORE_PLUGIN_DIRS", os.pathsep.join(map(str, folders)))  # --plugin-dir adds to it
        registry._discovery.reset()
    yield use
    monkeypatch.delenv("BRAINSCORE_PLUGIN_DIRS", raising=False)
    registry._discovery.reset()


def test_an_edited_copy_of_a_benchmark_with_a_builtin_twin_runs_its_own_code(tmp_path, use_dirs, capsys):
    write(tmp_path / "benchmarks" / "geirhos2021" / "__init__.py", EDITED_BENCHMARK)
    use_dirs()  # the folder comes from --plugin-dir alone
    assert main(["score", "--model", "pixels", "--benchmark", BENCHMARK, "--plugin-dir", str(tmp_path),
                 "--bootstrap", "0", "--no-record", "--json", "--quiet"]) == 0
    out, err = capsys.readouterr()
    row = json.loads(out.strip().splitlines()[-1])
    assert row["score"] == pytest.approx(0.4242) and row["raw"] == pytest.approx(0.2121)  # the folder's own metric
    folder = str((tmp_path / "benchmarks" / "geirhos2021").resolve())
    assert row["provenance"]["plugin_sources"]["benchmark"] == {
        "folder": folder, "plugin_dir": str(tmp_path.resolve()),
        "replaces": "brainscore.plugins.benchmarks.geirhos2021"}
    notices = [line for line in err.splitlines() if "in place of brainscore's built-in" in line]
    assert len(notices) == 1 and folder in notices[0] and f"builtin:{BENCHMARK}" in notices[0], err


def test_the_builtin_twin_is_reached_by_its_own_name_through_list_and_load(tmp_path, use_dirs, capsys):
    write(tmp_path / "benchmarks" / "geirhos2021" / "__init__.py", EDITED_BENCHMARK)
    use_dirs(tmp_path)
    assert registry.benchmarks.list("builtin:*") == [f"builtin:{BENCHMARK}"]
    assert f"builtin:{BENCHMARK}" in registry.benchmarks and f"builtin:{BENCHMARK}" not in registry.benchmarks.list()
    assert type(registry.load_benchmark(BENCHMARK)).__name__ == "Edited"
    builtin = registry.load_benchmark(f"builtin:{BENCHMARK}")
    assert type(builtin).__module__.startswith("brainscore.") and builtin.identifier == BENCHMARK
    assert registry.benchmarks.metadata(f"builtin:{BENCHMARK}")["parent"] == "Geirhos2021-top1"
    assert registry.declaring_plugin("benchmark", f"builtin:{BENCHMARK}") == "brainscore.plugins.benchmarks.geirhos2021"
    assert registry.declaring_plugin("benchmark", BENCHMARK).endswith(".benchmarks.geirhos2021")
    assert type(registry.load_benchmark(BENCHMARK)).__name__ == "Edited"  # the folder's, after the built-in loaded
    capsys.readouterr()
    assert main(["list", "benchmarks", "builtin:*"]) == 0
    assert capsys.readouterr().out.split() == [f"builtin:{BENCHMARK}"]
    assert main(["list", "benchmarks", "Geirhos2021edge*"]) == 0
    listed = capsys.readouterr()
    assert BENCHMARK in listed.out.split() and "replace brainscore's built-ins" in listed.err
    with pytest.raises(Exception, match="no built-in plugin declares the benchmark 'Nope'"):
        registry.load_benchmark("builtin:Nope")


def test_two_user_folders_declaring_a_builtins_identifier_are_an_error_naming_both(tmp_path, use_dirs):
    write(tmp_path / "a" / "benchmarks" / "one" / "__init__.py", EDITED_BENCHMARK)
    write(tmp_path / "b" / "benchmarks" / "two" / "__init__.py", EDITED_BENCHMARK)
    use_dirs(tmp_path / "a", tmp_path / "b")
    with pytest.raises(PluginConflictError, match="declared twice") as error:
        registry.load_benchmark(BENCHMARK)
    assert "a/benchmarks/one" in str(error.value) and "b/benchmarks/two" in str(error.value)


def test_a_folders_data_loaded_by_its_own_code_is_its_own_registration(tmp_path, use_dirs):
    """The reference's cowley2026 benchmark folder crashed (KeyError: 'presentation') because load_dataset of its
    own data folder's identifier returned the built-in assembly (without repetitions)."""
    write(tmp_path / "data" / "cowley2026" / "__init__.py", """
        import numpy as np
        from brainscore_vision import data_registry
        from brainscore_core.supported_data_standards.brainio.assemblies import NeuroidAssembly

        def load():
            return NeuroidAssembly(np.arange(8.).reshape(4, 2), dims=['presentation', 'neuroid'], coords={
                'stimulus_id': ('presentation', ['a', 'a', 'b', 'b']), 'repetition': ('presentation', [0, 1, 0, 1]),
                'neuroid_id': ('neuroid', ['n1', 'n2'])})

        data_registry['Cowley2026.190923'] = load
        """)
    write(tmp_path / "benchmarks" / "cowley_repetitions" / "__init__.py", """
        from brainscore_vision import benchmark_registry, load_dataset

        def build():
            assembly = load_dataset('Cowley2026.190923')
            return assembly.mean(dim='repetition')

        benchmark_registry['CompatTwinRepetitions'] = build
        """)
    use_dirs(tmp_path)
    averaged = registry.load_benchmark("CompatTwinRepetitions")
    assert averaged.sizes["presentation"] == 2 and averaged.values.tolist() == [[1.0, 2.0], [5.0, 6.0]]
    assert registry.load_dataset("builtin:Cowley2026.190923").sizes["presentation"] != 4  # the built-in's own


def test_the_reference_cowley2026_data_folder_loads_its_own_files(reference_tree, tmp_path, use_dirs):
    """The reference's own data folder, unchanged: its registration (its file name and sha1) is what loads, not the
    built-in's assembly; its file is not here, which the error names."""
    shutil.copytree(reference_tree / "data" / "cowley2026", tmp_path / "data" / "cowley2026")
    use_dirs(tmp_path)
    with pytest.raises(DataNotFoundError) as missing:
        registry.load_dataset("Cowley2026.190923")
    assert "assy_Cowley2026.190923.nc" in str(missing.value)
    assert "2ac7f60f21ccc5137074633c0614f52566acff6a" in str(missing.value)


def _pytest(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(SRC), **(env or {})}
    environment.pop("BRAINSCORE_PLUGIN_DIRS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:benchmark",
                           "-p", "no:randomly", *args], env={k: v for k, v in environment.items() if v is not None},
                          capture_output=True, text=True, timeout=600, cwd=cwd)


def _pytest_plugin_path(tmp_path: Path) -> str:
    """A folder to put on PYTHONPATH that declares brainscore's pytest plugin as an installed package does
    (pyproject's ``pytest11`` entry point), where this installation's metadata predates it; else ''."""
    if any(ep.value == "brainscore_core._pytest_plugin" for ep in entry_points(group="pytest11")):
        return ""
    info = tmp_path / "entry" / "brainscore_pytest_entry-0.dist-info"
    write(info / "METADATA", "Metadata-Version: 2.1\nName: brainscore-pytest-entry\nVersion: 0\n")
    write(info / "entry_points.txt", "[pytest11]\nbrainscore = brainscore_core._pytest_plugin\n")
    return str(info.parent)


def test_the_pytest_entry_point_is_declared():
    text = (HERE.parents[1] / "pyproject.toml").read_text()
    assert '[project.entry-points.pytest11]\n' in text and 'brainscore = "brainscore_core._pytest_plugin"' in text


def test_the_reference_geirhos2021_and_error_consistency_tests_collect_and_run_in_a_plugin_tree(reference_tree,
                                                                                                  tmp_path):
    tree = tmp_path / "plugins"
    shutil.copytree(reference_tree / "benchmarks" / "geirhos2021", tree / "benchmarks" / "geirhos2021")
    shutil.copytree(reference_tree / "metrics" / "error_consistency", tree / "metrics" / "error_consistency")
    entry = _pytest_plugin_path(tmp_path)
    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(SRC), entry) if p)}
    # the tree goes on the plugin path by brainscore's pytest plugin; the metric folder's own tests pass on its own
    # code; the benchmark folder's collect (no 'declared twice') and those that need no data files pass
    geirhos = "plugins/benchmarks/geirhos2021/test.py"
    result = _pytest("plugins/metrics/error_consistency/test.py", f"{geirhos}::test_benchmark_registry",
                     f"{geirhos}::TestBehavioral::test_in_pool", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "54 passed" in result.stdout and "declared twice" not in result.stdout + result.stderr


def test_a_test_file_of_a_reference_clone_runs_under_pytest(reference_tree, tmp_path):
    """``python -m pytest brainscore_vision/models/NAME/test.py`` in a clone of the reference's repository (its own
    framework ``brainscore_vision/__init__.py`` and ``models/__init__.py`` there, first on sys.path)."""
    clone = tmp_path / "clone"
    (clone / "brainscore_vision" / "models").mkdir(parents=True)
    shutil.copy2(reference_tree / "__init__.py", clone / "brainscore_vision" / "__init__.py")
    shutil.copy2(reference_tree / "models" / "__init__.py", clone / "brainscore_vision" / "models" / "__init__.py")
    tiny = clone / "brainscore_vision" / "models" / "tiny"
    write(tiny / "__init__.py", """
        from brainscore_vision import model_registry
        from .model import build

        model_registry['compat-clone-tiny'] = build
        """)
    write(tiny / "model.py", "def build():\n    return 'a tiny model'\n")
    write(tiny / "test.py", """
        import brainscore_vision
        from brainscore_vision.models.tiny.model import build


        def test_has_identifier():
            assert brainscore_vision.model_registry['compat-clone-tiny'].factory is build
            assert 'compat-clone-tiny' in brainscore_vision.model_registry
        """)
    write(clone / "pyproject.toml", "[project]\nname = 'brainscore_vision'\n")
    entry = _pytest_plugin_path(tmp_path)
    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(SRC), entry) if p)}
    result = _pytest("brainscore_vision/models/tiny/test.py", cwd=clone, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "1 passed" in result.stdout and "_shadow" not in result.stdout + result.stderr
    # without brainscore's pytest plugin, one clear line says what to do (was: No module named ..._shadow)
    bare = subprocess.run([sys.executable, "-c", "import brainscore_vision"], cwd=clone, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(SRC)})
    assert bare.returncode != 0 and "a clone of the reference Brain-Score's repository" in bare.stderr
    assert "--plugin-dir" in bare.stderr and "_shadow" not in bare.stderr


def test_compare_twin_scores_both_and_names_the_first_difference(tmp_path, use_dirs, capsys, monkeypatch):
    """The folder's edited benchmark against the built-in on a model: both outcomes, then the first attribute that
    differs (the built-in's data are not in this mirror: its failure is its outcome, named)."""
    edited = EDITED_BENCHMARK.replace("Geirhos2021edge-top1", "Kriegeskorte2008.IT-rdm").replace(
        "Geirhos2021-top1", "IT")
    write(tmp_path / "plugins" / "benchmarks" / "kriegeskorte2008" / "__init__.py", edited)
    monkeypatch.setenv("BRAINSCORE_DATA_MIRROR", str(tmp_path / "empty_mirror"))
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    use_dirs()
    assert main(["compare-twin", "Kriegeskorte2008.IT-rdm", "--model", "pixels", "--json", "--quiet",
                 "--plugin-dir", str(tmp_path / "plugins")]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    folder, builtin = report["sides"]["folder"], report["sides"]["builtin"]
    assert (folder["score"], folder["raw"], folder["ceiling"]) == (pytest.approx(0.4242), pytest.approx(0.2121), 0.5)
    assert builtin["identifier"] == "builtin:Kriegeskorte2008.IT-rdm" and "92_brainRDMs.mat" in builtin["error"]
    assert report["builtin"] == "brainscore.plugins.benchmarks.kriegeskorte2008"
    assert report["first_difference"] == {"attribute": "region", "folder": None, "builtin": "IT"}  # a definition first
    assert [d["attribute"] for d in report["differences"]][-1] == "outcome"
    assert main(["compare-twin", "Mur2013-rdm", "--model", "pixels"]) != 0  # no folder replaces it: one clear line
    assert "no plugin folder on the plugin path replaces a built-in benchmark 'Mur2013-rdm'" in capsys.readouterr().err


def test_differences_are_facts_first_then_the_numbers():
    from brainscore.cli.compare_twin import differences

    same = {"version": 1, "parent": "IT", "visual_degrees": 8, "ceiling": 0.8, "raw": 0.4, "score": 0.5}
    assert differences(same, dict(same)) == []
    assert differences({**same, "raw": 0.3, "score": 0.375}, same) == [("raw", 0.3, 0.4), ("score", 0.375, 0.5)]
    assert differences({**same, "visual_degrees": 4, "ceiling": 0.7}, same)[0] == ("visual_degrees", 4, 8)


def test_a_folder_cannot_forge_a_builtin_name(tmp_path, use_dirs):
    write(tmp_path / "benchmarks" / "forged" / "__init__.py", f"""
        from brainscore_vision import benchmark_registry
        benchmark_registry['builtin:{BENCHMARK}'] = lambda: 'forged'
        """)
    use_dirs(tmp_path)
    assert registry.benchmarks.list("builtin:*") == []  # no folder replaces the built-in: nothing to list
    assert type(registry.load_benchmark(f"builtin:{BENCHMARK}")).__module__.startswith("brainscore.")
    with pytest.raises(ValueError, match="names built-in plugins"):
        registry.register_benchmark(f"builtin:{BENCHMARK}", lambda: "forged")


def test_the_reference_pls_folder_replacing_ours_scores_as_the_reference_aggregates(reference_tree, tmp_path,
                                                                                   use_dirs):
    """The reference's regression_correlation folder on the plugin path replaces the built-in ``pls``; its
    CrossRegressedCorrelation gives one number, as in the reference: the median over neuroids of each split (the
    metric's own aggregate), then the mean over the 10 splits with their standard error (the cross-validation's).
    Before, only the metric's aggregate ran, and ``float(score)`` of the 10 per-split values raised."""
    import numpy as np

    from brainscore_core.supported_data_standards.brainio.assemblies import NeuroidAssembly

    shutil.copytree(reference_tree / "metrics" / "regression_correlation",
                    tmp_path / "metrics" / "regression_correlation")
    use_dirs(tmp_path)
    rng = np.random.default_rng(0)
    n = 40
    coords = {"stimulus_id": ("presentation", [f"s{i}" for i in range(n)]),
              "object_name": ("presentation", [f"o{i % 4}" for i in range(n)])}
    features = rng.normal(size=(n, 30))
    responses = features @ rng.normal(size=(30, 5)) + rng.normal(size=(n, 5))
    source = NeuroidAssembly(features, dims=("presentation", "neuroid"),
                             coords={**coords, "neuroid_id": ("neuroid", [f"m{j}" for j in range(30)])})
    target = NeuroidAssembly(responses, dims=("presentation", "neuroid"),
                             coords={**coords, "neuroid_id": ("neuroid", [f"n{j}" for j in range(5)])})
    metric = registry.load_metric("pls")
    assert type(metric).__module__.endswith("regression_correlation.metric")  # the folder's, not the built-in
    score = metric(source, target)
    per_split = score.attrs["raw"]
    assert per_split.dims == ("split",) and per_split.sizes["split"] == 10
    correlations = per_split.attrs["raw"]  # split x neuroid: each split's value is their median over neuroids
    assert correlations.dims == ("split", "neuroid") and correlations.sizes["neuroid"] == 5
    assert np.array_equal(np.asarray(per_split.values), np.median(np.asarray(correlations.values), axis=1))
    values = np.asarray(per_split.values, dtype=float)
    assert float(score) == pytest.approx(values.mean(), abs=1e-15) and 0.5 < float(score) < 1
    assert float(score.attrs["error"]) == pytest.approx(values.std() / np.sqrt(10), abs=1e-15)
