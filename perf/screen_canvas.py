"""What placing stimuli on a model's screen costs at a huge field of view (issue 36), one fresh process per case.

Usage::

    python perf/screen_canvas.py                       # 132.6 and 999 degrees (and 8, for scale)
    python perf/screen_canvas.py --degrees 132.6 --images 20
    PYTHONPATH=/path/to/other/src python perf/screen_canvas.py --degrees 132.6   # another version, e.g. main

The stimuli are the first ``--images`` of the 92 Kriegeskorte et al. (2008) images (175 px, shown at 2.9 degrees),
read from ``../shared/data`` (``BRAINSCORE_DATA_MIRROR`` overrides); each case runs
:func:`brainscore.benchmarks.screen.place_on_screen` in a subprocess with an empty ``BRAINSCORE_HOME`` and prints its
wall-clock seconds, the subprocess's peak resident memory, the side of the placed images and the bytes the placed
folder takes on disk. Before the canvas was bounded, 999 degrees asked for a 60,284 px canvas per image (10.9 GB):
do not run that case against such a version.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CASE = r"""
import json, resource, sys, time
from pathlib import Path
import pandas as pd
from PIL import Image
from brainscore.benchmarks.screen import place_on_screen
from brainscore.data.stimuli import StimulusSet
folder, n, degrees = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
paths = sorted(folder.glob("img*.png"))[:n]
stimuli = StimulusSet(pd.DataFrame({"stimulus_id": [p.stem for p in paths]}), identifier="perf-k92",
                      stimulus_paths={p.stem: p for p in paths})
start = time.perf_counter()
placed = place_on_screen(stimuli, degrees, 2.9)
seconds = time.perf_counter() - start
files = [placed.get_stimulus(p.stem) for p in paths]
with Image.open(files[0]) as image:
    side = image.size[0]
print(json.dumps({"degrees": degrees, "images": len(paths), "seconds": round(seconds, 2),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "side_px": side, "disk_mb": round(sum(f.stat().st_size for f in files) / 1e6, 2)}))
"""


def main() -> None:
    """Run each case in a fresh process and print one JSON line per case."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--degrees", type=float, nargs="+", default=[8.0, 132.6, 999.0])
    parser.add_argument("--images", type=int, default=20)
    args = parser.parse_args()
    data = Path(os.environ.get("BRAINSCORE_DATA_MIRROR", Path(__file__).resolve().parents[1].parent / "shared" / "data"))
    folder = data / "kriegeskorte2008" / "images92"
    for degrees in args.degrees:
        with tempfile.TemporaryDirectory() as home:
            env = dict(os.environ, BRAINSCORE_HOME=home)
            out = subprocess.run([sys.executable, "-c", CASE, str(folder), str(args.images), str(degrees)], env=env,
                                 capture_output=True, text=True, check=True)
            print(json.dumps(json.loads(out.stdout.strip().splitlines()[-1])), flush=True)


if __name__ == "__main__":
    main()
