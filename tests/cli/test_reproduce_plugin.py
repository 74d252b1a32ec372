"""``brainscore reproduce`` of a plugin-folder model finds the folder the record names (issue 29).

Before, a record scored with ``--plugin-dir`` could be reproduced only by passing ``--plugin-dir`` again, and
nothing said so: the rerun failed with "no model is registered as ...".
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCHMARK = "Kriegeskorte2008.IT-rdm"


def brainscore(*args):
    environment = {key: value for key, value in os.environ.items() if key != "BRAINSCORE_PLUGIN_DIRS"}
    environment["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "brainscore", *args], capture_output=True, text=True,
                          env=environment, timeout=900)


def test_reproduce_scans_the_recorded_plugin_folder_and_names_it_when_gone(tmp_path):
    folder = tmp_path / "plugins" / "my_tiny_net"
    shutil.copytree(REPO / "docs" / "examples" / "my_tiny_net", folder)
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    scored = brainscore("score", "--model", "my-tiny-net", "--benchmark", BENCHMARK, "--bootstrap", "20", "--db", url,
                        "--plugin-dir", str(folder), "--quiet")
    assert scored.returncode == 0, scored.stderr
    record = scored.stdout.splitlines()[-1].split("#")[1].split()[0]

    again = brainscore("reproduce", record, "--db", url, "--quiet")  # a new process: no --plugin-dir
    assert again.returncode == 0, again.stderr
    assert (f"plugins: the model's plugin folder {folder.resolve()}, where the record says it came from "
            f"(no --plugin-dir needed)") in again.stdout
    assert "MATCHES bit for bit" in again.stdout

    shutil.move(str(folder), str(tmp_path / "moved"))
    gone = brainscore("reproduce", record, "--db", url, "--quiet")
    assert gone.returncode == 2
    assert f"came from the plugin folder {folder.resolve()}" in gone.stderr
    assert "which is no longer there" in gone.stderr
    assert f"brainscore reproduce {record} --plugin-dir DIR" in gone.stderr
    moved = brainscore("reproduce", record, "--db", url, "--plugin-dir", str(tmp_path / "moved"), "--quiet")
    assert moved.returncode == 0 and "MATCHES bit for bit" in moved.stdout, moved.stderr
