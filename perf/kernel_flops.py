"""Achieved FLOP/s of each metric kernel: numpy and torch on the CPU, and on a GPU against its peak (issue 24).

Usage::

    python perf/kernel_flops.py                    # sizes for a small machine (about a minute on 2 cores)
    python perf/kernel_flops.py --size issue       # issue 24's sizes (PLS 3200x20000, 10 folds): for a GPU node
    python perf/kernel_flops.py --kernel pls --repeats 5 --markdown

Each kernel's floating-point operations are *counted*, not estimated by hand: the torch path runs
once under ``torch.utils.flop_counter.FlopCounterMode``, which adds up the matrix products
(``mm``, ``bmm``, ``addmm``, ``matmul``; 2 FLOPs per multiply-add). Eigensolvers, sorts and
elementwise work are not counted, so the figures are lower bounds of the work done and the share
of time spent outside the products shows as a lower FLOP/s. numpy runs the same algorithm
(its own loops where torch batches), and is credited with the same count.

On a CUDA GPU each kernel also runs there (synchronised before the clock stops) and is compared with
the card's peak for the kernel's precision (:data:`PEAKS`, NVIDIA's data sheets, dense, no
sparsity). Without a GPU the GPU columns say "not measured".
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

#: Dense peak FLOP/s by card name fragment: (float64 with tensor cores where the card has them, float32
#: without tensor cores). H100 SXM5 and H200: 67 TFLOP/s FP64 tensor core and 67 FP32; H100 PCIe: 51 / 51;
#: A100: 19.5 / 19.5.
PEAKS = {"H200": (67e12, 67e12), "H100 PCIe": (51e12, 51e12), "H100": (67e12, 67e12), "A100": (19.5e12, 19.5e12)}

#: (stimuli, features, neuroids, folds, components, resamples) per size.
SIZES = {"small": dict(n=640, p=4000, q=50, folds=10, components=25, resamples=1000),
         "issue": dict(n=3200, p=20000, q=168, folds=10, components=25, resamples=1000)}


def _data(n: int, p: int, q: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    latent = rng.standard_normal((n, 20))
    X = (latent @ rng.standard_normal((20, p)) + rng.standard_normal((n, p))).astype(np.float32)
    Y = latent @ rng.standard_normal((20, q)) + rng.standard_normal((n, q))
    return X, Y


def _folds(n: int, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    order = np.random.default_rng(1).permutation(n)
    tests = np.array_split(order, k)
    return [(np.setdiff1d(order, test), np.sort(test)) for test in tests]


def cases(size: dict) -> dict:
    """name -> (precision, function(to_array) -> result) where ``to_array`` places a numpy array on the backend."""
    from brainscore.metrics import bootstrap as B
    from brainscore.metrics.kernels import cka, rdm
    from brainscore.metrics.kernels import regression as R

    n, p, q = size["n"], size["p"], size["q"]
    X, Y = _data(n, p, q)
    folds = _folds(n, size["folds"])
    weights = B.resample_counts(n, size["resamples"], seed=0)
    return {
        f"pls {n}x{p} {size['folds']} folds": ("float64", lambda on: R.pls(on(X), on(Y), folds,
                                                                         n_components=size["components"])),
        f"ridge {n}x{p} {size['folds']} folds": ("float64", lambda on: R.ridge(on(X), on(Y), folds, alpha=1.0)),
        f"rdm {n}x{p}": ("float32", lambda on: rdm.correlation_rdm(on(X))),
        f"cka {n}x{p} vs {q}": ("float32", lambda on: cka.linear_cka(on(X), on(Y), dtype=np.float32)),
        f"bootstrap pearson {size['resamples']}x{n}x{q}": ("float64", lambda on: B.weighted_pearson(
            weights, Y[:, ::-1].copy(), Y, device=on.device)),
    }


class _On:
    """Places numpy arrays on a torch device (None: numpy itself); ``device`` for kernels that take one."""

    def __init__(self, device: str | None):
        self.device = device

    def __call__(self, a: np.ndarray):
        if self.device is None:
            return a
        import torch
        return torch.as_tensor(a, device=self.device)


def counted_flops(function) -> int:
    """Matrix-product FLOPs of ``function(_On("cpu"))`` counted by torch's FlopCounterMode."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        function(_On("cpu"))
    return int(counter.get_total_flops())


def seconds(function, on: _On, repeats: int) -> float:
    """Best of ``repeats`` timed runs (after one untimed), synchronising a GPU before the clock stops."""
    import torch

    sync = torch.cuda.synchronize if on.device and on.device.startswith("cuda") else (lambda: None)
    function(on)
    sync()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function(on)
        sync()
        best = min(best, time.perf_counter() - start)
    return best


def gpu_card() -> tuple[str | None, tuple[float, float] | None]:
    """The CUDA card's name and its (float64, float32) peak, or (None, None) without a GPU."""
    import torch

    if not torch.cuda.is_available():
        return None, None
    name = torch.cuda.get_device_name(0)
    peak = next((value for fragment, value in PEAKS.items() if fragment in name), None)
    return name, peak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--kernel", action="append", help="only kernels whose name contains this (repeatable)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--markdown", action="store_true", help="a markdown table (default: plain columns)")
    args = parser.parse_args(argv)
    import torch

    card, peak = gpu_card()
    print(f"CPU: {os.cpu_count()} cores visible, torch {torch.__version__} with {torch.get_num_threads()} threads; "
          f"GPU: {card or 'none (GPU figures: not measured)'}")
    header = ["kernel", "counted GFLOP", "numpy s", "numpy GFLOP/s", "torch CPU s", "torch CPU GFLOP/s",
              "GPU s", "GPU GFLOP/s", "% of GPU peak", "GPU vs numpy"]
    rows = []
    for name, (precision, function) in cases(SIZES[args.size]).items():
        if args.kernel and not any(k in name for k in args.kernel):
            continue
        flops = counted_flops(function)
        t_numpy = seconds(function, _On(None), args.repeats)
        t_torch = seconds(function, _On("cpu"), args.repeats)
        row = [name, f"{flops / 1e9:.2f}", f"{t_numpy:.3f}", f"{flops / t_numpy / 1e9:.1f}", f"{t_torch:.3f}",
               f"{flops / t_torch / 1e9:.1f}"]
        if card:
            t_gpu = seconds(function, _On("cuda"), args.repeats)
            achieved = flops / t_gpu
            share = f"{100 * achieved / peak[0 if precision == 'float64' else 1]:.1f}% ({precision})" if peak else "peak unknown"
            row += [f"{t_gpu:.4f}", f"{achieved / 1e9:.0f}", share, f"{t_numpy / t_gpu:.1f}x"]
        else:
            row += ["not measured"] * 4
        rows.append(row)
        print(("| " + " | ".join(row) + " |") if args.markdown else "  ".join(row), flush=True)
    if args.markdown:
        print("\n| " + " | ".join(header) + " |\n|" + "---|" * len(header))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
