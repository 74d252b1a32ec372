"""The forward-pass floor of ``perf/suite.py --speed`` counts what a model must see, not only the files (issue 39).

Geirhos 2021 shows the 1,280 cue-conflict images at 3 degrees on the model's screen and Hermann 2020 shows the
same files unplaced: two different inputs of the network per file, so no run can score both with fewer than
2,560 forward passes, while the files number 1,280.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]


def _suite():
    spec = importlib.util.spec_from_file_location("perf_suite", ROOT / "perf" / "suite.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_file_shown_at_two_sizes_is_two_inputs_of_the_floor():
    suite = _suite()
    benchmarks = ["Geirhos2021cueconflict-top1", "Geirhos2021cueconflict-error_consistency",
                  "Hermann2020cueconflict-shape_bias"]
    files = suite.distinct_images(benchmarks)
    inputs = suite.distinct_inputs(benchmarks, "pixels")
    assert len(files) == 1280
    assert len(inputs) == 2560
    unplaced = {str(path.resolve()) for path in files}
    placed = [path for path in inputs if str(path.resolve()) not in unplaced]
    assert len(placed) == 1280  # the Geirhos benchmarks' placement, shared by both of them
    # a placed image is the file shrunk to 3 of the model's 8 degrees on a grey screen: its border is the background
    with Image.open(placed[0]) as image:
        pixels = np.asarray(image.convert("RGB"), dtype=np.int64)
    with Image.open(files[0]) as image:
        original = np.asarray(image.convert("RGB"), dtype=np.int64)
    assert pixels.shape[:2] != original.shape[:2] or not np.array_equal(pixels, original)
    border = np.concatenate([pixels[0], pixels[-1], pixels[:, 0], pixels[:, -1]])
    assert (border == border[0]).all()
