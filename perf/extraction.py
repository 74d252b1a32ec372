"""Throughput and peak memory of activation extraction, against the bare forward pass of the same network.

Usage::

    python perf/extraction.py                      # all 1,280 cue-conflict images (minutes)
    python perf/extraction.py --limit 256          # a quick run
    python perf/extraction.py --sweep              # also time the bare forward pass per batch size
    python perf/extraction.py --batch-size 32 --channels-last --threads 2

What is measured, each in a fresh subprocess (so peak memory is the job's own):

1. ``bare``: EfficientNet-Lite0's forward pass on the already-preprocessed images, in the same
   batches, under ``torch.inference_mode()``, no hooks: the floor any extraction is compared to.
2. ``extract``: ``ActivationsExtractor.extract`` of all 18 candidate layers on the image files:
   load + preprocess (in a background thread), forward with hooks, copy each layer to disk,
   into an empty cache. Overhead = extract / bare - 1 (target <= 10%).
3. ``cached``: the same call again: every layer is served from the cache, no forward pass.

Also reported: the network's GFLOP per image (multiply-adds of every convolution and linear
layer x 2, counted with hooks), the achieved GFLOP/s, the machine's float32 matmul peak
(2048 x 2048 products), peak resident memory of each job, and the memory the reference would
hold (all layers of all images at once, float32).

Data: the 1,280 Geirhos et al. (2019) cue-conflict images,
``$BRAINSCORE_DATA_MIRROR`` (default ``../shared/data``)
``/geirhos2019_texture_vs_shape/stimuli/style-transfer-preprocessed-512/<category>/*.png``.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = Path(os.environ.get("BRAINSCORE_DATA_MIRROR", REPO.parent / "shared" / "data")).resolve()
IDENTIFIER = "efficientnet-lite0"


def _images(data: Path, limit: int | None) -> list[str]:
    files = sorted(glob.glob(str(data / "geirhos2019_texture_vs_shape" / "stimuli" / "style-transfer-preprocessed-512"
                                 / "*" / "*.png")))
    if not files:
        raise SystemExit(f"no cue-conflict images under {data}; set BRAINSCORE_DATA_MIRROR")
    return files[:limit] if limit else files


def _stimuli(files):
    from brainscore.data import StimulusSet

    ids = [f"{Path(f).parent.name}/{Path(f).stem}" for f in files]
    return StimulusSet({"stimulus_id": ids}, stimulus_paths=dict(zip(ids, files)), identifier="cue-conflict")


def _peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _gflop_per_image(model, size: int) -> float:
    import torch

    macs = [0]

    def count(module, inputs, output):
        if isinstance(module, torch.nn.Conv2d):
            kernel = module.in_channels // module.groups * module.kernel_size[0] * module.kernel_size[1]
            macs[0] += output.numel() * kernel
        elif isinstance(module, torch.nn.Linear):
            macs[0] += output.numel() * module.in_features

    handles = [m.register_forward_hook(count) for m in model.modules()
               if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    with torch.inference_mode():
        model(torch.zeros(1, 3, size, size))
    for handle in handles:
        handle.remove()
    return 2 * macs[0] / 1e9


def _matmul_peak(threads: int) -> float:
    import torch

    torch.set_num_threads(threads)
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    for _ in range(3):
        a @ b
    best = float("inf")
    for _ in range(10):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * 2048 ** 3 / best / 1e9


def worker(args) -> dict:
    """One measurement in this process; prints a JSON line."""
    from brainscore.plugins.models.efficientnet_lite import model as lite  # before torch: sets THP

    import os

    import torch

    torch.set_num_threads(args.threads)
    os.environ["BRAINSCORE_TORCH_THREADS"] = str(args.threads)  # the extractor runs the network with it
    from brainscore.models.extraction import ActivationsExtractor
    from brainscore.models.preprocessing import Preprocessing

    files = _images(Path(args.data), args.limit)
    net = lite.get_model(IDENTIFIER)
    preprocessing = Preprocessing("imagenet", 224, channels_last=args.channels_last)
    if args.channels_last:
        net = net.to(memory_format=torch.channels_last)
    result = {"job": args.worker, "images": len(files), "batch_size": args.batch_size, "threads": args.threads,
              "channels_last": args.channels_last, "thp": os.environ.get("THP_MEM_ALLOC_ENABLE"),
              "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")}
    if args.worker == "bare":
        start, cpu = time.perf_counter(), time.process_time()
        batches = [preprocessing(files[i:i + args.batch_size]) for i in range(0, len(files), args.batch_size)]
        result["preprocess_s"], result["preprocess_cpu_s"] = time.perf_counter() - start, time.process_time() - cpu
        with torch.inference_mode():
            net(batches[0][:2])  # warm-up
            start, cpu = time.perf_counter(), time.process_time()
            for batch in batches:
                net(batch)
        result["seconds"], result["cpu_seconds"] = time.perf_counter() - start, time.process_time() - cpu
        result["gflop_per_image"] = _gflop_per_image(net, 224)
    elif args.worker == "sweep":
        x = preprocessing(files[:64])
        result["ms_per_image"], result["cpu_ms_per_image"] = {}, {}
        with torch.inference_mode():
            for batch_size in (1, 4, 8, 16, 32, 64):
                net(x[:batch_size])
                start, cpu = time.perf_counter(), time.process_time()
                for i in range(0, 64, batch_size):
                    net(x[i:i + batch_size])
                result["ms_per_image"][batch_size] = (time.perf_counter() - start) / 64 * 1e3
                result["cpu_ms_per_image"][batch_size] = (time.process_time() - cpu) / 64 * 1e3
    else:
        stimuli = _stimuli(files)
        stimuli.content_hash()  # hash the files first (also done by the reference's cache lookup)
        extractor = ActivationsExtractor(net, IDENTIFIER, preprocessing, weights_hash=lite.WEIGHTS[IDENTIFIER][2],
                                         batch_size=args.batch_size, progress=False)
        layers = args.layers.split(",") if args.layers else lite.layers(IDENTIFIER)
        with torch.inference_mode():
            net(torch.zeros(2, 3, 224, 224))  # warm-up, as for the bare pass
        baseline = _peak_mb()
        start, cpu = time.perf_counter(), time.process_time()
        features = extractor.extract(stimuli, layers)
        result["seconds"], result["cpu_seconds"] = time.perf_counter() - start, time.process_time() - cpu
        result["forward_passes"] = extractor.forward_passes
        units = sum(f.n_features for f in features.values())
        result["units_per_image"] = units
        result["disk_mb"] = sum(f.path.stat().st_size for f in features.values()) / 2 ** 20
        result["reference_in_memory_mb"] = units * len(files) * 4 / 2 ** 20
        result["baseline_rss_mb"] = baseline
    result["peak_rss_mb"] = _peak_mb()
    print(json.dumps(result), flush=True)
    return result


def _run(job: str, args, home: str) -> dict:
    command = [sys.executable, __file__, "--worker", job, "--data", str(args.data), "--threads", str(args.threads),
               "--batch-size", str(args.batch_size)] + (["--layers", args.layers] if args.layers else []) \
        + (["--limit", str(args.limit)] if args.limit else []) \
        + (["--channels-last"] if args.channels_last else [])
    env = dict(os.environ, BRAINSCORE_HOME=home)
    if args.no_thp:
        env["THP_MEM_ALLOC_ENABLE"] = "0"
    if args.omp_active:
        env["OMP_WAIT_POLICY"] = "ACTIVE"
    out = subprocess.run(command, capture_output=True, text=True, env=env)
    if out.returncode:
        raise SystemExit(f"{job} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="first N images only")
    parser.add_argument("--batch-size", type=int, default=None, help="default: brainscore's DEFAULT_BATCH_SIZE")
    parser.add_argument("--layers", default=None, help="comma-separated layers (default: all 18 candidates)")
    parser.add_argument("--omp-active", action="store_true",
                        help="let OpenMP threads spin at barriers (OpenMP's default) instead of brainscore's PASSIVE")
    parser.add_argument("--no-thp", action="store_true",
                        help="do not back torch's large tensors with transparent huge pages")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--channels-last", action="store_true")
    parser.add_argument("--sweep", action="store_true", help="also time the bare forward pass at batch 1..64")
    parser.add_argument("--sweep-only", action="store_true", help="only the batch-size sweep")
    parser.add_argument("--repeats", type=int, default=1,
                        help="alternate bare and extract runs this many times; medians are reported")
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.batch_size is None:
        from brainscore.models.extraction import DEFAULT_BATCH_SIZE

        args.batch_size = DEFAULT_BATCH_SIZE
    if args.worker:
        worker(args)
        return
    peak = _matmul_peak(args.threads)
    with tempfile.TemporaryDirectory(prefix="brainscore-bench-") as home:
        if args.sweep:
            sweep = _run("sweep", args, home)
            print("bare forward, 64 images, wall ms/image by batch size:",
                  ", ".join(f"{b}: {t:.1f}" for b, t in sweep["ms_per_image"].items()))
            print("bare forward, 64 images, cpu ms/image by batch size: ",
                  ", ".join(f"{b}: {t:.1f}" for b, t in sweep["cpu_ms_per_image"].items()))
            if args.sweep_only:
                return
        bares, extracts = [], []
        for repeat in range(args.repeats):
            bares.append(_run("bare", args, home))
            run_home = os.path.join(home, f"run{repeat}")
            extracts.append(_run("extract", args, run_home))
            cached = _run("cached", args, run_home)
            shutil.rmtree(run_home, ignore_errors=True) if repeat + 1 < args.repeats else None
            print(f"run {repeat}: bare {bares[-1]['seconds']:.1f} s wall / {bares[-1]['cpu_seconds']:.1f} s cpu, "
                  f"extract {extracts[-1]['seconds']:.1f} s wall / {extracts[-1]['cpu_seconds']:.1f} s cpu", flush=True)
    bare = {k: (float(np.median([b[k] for b in bares])) if isinstance(bares[0][k], float) else bares[0][k])
            for k in bares[0]}
    extract = {k: (float(np.median([e[k] for e in extracts])) if isinstance(extracts[0][k], float) else extracts[0][k])
               for k in extracts[0]}
    n = bare["images"]
    gflop = bare["gflop_per_image"]
    rows = [
        ("images", n), ("batch size / threads / channels_last / THP / OMP wait",
                         f"{args.batch_size} / {args.threads} / {args.channels_last} / {bare['thp']} / "
                         f"{bare['omp_wait_policy']}"),
        ("GFLOP per image (conv + linear, x2 MAC)", f"{gflop:.3f}"),
        ("float32 matmul peak (2048^2)", f"{peak:.1f} GFLOP/s"),
        ("preprocess (load + resize + normalise)", f"{bare['preprocess_s'] / n * 1e3:.1f} ms/image"),
        ("bare forward", f"{bare['seconds'] / n * 1e3:.1f} ms/image, {gflop * n / bare['seconds']:.1f} GFLOP/s "
                         f"({100 * gflop * n / bare['seconds'] / peak:.0f}% of matmul peak)"),
        (f"extract {len(args.layers.split(',')) if args.layers else 18} layers (files -> disk cache)",
         f"{extract['seconds'] / n * 1e3:.1f} ms/image, "
                                                    f"{gflop * n / extract['seconds']:.1f} GFLOP/s"),
        ("extraction overhead vs bare forward (wall)", f"{100 * (extract['seconds'] / bare['seconds'] - 1):+.1f}%"),
        ("extraction overhead vs preprocess + forward (cpu time)",
         f"{100 * (extract['cpu_seconds'] / (bare['cpu_seconds'] + bare['preprocess_cpu_s']) - 1):+.1f}%"),
        ("extraction overhead vs preprocess + forward",
         f"{100 * (extract['seconds'] / (bare['seconds'] + bare['preprocess_s']) - 1):+.1f}%"),
        ("second call (all layers cached)", f"{cached['seconds']:.2f} s, {cached['forward_passes']} forward passes"),
        ("units per image (extracted layers)", extract["units_per_image"]),
        ("features on disk", f"{extract['disk_mb']:.0f} MB"),
        ("peak RSS: bare / extract / cached", f"{bare['peak_rss_mb']:.0f} / {extract['peak_rss_mb']:.0f} / "
                                              f"{cached['peak_rss_mb']:.0f} MB"),
        ("peak RSS growth during extract", f"{extract['peak_rss_mb'] - extract['baseline_rss_mb']:.0f} MB"),
        ("reference would hold (all layers x images)", f"{extract['reference_in_memory_mb']:.0f} MB"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
