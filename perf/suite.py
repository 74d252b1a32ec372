"""The benchmark suite as a table: data, metric, ceiling (computed on the real data), parent, and a model's score;
and, with ``--speed``, how fast the whole suite is scored.

Regenerates the table of ``docs/benchmarks.md``::

    BRAINSCORE_DATA_MIRROR=../shared/data python perf/suite.py                 # ceilings only
    BRAINSCORE_DATA_MIRROR=../shared/data python perf/suite.py --model efficientnet-lite0
    python perf/suite.py --benchmark 'Geirhos2021*' --json suite.json

Ceilings are cached by content (``$BRAINSCORE_HOME/cache/ceilings``), so a second run is quick. A
benchmark that fails (missing data, a model that cannot do its task) gets its error in the table
instead of a number, and the run goes on.

``--speed`` prints, side by side in one run, for each ``--speed-model`` (default EfficientNet-Lite0 and
the untrained torchvision ResNet-18, `torchvision:resnet18-untrained`, which has no stored layer map)::

    BRAINSCORE_DATA_MIRROR=../shared/data python perf/suite.py --speed

(a) the floor: one bare forward pass (files loaded and preprocessed, the network run at its batch
size, outputs discarded) over every distinct input of every benchmark of the suite (each image placed on
the model's screen as its benchmark places it: one file at two sizes is two inputs; ``distinct_inputs``); (b)
``brainscore run --benchmarks '*' --workers 2`` from an empty cache; (c) the same pairs as one
``brainscore score`` call after the other, from another empty cache; and the task-seconds (b) spent
on layer selection. Each of (b) and (c) starts its own ``BRAINSCORE_HOME`` in a temporary folder.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
import traceback
from pathlib import Path

import numpy as np

import brainscore


def describe(benchmark) -> tuple[str, str]:
    """(data, metric) of a benchmark, in words, from its attributes (loads its data)."""
    from brainscore.benchmarks.behavioral import AccuracyBenchmark, ErrorConsistencyBenchmark, ShapeBiasBenchmark
    from brainscore.benchmarks.neural import NeuralBenchmark
    from brainscore.benchmarks.rsa import RSABenchmark

    if isinstance(benchmark, RSABenchmark):
        rdms = benchmark.rdms
        what = "RDM" if rdms.sizes["rdm"] == 1 else f"{rdms.sizes['rdm']} RDMs"
        return (f"`{rdms.attrs.get('identifier')}` ({what}, {rdms.sizes['presentation']} images, "
                f"{benchmark.visual_degrees:g}°)", "rdm (Spearman of RDM upper triangles), mean over RDMs")
    from brainscore.benchmarks.readout_task import ReadoutTaskBenchmark

    if isinstance(benchmark, ReadoutTaskBenchmark):
        trials = benchmark.assembly
        metric = {"AccuracyDistance": "accuracy_distance", "ErrorConsistency": "error_consistency (Cohen's kappa)"}.get(
            type(benchmark.metric).__name__, type(benchmark.metric).__name__)
        return (f"`{trials.attrs.get('identifier')}` ({len(set(trials['subject'].values))} subjects x "
                f"{len(set(trials['stimulus_id'].values))} images scored of {len(benchmark.stimulus_set)}, "
                f"{benchmark.visual_degrees:g}°)", f"{metric} of a readout of `{benchmark.label_coord}` "
                f"({benchmark.n_folds} exemplar folds), ceiled, clipped to [0, 1]")
    if isinstance(benchmark, ErrorConsistencyBenchmark):
        trials = benchmark.assembly
        subjects = len(set(trials["subject"].values))
        return (f"`{trials.attrs.get('identifier')}` ({subjects} subjects x {len(set(trials['stimulus_id'].values))} "
                f"images, {benchmark.visual_degrees:g}°)", "error_consistency (Cohen's kappa), ceiled, clipped to [0, 1]")
    if isinstance(benchmark, ShapeBiasBenchmark):
        return (f"`{benchmark.stimulus_set.identifier}` ({len(benchmark.stimulus_set)} images, unplaced)",
                benchmark.metric_identifier)
    if isinstance(benchmark, AccuracyBenchmark):
        return (f"`{benchmark.stimulus_set.identifier}` ({len(benchmark.stimulus_set)} images, "
                f"{benchmark.visual_degrees:g}°, {benchmark.number_of_trials} trials)", "accuracy (top-1)")
    if isinstance(benchmark, NeuralBenchmark):
        recordings = benchmark.recordings
        metric = getattr(benchmark.metric, "identifier", None) or type(benchmark.metric).__name__
        ceiled = "r²/ceiling" if benchmark._ceiling_func is not None else "r² (no ceiling)"
        return (f"`{recordings.attrs.get('identifier')}` ({recordings.sizes['neuroid']} neuroids, "
                f"{len(set(recordings['stimulus_id'].values))} images, {benchmark.visual_degrees:g}°)",
                f"{metric}, {ceiled}")
    from brainscore.benchmarks.properties import PropertiesBenchmark

    if isinstance(benchmark, PropertiesBenchmark):
        data = benchmark.assembly
        name = benchmark.metric.property_name
        counted = int((~np.isnan(data.sel(neuronal_property=name).values)).sum())
        cells = f"{counted} cells" if counted == data.sizes["neuroid"] else f"{counted} of {data.sizes['neuroid']} cells"
        return (f"`{data.attrs.get('identifier')}` ({cells}; gratings `{benchmark.stimulus_set.identifier}`, "
                f"{benchmark.visual_degrees:g}°)", f"ks_similarity of `{name}`, / ceiling")
    return "", type(benchmark).__name__


def _number(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def row(identifier: str, model: str | None) -> dict:
    """One row of the table; errors are reported in the row, not raised."""
    result = {"identifier": identifier}
    try:
        benchmark = brainscore.load_benchmark(identifier)
        result.update(parent=benchmark.parent, version=benchmark.version)
        result["data"], result["metric"] = describe(benchmark)
        ceiling = benchmark.ceiling
        result["ceiling"] = _number(ceiling)
        result["ceiling_note"] = ceiling.attrs.get("note")
        if "lower_bound_loo" in ceiling.attrs:
            result["ceiling_lower_bound_loo"] = _number(ceiling.attrs["lower_bound_loo"])
    except Exception as error:  # noqa: BLE001 - the table reports it
        result["error"] = f"{type(error).__name__}: {error}"
        return result
    if model:
        start = time.perf_counter()
        try:
            score = brainscore.score(model, identifier)
            result["score"] = _number(score)
            result["raw"] = _number(score.attrs.get("raw"))
            result["layers"] = score.attrs.get("layers")
        except Exception as error:  # noqa: BLE001
            result["score_error"] = f"{type(error).__name__}: {error}"
            traceback.print_exc(file=sys.stderr)
        result["score_duration_s"] = round(time.perf_counter() - start, 1)
    return result


def markdown(rows: list[dict], model: str | None) -> str:
    """The rows as a markdown table."""
    header = ["identifier", "data", "metric", "ceiling", "parent"] + ([f"{model}"] if model else [])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        if "error" in r:
            lines.append(f"| `{r['identifier']}` | error: {r['error'][:120]} |" + " |" * (len(header) - 2))
            continue
        ceiling = "" if r.get("ceiling") is None else f"{r['ceiling']:.4f}"
        if r.get("ceiling_note"):
            ceiling = "1 (none)"
        elif r.get("ceiling_lower_bound_loo") is not None:
            ceiling += f" (loo {r['ceiling_lower_bound_loo']:.3f})"
        cells = [f"`{r['identifier']}`", r["data"], r["metric"], ceiling, f"`{r['parent']}`"]
        if model:
            score = r.get("score")
            cells.append(f"{score:.4f}" if score is not None else f"error: {r.get('score_error', '')[:80]}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def distinct_images(benchmarks: list[str]) -> list[Path]:
    """Every distinct image file the benchmarks show a model (their stimulus sets, unplaced)."""
    files: dict[str, Path] = {}
    for identifier in benchmarks:
        stimuli = brainscore.load_benchmark(identifier).stimulus_set
        for stimulus_id in stimuli["stimulus_id"]:
            path = Path(stimuli.get_stimulus(stimulus_id))
            files.setdefault(str(path.resolve()), path)
    return list(files.values())


def distinct_inputs(benchmarks: list[str], model_identifier: str) -> list[Path]:
    """Every distinct image the benchmarks show ``model_identifier``: each stimulus placed on the model's screen as
    its benchmark places it (``place_on_screen`` at the benchmark's visual degrees; unplaced where it has none).

    One file shown at two sizes is two inputs of the network (Geirhos 2021's cue-conflict images at 3 degrees
    and Hermann 2020's, unplaced): no run can do with fewer forward passes than this list has images, while
    :func:`distinct_images` counts that file once. The placed files are written (and cached) under
    ``BRAINSCORE_HOME`` before any timing.
    """
    from brainscore.benchmarks.screen import place_on_screen

    target = brainscore.load_model(model_identifier).visual_degrees()
    files: dict[str, Path] = {}
    for identifier in benchmarks:
        benchmark = brainscore.load_benchmark(identifier)
        stimuli = benchmark.stimulus_set
        source = getattr(benchmark, "visual_degrees", None)
        if source is not None:
            stimuli = place_on_screen(stimuli, target_visual_degrees=target, source_visual_degrees=source)
        for stimulus_id in stimuli["stimulus_id"]:
            path = Path(stimuli.get_stimulus(stimulus_id))
            files.setdefault(str(path.resolve()), path)
    return list(files.values())


def forward_floor(model_identifier: str, files: list[Path], device: str | None = None) -> float:
    """Seconds of one bare forward pass over ``files`` at the model's batch size (loading and preprocessing included).

    ``device`` (e.g. ``"cuda"``): the network runs there, each batch copied to it (the time waits for the device).
    """
    # the model first: importing brainscore's extraction before torch sets torch's threading up as
    # extraction runs it (passive OpenMP waits, huge pages), so the floor is measured the same way
    extractor = brainscore.load_model(model_identifier).activations_model
    import torch

    network = extractor.model.eval()
    if extractor.preprocessing.channels_last:
        network = network.to(memory_format=torch.channels_last)
    batch = extractor.batch_size
    if device is not None:
        from brainscore.models.extraction.pytorch import DEFAULT_GPU_BATCH_SIZE

        network, batch = network.to(device), DEFAULT_GPU_BATCH_SIZE
    start = time.perf_counter()
    with torch.inference_mode():
        for first in range(0, len(files), batch):
            images = extractor.preprocessing(files[first:first + batch])
            network(images.to(device) if device is not None else images)
    if device is not None:
        torch.cuda.synchronize()
    return time.perf_counter() - start


def _timed(command: list[str], home: Path) -> tuple[float, int, str, str]:
    import os
    import subprocess

    env = {**os.environ, "BRAINSCORE_HOME": str(home)}
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    return time.perf_counter() - start, done.returncode, done.stderr, done.stdout


def _scores(stdout: str) -> dict[tuple[str, str], tuple]:
    """(model, benchmark) -> (status, score, raw, ceiling, error) from JSON lines."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("{"):
            item = json.loads(line)
            out[(item["model"], item["benchmark"])] = tuple(item.get(k) for k in ("status", "score", "raw", "ceiling", "error"))
    return out


def _hex(values: tuple) -> tuple:
    return tuple(float.hex(v) if isinstance(v, float) else v for v in values)


def speed(models: list[str], workers: int = 2, benchmarks_spec: str = "*",
          pairs_out: Path | None = None) -> str:
    """The (a) floor, (b) run, (c) sequential score table (markdown) for ``models`` on the benchmarks of ``benchmarks_spec``.

    Each entry of ``models`` is one row: a model, or several comma-separated (``efficientnet-lite0,pixels``),
    which (b) runs as one grid (``brainscore run --models efficientnet-lite0,pixels``) and (a) and (c) take
    one model after the other. Every pair's (status, score, raw, ceiling, error) from (b) is compared with (c)'s
    bit for bit; the pairs that differ are printed, and with ``pairs_out`` every pair's numbers are
    written there as JSON.
    """
    import tempfile

    import brainscore.models.extraction  # noqa: F401 - before torch: its threading settings (see there)
    from brainscore.runner.grid import expand

    benchmarks = expand(benchmarks_spec, "benchmark")
    files = distinct_images(benchmarks)
    rows = ["| model | image files / inputs | (a) bare forward pass (s) | (b) `brainscore run`, 2 workers (s) | of "
            "which layer selection (task-s) | (c) sequential `brainscore score` (s) | (b)/(a) | (c)/(b) | pairs "
            "identical |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    compared = []
    for spec in models:
        group = [m.strip() for m in spec.split(",") if m.strip()]
        floor, n_inputs = 0.0, 0
        for model in group:
            inputs = distinct_inputs(benchmarks, model)
            n_inputs += len(inputs)
            seconds = forward_floor(model, inputs)
            print(f"{model}: (a) {seconds:.0f} s over {len(inputs)} inputs ({len(files)} image files)",
                  file=sys.stderr, flush=True)
            floor += seconds
        with tempfile.TemporaryDirectory() as home:
            run_s, run_rc, run_err, run_out = _timed([sys.executable, "-m", "brainscore", "run", "--models", spec,
                                                      "--benchmarks", benchmarks_spec, "--workers", str(workers),
                                                      "--json", "--no-progress"], Path(home))
        stats = {}
        for line in run_err.splitlines():
            if line.startswith("task-seconds per stage: "):
                stats = {part.rsplit(" ", 1)[0]: float(part.rsplit(" ", 1)[1])
                         for part in line.split(": ", 1)[1].split(", ")}
        print(f"{spec}: (b) {run_s:.0f} s (exit {run_rc}) task-seconds {stats}", file=sys.stderr, flush=True)
        sequential, alone = 0.0, {}
        with tempfile.TemporaryDirectory() as home:
            for model in group:
                for benchmark in benchmarks:
                    seconds, _, _, out = _timed([sys.executable, "-m", "brainscore", "score", "--model", model,
                                                 "--benchmark", benchmark, "--json"], Path(home))
                    sequential += seconds
                    found = _scores(out)
                    alone.update(found or {(model, benchmark): ("failed", None, None, None, None)})
        grid = _scores(run_out)
        same = 0
        for pair, values in alone.items():
            ran = grid.get(pair)
            identical = ran is not None and _hex(ran) == _hex(values)
            same += identical
            compared.append({"model": pair[0], "benchmark": pair[1], "run": ran, "score": values,
                             "identical": identical})
            if not identical:
                print(f"  differs: {pair}: run {ran} score {values}", file=sys.stderr, flush=True)
        print(f"{spec}: (c) {sequential:.0f} s; (b) and (c) give identical numbers on {same} of {len(alone)} "
              f"pairs ({len(grid)} in (b))", file=sys.stderr, flush=True)
        rows.append(f"| `{spec}` | {len(files)} / {n_inputs} | {floor:.0f} | {run_s:.0f} | {stats.get('select', 0):.0f} | "
                    f"{sequential:.0f} | {run_s / floor:.2f} | {sequential / run_s:.2f} | {same} of {len(alone)} |")
    if pairs_out is not None:
        pairs_out.write_text(json.dumps(compared, indent=1))
    return "\n".join(rows) + "\n"


def floors(models: list[str], benchmarks_spec: str = "*") -> str:
    """Both forward-pass floors side by side, one after the other in this process, for each of ``models`` (markdown):
    over every distinct image file (:func:`distinct_images`, the floor before issue 39's measure was corrected)
    and over every distinct input (:func:`distinct_inputs`, what (a) of :func:`speed` times)."""
    import brainscore.models.extraction  # noqa: F401 - before torch: its threading settings (see there)
    from brainscore.runner.grid import expand

    benchmarks = expand(benchmarks_spec, "benchmark")
    files = distinct_images(benchmarks)
    rows = ["| model | image files | floor over files (s) | inputs | floor over inputs (s) | ms per image, files / inputs |",
            "|---|---:|---:|---:|---:|---:|"]
    for model in models:
        inputs = distinct_inputs(benchmarks, model)  # placed before any timing
        by_files = forward_floor(model, files)
        by_inputs = forward_floor(model, inputs)
        print(f"{model}: floor {by_files:.0f} s over {len(files)} files, {by_inputs:.0f} s over {len(inputs)} inputs",
              file=sys.stderr, flush=True)
        rows.append(f"| `{model}` | {len(files)} | {by_files:.0f} | {len(inputs)} | {by_inputs:.0f} | "
                    f"{1000 * by_files / len(files):.1f} / {1000 * by_inputs / len(inputs):.1f} |")
    return "\n".join(rows) + "\n"


#: Benchmarks whose data ``../shared/tools/device-payload`` bundles for a bare GPU machine (read its header).
GPU_BENCHMARKS = "Cowley2026*,Kriegeskorte2008*,Kiani*,Mur*,Marques2020*"


def gpu_speed(models: list[str], benchmarks_spec: str = GPU_BENCHMARKS) -> str:
    """Side by side on one node (issue 24): the forward-pass floor on the CPU and on the GPU, ``brainscore run``
    on the CPU and ``brainscore run --device cuda``, each run from an empty cache, for each of ``models``.

    Returns a markdown table, or a line saying why it was skipped when torch sees no CUDA GPU.
    """
    import tempfile

    import brainscore.models.extraction  # noqa: F401 - before torch: its threading settings (see there)
    import torch

    if not torch.cuda.is_available():
        return ("--gpu skipped: torch sees no CUDA GPU (torch.cuda.is_available() is False); run it on a GPU "
                "machine, e.g. with the data of ../shared/tools/device-payload\n")
    from brainscore.runner.grid import expand

    benchmarks = expand(benchmarks_spec, "benchmark")
    files = distinct_images(benchmarks)
    card = torch.cuda.get_device_name(0)
    rows = [f"GPU: {card}; {len(benchmarks)} benchmarks, {len(files)} images",
            "| model | floor CPU (s) | floor GPU (s) | `brainscore run` CPU (s) | `brainscore run --device cuda` (s) "
            "| CPU/GPU run | pairs done CPU / GPU |", "|---|---:|---:|---:|---:|---:|---|"]
    for model in models:
        floors = [forward_floor(model, files), forward_floor(model, files, device="cuda")]
        runs = []
        for extra in ([], ["--device", "cuda"]):
            with tempfile.TemporaryDirectory() as home:
                seconds, _, _, out = _timed([sys.executable, "-m", "brainscore", "run", "--models", model,
                                             "--benchmarks", benchmarks_spec, "--json", "--no-progress", *extra],
                                            Path(home))
            done = sum(values[0] == "done" for values in _scores(out).values())
            runs.append((seconds, done))
            print(f"{model} {extra or 'cpu'}: {seconds:.1f} s, {done} pairs done", file=sys.stderr, flush=True)
        rows.append(f"| `{model}` | {floors[0]:.2f} | {floors[1]:.2f} | {runs[0][0]:.1f} | {runs[1][0]:.1f} | "
                    f"{runs[0][0] / runs[1][0]:.2f} | {runs[0][1]} / {runs[1][1]} of {len(benchmarks)} |")
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed", action="store_true", help="time the floor, `brainscore run` and sequential "
                                                             "`brainscore score` on every benchmark")
    parser.add_argument("--speed-model", action="append", default=None,
                        help="model for --speed, or several comma-separated run as one grid (repeatable; default "
                             "efficientnet-lite0 and torchvision:resnet18-untrained)")
    parser.add_argument("--model", default=None, help="also score this model on every benchmark")
    parser.add_argument("--benchmark", default=None, help="shell-style pattern of benchmark identifiers (with "
                                                          "--speed: identifiers and patterns, comma-separated)")
    parser.add_argument("--json", type=Path, default=None, help="write the rows as JSON here (with --speed: every "
                                                                 "pair's numbers from (b) and (c))")
    parser.add_argument("--gpu", action="store_true", help="floor, `brainscore run` on the CPU and with --device "
                                                           "cuda, side by side on the payload's benchmarks (skips "
                                                           "without a GPU)")
    parser.add_argument("--floors", action="store_true", help="time only the floor, over distinct image files and over "
                                                              "distinct inputs, side by side")
    args = parser.parse_args(argv)
    if args.floors:
        print(floors(args.speed_model or ["efficientnet-lite0", "torchvision:resnet18-untrained"],
                     args.benchmark or "*"), end="")
        return 0
    if args.gpu:
        print(gpu_speed(args.speed_model or ["efficientnet-lite0", "torchvision:resnet18-untrained"],
                        args.benchmark or GPU_BENCHMARKS), end="")
        return 0
    if args.speed:
        print(speed(args.speed_model or ["efficientnet-lite0", "torchvision:resnet18-untrained"],
                    benchmarks_spec=args.benchmark or "*", pairs_out=args.json))
        return 0
    rows = []
    for identifier in brainscore.list_benchmarks(args.benchmark):
        rows.append(row(identifier, args.model))
        print(json.dumps(rows[-1]), file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print(markdown(rows, args.model))
    return 0


if __name__ == "__main__":
    sys.exit(main())
