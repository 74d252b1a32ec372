"""The benchmark author's tutorial runs as written, against an HTTP and an S3 server on 127.0.0.1."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from authoring_helpers import http_server, moto_s3

TUTORIAL = Path(__file__).resolve().parents[2] / "docs" / "tutorial_benchmark_author.md"


def python_blocks(markdown: str) -> list[str]:
    """The fenced ```python blocks of a markdown text, in order."""
    return [m.group(1) for m in re.finditer(r"^```python\n(.*?)^```\s*$", markdown, flags=re.S | re.M)]


def test_tutorial_has_every_step():
    blocks = python_blocks(TUTORIAL.read_text())
    code = "\n".join(blocks)
    assert len(blocks) >= 13
    for step in ("StimulusSet(", "NeuroidAssembly(", "validate(", "package_stimulus_set(",
                 "package_data_assembly(", "publish(", "s3://", "publication.snippet", "brainscore.load_dataset(",
                 "NeuralBenchmark(", "visual_degrees=", "number_of_trials=", "ceiling_func=", "region=", "parent=",
                 '[project.entry-points."brainscore.plugins"]', '"list", "benchmarks"', '"score", "--model"',
                 "responses_repeat_averaged", "ceiling_func=None", "attach_stimulus_set("):
        assert step in code, step


def test_tutorial_runs_as_written(shared_data, tmp_path):
    script = tmp_path / "tutorial.py"
    script.write_text("\n\n".join(python_blocks(TUTORIAL.read_text())))
    served = tmp_path / "www"
    served.mkdir()
    with http_server(served) as url, moto_s3() as endpoint:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update({
            "BRAINSCORE_TUTORIAL_RAW": str(shared_data),
            "BRAINSCORE_TUTORIAL_WORK": str(tmp_path / "work"),
            "BRAINSCORE_TUTORIAL_SERVED": str(served),
            "BRAINSCORE_TUTORIAL_URL": url,
            "BRAINSCORE_S3_ENDPOINT_URL": endpoint,
            "BRAINSCORE_TUTORIAL_BUCKET": "tutorial-bucket",
            "BRAINSCORE_HOME": str(tmp_path / "author_home"),
            "BRAINSCORE_DATA_MIRROR": "",
            "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
        })
        result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True,
                                text=True, timeout=900)
    assert result.returncode == 0, f"tutorial failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    out = result.stdout
    assert "3 problem(s)" in out and "'neuron_0'" in out and "'image0001'" in out  # the damaged copy
    assert "OK (" in out                                                            # the real data
    assert '@register_dataset("Tutorial.Cowley2026.210325")' in out                 # the plugin's code
    assert f"{url}/brainscore/assy_Tutorial_Cowley2026_210325.nc" in out
    assert f"{endpoint}/tutorial-bucket/brainscore/assy_Tutorial_Cowley2026_210325.nc" in out
    assert sorted(p.name for p in (served / "brainscore").iterdir()) == [
        "assy_Tutorial_Cowley2026_210325.nc", "stimulus_Tutorial_Cowley2026_210325.csv",
        "stimulus_Tutorial_Cowley2026_210325.zip"]
    plugin = (tmp_path / "work/plugins/tutorial_cowley2026/__init__.py").read_text()
    compile(plugin, "plugin", "exec")
    # the benchmark, its package found through the entry point, the command line, the averaged case
    assert "Tutorial.Cowley2026.210325.V4-pls\n" in out                          # brainscore list benchmarks
    assert '"benchmark": "Tutorial.Cowley2026.210325.V4-pls"' in out              # brainscore score --json
    assert "no ceiling" in out
    import importlib.metadata

    assert not [d for d in importlib.metadata.distributions() if d.metadata["Name"] == "my-lab-brainscore"]
