"""Decoding and resizing a batch of image files, one thread against :data:`DECODE_THREADS` (issue 24).

    PYTHONPATH=src python perf/decode.py [--images 256] [--size 224] [--repeats 3]

Prints the median seconds per batch of ``--images`` real-size (400x400 JPEG) files for one thread
and for the default (the usable cores), and checks the two batches are bit-identical.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import torch
    from PIL import Image

    from brainscore import config
    from brainscore.models import preprocessing

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=256)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for i in range(args.images):
            path = Path(folder) / f"{i}.jpg"
            Image.fromarray(rng.integers(0, 256, (400, 400, 3), dtype=np.uint8)).save(path, quality=90)
            paths.append(path)
        prep = preprocessing.imagenet(args.size)
        results = {}
        for threads in (1, None):
            preprocessing.DECODE_THREADS = threads
            prep(paths[:8])  # warm up
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                batch = prep(paths)
                times.append(time.perf_counter() - start)
            results[threads] = (statistics.median(times), batch)
    one, many = results[1], results[None]
    print(f"{args.images} files of 400x400 to {args.size}: 1 thread {one[0]:.2f} s, "
          f"{config.usable_cores()} threads {many[0]:.2f} s ({one[0] / many[0]:.2f}x); "
          f"bit-identical: {torch.equal(one[1], many[1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
