"""Write ``manifest.json``: the sha256 of every Geirhos 2019 file the plugin declares, from a mirror copy.

Run once, by hand, when the declared files change::

    python -m brainscore.plugins.data.geirhos2019.make_manifest /path/to/mirror

``/path/to/mirror`` holds ``geirhos2019_texture_vs_shape/`` laid out as the repository
github.com/rgeirhos/texture-vs-shape at the commit in ``__init__.COMMIT`` (``stimuli/...`` and
``raw-data/...``). The manifest maps each file's path inside the repository to its sha256, per
experiment, so that each file is declared as its own :class:`~brainscore.data.Source` with its
public URL.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from brainscore.data.stimuli import file_sha256

MIRROR_FOLDER = "geirhos2019_texture_vs_shape"
# experiment -> (stimulus folder, raw-data folder) inside the repository; no stimulus folder: the experiment showed
# another's images (the instructed experiments showed the cue-conflict images: ``__init__.SHARED_STIMULI``)
EXPERIMENTS = {
    "cue-conflict": ("stimuli/style-transfer-preprocessed-512", "raw-data/style-transfer-512-nomask-experiment"),
    "edge": ("stimuli/edges", "raw-data/edge-experiment"),
    "silhouette": ("stimuli/filled-silhouettes", "raw-data/silhouette-filled-experiment"),
    "cue-conflict-shape-instructed": (None, "raw-data/style-transfer-512-nomask-content-guessing-experiment"),
    "cue-conflict-texture-instructed": (None, "raw-data/style-transfer-512-nomask-texture-guessing-experiment"),
}


def build(mirror: Path) -> dict:
    """``{experiment: {"stimuli": {repo path: sha256}, "responses": {repo path: sha256}}}`` (no ``"stimuli"`` for an
    experiment that showed another's images).

    Raises
    ------
    FileNotFoundError
        If a folder of an experiment is missing or empty.
    """
    root = Path(mirror) / MIRROR_FOLDER
    manifest = {}
    for experiment, (stimuli, responses) in EXPERIMENTS.items():
        entry = {}
        for kind, folder, pattern in (("stimuli", stimuli, "*.png"), ("responses", responses, "*.csv")):
            if folder is None:
                continue
            files = sorted((root / folder).rglob(pattern))
            if not files:
                raise FileNotFoundError(f"no {pattern} files under {root / folder}")
            entry[kind] = {f.relative_to(root).as_posix(): file_sha256(f) for f in files}
        manifest[experiment] = entry
    return manifest


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mirror", type=Path, help=f"folder that holds {MIRROR_FOLDER}/")
    args = parser.parse_args(argv)
    manifest = build(args.mirror)
    target = Path(__file__).with_name("manifest.json")
    target.write_text(json.dumps(manifest, indent=0, sort_keys=True) + "\n")
    counts = {e: (len(v.get("stimuli", ())), len(v["responses"])) for e, v in manifest.items()}
    print(f"wrote {target}: (images, response files) per experiment {counts}")


if __name__ == "__main__":
    main()
