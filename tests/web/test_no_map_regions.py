"""A website submission without a ``region_layer_map`` gets a layer for V1 and IT by the layer rule (issue 22).

Cheap beside the browser test (``test_e2e.py``, which scores such a submission on the IT benchmarks): the
the tiny network of docs/models.md is unpacked from its plugin zip and found through the entry point the submission
queue writes, in a process of its own as the scoring child is, and recorded from V1 (what the seven
Marques 2020 benchmarks record) and IT on one image. No region has a declared layer and V1 and IT have no
selection data here, so both are committed by the relative-depth rule: candidates ``1, 3, 6``; V1's depth
0.270 gives ``round(0.270 * 2) = 1`` (layer ``3``), IT's 0.809 ``round(1.62) = 2`` (layer ``6``).
Scoring V1 end to end on a small network is ``test_a_small_model_scores_the_same_bits_with_a_tiny_memory_budget``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from brainscore.models import layer_rule
from brainscore.web.checks import extract
from brainscore.web.queue import write_entry_point
from web_helpers import plugin_zip

SRC = Path(__file__).resolve().parents[2] / "src"
NO_MAP_MODEL = (Path(__file__).resolve().parents[2] / "docs" / "examples" / "my_tiny_net" / "model.py").read_text() \
    .replace('"region_layer_map": {"V4": "3"}, ', "")

RECORD = """
import json, brainscore
model = brainscore.load_model("no-map-v1-net")
out = {}
for region, stimuli in (("V1", "Marques2020_blank"), ("IT", "Marques2020_blank")):
    model.start_recording(region, time_bins=[(70, 170)])
    features = model.look_at(brainscore.load_stimulus_set(stimuli))
    out[region] = {"layers": sorted(set(map(str, features["layer"].values))), "n": int(features.sizes["neuroid"]),
                   **{k: model.layer_methods[region][k] for k in ("method", "index", "n_candidates")}}
print(json.dumps(out))
"""


def test_a_submission_without_a_layer_map_commits_v1_and_it_by_the_rule(tmp_path):
    assert '"region_layer_map": {"V4": "3"}, ' not in NO_MAP_MODEL and "region_layer_map" not in NO_MAP_MODEL
    site = tmp_path / "site"
    extract(plugin_zip(identifier="no-map-v1-net", package="no_map_v1_net",
                       extra={"no_map_v1_net/model.py": NO_MAP_MODEL}), site)
    write_entry_point(site, "no_map_v1_net", 0)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(SRC)])}
    done = subprocess.run([sys.executable, "-c", RECORD], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    recorded = json.loads(done.stdout.strip().splitlines()[-1])
    depth = layer_rule.load()["rule"]["relative_depth"]
    assert round(depth["V1"] * 2) == 1 and round(depth["IT"] * 2) == 2
    assert recorded["V1"] == {"layers": ["3"], "n": 32 * 27 * 27, "method": "rule", "index": 1, "n_candidates": 3}
    assert recorded["IT"] == {"layers": ["6"], "n": 1000, "method": "rule", "index": 2, "n_candidates": 3}
