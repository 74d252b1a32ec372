"""Every score the README publishes for EfficientNet-Lite0 is what the code computes, to 1e-3.

The README's benchmark table is parsed (so the table and the code cannot drift apart) and each row's
last column is recomputed from the real pretrained network on the real data. A change that moves a
published number fails here; moving it on purpose means updating the README's table in the same commit,
with the reason in the commit message.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import brainscore

README = Path(__file__).resolve().parents[2] / "README.md"
MODEL = "efficientnet-lite0"


def readme_scores() -> dict[str, float]:
    """Benchmark identifier -> EfficientNet-Lite0's score, from the README's benchmark table."""
    lines = README.read_text(encoding="utf-8").splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| benchmark |") and "EfficientNet-Lite0" in line)
    column = [cell.strip() for cell in lines[header].strip("|").split("|")].index("EfficientNet-Lite0")
    scores = {}
    for line in lines[header + 2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        identifier = re.search(r"`([^`]+)`", cells[0]).group(1)
        scores[identifier] = float(cells[column])
    return scores


PUBLISHED = readme_scores()


def test_the_table_is_read():
    assert len(PUBLISHED) >= 16
    assert PUBLISHED["Cowley2026.210325.V4-pls"] == 0.3915  # the quick start's number


@pytest.mark.slow
@pytest.mark.parametrize("identifier", sorted(PUBLISHED))
def test_readme_score(identifier):
    assert float(brainscore.score(MODEL, identifier)) == pytest.approx(PUBLISHED[identifier], abs=1e-3)
