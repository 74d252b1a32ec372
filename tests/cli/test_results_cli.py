"""`brainscore score` records every score (and failure); `brainscore leaderboard` prints the tree means."""
from __future__ import annotations

import json

import pytest

import brainscore
from brainscore.cli import main
from brainscore.leaderboard.aggregate import registered_tree
from brainscore.results import Database, record
from brainscore.scoring.outcome import Outcome

BENCHMARK = "Kiani2007.IT-rdm"


def test_score_prints_the_formula_ci_layer_and_record(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    assert main(["score", "--model", "pixels", "--benchmark", "Kriegeskorte2008.IT-rdm", "--bootstrap", "100",
                 "--db", url]) == 0
    lines = capsys.readouterr().out.splitlines()
    record = Database(url).find_score("pixels", "Kriegeskorte2008.IT-rdm")
    assert lines[0] == (f"score {record.score:.4f} = clip(raw / ceiling, 0, 1) = clip({record.raw:.4f} / "
                        f"{record.ceiling:.4f})")  # RSA scores are clipped to [0, 1] (issue 36)
    assert lines[1].startswith(f"ci95  [{record.ci95[0]:.4f}, {record.ci95[1]:.4f}]   error {record.error:.4f}")
    assert "bootstrap SE over stimuli: 100 resamples" in lines[1]
    assert lines[2].startswith(f"ceiling {record.ceiling:.4f} ± ") and "layer IT -> pixels   (declared by the model)" in lines
    assert lines[-1] == f"recorded as #{record.id} in {url}"
    assert record.provenance["bootstrap"]["resamples"] == 100


def test_json_and_no_record(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    assert main(["score", "--model", "pixels", "--benchmark", BENCHMARK, "--bootstrap", "50", "--json",
                 "--no-record", "--db", url]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["record"] is None and Database(url).scores() == []
    assert printed["formula"] == "raw" and printed["ceiling_error"] == 0.0 and len(printed["ci95"]) == 2
    assert printed["provenance"]["benchmark"]["identifier"] == BENCHMARK


def test_a_failed_score_is_recorded_and_exits_nonzero(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    # pixels has no label readout: the behavioural benchmark fails with a BrainScoreError
    assert main(["score", "--model", "pixels", "--benchmark", "Geirhos2021edge-top1", "--db", url]) != 0
    failed, = Database(url).scores(include_failed=True)
    assert failed.status == "failed" and failed.score is None and "1000" in failed.failure
    assert "Traceback" in failed.log and f"recorded as failed: #{failed.id}" in capsys.readouterr().err


def _record(db, model, benchmark, value, raw=None):
    score = brainscore.Score.of(value, model_identifier=model, benchmark_identifier=benchmark, benchmark_version=1,
                                raw=brainscore.Score.of(raw if raw is not None else value))
    record(Outcome.from_score(score), db)


def _tree_means(tree, leaf_values):
    """The tree means computed here from the definition, independently of the aggregation module."""
    def value(node):
        if node in tree.leaves:
            return leaf_values.get(node)
        children = [value(c) for c in tree.children(node)]
        return None if all(c is None for c in children) else sum(c or 0.0 for c in children) / len(children)
    return {node: value(node) for node in tree.order()}


def test_leaderboard_json_equals_the_tree_means_of_recorded_scores(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    db = Database(url)
    scores = {"Cowley2026.210325.V4-pls": 0.3915, "Kriegeskorte2008.IT-rdm": 0.2307, "Kiani2007.IT-rdm": 0.3396,
              "Mur2013-rdm": 0.4080, "Geirhos2021cueconflict-error_consistency": 0.1975,
              "Geirhos2021edge-error_consistency": 0.0382, "Geirhos2021silhouette-error_consistency": 0.1788,
              "Geirhos2021cueconflict-top1": 0.1867, "Geirhos2021edge-top1": 0.0563, "Geirhos2021silhouette-top1": 0.1625,
              "Hermann2020cueconflict-shape_bias": 0.2720, "Hermann2020cueconflict-shape_match": 0.1700,
              "Hermann2020cueconflict-texture_match": 0.4550, "Cowley2026.190923.V4-pls": 0.2830,
              "Marques2020_DeValois1982-pref_or": 0.8946, "Marques2020_DeValois1982-peak_sf": 0.7405,
              "Marques2020_Schiller1976-sf_selective": 0.7850, "Marques2020_Schiller1976-sf_bandwidth": 0.7584,
              "Marques2020_Cavanaugh2002-surround_suppression_index": 0.9234,
              "Marques2020_Cavanaugh2002-grating_summation_field": 0.8150,
              "Marques2020_Cavanaugh2002-surround_diameter": 0.7305}
    for benchmark, value in scores.items():
        _record(db, "efficientnet-lite0", benchmark, value)
    assert main(["leaderboard", "--format", "json", "--db", url]) == 0
    entry, = json.loads(capsys.readouterr().out)
    tree = registered_tree()
    expected = _tree_means(tree, scores)
    assert entry["model"] == "efficientnet-lite0" and set(entry["scores"]) == set(expected)
    for node, value in expected.items():
        assert entry["scores"][node] == pytest.approx(value, abs=1e-12), node
    # by hand, for docs/results.md's numbers: V1 = mean of its four property families, V4 = 0.3915,
    # IT = (0.2307 + 0.3396) / 2, neural = (V1 + V4 + IT) / 3 (V2 has no benchmark, so it is no child)
    v1 = (0.8946 + (0.7405 + 0.7850 + 0.7584) / 3 + 0.9234 + (0.8150 + 0.7305) / 2) / 4
    assert entry["scores"]["V1"] == pytest.approx(v1)
    assert entry["scores"]["neural_vision"] == pytest.approx((v1 + 0.3915 + (0.2307 + 0.3396) / 2) / 3)
    assert entry["missing"]["average_vision"] == len([b for b in tree.leaves if b not in tree.engineering]) - 17
    assert "Cowley2026.190923.V4-pls" not in entry["scores"]
    for form in ("csv", "markdown", "table"):
        assert main(["leaderboard", "--format", form, "--db", url]) == 0
        assert "efficientnet-lite0" in capsys.readouterr().out


@pytest.mark.slow
# EfficientNet-Lite0 on every benchmark from an empty cache, the work of the nightly published scores (810 s in the
# two-worker CI run once those were nightly); every run keeps the leaderboard tests on the pixels above
@pytest.mark.nightly
def test_leaderboard_after_scoring_efficientnet_on_every_benchmark(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    values = {}
    for benchmark in brainscore.list_benchmarks():
        assert main(["score", "--model", "efficientnet-lite0", "--benchmark", benchmark, "--bootstrap", "100",
                     "--db", url]) == 0
        values[benchmark] = Database(url).find_score("efficientnet-lite0", benchmark)
    capsys.readouterr()
    assert main(["leaderboard", "--format", "json", "--db", url]) == 0
    entry, = json.loads(capsys.readouterr().out)
    tree = registered_tree()
    leaves = {b: (r.raw if b in tree.engineering else r.score) for b, r in values.items() if b in tree.leaves}
    for node, value in _tree_means(tree, leaves).items():
        assert entry["scores"][node] == pytest.approx(value, abs=1e-12), node
    assert entry["missing"]["average_vision"] == 0
