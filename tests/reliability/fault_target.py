"""A small real scoring run for the SIGKILL fault test (run as a script in a subprocess).

A seeded 3-layer torch network looks at the 92 Kriegeskorte 2008 images placed on its screen (cached
images), its activations are extracted (cached ``.npy``), its RDM is compared with the packaged monkey
IT RDM (cached ``.nc``) by Spearman correlation, and the score is cached as a pickle. Prints the
score as ``float.hex`` on the last line.
"""
from __future__ import annotations

import sys


def main() -> None:
    import torch

    torch.set_num_threads(1)
    import brainscore
    from brainscore.benchmarks.screen import place_on_screen
    from brainscore.caching import Cache, content_key
    from brainscore.metrics.similarity.rdm import RDMMetric
    from brainscore.models.extraction import ActivationsExtractor
    from brainscore.models.preprocessing import Preprocessing

    import os

    if os.environ.get("FAULT_TARGET_READY"):
        print("ready", flush=True)  # imports done: the work (and the kill window) starts here
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 5, stride=4), torch.nn.ReLU(), torch.nn.Conv2d(8, 16, 3, stride=2),
                              torch.nn.Tanh(), torch.nn.AdaptiveAvgPool2d(3), torch.nn.Flatten())
    stimuli = brainscore.load_stimulus_set("Kriegeskorte2008")
    placed = place_on_screen(stimuli, 8, 4)
    extractor = ActivationsExtractor(net, "fault-net", Preprocessing("imagenet", 64), batch_size=4, progress=False)
    features = extractor(placed, ["2", "5"])
    target = brainscore.load_dataset("Kiani2007.IT").isel(rdm=0)
    metric = RDMMetric(dtype="float64")
    key = content_key(test="fault", features=features.values, target=target.values)
    score = Cache("fault-test").get_or_compute(key, lambda: float(metric(features, target)))
    direct = float(metric(features, target))
    if direct != score:
        sys.exit(f"cached score {score!r} differs from the direct one {direct!r}")
    print(float(score).hex())


if __name__ == "__main__":
    main()
