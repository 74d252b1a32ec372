"""``brainscore leaderboard``: the shape of its table (the docs' examples), and standings kept between commands that
equal the whole computation after every kind of change (issue 29: 30 s at 704 models; ``perf/cli_leaderboard.py``)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from brainscore.cli import main
from brainscore.cli.leaderboard import CAPTION
from brainscore.cli.tables import box_table
from brainscore.leaderboard import snapshot
from brainscore.leaderboard.aggregate import leaderboard_records, registered_tree
from brainscore.metrics.score import Score
from brainscore.results import Database, record
from brainscore.scoring.outcome import Outcome

DOCS = Path(__file__).resolve().parents[2] / "docs" / "command_line.md"
RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results.md"


def _record(db, model, benchmark, value, version=1):
    record(Outcome.from_score(Score.of(value, model_identifier=model, benchmark_identifier=benchmark,
                                       benchmark_version=version, raw=Score.of(value))), db)


@pytest.fixture
def two_models(tmp_path):
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    db = Database(url)
    for benchmark, value in (("Cowley2026.210325.V4-pls", 0.3915), ("Kriegeskorte2008.IT-rdm", 0.2307),
                             ("Mur2013-rdm", 0.408), ("Geirhos2021edge-top1", 0.0563)):
        _record(db, "efficientnet-lite0", benchmark, value)
    _record(db, "pixels", "Kriegeskorte2008.IT-rdm", 0.1123)
    return url


def test_a_few_models_give_the_tree_as_rows_and_one_column_per_model(two_models, capsys):
    assert main(["leaderboard", "--db", two_models]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [cell.strip() for cell in lines[1].split("┃")[1:-1]] == ["node", "efficientnet-lite0", "pixels"]
    assert lines[1].startswith("┃ node                          ┃ efficientnet-lite0 ┃")  # as wide as its longest
    assert lines[0].startswith("┏━━━") and lines[2].startswith("┡━━━")
    rows = {line.split("│")[1].strip(): [cell.strip() for cell in line.split("│")[2:4]] for line in lines[3:-3]}
    tree = registered_tree()
    expected_nodes = [node for node in tree.order() if node not in tree.leaves]
    assert list(rows) == expected_nodes  # every aggregate, depth first, indented by depth
    assert "│     V4                        │" in "\n".join(lines)
    assert rows["V4"] == ["0.3915", "- (1)"] and rows["IT"][1].startswith("0.056")  # pixels: IT mean with a 0
    assert lines[-3].startswith("└───") and lines[-2] == CAPTION and lines[-1] == f"scores from {two_models}"


def test_many_models_give_one_ranked_row_each_and_a_file_gets_them_all(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    db = Database(url)
    for k in range(30):
        _record(db, f"model-with-a-long-identifier-{k:02d}", "Mur2013-rdm", k / 100)
    assert main(["leaderboard", "--db", url]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = [cell.strip() for cell in lines[1].split("┃")[1:-1]]
    assert header[:4] == ["#", "model", "average_vision", "neural_vision"]
    first, last = lines[3].split("│"), lines[32].split("│")
    assert first[1].strip() == "1" and first[2].strip() == "model-with-a-long-identifier-29"
    assert last[1].strip() == "30" and last[2].strip() == "model-with-a-long-identifier-00"  # not a terminal: all
    assert lines[-2] == CAPTION


def _json(url, capsys, *extra):
    assert main(["leaderboard", "--format", "json", "--db", url, *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_kept_standings_equal_the_whole_computation_after_every_change(tmp_path, capsys, monkeypatch):
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    db = Database(url)
    for k in range(5):
        _record(db, f"m{k}", "Mur2013-rdm", 0.1 * k)
        _record(db, f"m{k}", "Kriegeskorte2008.IT-rdm", 0.05 * k)
    reads = []
    original = Database.scores_after
    monkeypatch.setattr(Database, "scores_after", lambda self, after=0, *a, **k: (reads.append(after),
                                                                                 original(self, after, *a, **k))[1])
    assert _json(url, capsys) == leaderboard_records(url) and reads == [0]  # first: everything read, kept
    reads.clear()
    assert _json(url, capsys) == leaderboard_records(url) and reads == []  # nothing changed: nothing read
    _record(db, "m1", "Mur2013-rdm", 0.9)  # a new score: only the rows since are read
    assert _json(url, capsys) == leaderboard_records(url) and reads == [10]
    reads.clear()
    db.delete_model("m4")  # not a new score (rewrites): everything is read again
    assert _json(url, capsys) == leaderboard_records(url) and reads == [11, 0]
    reads.clear()
    _record(db, "m2", "Mur2013-rdm", 0.7, version=2)  # a newer version counts: keyed anew, everything read
    assert _json(url, capsys) == leaderboard_records(url) and reads == [0]
    assert [entry["model"] for entry in _json(url, capsys, "--benchmarks", "Mur*")] == \
        [entry["model"] for entry in leaderboard_records(url, "Mur*")]


def test_a_damaged_kept_file_is_computed_again(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    db = Database(url)
    _record(db, "m0", "Mur2013-rdm", 0.25)
    expected = _json(url, capsys)
    for kept in snapshot._folder().glob("standings-*.pkl"):
        kept.write_bytes(b"\0" * kept.stat().st_size)
    assert _json(url, capsys) == expected == leaderboard_records(url)


def _example(text: str, after: str) -> list[str] | None:
    """The first code block after the line containing ``after`` that holds a table."""
    position = text.find(after)
    if position < 0:
        return None
    blocks = re.findall(r"```\n(┏.*?)```", text[position:], flags=re.DOTALL)
    return blocks[0].rstrip("\n").splitlines() if blocks else None


@pytest.mark.parametrize("page", [RESULTS, DOCS], ids=["results", "command_line"])
def test_the_documented_example_is_the_table_the_command_draws(page):
    """The example tables of the docs are drawn as the command draws them: re-drawing their cells
    gives them, and the database line follows the caption."""
    example = _example(page.read_text(encoding="utf-8"), "brainscore leaderboard")
    assert example is not None, f"{page.name} shows no leaderboard table after 'brainscore leaderboard'"
    table = [line for line in example if line[:1] in "┏┃┡│└"]
    cells = [[part[1:].rstrip() if i == 0 else part.strip() for i, part in enumerate(line[1:-1].split(line[0]))]
             for line in table if line[0] in "┃│"]  # the node column keeps its indentation
    assert box_table(cells[0], cells[1:], right=range(1, len(cells[0]))) == table
    assert example[len(table)] == CAPTION and example[len(table) + 1].startswith("scores from ")
