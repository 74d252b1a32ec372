"""Layer selection of a model never seen before: where the time goes, side by side with its floor.

Chooses ``--region`` (default V4) of ``--model`` (default ``torchvision:resnet18-untrained``, which has
no stored layer map) from an empty ``BRAINSCORE_HOME`` (a temporary folder unless ``--home`` is
given), exactly as ``brainscore score`` would on first use, and prints:

- the total wall time of the selection (``model.layer_for(region)``);
- its breakdown: loading the selection benchmarks and placing their images on the model's screen,
  the forward passes (with whatever the extractor does per batch: writing layers to disk, or
  reducing them on the fly), writing unreduced layers (a background thread: overlaps the forward
  passes), PCA, and the metric per layer per selection session;
- the floor: one bare forward pass over the same (placed) selection images with every candidate
  layer hooked (hooks keep a reference, nothing more), at the model's batch size, images loaded and
  preprocessed as extraction does;
- the CPU seconds the selection used (all threads), a figure other processes on the machine
  disturb less than wall time, and the load average before and after (``os.getloadavg``).

Usage::

    BRAINSCORE_DATA_MIRROR=../shared/data python perf/selection.py
    BRAINSCORE_DATA_MIRROR=../shared/data python perf/selection.py --model efficientnet-lite0 --json out.json

Timers wrap functions by name where they exist, so the same script measures older and newer
implementations (run it with ``PYTHONPATH`` pointing at either source tree).
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path


class Timers:
    """Seconds per label (summed over calls; thread-safe), and per-(session, layer) metric seconds."""

    def __init__(self):
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.metric: dict[tuple[str, str], float] = {}
        self.session = "?"
        self._lock = threading.Lock()
        self._local = threading.local()

    def wrap(self, owner, name: str, label: str, inside: str | None = None) -> bool:
        """Time every call of ``owner.name`` under ``label`` (outermost call only); False if it does not exist.

        With ``inside``, only calls made while a call timed under that label runs (in this thread).
        """
        original = getattr(owner, name, None)
        if original is None:
            return False
        timers = self

        @functools.wraps(original)
        def timed(*args, **kwargs):
            if inside is not None and not getattr(timers._local, inside, 0):
                return original(*args, **kwargs)
            depth = getattr(timers._local, label, 0)
            setattr(timers._local, label, depth + 1)
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                setattr(timers._local, label, depth)
                if depth == 0:
                    with timers._lock:
                        timers.seconds[label] += time.perf_counter() - start
                        timers.calls[label] += 1

        setattr(owner, name, timed)
        return True


def instrument(timers: Timers) -> None:
    """Wrap the functions layer selection spends its time in (those that exist in this source tree)."""
    from brainscore import registry
    from brainscore.metrics.neural import regression
    from brainscore.models import candidates, extraction
    from brainscore.models.extraction import core as extraction_core
    from brainscore.scoring import selection

    load = "load benchmarks, place images on screen"
    timers.wrap(registry, "load_benchmark", load)
    timers.wrap(selection, "place_on_screen", load)
    timers.wrap(extraction.ActivationsExtractor, "_run", "forward passes (incl. per-batch work)")
    timers.wrap(extraction_core.NpyWriter, "append", "write unreduced layers (writer thread)")
    timers.wrap(extraction_core.NpyWriter, "commit", "write unreduced layers (writer thread)")
    timers.wrap(extraction_core, "expand_rows", "write unreduced layers (duplicate images)")
    import scipy.linalg

    pca = "PCA (read the layer, Gram matrix, eigh)"
    timers.wrap(candidates, "gram_pca", pca)
    timers.wrap(scipy.linalg, "eigh", "PCA: of which eigh", inside=pca)   # gram_pca imports it at each call
    if hasattr(candidates, "_RowSink"):
        timers.wrap(candidates._RowSink, "append", "hold unreduced rows in memory or a temporary file (writer thread)")

    original_features = selection.selection_features

    @functools.wraps(original_features)
    def features(identifier, candidates):
        timers.session = identifier
        return original_features(identifier, candidates)

    selection.selection_features = features
    original_call = regression.CrossRegressedCorrelation.__call__

    def metric(self, source, target):
        start = time.perf_counter()
        try:
            return original_call(self, source, target)
        finally:
            layer = str(source["layer"].values[0]) if "layer" in source.coords else "?"
            timers.metric[(timers.session, layer)] = time.perf_counter() - start

    regression.CrossRegressedCorrelation.__call__ = metric


def selection_stimuli(region: str, candidates) -> list[Path]:
    """The distinct (placed) image files the selection of ``region`` shows the model, in order."""
    from brainscore import registry
    from brainscore.benchmarks.screen import place_on_screen
    from brainscore.scoring.selection import selection_benchmarks

    files: dict[str, Path] = {}
    for identifier in selection_benchmarks()[region]:
        benchmark = registry.load_benchmark(identifier)
        stimuli = place_on_screen(benchmark.stimulus_set, target_visual_degrees=candidates.visual_degrees(),
                                  source_visual_degrees=benchmark.visual_degrees)
        for stimulus_id in sorted(map(str, stimuli["stimulus_id"])):
            path = Path(stimuli.get_stimulus(stimulus_id))
            files.setdefault(str(path.resolve()), path)
    return list(files.values())


def floor(model, files: list[Path]) -> float:
    """Seconds of one bare forward pass over ``files`` with every candidate layer hooked (outputs discarded)."""
    import torch

    from brainscore.models.extraction import get_module

    extractor = model.activations_model
    extractor._prepare()
    network = extractor.model
    handles = [get_module(network, layer).register_forward_hook(lambda _m, _i, _o: None)
               for layer in model.layers if layer != "logits"]
    try:
        start = time.perf_counter()
        with torch.inference_mode():
            for first in range(0, len(files), extractor.batch_size):
                network(extractor.preprocessing(files[first:first + extractor.batch_size]).to(extractor.device))
        return time.perf_counter() - start
    finally:
        for handle in handles:
            handle.remove()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="torchvision:resnet18-untrained")
    parser.add_argument("--region", default="V4")
    parser.add_argument("--home", type=Path, default=None,
                        help="BRAINSCORE_HOME to use (default: a new empty temporary folder)")
    parser.add_argument("--no-floor", action="store_true",
                        help="skip the floor (it does not depend on the selection's implementation)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here as JSON")
    args = parser.parse_args(argv)
    home = args.home or Path(tempfile.mkdtemp(prefix="brainscore-selection-perf-"))
    os.environ["BRAINSCORE_HOME"] = str(home)
    import brainscore.models.extraction  # noqa: F401 - before torch: its threading settings
    import brainscore

    load_before = os.getloadavg()
    timers = Timers()
    instrument(timers)
    model = brainscore.load_model(args.model)
    if args.region in model.region_layer_map:
        print(f"{args.model} has a stored layer for {args.region}; nothing to select", file=sys.stderr)
        return 1
    import resource

    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    layer = model.layer_for(args.region)
    total = time.perf_counter() - start
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    scores = model.layer_scores[args.region]
    files = selection_stimuli(args.region, model.candidates())
    # the floor after the selection: the placed images are on disk and the page cache is warm for both
    bare = float("nan") if args.no_floor else floor(model, files)
    load_after = os.getloadavg()
    import torch

    print(f"# layer selection: {args.model}, region {args.region}, {len(model.layers)} candidate layers, "
          f"{len(files)} selection images, batch {model.activations_model.batch_size}, "
          f"{torch.get_num_threads()} torch threads")
    print(f"load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    print()
    print("| stage | seconds | calls |")
    print("|---|---:|---:|")
    for label, seconds in timers.seconds.items():
        print(f"| {label} | {seconds:.1f} | {timers.calls[label]} |")
    metric_total = sum(timers.metric.values())
    print(f"| metric (PLS), all layers and sessions | {metric_total:.1f} | {len(timers.metric)} |")
    print(f"| **total layer selection** | **{total:.1f}** | |")
    print(f"| CPU seconds of the selection (all threads; less sensitive to other processes) | {cpu:.1f} | |")
    print(f"| floor: one bare forward pass, every candidate layer hooked | {bare:.1f} | |")
    print(f"| total / floor | {total / bare:.2f} | |")
    print()
    sessions = sorted({session for session, _ in timers.metric})
    print("| layer | score | " + " | ".join(f"metric s, {s}" for s in sessions) + " |")
    print("|---|---:|" + "---:|" * len(sessions))
    for name in model.layers:
        cells = " | ".join(f"{timers.metric.get((s, name), float('nan')):.2f}" for s in sessions)
        mark = " (chosen)" if name == layer else ""
        print(f"| {name}{mark} | {scores[name]:.10f} | {cells} |")
    if args.json:
        args.json.write_text(json.dumps({
            "model": args.model, "region": args.region, "layer": layer, "scores": scores, "total_s": total,
            "floor_s": bare, "cpu_s": cpu, "stages_s": dict(timers.seconds),
            "metric_s": {f"{s}|{name}": v for (s, name), v in timers.metric.items()},
            "load_before": load_before, "load_after": load_after}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
