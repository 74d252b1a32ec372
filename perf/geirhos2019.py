"""Geirhos2019 instructed benchmarks: scores of real models, a second run from the cache, and what exemplar folds do.

Scores each model on the four ``Geirhos2019*instructed-*`` benchmarks with :func:`brainscore.score` (bootstrap
included), prints the score, raw, ceiling, the model's held-out accuracy on the instructed cue, the subjects'
mean accuracy and the model's shape/texture answers, then scores everything again and prints both runs' times
side by side (the second is served from the cache: activations, placed images, fitted readouts, ceilings)::

    BRAINSCORE_DATA_MIRROR=../shared/data python perf/geirhos2019.py
    python perf/geirhos2019.py --models efficientnet-lite0 --leakage

``--leakage`` also fits each model's shape readout on a random split of the images (2/3 fit, 1/3 test, seed 0)
and on the benchmark's exemplar folds (fold 0 held out), and prints both held-out shape accuracies: a random
split lets the readout see a test image's shape photograph in other textures.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

import brainscore

BENCHMARKS = [f"Geirhos2019{instruction}instructed-{metric}" for metric in ("accuracy_distance", "error_consistency")
              for instruction in ("shape", "texture")]
MODELS = ["efficientnet-lite0", "pixels", "torchvision:resnet18-untrained"]
ATTRS = ("accuracy", "human_accuracy", "shape_match", "texture_match", "shape_bias")


def score_all(models: list[str]) -> dict[tuple[str, str], float]:
    seconds = {}
    for model in models:
        for identifier in BENCHMARKS:
            start = time.perf_counter()
            score = brainscore.score(model, identifier)
            seconds[model, identifier] = time.perf_counter() - start
            extra = " ".join(f"{name} {float(score.attrs[name]):.4f}" for name in ATTRS if name in score.attrs)
            print(f"{model:32} {identifier:48} {float(score):.4f}  raw {float(score.attrs['raw']):.4f}  ceiling "
                  f"{float(score.attrs['ceiling']):.4f}  {extra}  ({seconds[model, identifier]:.1f} s)", flush=True)
    return seconds


def leakage(model_identifier: str) -> None:
    """Held-out shape accuracy of the model's readout: random split against exemplar fold 0."""
    from brainscore.benchmarks.screen import place_on_screen
    from brainscore.models.readouts import ProbabilitiesClassifier

    benchmark = brainscore.load_benchmark("Geirhos2019shapeinstructed-accuracy_distance")
    model = brainscore.load_model(model_identifier)
    stimuli = place_on_screen(benchmark.stimulus_set, target_visual_degrees=model.visual_degrees(),
                              source_visual_degrees=benchmark.visual_degrees)
    features = model.activations_model(stimuli, [model.behavioral_readout_layer]).values
    labels = stimuli["original_image_category"].astype(str).to_numpy()
    conflict = labels != stimuli["conflict_image_category"].astype(str).to_numpy()
    order = np.random.default_rng(0).permutation(len(labels))
    random_test = np.zeros(len(labels), dtype=bool)
    random_test[order[: len(labels) // 3]] = True
    for name, test in (("random split", random_test), ("exemplar fold 0", benchmark.folds == 0)):
        start = time.perf_counter()
        readout = ProbabilitiesClassifier().fit(features[~test], labels[~test])
        answers = np.asarray(readout.labels_)[np.argmax(readout.predict_proba(features[test]), axis=1)]
        accuracy = np.mean((answers == labels[test])[conflict[test]])
        print(f"{model_identifier:32} shape readout, {name:16} held-out accuracy {accuracy:.4f} on "
              f"{conflict[test].sum()} cue-conflict images ({time.perf_counter() - start:.1f} s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--leakage", action="store_true", help="compare a random split with the exemplar folds")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores; BRAINSCORE_HOME "
          f"{os.environ.get('BRAINSCORE_HOME', '~/.brainscore')}", flush=True)
    first = score_all(args.models)
    print(f"second run (load average {os.getloadavg()[0]:.2f}):", flush=True)
    second = score_all(args.models)
    for model in args.models:
        a = sum(first[model, b] for b in BENCHMARKS)
        b = sum(second[model, b] for b in BENCHMARKS)
        print(f"{model:32} first run {a:7.1f} s, second {b:6.1f} s, ratio {a / b:5.1f}x", flush=True)
    if args.leakage:
        for model in args.models:
            leakage(model)


if __name__ == "__main__":
    main()
