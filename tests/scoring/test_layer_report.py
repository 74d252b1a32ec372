"""Layer reports: every candidate layer scored by the benchmark's own score_features, in one pass."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from brainscore.cli import main
from brainscore.metrics.score import Score
from brainscore.models.commitment import ModelCommitment
from brainscore.models.extraction import ActivationsExtractor
from brainscore.models.preprocessing import Preprocessing
from brainscore.scoring.layer_report import format_table, layer_report, plot

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "models"))
from model_fixtures import TinyNet, make_stimuli  # noqa: E402

LAYERS = ["features.0", "features.1", "features.2", "logits"]


class MeanBenchmark:
    """A stand-in benchmark: the score of features is their mean, error 0.1, ceiling 0.5."""

    identifier = "mean-benchmark"
    visual_degrees = 8

    def __init__(self, stimulus_set):
        self.stimulus_set = stimulus_set
        self.seen = []

    def score_features(self, features):
        self.seen.append((str(features["layer"].values[0]), features.shape))
        raw = float(features.values.mean())
        return Score.of(raw / 0.5, error=0.1, raw=Score.of(raw), ceiling=Score.of(0.5))


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))


def _model():
    extractor = ActivationsExtractor(TinyNet(), "tiny", Preprocessing("imagenet", 20), batch_size=16)
    return ModelCommitment("tiny", extractor, LAYERS)


def test_each_layer_is_scored_on_its_own_features_from_one_pass(tmp_path):
    stimuli = make_stimuli(tmp_path / "images", 6)
    model, benchmark = _model(), MeanBenchmark(stimuli)
    rows = layer_report(model, benchmark, progress=False)
    assert model.activations_model.forward_passes == 1
    assert [r.layer for r in rows] == LAYERS and [r.depth for r in rows] == [0, 1, 2, 3]
    assert [shape for _, shape in benchmark.seen] == [(6, 324), (6, 324), (6, 16), (6, 5)]
    for row in rows:
        features = model.activations_model(stimuli, [row.layer]).values
        assert row.raw == pytest.approx(features.mean(), rel=1e-6)
        assert row.score == pytest.approx(2 * features.mean(), rel=1e-6)
        assert row.ceiling == 0.5 and row.split_se == 0.1 and row.n_features == features.shape[1]
    table = format_table(rows)
    best = max(rows, key=lambda r: r.score).layer
    assert [line for line in table.splitlines() if line.endswith("*")][0].split()[1] == best
    path = plot(rows, tmp_path / "plot.png", title="tiny")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000


def test_pca_report_scores_reduced_features(tmp_path):
    stimuli = make_stimuli(tmp_path / "images", 6)
    benchmark = MeanBenchmark(stimuli)
    rows = layer_report(_model(), benchmark, layers=["features.0"], pca=True, progress=False)
    assert benchmark.seen == [("features.0", (6, 324))]  # 324 units <= 1000: kept raw, as the reference
    assert len(rows) == 1


def test_benchmark_without_score_features_is_refused(tmp_path):
    class Behavioural:
        identifier = "behaviour"

    with pytest.raises(Exception, match="score_features"):
        layer_report(_model(), Behavioural(), progress=False)


def test_cli_prints_a_table_and_draws(tmp_path, monkeypatch, capsys):
    stimuli = make_stimuli(tmp_path / "images", 4)
    monkeypatch.setattr("brainscore.scoring.layer_report.load_model", lambda identifier, **kw: _model())
    monkeypatch.setattr("brainscore.registry.load_benchmark", lambda identifier: MeanBenchmark(stimuli))
    code = main(["layers", "--model", "tiny", "--benchmark", "mean", "--layers", "features.2,logits",
                 "--output", str(tmp_path / "out.png")])
    out = capsys.readouterr().out
    assert code == 0 and "features.2" in out and "logits" in out and (tmp_path / "out.png").is_file()


def test_report_says_what_it_shows(tmp_path, capsys, monkeypatch):
    """The committed layer is marked apart from the best one, marks and error bars are explained, and
    each layer's score is printed once (issue 15, item 8)."""
    from brainscore import progress as progress_module

    monkeypatch.setattr(progress_module, "DELAY_S", 0.0)  # every step reports
    stimuli = make_stimuli(tmp_path / "images", 6)
    benchmark = MeanBenchmark(stimuli)
    benchmark.region = "V4"
    model = _model()
    model.region_layer_map["V4"] = "features.0"
    rows = layer_report(model, benchmark)
    assert [r.committed for r in rows] == [True, False, False, False]
    progress = capsys.readouterr()
    assert progress.out == "" and ": scoring 4 layers of " in progress.err  # progress on stderr, no scores
    assert ": done, 4 layers in " in progress.err
    table = format_table(rows)
    lines = table.splitlines()
    best = max(rows, key=lambda r: r.score)
    assert best.layer != "features.0"
    assert [line.split()[1] for line in lines[1:5] if line.rstrip().endswith("*")] == [best.layer]
    assert lines[1].split()[1] == "features.0" and lines[1].rstrip().endswith("C")
    assert "NOT the layer the model is" in table and "standard error" in table and "committed layer" in table
    for row in rows:
        assert sum(f"{row.score:.4f}" in line for line in lines) == 1
    path = plot(rows, tmp_path / "plot.png", title="tiny")
    assert path.stat().st_size > 5000


def test_plot_legend_names_best_and_committed(tmp_path, monkeypatch):
    import matplotlib.axes

    stimuli = make_stimuli(tmp_path / "images", 6)
    rows = layer_report(_model(), MeanBenchmark(stimuli), progress=False)
    rows[0].committed = True
    labels = []
    original = matplotlib.axes.Axes.legend
    monkeypatch.setattr(matplotlib.axes.Axes, "legend",
                        lambda self, *a, **k: labels.extend(self.get_legend_handles_labels()[1]) or original(self, *a, **k))
    plot(rows, tmp_path / "p.png")
    best = max(rows, key=lambda r: r.score).layer
    assert sorted(labels) == sorted(["score per layer (error bars: ±1 standard error over splits)",
                      f"best on this benchmark: {best} (not the committed layer)",
                      "committed layer: features.0 (what `brainscore score` uses)"])


def test_cli_lists_the_layer_and_method_per_region(monkeypatch, capsys):
    import json

    from brainscore.scoring import selection

    def model():
        extractor = ActivationsExtractor(TinyNet(), "tiny", Preprocessing("imagenet", 20), batch_size=16)
        return ModelCommitment("tiny", extractor, None, region_layer_map={"V1": "features.0"},
                               layer_scorer=selection.layer_scorer)

    monkeypatch.setattr("brainscore.scoring.layer_report.load_model", lambda identifier, **kw: model())
    monkeypatch.setattr(selection, "selection_benchmarks", lambda: {"V4": ("Sel.V4-a", "Sel.V4-b")})
    assert main(["layers", "--model", "tiny", "--json"]) == 0
    rows = {row["region"]: row for row in json.loads(capsys.readouterr().out)}
    # candidates from the structure: features.0, features.1, features.2, head (4)
    assert rows["V1"]["layer"] == "features.0" and rows["V1"]["method"] == "declared"
    assert rows["V2"]["layer"] == "features.2" and rows["V2"]["method"] == "rule"  # round(0.524 * 3) = 2
    assert rows["IT"]["layer"] == "features.2" and rows["IT"]["method"] == "rule"  # round(0.809 * 3) = 2
    assert rows["V4"]["layer"] is None and rows["V4"]["method"] == "selection"  # not run without --select
    assert "Sel.V4-a, Sel.V4-b" in rows["V4"]["detail"] and rows["V2"]["candidates"] == "top-level-blocks-v1"
    assert main(["layers", "--model", "tiny"]) == 0
    out = capsys.readouterr().out
    assert "V2     features.2  rule      rule relative-depth-median-v1: relative depth 0.524 -> candidate 3 of 4" in out
    with pytest.raises(SystemExit, match="name one with --benchmark"):
        main(["layers", "--model", "tiny", "--pca"])


def test_legend_and_axis_say_the_score_is_r2_over_ceiling_and_the_split_se_is_not_the_error(tmp_path, monkeypatch):
    """Issue 25 #4: a neural benchmark's score is r²/ceiling (not raw/ceiling), and the metric's split standard
    error is not the bootstrap ``error`` the README and ``brainscore score`` mean."""
    import matplotlib.axes

    from brainscore.scoring.layer_report import LayerScore

    rows = [LayerScore(0, "a", 10, 0.36 / 0.8, 0.02, 0.6, 0.8, formula="r2_over_ceiling"),
            LayerScore(1, "b", 10, 0.49 / 0.8, 0.03, 0.7, 0.8, committed=True, formula="r2_over_ceiling")]
    table = format_table(rows)
    assert table.splitlines()[0].split()[4:6] == ["split", "SE"]
    assert "score = r² / ceiling" in table and "raw / ceiling" not in table
    assert "`brainscore score` reports `error`, the bootstrap standard error" in table
    labels = []
    original = matplotlib.axes.Axes.set_ylabel
    monkeypatch.setattr(matplotlib.axes.Axes, "set_ylabel",
                        lambda self, text, *a, **k: labels.append(text) or original(self, text, *a, **k))
    plot(rows, tmp_path / "p.png")
    assert labels == ["score = r² / ceiling (r: the raw correlation)"]
