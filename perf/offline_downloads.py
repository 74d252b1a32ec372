"""How long a plugin's own weights download takes to fail where its host cannot be reached: with brainscore's guards
(brainscore.models.downloads) against the libraries alone, side by side in one run.

Each case runs in a fresh interpreter; the figure is the time of the failing call only (imports excluded). The
machine's network has no DNS here, so the hosts are unreachable as on an offline cluster; BRAINSCORE_OFFLINE is
NOT set (the guards probe the host, PROBE_TIMEOUT_S = 3 s at most).

Run: PYTHONPATH=src python perf/offline_downloads.py  (about two minutes: the unguarded Hugging Face case retries)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
CASES = {
    "timm pretrained (Hugging Face)": "import timm\nf = lambda: timm.create_model('resnet18', pretrained=True)",
    "torchvision pretrained (torch hub)": "import torchvision\nf = lambda: torchvision.models.alexnet(weights='DEFAULT')",
}
RUN = """
import time, json, os, tempfile
os.environ['TORCH_HOME'] = tempfile.mkdtemp()
{guard}
{case}
start = time.perf_counter()
try:
    f()
    outcome = 'loaded'
except BaseException as error:
    outcome = type(error).__name__ + ': ' + ' '.join(str(error).split())[:160]
print(json.dumps({{'seconds': time.perf_counter() - start, 'outcome': outcome}}))
"""


def measure(case: str, guarded: bool) -> dict:
    guard = "import brainscore.registry" if guarded else "from brainscore.models._torchvision import prepare; prepare()"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("BRAINSCORE_OFFLINE", None)
    result = subprocess.run([sys.executable, "-W", "ignore", "-c", RUN.format(guard=guard, case=case)], env=env,
                            capture_output=True, text=True, timeout=600)
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {"seconds": float("nan"), "outcome": result.stderr[-300:]}


def main() -> None:
    print(f"load average: {os.getloadavg()}")
    for name, case in CASES.items():
        guarded, alone = measure(case, True), measure(case, False)
        print(f"{name}: guarded {guarded['seconds']:.2f} s, library alone {alone['seconds']:.2f} s "
              f"(ratio {alone['seconds'] / max(guarded['seconds'], 1e-9):.0f}x)")
        print(f"  guarded: {guarded['outcome']}")
        print(f"  alone:   {alone['outcome']}")
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
