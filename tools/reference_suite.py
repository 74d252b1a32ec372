"""Conformance runner: the reference Brain-Score's own tests and plugin folders, unchanged, against our code.

Usage::

    python tools/reference_suite.py                 # metric + helper tests, import census; table + JSON
    python tools/reference_suite.py --census build  # the census also builds every identifier (slow)
    python tools/reference_suite.py --fetch-only    # only get the wheel into the cache (CI set-up)
    python tools/reference_suite.py --json out.json --scratch /tmp/ref-suite

What it does
------------
1. **Gets the wheel** ``brainscore-vision==2.4.2`` with ``pip download --no-deps`` into a cache
   (``$BRAINSCORE_REFERENCE_CACHE``, default ``~/.cache/brainscore-reference``), never into the
   repository and never installed (its package name, ``brainscore_vision``, is also ours). The
   file is checked against its sha256 (:data:`WHEEL_SHA256`) before use.
2. **Extracts it** into a scratch folder (``--scratch``, default a folder in the system's temporary
   directory), refusing members that would land outside it.
3. **Runs the reference's tests unchanged** with our pytest against our ``brainscore_vision`` /
   ``brainscore_core`` (from this repository's ``src``): every metric plugin's ``test.py``
   (``brainscore_vision/metrics/*/test.py``) and the helper tests ``tests/test_model_helpers``,
   ``tests/test_metric_helpers``, ``tests/test_benchmark_helpers``. Only the reference's own
   markers for S3 and GPU are deselected (``-m "not private_access and not requires_gpu"``).
4. **Takes the census** of the reference's plugin folders (``tools/reference_census.py``).
5. **Prints one table** (per group: passed / failed / error / deselected, then every failure with its
   classified reason: S3 data, downloaded weights, GPU, a data file the data mirror lacks, a test file the wheel does not ship, or a
   named gap) and writes it as JSON (``--json``).

How the reference's package is kept off ``sys.path``
----------------------------------------------------
The tests are *copied* out of the extracted wheel into a scratch tree that holds no
``brainscore_vision`` package at all: ``tests/...`` as they are (with their ``__init__.py`` files and
``conftest.py``) and each metric plugin's ``test.py`` as ``metric_tests/<folder>/test.py`` (no
``__init__.py``). pytest runs in that tree with ``python -P`` (the tree is not put on ``sys.path``)
and ``--import-mode=importlib`` (pytest does not put it there either), with ``PYTHONPATH`` = our
``src``. The metric tests import their plugin's neighbours relatively (``from .metric import RDM``):
the tree's ``conftest.py`` (``tools/reference_suite_conftest.py``) loads each one under the module
name ``brainscore_vision.metrics.<folder>.test``, so ``.metric`` is *our*
``brainscore_vision.metrics.<folder>.metric``. The extracted package itself is only read (by the
census, which imports plugin folders through ``BRAINSCORE_PLUGIN_DIRS``, never as a package).

Classification
--------------
Each failure gets one category (:data:`CATEGORIES`): automatic rules on the exception (a missing
third-party package, a test file absent from the wheel, a weights download, CUDA), then the named
gaps of :data:`KNOWN_GAPS` (a test id pattern and why). Anything left is ``unexplained``; the CI test
(``tests/compat/test_reference_suite.py``) fails on any.

Exit status: 0 when no failure is unexplained, 1 otherwise, 2 when the wheel cannot be had.
"""
from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
SRC = REPOSITORY / "src"
HERE = Path(__file__).resolve().parent

REFERENCE = "brainscore-vision"
VERSION = "2.4.2"
WHEEL = f"brainscore_vision-{VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "68720ce55d14b9f5cf99ee7d1ce9990bc63c406dd533c59854e932d07b4b03cc"
HELPER_TESTS = ("test_model_helpers", "test_metric_helpers", "test_benchmark_helpers")
DESELECT = "not private_access and not requires_gpu"
GROUPS = ("metrics", "model_helpers", "metric_helpers", "benchmark_helpers")

#: failure categories, in the order the table lists them
CATEGORIES = {
    "s3": "S3 data (the reference's data, read from its S3 bucket)",
    "weights": "downloaded weights (pretrained networks fetched from the internet)",
    "gpu": "GPU",
    "data": "a data file this installation's data mirror lacks (set data_mirror or BRAINSCORE_DATA_MIRROR)",
    "resource": "a test file the wheel does not ship (images, videos, expected activations)",
    "gap": "named gap",
    "unexplained": "unexplained",
}

#: (test id pattern, category, reason): named gaps and failures the automatic rules cannot see
KNOWN_GAPS: list[tuple[str, str, str]] = [
    ("metric_tests/distribution_similarity/test.py::test_identity_circularvariance", "s3",
     "loads the Ringach2002 assembly, which the reference keeps on S3"),
    ("tests/test_benchmark_helpers/test_screen.py::TestImageConverter::test_enlarge_gray_background", "resource",
     "counts the pure-grey pixels around the reference's own rgb1.jpg after JPEG re-encoding (0.11658 of the values); "
     "the wheel does not ship the image, and the seeded stand-in gives 0.11624"),
    ("tests/test_model_helpers/brain_transformation/test_behavior.py::TestLabelBehavior::test_choicelabels*",
     "resource", "asserts the labels a seeded random network gives to the reference's own rgb1.jpg and rgb2.jpg, "
                 "which the wheel does not ship (stand-ins are used)"),
    ("tests/test_model_helpers/activations/test_cache_key.py", "gap",
     "tests the reference's activations cache keys (identifier@git-or-content revision of the plugin folder, "
     "opt-in by BRAINSCORE_CACHE_PLUGIN_REVISION, resolved from its own data/ tree); brainscore keys stored "
     "activations by content (weights, architecture, preprocessing, stimulus files, code), so a revised plugin "
     "never reuses a stale entry by construction (DESIGN.md, One cache)"),
    ("tests/test_model_helpers/activations/test_preprocessing_resolution.py", "gap",
     "tests the reference's result_caching keys (store_xarray closures, identifier_ignore, the filename "
     "brainscore_vision.score_model's cleanup hint globs); brainscore's key includes the preprocessing itself"),
    ("tests/test_model_helpers/temporal/activations/test_temporal_cache_key.py", "gap",
     "tests the reference's temporal cache keys (its cache_key module's plugin revisions, the preprocessing probe "
     "_PROBE_FPS/_PROBE_DURATION and store_xarray's key of _from_paths_stored); brainscore's temporal extractor "
     "stores activations by content (weights, the plugin folder's code, the inferencer's settings, the stimulus "
     "files), so no stale entry can be served"),
]


def cache_folder() -> Path:
    """Where the wheel is kept: ``$BRAINSCORE_REFERENCE_CACHE`` or ``~/.cache/brainscore-reference``."""
    configured = os.environ.get("BRAINSCORE_REFERENCE_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "brainscore-reference"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def wheel_path(cache: Path | None = None) -> Path:
    """The wheel's path in the cache (it may not be there yet)."""
    return (cache or cache_folder()) / WHEEL


def ensure_wheel(cache: Path | None = None, download: bool = True) -> Path:
    """The reference's wheel in ``cache``, downloaded with ``pip download --no-deps`` when absent.

    Raises
    ------
    FileNotFoundError
        If the wheel is absent and ``download`` is False, or pip could not fetch it (offline): the
        message gives the command that gets it.
    ValueError
        If the file's sha256 is not :data:`WHEEL_SHA256` (a damaged or different file; delete it).
    """
    cache = cache or cache_folder()
    target = wheel_path(cache)
    if not target.is_file():
        command = [sys.executable, "-m", "pip", "download", f"{REFERENCE}=={VERSION}", "--no-deps",
                   "--only-binary", ":all:", "--quiet", "-d", str(cache)]
        if download:
            cache.mkdir(parents=True, exist_ok=True)
            subprocess.run(command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if not target.is_file():
            raise FileNotFoundError(
                f"the reference's wheel {WHEEL} is not in {cache}; get it with "
                f"`python -m pip download {REFERENCE}=={VERSION} --no-deps -d {cache}` (needs PyPI; set "
                f"BRAINSCORE_REFERENCE_CACHE to use another folder). Never install it: its package name "
                f"shadows ours.")
    found = _sha256(target)
    if found != WHEEL_SHA256:
        raise ValueError(f"{target} has sha256 {found}, not {WHEEL_SHA256} (the PyPI file of {REFERENCE} {VERSION}); "
                         f"delete it and run again to download it anew")
    return target


def extract(wheel: Path, destination: Path) -> Path:
    """Extract ``wheel`` into ``destination`` once (a ``.complete`` marker names the wheel's sha256).

    Raises
    ------
    ValueError
        If a member's path would land outside ``destination`` (absolute, ``..``) or is a link.
    """
    destination = destination.resolve()
    marker = destination / ".complete"
    if marker.is_file() and marker.read_text().strip() == WHEEL_SHA256:
        return destination
    if destination.exists():
        shutil.rmtree(destination)
    partial = destination.with_name(destination.name + ".partial")
    if partial.exists():
        shutil.rmtree(partial)
    partial.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            target = (partial / member.filename).resolve()
            if not target.is_relative_to(partial.resolve()) or (member.external_attr >> 16) & 0o170000 == 0o120000:
                raise ValueError(f"{wheel.name}: member {member.filename!r} is a link or lands outside the folder")
        archive.extractall(partial)
    (partial / ".complete").write_text(WHEEL_SHA256)
    partial.rename(destination)
    return destination


#: test images the reference's tests open but the wheel does not ship: (path in the tree, size, PIL mode, format).
#: The runner writes seeded stand-ins of the same size and mode; tests that assert the real images' content are
#: named in :data:`KNOWN_GAPS` (category ``resource``).
STAND_IN_IMAGES = [
    ("tests/test_benchmark_helpers/rgb1.jpg", 1855, "RGB"),  # test_screen asserts sizes derived from 1855
    *[(f"tests/test_model_helpers/brain_transformation/rgb{i}.jpg", 256, "RGB") for i in (1, 2, 3)],
    ("tests/test_model_helpers/activations/rgb.jpg", 720, "RGB"),  # the temporal tests crop 200:680 of it
    ("tests/test_model_helpers/activations/grayscale.png", 256, "L"),
    ("tests/test_model_helpers/activations/grayscale2.jpg", 256, "L"),
    ("tests/test_model_helpers/activations/grayscale_alpha.png", 256, "LA"),
    ("tests/test_model_helpers/activations/palletized.png", 256, "P"),
]


def write_stand_in_images(tree: Path) -> list[str]:
    """Seeded stand-ins for :data:`STAND_IN_IMAGES` (a smooth colour gradient with noise, in each file's mode)."""
    import numpy as np
    from PIL import Image

    written = []
    for index, (relative, size, mode) in enumerate(STAND_IN_IMAGES):
        target = tree / relative
        if target.exists():
            continue
        rng = np.random.RandomState(index)
        y, x = np.mgrid[0:size, 0:size] / size
        rgb = np.stack([x, y, (x + y) / 2], axis=-1) * 200 + rng.randint(0, 55, (size, size, 3))
        image = Image.fromarray(rgb.astype(np.uint8), "RGB")
        if mode == "L":
            image = image.convert("L")
        elif mode == "LA":
            image = image.convert("L")
            image.putalpha(Image.fromarray((255 * x).astype(np.uint8)))
        elif mode == "P":
            image = image.convert("P", palette=Image.Palette.ADAPTIVE, colors=64)
        target.parent.mkdir(parents=True, exist_ok=True)
        image.save(target)
        written.append(relative)
    return written


#: Where the runner writes a seeded stand-in of the reference's ``imagenet2012-val.hdf5`` (``LayerPCA`` fits its
#: components on its images); the folder is given to the tests as a weights mirror. 251 images of 64 x 64 pixels:
#: enough for the reference's choice of up to 5 components (images 0, 50, ..., 200).
STAND_IN_MIRROR = "stand_in_mirror"


def write_stand_in_imagenet(tree: Path) -> Path:
    """A seeded stand-in ``imagenet2012-val.hdf5`` (dataset ``val/images``, uint8 ``(251, 64, 64, 3)``) in the tree's
    stand-in mirror folder; the folder."""
    import h5py
    import numpy as np

    folder = tree / STAND_IN_MIRROR
    folder.mkdir(parents=True, exist_ok=True)
    with h5py.File(folder / "imagenet2012-val.hdf5", "w") as handle:
        handle.create_dataset("val/images", data=np.random.RandomState(0).randint(0, 256, (251, 64, 64, 3),
                                                                                   dtype=np.uint8))
    return folder


#: test videos the reference's temporal tests open but the wheel does not ship: (path in the tree, frame count).
#: Both are 60 fps (the tests' frame arithmetic assumes it: ``set_fps(30)`` frame 1 is frame 2), so 2000 and 6000 ms.
STAND_IN_VIDEOS = [
    ("tests/test_model_helpers/temporal/dots1.mp4", 120),
    ("tests/test_model_helpers/temporal/dots2.mp4", 360),
]
STAND_IN_VIDEO_FPS = 60
#: (width, height): the temporal inferencer tests crop rows 200:680 and columns 200:440 of every frame
STAND_IN_VIDEO_SIZE = (1280, 720)


def write_stand_in_videos(tree: Path) -> list[str]:
    """Seeded stand-ins for :data:`STAND_IN_VIDEOS`: 12 white dots of radius 12 moving at constant seeded velocities
    (wrapping at the edges) on black, 1280 x 720 pixels, 60 fps, H.264 in mp4 (written with PyAV)."""
    import av
    import numpy as np

    width, height = STAND_IN_VIDEO_SIZE
    written = []
    for index, (relative, n_frames) in enumerate(STAND_IN_VIDEOS):
        target = tree / relative
        if target.exists():
            continue
        rng = np.random.RandomState(100 + index)
        positions = rng.uniform(0, 1, (12, 2)) * (width, height)
        velocities = rng.uniform(-8, 8, (12, 2))
        radius = 12
        dy, dx = np.mgrid[-radius:radius + 1, -radius:radius + 1]
        disc = dx ** 2 + dy ** 2 <= radius ** 2
        target.parent.mkdir(parents=True, exist_ok=True)
        with av.open(str(target), "w") as container:
            stream = container.add_stream("libx264", rate=STAND_IN_VIDEO_FPS)
            stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
            for step in range(n_frames):
                centres = ((positions + step * velocities) % (width, height)).astype(int)
                frame = np.zeros((height, width, 3), dtype=np.uint8)
                for cx, cy in centres:
                    rows, columns = (cy + dy[disc]) % height, (cx + dx[disc]) % width
                    frame[rows, columns] = 255
                container.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
            container.mux(stream.encode(None))
        written.append(relative)
    return written


def has_tests(path: Path) -> bool:
    """Whether a test file defines any test (a ``test*`` function or ``Test*`` class); the reference ships
    empty ones (``ost``, ``mask_regression``) and one holding only a comment (``baker_accuracy_delta``)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name.lower().startswith("test")
               for node in tree.body)


def empty_test_files(extracted: Path) -> list[str]:
    """The metric folders whose ``test.py`` defines no test (listed in the table, not run)."""
    return [test.parent.name for test in sorted((extracted / "brainscore_vision" / "metrics").glob("*/test.py"))
            if not has_tests(test)]


def build_tree(extracted: Path, tree: Path) -> Path:
    """The scratch test tree (see the module notes): ``tests/<helpers>``, ``metric_tests/<folder>/test.py``,
    the reference's ``tests/conftest.py``, our ``conftest.py`` and a ``pytest.ini``. Rebuilt each run."""
    if tree.exists():
        shutil.rmtree(tree)
    (tree / "tests").mkdir(parents=True)
    source_tests = extracted / "tests"
    for name in ("__init__.py", "conftest.py"):
        shutil.copy2(source_tests / name, tree / "tests" / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in HELPER_TESTS:
        shutil.copytree(source_tests / name, tree / "tests" / name, ignore=ignore)
    for test in sorted((extracted / "brainscore_vision" / "metrics").glob("*/test.py")):
        if not has_tests(test):
            continue
        folder = tree / "metric_tests" / test.parent.name
        folder.mkdir(parents=True)
        shutil.copy2(test, folder / "test.py")
        for resources in test.parent.iterdir():  # test resources beside the test (e.g. i1i2/test_resources)
            if resources.is_dir() and resources.name != "__pycache__":
                shutil.copytree(resources, folder / resources.name, ignore=ignore)
    write_stand_in_images(tree)
    write_stand_in_imagenet(tree)
    write_stand_in_videos(tree)
    shutil.copy2(HERE / "reference_suite_conftest.py", tree / "conftest.py")
    (tree / "pytest.ini").write_text(
        "[pytest]\n"
        "python_files = test.py test_*.py\n"
        "markers =\n"
        "    private_access: the reference's marker for tests that read its S3 bucket\n"
        "    requires_gpu: the reference's marker for tests that need a GPU\n"
        "    memory_intense: the reference's marker for tests that need much memory\n"
        "    slow: the reference's marker for slow tests\n"
        "    travis_slow: the reference's marker for slow tests\n"
        "    timeout: pytest-timeout's marker (honoured only where pytest-timeout is installed)\n")
    return tree


def run_tests(tree: Path, home: Path, paths: list[str] | None = None, timeout: float = 3600) -> tuple[list[dict], float]:
    """Run pytest in ``tree`` against our ``src``; the recorded outcomes and the wall time in seconds."""
    outcomes = tree / "outcomes.json"
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join([str(SRC)] + [p for p in environment.get("PYTHONPATH", "").split(
        os.pathsep) if p and Path(p).resolve() != SRC])
    environment["BRAINSCORE_DEV_SRC"] = str(SRC)
    environment["BRAINSCORE_REFERENCE_OUTCOMES"] = str(outcomes)
    environment.setdefault("BRAINSCORE_HOME", str(home))
    environment["BRAINSCORE_WEIGHTS_MIRROR"] = os.pathsep.join(
        [p for p in environment.get("BRAINSCORE_WEIGHTS_MIRROR", "").split(os.pathsep) if p]
        + [str(tree / STAND_IN_MIRROR)])
    environment["PYTHONDONTWRITEBYTECODE"] = "1"
    command = [sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--import-mode=importlib",
               "-m", DESELECT, "-W", "ignore::pytest.PytestUnknownMarkWarning", "--no-header", "-rN",
               "--tb=no", "--continue-on-collection-errors", *(paths or ["metric_tests", *[f"tests/{name}" for name in HELPER_TESTS]])]
    start = time.perf_counter()
    completed = subprocess.run(command, cwd=tree, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=timeout)
    elapsed = time.perf_counter() - start
    if not outcomes.is_file():
        raise RuntimeError(f"pytest recorded nothing (exit {completed.returncode}):\n{completed.stdout[-3000:]}")
    return json.loads(outcomes.read_text()), elapsed


def group_of(nodeid: str) -> str:
    """``metrics``, ``model_helpers``, ``metric_helpers`` or ``benchmark_helpers``."""
    if nodeid.startswith("metric_tests/"):
        return "metrics"
    for name in HELPER_TESTS:
        if nodeid.startswith(f"tests/{name}"):
            return name.removeprefix("test_")
    return "other"


_MISSING_MODULE = re.compile(r"No module named '([^']+)'")
_MISSING_FILE = re.compile(r"No such file or directory: '([^']+)'")


#: the reference's markers that deselect a test here, and the category of a file whose every test carries one
DESELECTED_MARKERS = {"private_access": "s3", "requires_gpu": "gpu"}


def markers_of_every_test(path: Path) -> set[str]:
    """The markers that every test of a test file carries (on the test, its class or ``pytestmark``), read with
    ``ast`` (for files that do not even import)."""
    import ast

    def marks(node) -> set[str]:
        found = set()
        for decorator in getattr(node, "decorator_list", []):
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute) \
                    and target.value.attr == "mark":
                found.add(target.attr)
        return found

    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets):
            for value in ast.walk(node.value):
                if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Attribute) \
                        and value.value.attr == "mark":
                    module.add(value.attr)
    per_test = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            per_test.append(module | marks(node))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            inherited = module | marks(node)
            per_test += [inherited | marks(item) for item in node.body
                         if isinstance(item, ast.FunctionDef) and item.name.startswith("test")]
    return set.intersection(*per_test) if per_test else set()


def classify(outcome: dict, tree: Path) -> tuple[str, str]:
    """(category, reason) of one failed or erroring outcome (see the module notes)."""
    nodeid, exception, message = outcome["nodeid"], outcome.get("exception", ""), outcome.get("message", "")
    for pattern, category, reason in KNOWN_GAPS:
        if fnmatch.fnmatchcase(nodeid, pattern):
            return category, reason
    if outcome["when"] == "collect" and (tree / nodeid).is_file():
        for marker in sorted(markers_of_every_test(tree / nodeid) & set(DESELECTED_MARKERS)):
            first = message.splitlines()[0][:160] if message else exception
            return DESELECTED_MARKERS[marker], (f"every test in it is marked {marker}, so it would be deselected; it "
                                                f"does not import here ({first})")
    missing = _MISSING_MODULE.search(message)
    if "ModuleNotFoundError" in exception and missing:
        module = missing.group(1)
        if not module.split(".")[0].startswith("brainscore"):
            return "gap", f"needs the package {module.split('.')[0]!r}, not installed here"
    missing_file = _MISSING_FILE.search(message)
    if missing_file and Path(missing_file.group(1)).resolve().is_relative_to(tree.resolve()):
        return "resource", f"{Path(missing_file.group(1)).name} is not in the wheel"
    if "cuda" in message.lower():
        return "gpu", message.splitlines()[0][:160] if message else exception
    if exception.endswith("URLError") or any(word in message for word in (
            "download.pytorch.org", "huggingface.co", "pretrained weights", "weights mirror", "weights_mirror")):
        return "weights", f"downloads pretrained weights ({exception.rsplit('.', 1)[-1]}: {message.splitlines()[0][:100]})"
    if exception.endswith("DataNotFoundError"):  # e.g. the ImageNet class metadata a label readout needs
        return "data", message.splitlines()[0][:200] if message else exception
    if exception.endswith("NotImplementedError") and message:
        return "gap", message.splitlines()[0][:300]
    first = message.splitlines()[0][:200] if message else ""
    return "unexplained", f"{exception}: {first}"


def summarise(outcomes: list[dict], tree: Path) -> dict:
    """Per group: counts and every failure with its category and reason."""
    groups: dict[str, dict] = {}
    seen: dict[str, str] = {}
    for outcome in outcomes:  # one final state per test: a failed setup/teardown beats a passed call
        state = outcome["outcome"]
        if outcome["when"] in ("setup", "teardown") and state == "failed":
            state = "error"
        if outcome["when"] == "collect" and state == "error":
            state = "error"
        previous = seen.get(outcome["nodeid"])
        if previous in ("failed", "error") and state == "passed":
            continue
        seen[outcome["nodeid"]] = state
    by_id = {}
    for outcome in outcomes:
        if outcome["outcome"] in ("failed", "error"):
            by_id.setdefault(outcome["nodeid"], outcome)
    for nodeid, state in seen.items():
        group = groups.setdefault(group_of(nodeid), {"passed": 0, "failed": 0, "error": 0, "skipped": 0,
                                                     "deselected": 0, "failures": []})
        group[state] = group.get(state, 0) + 1
        if state in ("failed", "error"):
            category, reason = classify(by_id[nodeid], tree)
            group["failures"].append({"test": nodeid, "state": state, "category": category, "reason": reason})
    return {name: groups[name] for name in sorted(groups, key=lambda g: (GROUPS + (g,)).index(g))}


#: census statuses that are neither a success nor a reason outside our code (listed one by one in the table)
CENSUS_NOTABLE = ("missing_name", "other", "timeout", "error")


def run_census(extracted: Path, mode: str, jobs: int = 1) -> dict:
    """The plugin-folder census (``tools/reference_census.py``), counted per kind and status.

    ``mode`` is the census's: ``import`` (each folder imported and registered, the CI part) or
    ``build`` (every identifier also built); ``none`` skips it.
    """
    if mode == "none":
        return {"available": False, "note": "not run (--census none)"}
    sys.path.insert(0, str(HERE))
    try:
        import reference_census  # noqa: PLC0415 (conf-plugins' tool, issue 31; optional here)
    except ImportError as error:
        return {"available": False, "note": f"tools/reference_census.py not available: {error}"}
    finally:
        sys.path.remove(str(HERE))
    import inspect

    parameters = inspect.signature(reference_census.census).parameters
    options = {"import_only": mode == "import"} if "import_only" in parameters else {"mode": mode}
    if "jobs" in parameters:
        options["jobs"] = jobs
    start = time.perf_counter()
    rows = reference_census.census(extracted, **options)
    elapsed = time.perf_counter() - start
    counts: dict[str, dict[str, int]] = {}
    notable = []
    for row in rows:
        counts.setdefault(row["kind"], {}).setdefault(row["status"], 0)
        counts[row["kind"]][row["status"]] += 1
        if row["status"] in CENSUS_NOTABLE:
            notable.append({"kind": row.get("kind"), "folder": row.get("folder"), "status": row.get("status"),
                            "reason": row.get("reason") or row.get("detail"), "missing": row.get("missing")})
    return {"available": True, "mode": mode, "seconds": round(elapsed, 1), "folders": len(rows), "counts": counts,
            "notable": notable}


def render(report: dict) -> str:
    """The table as text."""
    lines = [f"brainscore-vision {VERSION}: its tests, unchanged, against brainscore "
             f"(deselected: {DESELECT!r}); tests {report['test_seconds']:.0f} s"]
    header = f"{'group':<18}{'passed':>8}{'failed':>8}{'error':>8}{'skipped':>9}{'deselected':>12}"
    lines += [header, "-" * len(header)]
    totals = dict.fromkeys(("passed", "failed", "error", "skipped", "deselected"), 0)
    for name, group in report["groups"].items():
        lines.append(f"{name:<18}" + "".join(f"{group[k]:>{w}}" for k, w in
                                              (("passed", 8), ("failed", 8), ("error", 8), ("skipped", 9),
                                               ("deselected", 12))))
        for key in totals:
            totals[key] += group[key]
    lines.append(f"{'total':<18}" + "".join(f"{totals[k]:>{w}}" for k, w in
                                            (("passed", 8), ("failed", 8), ("error", 8), ("skipped", 9),
                                             ("deselected", 12))))
    by_category: dict[str, list] = {}
    for name, group in report["groups"].items():
        for failure in group["failures"]:
            by_category.setdefault(failure["category"], []).append(failure)
    for category, title in CATEGORIES.items():
        failures = by_category.get(category, [])
        if failures:
            lines.append("")
            lines.append(f"{title}: {len(failures)}")
            lines += [f"  {f['state']:<6} {f['test']}  -- {f['reason']}" for f in failures]
    if report.get("stand_in_images"):
        lines.append("")
        lines.append(f"stand-in test images (the wheel ships none; seeded, same size and mode): "
                     f"{len(report['stand_in_images'])}")
    if report.get("stand_in_videos"):
        lines.append(f"stand-in test videos (the wheel ships none; seeded moving dots, 60 fps, same durations): "
                     f"{len(report['stand_in_videos'])}")
    if report.get("empty_test_files"):
        lines.append("")
        lines.append(f"test files that define no test (not run): {', '.join(report['empty_test_files'])}")
    census = report.get("census", {})
    lines.append("")
    if census.get("available"):
        lines.append(f"census ({census['mode']}, {census['seconds']} s):")
        for kind, counts in census["counts"].items():
            lines.append(f"  {kind:<11} " + ", ".join(f"{status} {n}" for status, n in sorted(counts.items())))
        for row in census["notable"]:
            lines.append(f"  {row['status']:<13} {row['kind']}/{row['folder']}: {row.get('reason') or ''}")
    else:
        lines.append(f"census: {census.get('note', 'not run')}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()) / "brainscore-reference-suite",
                        help="scratch folder (extracted wheel, test tree, BRAINSCORE_HOME)")
    parser.add_argument("--cache", type=Path, default=None, help="where the wheel is kept")
    parser.add_argument("--json", type=Path, default=None, help="write the table as JSON here")
    parser.add_argument("--census", choices=("import", "build", "none"), default="import",
                        help="plugin-folder census: import each folder (default, the CI part), also build every "
                             "identifier, or none")
    parser.add_argument("--jobs", type=int, default=1, help="census processes in parallel")
    parser.add_argument("--fetch-only", action="store_true",
                        help="only make sure the wheel is in the cache (for CI set-up), then exit")
    parser.add_argument("--no-download", action="store_true", help="fail if the wheel is not in the cache")
    parser.add_argument("paths", nargs="*", help="test paths inside the tree (default: all groups)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        wheel = ensure_wheel(args.cache, download=not args.no_download)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.fetch_only:
        return 0
    extracted = extract(wheel, args.scratch / "extracted")
    tree = build_tree(extracted, args.scratch / "tree")
    outcomes, test_seconds = run_tests(tree, args.scratch / "home", args.paths or None)
    report = {"reference": f"{REFERENCE}=={VERSION}", "deselected_markers": DESELECT,
              "test_seconds": round(test_seconds, 1), "groups": summarise(outcomes, tree)}
    report["stand_in_images"] = [relative for relative, _, _ in STAND_IN_IMAGES]
    report["stand_in_videos"] = [relative for relative, _ in STAND_IN_VIDEOS]
    report["empty_test_files"] = [f"brainscore_vision/metrics/{name}/test.py" for name in empty_test_files(extracted)]
    report["census"] = run_census(extracted, args.census, args.jobs)
    report["total_seconds"] = round(time.perf_counter() - start, 1)
    text = render(report)
    print(text)
    print(f"\ntotal {report['total_seconds']:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    unexplained = [f for g in report["groups"].values() for f in g["failures"] if f["category"] == "unexplained"]
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
