"""Score colours by stylesheet class, not inline style (issue 23: ``style-src 'self'``, no ``'unsafe-inline'``).

The pages name a class per score (:func:`brainscore.web.site.colour_class`); the static stylesheet holds the
class rules (:func:`brainscore.web.site.colour_css`, written by ``tools/colour_css.py``). That no page has an
inline style is checked in ``test_security.py`` and ``test_scan.py``; that a browser applies the colours with
no CSP violation in ``test_browser_styles.py``.
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from brainscore.web.site import HERE, MISSING_COLOUR_CLASS, colour, colour_class, colour_css, score_cells

ROOT = Path(__file__).resolve().parents[2]
STYLESHEET = HERE / "static" / "style.css"


def _tool():
    spec = importlib.util.spec_from_file_location("colour_css_tool", ROOT / "tools" / "colour_css.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("value, klass", [(0.0, "c0"), (0.004999, "c0"), (0.005, "c1"), (0.25, "c25"),
                                          (0.4249, "c42"), (0.9951, "c100"), (1.0, "c100"), (1.7, "c100"),
                                          (-0.3, "c0"), (None, MISSING_COLOUR_CLASS),
                                          (float("nan"), MISSING_COLOUR_CLASS)])
def test_a_score_gets_the_class_of_its_value_rounded_to_a_hundredth(value, klass):
    assert colour_class(value) == klass


def test_the_class_rules_hold_the_colour_scale():
    rules = dict(re.findall(r"^\.(c[\w-]+) \{ background: ([^;]+); \}$", colour_css(), flags=re.M))
    assert len(rules) == 102
    assert rules["c0"] == "hsl(0, 65%, 88%)" and rules["c50"] == "hsl(60, 65%, 73%)"
    assert rules["c100"] == "hsl(120, 65%, 58%)" and rules[MISSING_COLOUR_CLASS] == "#eeeeee"
    assert rules["c37"] == colour(0.37) == "hsl(44, 65%, 77%)"  # 120 x 0.37 = 44.4; 88 - 11.1 = 76.9


def test_the_stylesheet_holds_the_rules_the_code_writes():
    """A change of ``colour`` without ``tools/colour_css.py`` fails here (run the tool to fix it)."""
    tool = _tool()
    text = STYLESHEET.read_text()
    assert tool.BEGIN + colour_css() + tool.END in text
    assert tool.with_scale(text) == text


def test_the_tool_replaces_the_block_and_refuses_a_broken_marker():
    tool = _tool()
    stale = "body { color: red; }\n" + tool.BEGIN + ".c0 { background: red; }\n" + tool.END + "a { x: y; }\n"
    assert tool.with_scale(stale) == "body { color: red; }\n" + tool.BEGIN + colour_css() + tool.END + "a { x: y; }\n"
    assert tool.with_scale("body {}\n") == "body {}\n" + tool.BEGIN + colour_css() + tool.END
    with pytest.raises(ValueError, match="restore them or delete both"):
        tool.with_scale("body {}\n" + tool.BEGIN)


def test_score_cells_name_the_colour_class_and_hide_folded_columns_by_attribute():
    columns = [{"node": "V4", "leaf": False, "ancestors": ["neural_vision"]},
               {"node": "bench-a", "leaf": True, "ancestors": ["neural_vision", "V4"], "hidden": True, "hidden_by": 1}]
    cells = str(score_cells({"model": "net", "scores": {"V4": 0.426, "bench-a": None}, "missing": {}}, columns))
    assert 'class="score c43" data-node="V4"' in cells
    assert f'class="score {MISSING_COLOUR_CLASS} leaf" data-node="bench-a"' in cells
    assert 'data-score="" data-state="none" hidden data-hidden-by="1" title="never run"' in cells
    assert "style=" not in cells
