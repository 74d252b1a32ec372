"""Write the built-in model plugins' ``metadata.yml`` (the reference Brain-Score's model fields), with each
architecture's parameter count counted in its network, built untrained (the trained one has the same count).

Run from the project root: ``PYTHONPATH=src python tools/model_metadata.py``. The website's model cards and the
leaderboard's filters read these files (:mod:`brainscore.web.cards`).
"""
from __future__ import annotations

import sys
from pathlib import Path

import yaml

from brainscore import registry
from brainscore.api import load_model

PLUGINS = Path(__file__).resolve().parents[1] / "src" / "brainscore" / "plugins" / "models"
FAMILIES = {"alexnet": "alexnet", "vgg": "vgg", "resnet": "resnet", "convnext": "convnext", "densenet": "densenet",
            "mobilenet": "mobilenet", "efficientnet": "efficientnet", "vit": "vit", "pixels": "pixels"}


def describe(identifier: str) -> dict:
    untrained = identifier.endswith("-untrained")
    name = identifier.split(":", 1)[-1].removesuffix("-untrained")
    family = next((f for key, f in FAMILIES.items() if name.startswith(key)), name)
    entry = {"architecture": "none (the pixels themselves)" if family == "pixels" else
             ("vision transformer" if family == "vit" else "DCNN"),
             "model_family": family, "framework": "PyTorch",
             "training_dataset": "none (untrained)" if untrained or family == "pixels" else "ImageNet-1k",
             "task_specialization": "none" if untrained or family == "pixels" else "object classification"}
    build = identifier if untrained or family in ("pixels",) else f"{identifier}-untrained"
    if build not in registry.models.list():
        build = identifier
    try:
        network = load_model(build).activations_model.model
        entry["total_parameter_count"] = int(sum(p.numel() for p in network.parameters()))
    except Exception as error:  # a network that cannot be built here: its count stays unknown
        print(f"{identifier}: parameters not counted ({type(error).__name__}: {error})", file=sys.stderr)
    return entry


def main() -> int:
    by_folder: dict[Path, dict] = {}
    for identifier in registry.models.list():
        folder = registry.plugin_folder_of("model", identifier)
        if folder is None or PLUGINS not in folder.parents:
            continue
        by_folder.setdefault(folder, {})[identifier] = describe(identifier)
        print(identifier, by_folder[folder][identifier], flush=True)
    for folder, models in by_folder.items():
        (folder / "metadata.yml").write_text(
            "# The reference Brain-Score's model metadata fields; written by tools/model_metadata.py (parameter\n"
            "# counts counted in each network, built untrained).\n" + yaml.safe_dump({"models": models}, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
