"""The checks on a submitted plugin zip: each rejection names exactly what is wrong."""
from __future__ import annotations

import io
import stat
import zipfile

import pytest

from brainscore.web import checks
from web_helpers import plugin_zip, symlink_zip, traversal_zip, zip_bomb


def problems(data: bytes, **kwargs) -> list[str]:
    with pytest.raises(checks.SubmissionRejected) as caught:
        checks.check_zip(data, **kwargs)
    return caught.value.problems


def test_the_readme_plugin_passes_with_its_identifier_and_requirements():
    checked = checks.check_zip(plugin_zip())
    assert checked.package == "my_tiny_net"
    assert checked.identifiers == ["my-tiny-net"]
    assert checked.requirements == ["torch"]
    assert checked.entries == 3


def test_zip_bomb_is_rejected_by_its_ratio():
    found = problems(zip_bomb())
    assert len(found) == 1 and "zip bomb" in found[0] and "limit is 100" in found[0]


def test_path_traversal_is_rejected_naming_the_entry():
    found = problems(traversal_zip())
    assert found == ["'evil_net/../../evil.py' contains '..' (path traversal); paths must stay inside the plugin folder"]


def test_symlink_is_rejected_naming_the_entry():
    found = problems(symlink_zip())
    assert found == ["'link_net/weights.pt' is a symbolic link; links are not allowed, put the file itself in the zip"]


def test_absolute_path_and_device_file_are_rejected():
    buffer = io.BytesIO(plugin_zip())
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.writestr("/etc/cron.d/x", "x")
        device = zipfile.ZipInfo("my_tiny_net/dev")
        device.external_attr = (stat.S_IFCHR | 0o666) << 16
        archive.writestr(device, "")
    found = problems(buffer.getvalue())
    assert any("'/etc/cron.d/x' is an absolute path" in p for p in found)
    assert any("'my_tiny_net/dev' is a device file" in p for p in found)


def test_size_and_entry_limits(monkeypatch):
    monkeypatch.setattr(checks, "MAX_ZIP_BYTES", 100)
    assert problems(plugin_zip()) == [f"the zip has {len(plugin_zip()) / 2**20:.1f} MB; the limit is 0 MB"]
    monkeypatch.setattr(checks, "MAX_ZIP_BYTES", 50 * 2**20)
    monkeypatch.setattr(checks, "MAX_ENTRIES", 2)
    assert problems(plugin_zip()) == ["the zip has 3 entries; the limit is 2"]


def test_not_a_zip():
    assert problems(b"hello")[0].startswith("the file is not a readable zip")


def test_missing_init_and_loose_files():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("model.py", "x = 1")
    assert "exactly one plugin folder" in problems(buffer.getvalue())[0]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("pkg_x/model.py", "x = 1")
    assert problems(buffer.getvalue()) == ["pkg_x/__init__.py is missing: it must register the model identifiers "
                                           "with register_model(\"my-model\")"]


def test_package_shadowing_an_installed_module_is_rejected():
    assert any("name of an installed module" in p for p in problems(plugin_zip(package="torch")))


def test_identifier_collisions_with_builtins_and_other_owners():
    assert problems(plugin_zip(identifier="pixels"), builtin={"pixels"}) == [
        "the identifier 'pixels' is a built-in model; choose another"]
    assert problems(plugin_zip(), taken={"my-tiny-net": "bob"}, owner="alice") == [
        "the identifier 'my-tiny-net' belongs to another user's model; choose another"]
    assert checks.check_zip(plugin_zip(), taken={"my-tiny-net": "alice"}, owner="alice").identifiers == ["my-tiny-net"]


def test_requirements_outside_the_allow_list_are_rejected_and_listed():
    data = plugin_zip(extra={"my_tiny_net/requirements.txt": "torch\nnumpy>=1.26\nevilpkg==1.0\n"})
    found = problems(data)
    assert len(found) == 1 and found[0].startswith("requirements.txt asks for 'evilpkg', which is not on the server's")


def test_dynamic_identifiers_are_rejected_and_other_registrations_held_for_approval():
    code = "from brainscore.registry import register_model, register_benchmark\nregister_model(f'x{1}')\n"
    found = problems(plugin_zip(extra={"my_tiny_net/more.py": code + "register_benchmark('b')\n"}))
    assert found == ["my_tiny_net/more.py line 2: register_model needs a literal identifier string"]
    # a benchmark (or data, or a metric) is trusted code: accepted, to wait for an administrator (issue 32)
    checked = checks.check_zip(plugin_zip(extra={"my_tiny_net/more.py": "from brainscore.registry import "
                                                 "register_benchmark\nregister_benchmark('b')\n"}))
    assert checked.trusted == ["benchmark b (my_tiny_net/more.py line 2)"] and checked.benchmarks == ["b"]
    assert checks.check_zip(plugin_zip()).trusted == []


def test_absolute_paths_in_code_must_lie_in_an_allowed_weights_folder(tmp_path):
    data = plugin_zip(extra={"my_tiny_net/weights.py": f"PATH = '{tmp_path}/w.pt'\n"})
    assert "outside the allowed weights folders (none configured)" in problems(data)[0]
    assert checks.check_zip(data, weights_dirs=(tmp_path,)).identifiers == ["my-tiny-net"]


def test_extract_writes_regular_files_inside_the_target(tmp_path):
    checks.extract(plugin_zip(), tmp_path)
    assert sorted(p.name for p in (tmp_path / "my_tiny_net").iterdir()) == ["__init__.py", "model.py", "requirements.txt"]
    with pytest.raises(checks.SubmissionRejected, match="outside the plugin folder"):
        checks.extract(traversal_zip(), tmp_path / "other")


@pytest.mark.parametrize("source, error", [("x = " + "-" * 100_000 + "1\n", "MemoryError"),
                                           ("x = a" + ".b" * 200_000 + "\n", "RecursionError")],
                         ids=["unary-minus", "attributes"])
def test_deeply_nested_code_is_a_refusal_naming_the_file_not_a_crash(source, error):
    """CPython's parser raises MemoryError (100,000 nested unary minus) or RecursionError (200,000 chained
    attributes) on these, where the check caught only SyntaxError: the upload was a bare 500."""
    found = problems(plugin_zip(extra={"my_tiny_net/__init__.py": source}))
    assert found[0] == (f"my_tiny_net/__init__.py is not valid Python: my_tiny_net/__init__.py: the code nests too "
                        f"deeply for Python's parser ({error}); write it with fewer nested expressions")


REFERENCE_INIT = ("from brainscore_vision import model_registry\n"
                  "from brainscore_vision.model_helpers.brain_transformation import ModelCommitment\n"
                  "model_registry['repo-net'] = lambda: ModelCommitment(identifier='repo-net', activations_model=None,"
                  " layers=['a'])\n")


def _zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def test_a_zip_of_the_reference_repositorys_layout_is_accepted_and_unpacked_as_models(tmp_path):
    """Issue 29: a zip of ``brainscore_vision/models/x/`` (the reference's repository, zipped from its root) was
    refused with misleading errors (``brainscore_vision`` "has the name of an installed module", its
    ``__init__.py`` "must register the model identifiers")."""
    data = _zip({"brainscore_vision/models/repo_net/__init__.py": REFERENCE_INIT,
                 "brainscore_vision/models/repo_net/model.py": "LAYERS = ['a']\n",
                 "brainscore_vision/models/repo_net/requirements.txt": "torch\n"})
    checked = checks.check_zip(data)
    assert (checked.package, checked.identifiers, checked.layout, checked.root, checked.strip, checked.requirements) == (
        "repo_net", ["repo-net"], "reference", "models/repo_net", "brainscore_vision/", ["torch"])
    checks.extract(data, tmp_path, strip=checked.strip)
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.*")) == [
        "models/repo_net/__init__.py", "models/repo_net/model.py", "models/repo_net/requirements.txt"]
    assert checks.reference_plugin_dir(tmp_path) == tmp_path  # scanned as the reference's models/ folder


def test_a_repository_layout_zip_without_the_plugins_init_names_the_missing_file():
    found = problems(_zip({"brainscore_vision/models/repo_net/model.py": "LAYERS = ['a']\n"}))
    assert found == ["brainscore_vision/models/repo_net/__init__.py is missing: it must register the model identifiers "
                     "with register_model(\"my-model\")"]
