"""``brainscore score`` with patterns and lists: every pair in this process, one table (the runner's code)."""
import json

import pytest

import brainscore
from brainscore.cli import main

BENCHMARKS = "Kriegeskorte2008.IT-rdm,Kiani*"


@pytest.fixture(scope="module")
def tiny():
    import runner_helpers

    return runner_helpers.MODEL


def test_lists_and_patterns_print_one_table_with_the_scores_of_single_calls(tiny, capsys):
    assert main(["score", "--model", f"pixels,{tiny}", "--benchmark", BENCHMARKS]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["model", "benchmark", "status", "score", "raw", "ceiling", "error", "layer",
                              "method", "duration_s"]
    rows = [line.split() for line in out[2:6]]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("pixels", "Kriegeskorte2008.IT-rdm", "done"), ("pixels", "Kiani2007.IT-rdm", "done"),
        (tiny, "Kriegeskorte2008.IT-rdm", "done"), (tiny, "Kiani2007.IT-rdm", "done")]
    assert [r[8] for r in rows] == ["declared"] * 4  # both models map IT themselves
    for model, benchmark, _, score, *_ in rows:
        assert float(score) == pytest.approx(float(brainscore.score(model, benchmark)), abs=5e-5)  # 4 decimals
    assert out[6] == "4 pairs: 4 scored, 0 already recorded, 0 failed"


def test_json_lines_per_pair_equal_single_calls_bit_for_bit(tiny, capsys):
    assert main(["score", "--model", tiny, "--benchmark", BENCHMARKS, "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["benchmark"] for line in lines] == ["Kriegeskorte2008.IT-rdm", "Kiani2007.IT-rdm"]
    for line in lines:
        single = brainscore.score(tiny, line["benchmark"])
        assert line["score"] == float(single) and line["raw"] == float(single.attrs["raw"])


def test_a_failed_pair_makes_the_exit_code_non_zero_and_prints_its_log(capsys):
    assert main(["score", "--model", "pixels", "--benchmark", "Geirhos2021edge-top1,Kiani2007.IT-rdm"]) == 1
    captured = capsys.readouterr()
    assert "failed" in captured.out and "1 failed" in captured.out
    assert "FAILED pixels on Geirhos2021edge-top1: ValidationError" in captured.err


def test_layer_with_several_benchmarks_is_refused():
    with pytest.raises(SystemExit, match="--layer applies to one benchmark"):
        main(["score", "--model", "pixels", "--benchmark", "Kiani*,Mur2013-rdm", "--layer", "pixels"])
