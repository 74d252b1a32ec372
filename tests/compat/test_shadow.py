"""brainscore_vision says which package is in use when the reference's own is installed too, refuses to be
mixed with the reference's brainscore_core, is cheap to import, and nothing in brainscore imports it."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def run(code: str, path: list[Path], **env) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in path), **env}
    return subprocess.run([sys.executable, "-W", "always", "-c", code], env=environment, capture_output=True,
                          text=True, timeout=120)


def fake_distribution(site: Path, package: str, version: str = "2.2.6") -> Path:
    """A reference distribution of ``package`` as pip would install it: the package and its .dist-info."""
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").write_text("RAISE = 'the reference package was imported'\nraise ImportError(RAISE)\n")
    name = package.replace("_", "-")
    info = site / f"{package}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "RECORD").write_text(f"{package}/__init__.py,,\n")
    return site


def test_an_installed_reference_package_behind_ours_is_named_with_how_to_switch(tmp_path):
    site = fake_distribution(tmp_path / "site", "brainscore_vision")
    result = run("import brainscore_vision; print(brainscore_vision.__file__)", [SRC, site])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(SRC / "brainscore_vision" / "__init__.py")
    assert "ShadowWarning" in result.stderr and "brainscore-vision 2.2.6" in result.stderr
    assert str(site / "brainscore_vision") in result.stderr and "pip uninstall" in result.stderr


def test_no_warning_without_the_reference_package(tmp_path):
    result = run("import brainscore_vision", [SRC])
    assert result.returncode == 0 and "ShadowWarning" not in result.stderr, result.stderr


def test_ours_and_the_references_are_never_mixed(tmp_path):
    site = fake_distribution(tmp_path / "site", "brainscore_core")
    result = run("import brainscore_vision", [site, SRC])  # the reference's brainscore_core comes first
    assert result.returncode != 0
    assert "must not be mixed" in result.stderr and str(site / "brainscore_core") in result.stderr
    assert "the reference package was imported" not in result.stderr  # found by its spec, never imported


def test_plugin_folders_refuse_to_register_into_the_references_package(tmp_path):
    site = fake_distribution(tmp_path / "site", "brainscore_vision")
    plugin = tmp_path / "plugins" / "models" / "m"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text("from brainscore_vision import model_registry\n"
                                        "model_registry['compat-shadowed'] = lambda: None\n")
    code = ("import brainscore.registry as r\ntry:\n    r.models.load('compat-shadowed')\n"
            "except Exception as e:\n    print(type(e).__name__, e)\n")
    result = run(code, [site, SRC], BRAINSCORE_PLUGIN_DIRS=str(tmp_path / "plugins"))
    assert result.stdout.startswith("PluginImportError"), result.stdout + result.stderr
    assert str(site / "brainscore_vision") in result.stdout and "first on PYTHONPATH" in result.stdout


def test_importing_brainscore_vision_is_cheap():
    code = ("import sys, brainscore_vision; heavy = [m for m in ('numpy', 'xarray', 'pandas', 'torch', 'sklearn') "
            "if m in sys.modules]; print(heavy)")
    result = run(code, [SRC])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_nothing_in_brainscore_imports_the_reference_api():
    """brainscore_vision and brainscore_core sit on top of brainscore (../shared/DESIGN.md): imports point down."""
    offenders = []
    for path in sorted((SRC / "brainscore").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            offenders += [f"{path.relative_to(SRC)}: {n}" for n in names
                          if n.split(".")[0] in ("brainscore_vision", "brainscore_core")]
    assert offenders == []
