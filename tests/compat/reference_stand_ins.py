"""Stand-in data in the reference's formats, for its benchmark plugin folders (whose real data are on S3).

Each function writes, into a data mirror, made-up files under the names and in the formats the reference's data
plugin registers (BrainIO: ``stimulus_<id>.csv`` + ``.zip``, ``assy_<id>.nc``; at ``<bucket key prefix>/<name>``),
and returns the stand-in declarations for them: registered sha1 -> ``{"sha256": <the stand-in's>, "note": ...}``
(:mod:`brainscore.data.stand_ins`). The registered sha1s are read from the reference's own data plugin
(``data/<name>/__init__.py`` of the wheel), never typed here, so the declarations name exactly what it asks for.

The data are synthetic: images of eight "objects" (a shape in a colour, at varying positions and sizes); neural
responses are a fixed random projection of each image's pixels plus noise per repetition (so a network can predict
them and the repetitions agree); behavioural trials choose the true object more often the larger it is drawn.
"""
from __future__ import annotations

import ast
import hashlib
from pathlib import Path

import numpy as np

OBJECTS = ("bear", "car", "chair", "dog", "face", "house", "plane", "table")


def registered(data_plugin: Path) -> dict[tuple[str, str], dict]:
    """(registry name, identifier) -> the keyword arguments (literals) of its ``load_*_from_s3`` call."""
    found = {}
    for node in ast.walk(ast.parse((data_plugin / "__init__.py").read_text())):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript) \
                and isinstance(node.value, ast.Lambda) and isinstance(node.value.body, ast.Call):
            keywords = {}
            for keyword in node.value.body.keywords:
                try:
                    keywords[keyword.arg] = ast.literal_eval(keyword.value)
                except ValueError:
                    continue
            found[(node.targets[0].value.id, ast.literal_eval(node.targets[0].slice))] = keywords
    return found


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _images(folder: Path, count_per_object: int, seed: int) -> tuple[list[dict], dict[str, Path]]:
    """PNG images of :data:`OBJECTS` (rows of the stimulus set, paths by stimulus id)."""
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    rows, paths = [], {}
    for o, name in enumerate(OBJECTS):
        colour = tuple(int(c) for c in rng.integers(40, 255, size=3))
        for k in range(count_per_object):
            stimulus_id = f"{name}_{k:02d}"
            size = int(rng.integers(30, 90))
            x, y = (int(v) for v in rng.integers(10, 150, size=2))
            image = Image.new("RGB", (256, 256), tuple(int(c) for c in rng.integers(0, 60, size=3)))
            draw = ImageDraw.Draw(image)
            box = (x, y, x + size + o * 6, y + size)
            (draw.ellipse if o % 2 else draw.rectangle)(box, fill=colour)
            draw.line((x, y + size, x + size, y), fill=(255 - colour[0], 128, colour[2]), width=1 + o)
            path = folder / f"{stimulus_id}.png"
            image.save(path)
            rows.append({"stimulus_id": stimulus_id, "object_name": name, "image_label": name,
                         "category_name": name, "size": size, "variation": k % 3})
            paths[stimulus_id] = path
    return rows, paths


def _package_stimuli(identifier: str, rows: list[dict], paths: dict, target: Path) -> dict:
    from brainscore_core.supported_data_standards.brainio.packaging import package_stimulus_set_locally
    from brainscore_core.supported_data_standards.brainio.stimuli import StimulusSet

    stimulus_set = StimulusSet(rows)
    stimulus_set.stimulus_paths = {k: str(v) for k, v in paths.items()}
    stimulus_set.identifier = identifier
    return package_stimulus_set_locally(stimulus_set, identifier, downloads_path=target)


def _key_prefix(bucket: str) -> str:
    return bucket.strip("/").split("/", 1)[1] if "/" in bucket.strip("/") else ""


def majajhong2015_public(reference: Path, mirror: Path, scratch: Path) -> dict[str, dict]:
    """Stand-ins for ``MajajHong2015.public`` (neural, V4 and IT, 5 repetitions) and its stimulus set ``hvm-public``.

    Parameters
    ----------
    reference : Path
        The wheel's ``brainscore_vision`` folder (its ``data/majajhong2015`` names the files and sha1s).
    mirror : Path
        The data mirror to write into.
    scratch : Path
        A folder for the images before they are packaged.
    """
    from brainscore_core.supported_data_standards.brainio.assemblies import NeuroidAssembly
    from brainscore_core.supported_data_standards.brainio.packaging import package_data_assembly_locally

    declared = registered(reference / "data" / "majajhong2015")
    stimuli = declared[("stimulus_set_registry", "hvm-public")]
    data = declared[("data_registry", "MajajHong2015.public")]
    target = mirror / _key_prefix(data["bucket"])
    rows, paths = _images(scratch / "hvm-public", 16, seed=2015)
    packaged_stimuli = _package_stimuli("hvm-public", rows, paths, target)
    rng = np.random.default_rng(15)
    from PIL import Image

    pixels = np.stack([np.asarray(Image.open(paths[row["stimulus_id"]]).convert("L").resize((12, 12)), dtype=float)
                       .ravel() / 255 for row in rows])
    regions = ["V4"] * 24 + ["IT"] * 32
    projection = rng.normal(size=(pixels.shape[1], len(regions)))
    signal = (pixels - pixels.mean(0)) @ projection
    repetitions = 5
    values = np.concatenate([signal + rng.normal(scale=signal.std() * 0.6, size=signal.shape)
                             for _ in range(repetitions)])[:, :, None]
    ids = [row["stimulus_id"] for row in rows] * repetitions
    assembly = NeuroidAssembly(values, dims=("presentation", "neuroid", "time_bin"), coords={
        "stimulus_id": ("presentation", ids),
        "repetition": ("presentation", np.repeat(np.arange(repetitions), len(rows))),
        "neuroid_id": ("neuroid", [f"{region}_{i:02d}" for i, region in enumerate(regions)]),
        "region": ("neuroid", regions), "animal": ("neuroid", ["Chabo"] * len(regions)),
        "time_bin_start": ("time_bin", [70]), "time_bin_end": ("time_bin", [170])})
    packaged = package_data_assembly_locally(assembly, data["identifier"], "hvm-public", downloads_path=target)
    note = "synthetic stand-in for a test (tests/compat/reference_stand_ins.py)"
    return {stimuli["csv_sha1"]: {"sha256": packaged_stimuli["csv_sha256"], "note": note},
            stimuli["zip_sha1"]: {"sha256": packaged_stimuli["zip_sha256"], "note": note},
            data["sha1"]: {"sha256": packaged["sha256"], "note": note}}


def rajalingham2018_public(reference: Path, mirror: Path, scratch: Path) -> dict[str, dict]:
    """Stand-ins for ``Rajalingham2018.public`` (behavioural match-to-sample trials) and ``objectome.public``."""
    from brainscore_core.supported_data_standards.brainio.assemblies import BehavioralAssembly
    from brainscore_core.supported_data_standards.brainio.packaging import package_data_assembly_locally

    declared = registered(reference / "data" / "rajalingham2018")
    stimuli = declared[("stimulus_set_registry", "objectome.public")]
    data = declared[("data_registry", "Rajalingham2018.public")]
    target = mirror / _key_prefix(data["bucket"])
    rows, paths = _images(scratch / "objectome-public", 6, seed=2018)
    packaged_stimuli = _package_stimuli("objectome.public", rows, paths, target)
    rng = np.random.default_rng(18)
    trials = {"stimulus_id": [], "truth": [], "sample_obj": [], "dist_obj": [], "choice": [], "worker_id": []}
    for row in rows:
        for distractor in OBJECTS:
            if distractor == row["object_name"]:
                continue
            correct = 0.55 + 0.4 * (row["size"] - 30) / 60
            for worker in range(4):
                chosen = row["object_name"] if rng.random() < correct else distractor
                for key, value in (("stimulus_id", row["stimulus_id"]), ("truth", row["object_name"]),
                                   ("sample_obj", row["object_name"]), ("dist_obj", distractor),
                                   ("choice", chosen), ("worker_id", f"w{worker}")):
                    trials[key].append(value)
    assembly = BehavioralAssembly(np.array(trials["choice"]), dims=("presentation",),
                                  coords={key: ("presentation", values) for key, values in trials.items()})
    packaged = package_data_assembly_locally(assembly, data["identifier"], "objectome.public",
                                             assembly_class_name="BehavioralAssembly", downloads_path=target)
    note = "synthetic stand-in for a test (tests/compat/reference_stand_ins.py)"
    return {stimuli["csv_sha1"]: {"sha256": packaged_stimuli["csv_sha256"], "note": note},
            stimuli["zip_sha1"]: {"sha256": packaged_stimuli["zip_sha256"], "note": note},
            data["sha1"]: {"sha256": packaged["sha256"], "note": note}}
