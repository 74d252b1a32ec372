"""Plugin code that downloads by itself (issue 37): ``urllib.request.urlretrieve`` / ``urlopen``, ``requests.get``,
``torch.hub.load`` of a GitHub repository, Hugging Face ``snapshot_download`` and ``gdown.download`` are served by
the weights mirror by URL path, or stop at once with one line naming the URL and the weights_mirror setting (the
test session is offline). Loopback hosts and brainscore's own downloads are never guarded. Every file read is
recorded with its weights status (verified / unverified / stand-in)."""
from __future__ import annotations

import hashlib
import http.server
import json
import sys
import threading
import zipfile

import pytest

import brainscore.registry  # noqa: F401 - installs the import hook that guards downloads, as in every process of plugins
from brainscore.errors import HashMismatchError, NetworkError
from brainscore.models import downloads
from brainscore.models.weights import recording_weights, weights_summary

PLUGIN = "brainscore_plugindir_0123456789ab.models.fake_download"


def run_as_plugin(source: str, **names):
    """Run ``source`` as module-level code of a plugin folder's module (what the guards look for); its ``result``."""
    namespace = {"__name__": PLUGIN, **names}
    exec(compile(source, "/plugins/models/fake_download/model.py", "exec"), namespace)  # noqa: S102 - test code
    return namespace.get("result")


@pytest.fixture
def mirror(weights_mirror):
    return weights_mirror


def one_line(error) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


def test_the_plugin_prefix_is_the_registry_s():
    from brainscore.plugin_sources import PLUGIN_DIR_PACKAGE_PREFIX

    assert PLUGIN_DIR_PACKAGE_PREFIX in downloads.PLUGIN_MODULE_PREFIXES
    assert PLUGIN.startswith(downloads.PLUGIN_MODULE_PREFIXES)


def test_urlretrieve_offline_is_one_line_naming_the_url_and_the_mirror_setting(mirror):
    with pytest.raises(NetworkError) as offline:
        run_as_plugin("from urllib.request import urlretrieve\n"
                      "result = urlretrieve('https://weights.example.org/models/net_v1.pth', 'net_v1.pth')")
    message = one_line(offline)
    assert "net_v1.pth (https://weights.example.org/models/net_v1.pth)" in message
    assert "offline" in message and "weights_mirror" in message and str(mirror) in message


def test_urlretrieve_and_urlopen_are_served_by_the_mirror_by_url_path_and_recorded(mirror, tmp_path):
    file = mirror / "weights.example.org" / "models" / "net_v1.pth"
    file.parent.mkdir(parents=True)
    file.write_bytes(b"tiny weights")
    target = tmp_path / "copy.pth"
    with recording_weights() as files:
        path, _ = run_as_plugin("from urllib.request import urlretrieve\n"
                                "result = urlretrieve('https://weights.example.org/models/net_v1.pth', target)",
                                target=str(target))
        body = run_as_plugin("import urllib.request\n"
                             "with urllib.request.urlopen('https://weights.example.org/models/net_v1.pth') as r:\n"
                             "    result = r.read()")
    assert path == str(target) and target.read_bytes() == b"tiny weights" and body == b"tiny weights"
    summary = weights_summary(files)
    assert summary["status"] == "unverified"  # no published hash beside it
    assert summary["files"]["https://weights.example.org/models/net_v1.pth"] == {
        "sha256": hashlib.sha256(b"tiny weights").hexdigest(), "status": "unverified"}
    (file.parent / "net_v1.pth.sha256").write_text(hashlib.sha256(b"tiny weights").hexdigest() + "  net_v1.pth\n")
    with recording_weights() as files:
        run_as_plugin("from urllib.request import urlretrieve\n"
                      "result = urlretrieve('https://weights.example.org/models/net_v1.pth')")
    assert weights_summary(files)["status"] == "verified"
    (file.parent / "net_v1.pth.sha256").write_text("0" * 64)
    with pytest.raises(HashMismatchError, match="does not have the sha256"):
        run_as_plugin("from urllib.request import urlretrieve\n"
                      "result = urlretrieve('https://weights.example.org/models/net_v1.pth')")


def test_a_url_path_climbing_out_of_the_mirror_is_never_looked_up(mirror, tmp_path):
    (tmp_path / "secret.pth").write_bytes(b"outside the mirror")
    with pytest.raises(NetworkError):
        run_as_plugin("from urllib.request import urlretrieve\n"
                      "result = urlretrieve('https://weights.example.org/../../secret.pth')")
    with pytest.raises(NetworkError):
        run_as_plugin("from urllib.request import urlretrieve\n"
                      "result = urlretrieve('https://weights.example.org/%2e%2e/secret.pth')")


def test_loopback_hosts_and_brainscore_s_own_calls_are_not_guarded(mirror, tmp_path):
    (tmp_path / "served.bin").write_bytes(b"from a local server")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/served.bin"
        body = run_as_plugin("import urllib.request\nresult = urllib.request.urlopen(url).read()", url=url)
        assert body == b"from a local server"  # offline, but loopback: the plugin's own test server works
    finally:
        server.shutdown()
        server.server_close()
    calls = []
    guarded = downloads.guard_urlretrieve(lambda *args: calls.append(args) or ("x", None))
    guarded("https://weights.example.org/models/net_v1.pth")  # called from a test, not from plugin code
    assert calls and calls[0][0] == "https://weights.example.org/models/net_v1.pth"
    with pytest.raises(NetworkError):
        run_as_plugin("result = guarded('https://weights.example.org/models/net_v1.pth')", guarded=guarded)
    assert len(calls) == 1  # the plugin's call never reached the network


def test_requests_get_is_served_by_the_mirror_or_one_line(mirror):
    import requests  # noqa: F401 - the import hook guards requests.get

    file = mirror / "storage.googleapis.com" / "bit_models" / "BiT-M-R50x1.npz"
    file.parent.mkdir(parents=True)
    file.write_bytes(b"npz bytes")
    content = run_as_plugin("import requests\n"
                            "result = requests.get('https://storage.googleapis.com/bit_models/BiT-M-R50x1.npz').content")
    assert content == b"npz bytes"
    with pytest.raises(NetworkError) as offline:
        run_as_plugin("import requests\nresult = requests.get('https://example.org/absent.pt', stream=True)")
    assert "absent.pt (https://example.org/absent.pt)" in one_line(offline)


@pytest.fixture
def hub_dir(tmp_path):
    import torch

    previous = torch.hub.get_dir()
    torch.hub.set_dir(str(tmp_path / "hub"))
    yield tmp_path / "hub"
    torch.hub.set_dir(previous)


def test_torch_hub_load_of_a_github_repo_offline_is_one_line(mirror, hub_dir):
    import torch

    with pytest.raises(NetworkError) as offline:
        torch.hub.load("facebookresearch/swav:main", "resnet50")
    message = one_line(offline)
    assert "facebookresearch/swav:main (https://github.com/facebookresearch/swav/zipball/main)" in message
    assert "weights_mirror" in message and str(hub_dir) in message
    with pytest.raises(NetworkError, match="zipball/main"):  # no ref: torch hub would ask GitHub for the branch
        torch.hub.load("pytorch/vision", "alexnet", pretrained=False)


def test_torch_hub_load_reads_a_mirrored_checkout_or_the_archive_by_its_url_path(mirror, hub_dir):
    import torch

    checkout = mirror / "torch" / "hub" / "someone_tiny_main"
    checkout.mkdir(parents=True)
    (checkout / "hubconf.py").write_text("def tiny(scale=1):\n    return 42 * scale\n")
    assert torch.hub.load("someone/tiny", "tiny", scale=2) == 84
    archive = mirror / "github.com" / "other" / "zipped" / "zipball" / "v1"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("other-zipped-abc123/hubconf.py", "def net():\n    return 'from the archive'\n")
    assert torch.hub.load("other/zipped:v1", "net", trust_repo=True) == "from the archive"
    assert (hub_dir / "other_zipped_v1" / "hubconf.py").is_file()  # unpacked where torch hub caches it


def test_hugging_face_snapshot_download_offline_and_local_only_are_one_line(mirror, monkeypatch):
    import huggingface_hub
    from huggingface_hub import constants

    with pytest.raises(NetworkError) as offline:
        huggingface_hub.snapshot_download("microsoft/cvt-13")
    assert "microsoft/cvt-13" in one_line(offline) and "weights_mirror" in str(offline.value)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # the client's own offline switch: not its traceback
    with pytest.raises(NetworkError, match="weights_mirror"):
        huggingface_hub.hf_hub_download("microsoft/cvt-13", "config.json")
    folder = mirror / "microsoft" / "cvt-13"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "cvt"}))
    with recording_weights() as files:
        assert huggingface_hub.snapshot_download("microsoft/cvt-13") == str(folder)
    assert files["microsoft/cvt-13/config.json"]["status"] == "unverified"


def test_gdown_download_offline_is_one_line_and_the_mirror_serves_it_by_file_id(mirror, tmp_path, monkeypatch):
    package = tmp_path / "site" / "gdown"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("def download(url=None, output=None, quiet=False, id=None, fuzzy=False):\n"
                                         "    raise AssertionError('the network was asked')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "gdown", raising=False)
    url = "https://drive.google.com/uc?id=1AbCdEfGhIjKlMnOpQ"
    with pytest.raises(NetworkError) as offline:
        run_as_plugin("import gdown\nresult = gdown.download(url, 'w.pth')", url=url)
    assert f"drive.google.com/1AbCdEfGhIjKlMnOpQ ({url})" in one_line(offline)
    (mirror / "drive.google.com").mkdir()
    (mirror / "drive.google.com" / "1AbCdEfGhIjKlMnOpQ").write_bytes(b"drive weights")
    output = tmp_path / "w.pth"
    assert run_as_plugin("import gdown\nresult = gdown.download(url, output)", url=url, output=str(output)) \
        == str(output)
    assert output.read_bytes() == b"drive weights"


def test_a_mirrored_archive_that_climbs_out_of_torch_hub_s_cache_is_refused(mirror, hub_dir, tmp_path):
    import torch

    from brainscore.errors import ValidationError

    archive = mirror / "github.com" / "evil" / "repo" / "zipball" / "main"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("evil-repo-1/hubconf.py", "def net():\n    return 1\n")
        zipped.writestr("../../escaped.py", "print('written outside')\n")
    with pytest.raises(ValidationError, match="outside the target folder"):
        torch.hub.load("evil/repo:main", "net")
    assert not list(tmp_path.rglob("escaped.py")) and not (hub_dir / "evil_repo_main").exists()
