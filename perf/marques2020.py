"""Time and score the seven Marques 2020 V1 property benchmarks for one model, from a fresh store.

Stages, timed one after the other in one process:

1. render the 9097 gratings of ``Marques2020_V1`` into the store (PNG, once);
2. place them on the model's screen (12 -> 8 degrees: centre crop, once);
3. record the model's V1 layer on all of them (one pass, cached);
4. each benchmark: load the cached activations, map receptive fields, calibrate, compute the
   property, bootstrap ``ks_similarity``.

Wall times depend on what else runs on the machine; ``*_cpu_s`` are the process's CPU seconds
(all threads), a bound on the wall time of that stage on one dedicated core.

Usage::

    BRAINSCORE_HOME=$(mktemp -d) BRAINSCORE_DATA_MIRROR=../shared/data BRAINSCORE_OFFLINE=1 \\
        PYTHONPATH=src python perf/marques2020.py --model efficientnet-lite0 [--json out.json]

``--json`` also writes every benchmark's model property values (for the histogram plot,
``perf/marques2020_plot.py``).
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

import brainscore
from brainscore.benchmarks.screen import place_on_screen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="efficientnet-lite0")
    parser.add_argument("--json")
    args = parser.parse_args()
    timings, results = {}, {}

    start, cpu = time.perf_counter(), time.process_time()
    stimuli = brainscore.load_stimulus_set("Marques2020_V1")
    timings["render_s"] = time.perf_counter() - start
    timings["render_cpu_s"] = time.process_time() - cpu
    model = brainscore.load_model(args.model)

    start, cpu = time.perf_counter(), time.process_time()
    placed = place_on_screen(stimuli, target_visual_degrees=model.visual_degrees(), source_visual_degrees=12)
    timings["place_on_screen_s"] = time.perf_counter() - start
    timings["place_on_screen_cpu_s"] = time.process_time() - cpu

    start, cpu = time.perf_counter(), time.process_time()
    model.start_recording("V1", time_bins=[(70, 170)])
    features = model.look_at(placed, number_of_trials=20)
    timings["record_s"] = time.perf_counter() - start
    timings["record_cpu_s"] = time.process_time() - cpu
    timings["images"] = int(features.sizes["presentation"])
    timings["units"] = int(features.sizes["neuroid"])
    timings["forward_passes"] = int(getattr(model.activations_model, "forward_passes", 0))
    del features

    for identifier in sorted(brainscore.list_benchmarks("Marques2020*")):
        benchmark = brainscore.load_benchmark(identifier)
        captured = {}
        property_func = benchmark.property_func

        def keep(responses, stimuli, _func=property_func):
            captured["properties"] = _func(responses, stimuli)
            return captured["properties"]
        benchmark.property_func = keep
        start = time.perf_counter()
        score = benchmark(model)
        properties = captured["properties"]
        name = benchmark.metric.property_name
        results[identifier] = {
            "score": float(score), "raw": float(score.attrs["raw"]), "ceiling": float(score.attrs["ceiling"]),
            "seconds": time.perf_counter() - start, "layer": model.region_layer_map.get("V1"),
            **{k: properties.attrs[k] for k in ("n_units", "n_selected", "n_kept")},
            "values": [None if np.isnan(v) else float(v)
                       for v in properties.sel(neuronal_property=name).values.tolist()],
        }
        print(f"{identifier:55s} {float(score):.4f}  raw {results[identifier]['raw']:.4f}  "
              f"ceiling {results[identifier]['ceiling']:.4f}  units {properties.attrs['n_selected']}/"
              f"{properties.attrs['n_units']} kept {properties.attrs['n_kept']}  "
              f"{results[identifier]['seconds']:.1f} s", flush=True)
    print(json.dumps(timings, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"model": args.model, "timings": timings, "benchmarks": results}, f, indent=1)


if __name__ == "__main__":
    main()
