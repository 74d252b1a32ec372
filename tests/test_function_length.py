"""No function in ``src/`` is over :data:`LIMIT` lines of code (issue 38: a longer one is split into named steps), and
no source file over :data:`FILE_LIMIT` lines (a longer module is split by what its parts hold).

A function's lines of code are the lines of its ``def`` through its last line (nested functions included) that
are not blank, not a comment (``#`` first) and not part of a docstring (of the function or anything nested in
it); a statement spread over several lines counts each line.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "src").rglob("*.py"))
LIMIT = 100
FILE_LIMIT = 700


def long_functions(text: str, limit: int = LIMIT) -> list[tuple[str, int, int]]:
    """``(name, first line, lines of code)`` of each function of the module ``text`` over ``limit`` lines of code."""
    tree = ast.parse(text)
    docstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    lines = text.splitlines()
    before = [0]                                                           # before[i]: lines of code among 1..i
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        before.append(before[-1] + (bool(stripped) and not stripped.startswith("#") and number not in docstrings))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            count = before[node.end_lineno] - before[node.lineno - 1]
            if count > limit:
                found.append((node.name, node.lineno, count))
    return found


def test_no_function_in_src_is_over_the_limit():
    over = [f"{path.relative_to(ROOT)}:{line} {name}: {count} lines of code"
            for path in SOURCES for name, line, count in long_functions(path.read_text(encoding="utf-8"))]
    assert not over, f"functions over {LIMIT} lines of code (split them into named steps):\n" + "\n".join(over)


def test_the_counter_skips_blanks_comments_and_docstrings_and_sees_a_long_function():
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT))
    text = f'def f():\n    """Doc.\n\n    more.\n    """\n    # a comment\n\n{body}'
    assert long_functions(text) == [("f", 1, LIMIT + 1)]                   # the def line and the body
    assert long_functions(text.replace("    x0 = 0\n", "")) == []          # exactly LIMIT: allowed


def test_no_source_file_in_src_is_over_the_file_limit():
    over = [f"{path.relative_to(ROOT)}: {n} lines" for path in SOURCES
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > FILE_LIMIT]
    assert not over, f"source files over {FILE_LIMIT} lines (split them by what their parts hold):\n" + "\n".join(over)
