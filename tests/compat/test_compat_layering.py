"""The reference-API packages sit on the top floor: they import brainscore, and nothing in brainscore imports them.

Built from the code's own imports (``ast``, imports inside functions included), as tests/test_layering.py.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
COMPAT = ("brainscore_vision", "brainscore_core")


def imported_packages(path: Path) -> set[str]:
    """Top-level package names ``path`` imports (absolute imports; relative ones stay in its package)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("path", sorted((SRC / "brainscore").rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_brainscore_never_imports_the_compat_packages(path):
    assert not imported_packages(path) & set(COMPAT), f"{path} imports {imported_packages(path) & set(COMPAT)}"


@pytest.mark.parametrize("package", COMPAT)
def test_compat_packages_exist_and_import_brainscore(package):
    files = sorted((SRC / package).rglob("*.py"))
    assert files
    assert any("brainscore" in imported_packages(path) for path in files)
