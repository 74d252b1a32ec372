"""Every score the documentation publishes for EfficientNet-Lite0 is what the code computes, to 1e-3.

The benchmark table of docs/benchmarks.md (where the README's table moved, issue 29) is parsed, so the table and
the code cannot drift apart, and each row's last column is recomputed from the real pretrained network on the
real data. A change that moves a published number fails here; moving it on purpose means updating the table in
the same commit, with the reason in the commit message. The README's quick start shows the same V4 score, and
tests/docs/test_doc_commands.py runs the quick start and compares what it prints.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import brainscore

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "docs" / "benchmarks.md"
MODEL = "efficientnet-lite0"


def published_scores(page: Path = TABLE) -> dict[str, float]:
    """Benchmark identifier -> EfficientNet-Lite0's score, from the page's benchmark table."""
    lines = page.read_text(encoding="utf-8").splitlines()
    header = next(i for i, line in enumerate(lines)
                  if re.match(r"\| (benchmark|identifier) \|", line) and MODEL in line.lower())
    cells = [cell.strip().lower() for cell in lines[header].strip("|").split("|")]
    column = next(i for i, cell in enumerate(cells) if cell.replace("efficientnet-lite0", MODEL) == MODEL)
    scores = {}
    for line in lines[header + 2:]:
        if not line.startswith("|"):
            break
        row = [cell.strip() for cell in line.strip("|").split("|")]
        identifier = re.search(r"`([^`]+)`", row[0]).group(1)
        scores[identifier] = float(re.match(r"[0-9.]+", row[column]).group(0))  # e.g. '0.8946 (pixels 0.9455)'
    return scores


PUBLISHED = published_scores()


def test_the_table_is_read_and_covers_every_registered_benchmark():
    assert len(PUBLISHED) >= 27
    assert set(PUBLISHED) == set(brainscore.list_benchmarks())  # a new benchmark comes with its published score
    assert PUBLISHED["Cowley2026.210325.V4-pls"] == 0.3915  # the quick start's number
    quick_start = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "score 0.3915 = r² / ceiling = 0.5501² / 0.7731" in quick_start


@pytest.mark.slow
@pytest.mark.parametrize("identifier", sorted(PUBLISHED))
def test_published_score(identifier):
    assert float(brainscore.score(MODEL, identifier)) == pytest.approx(PUBLISHED[identifier], abs=1e-3)
