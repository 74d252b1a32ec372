"""The website's checks accept a model plugin folder written for the reference Brain-Score (its
model_registry['x'] = ... assignments read statically), as the folder or inside models/, and find it again
after unpacking; anything else a reference plugin registers, and URL requirements, are rejected by name."""
from __future__ import annotations

import io
import zipfile

import pytest

from brainscore.web import checks

INIT = """from brainscore_vision import model_registry
from .model import get_model

model_registry['compat-web-net'] = lambda: get_model('compat-web-net')
"""


def reference_zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def problems(data: bytes, **kwargs) -> list[str]:
    with pytest.raises(checks.SubmissionRejected) as caught:
        checks.check_zip(data, **kwargs)
    return caught.value.problems


@pytest.mark.parametrize("root", ["compat_web_net", "models/compat_web_net"])
def test_a_reference_model_plugin_passes_as_a_folder_or_in_models(root, tmp_path):
    data = reference_zip({f"{root}/__init__.py": INIT, f"{root}/model.py": "def get_model(name):\n    return name\n",
                          f"{root}/requirements.txt": "torch\ncompat-tinywheel==1.0\n",
                          f"{root}/region_layer_map/compat-web-net.json": '{"V4": "relu2"}'})
    checked = checks.check_zip(data, allowed=None)
    assert (checked.package, checked.root, checked.layout) == ("compat_web_net", root, "reference")
    assert checked.identifiers == ["compat-web-net"]
    assert checked.requirements == ["torch", "compat-tinywheel==1.0"]
    checks.extract(data, tmp_path / "site")
    assert checks.reference_plugin_dir(tmp_path / "site") == \
        (tmp_path / "site" if root.startswith("models/") else tmp_path / "site" / "compat_web_net")
    # with the default allow-list, the package is named with the list
    found = problems(data)
    assert found == ["requirements.txt asks for 'compat-tinywheel', which is not on the server's allow-list "
                     f"({', '.join(sorted(checks.ALLOWED_REQUIREMENTS))}); leave it out, or ask the site's "
                     f"administrators to allow it"]


def test_brainscores_own_layout_is_not_a_reference_folder(tmp_path):
    from web_helpers import plugin_zip

    data = plugin_zip()
    assert checks.check_zip(data).layout == "brainscore"
    checks.extract(data, tmp_path)
    assert checks.reference_plugin_dir(tmp_path) is None


def test_a_reference_submission_registers_models_with_literal_identifiers_and_its_benchmarks_wait_for_approval():
    data = reference_zip({"net/__init__.py": INIT + "benchmark_registry['X-pls'] = object\n"
                                                    "for name in ['a']:\n    model_registry[name] = object\n"})
    assert problems(data, allowed=None) == [
        "net/__init__.py line 7: model_registry[...] needs a literal identifier string, e.g. "
        "model_registry['my-model'] = ..."]
    checked = checks.check_zip(reference_zip({"net/__init__.py": INIT + "benchmark_registry['X-pls'] = object\n"}),
                               allowed=None)
    assert checked.trusted == ["benchmark X-pls (net/__init__.py line 5)"] and checked.benchmarks == ["X-pls"]


def test_builtin_identifiers_urls_and_two_plugins_are_rejected_by_name():
    data = reference_zip({"net/__init__.py": INIT.replace("compat-web-net", "pixels"),
                          "net/requirements.txt": "torch\nmypkg @ https://example.org/mypkg.whl\n"})
    assert problems(data, builtin={"pixels"}, allowed=None) == [
        "the identifier 'pixels' is a built-in model; choose another",
        "requirements.txt: 'mypkg @ https://example.org/mypkg.whl' installs from a URL; name a package from the "
        "index (wheels only), e.g. mypkg"]
    data = reference_zip({"models/a/__init__.py": INIT, "models/b/__init__.py": INIT})
    assert problems(data) == ["the zip must hold exactly one model plugin folder under models/ (e.g. "
                              "models/my_plugin/__init__.py); it holds a, b"]
