"""Model cards: what a model is, from its plugin's ``metadata.yml`` (the reference Brain-Score's fields), its
sources and its recorded scores, read without running any of its code (the web process never imports torch).

``metadata.yml`` as the reference writes it::

    models:
      my-model:
        architecture: DCNN
        model_family: resnet
        total_parameter_count: 11689512
        training_dataset: imagenet
        task_specialization: object classification
        huggingface_link: https://...

Missing fields are taken from elsewhere where they can be known: the submitter and date from the
submission, the framework and weights' sha256 from the recorded provenance, the BibTeX from a literal
``BIBTEX = "..."`` in the plugin's sources (parsed, not run).
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

import brainscore.plugins.models as builtin_model_plugins
from brainscore.plugin_sources import parse_source
from brainscore.web import plugin_metadata
from brainscore.web.plugin_metadata import MetadataRejected

FIELDS = (("architecture", "architecture"), ("model_family", "family"), ("total_parameter_count", "parameters"),
          ("trainable_parameter_count", "trainable parameters"), ("total_layers", "layers"),
          ("model_size_mb", "size (MB)"), ("training_dataset", "training data"),
          ("task_specialization", "task"), ("brainscore_link", "link"), ("huggingface_link", "Hugging Face"),
          ("extra_notes", "notes"))
"""The reference's ``metadata.yml`` model fields, in the order the card shows them, with their labels."""


@functools.lru_cache(maxsize=1)
def _builtin_folders() -> tuple[Path, ...]:
    """The built-in model plugins' folders (they do not change while the server runs)."""
    folders: list[Path] = []
    for root in builtin_model_plugins.__path__:
        folders += sorted(p.parent for p in Path(root).glob("*/__init__.py"))
    return tuple(folders)


def plugin_folders(model: str, task=None) -> list[Path]:
    """Folders that may hold ``model``'s plugin: its submission's unpacked plugin folders, then the built-ins'."""
    folders: list[Path] = []
    if task is not None and task.folder:
        site = Path(task.folder) / "site"
        folders += sorted(p.parent for p in site.glob("*/__init__.py")) + sorted(site.glob("models/*/"))
    return folders + list(_builtin_folders())


@functools.lru_cache(maxsize=4096)
def _init_text(folder: Path) -> str:
    """``folder/__init__.py`` as text ("" if unreadable); a plugin folder is not changed once uploaded."""
    try:
        return (folder / "__init__.py").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _registers(folder: Path, model: str) -> bool:
    """Whether the plugin in ``folder`` names ``model`` in its ``__init__.py`` (a literal identifier)."""
    return repr(model)[1:-1] in _init_text(folder)


def metadata(folder: Path, model: str) -> dict:
    """``model``'s entry of ``folder/metadata.yml`` (``models: {model: {...}}``), {} without one.

    The file is parsed within the bounds of :mod:`brainscore.web.plugin_metadata` (size, aliases, nesting), so a
    file stored before uploads were held to them cannot blow up a page. A file that breaks them, is not YAML, or
    is not of that shape, gives {} with its problem under ``"problem"``.
    """
    path = folder / "metadata.yml"
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return {}
    try:
        data = _read_yaml(path, stamp) or {}
        problem = plugin_metadata.layout_problem(data, path.name)
        if problem:
            return {"problem": problem}
        entry = (data.get("models") or {}).get(model) or {}
        return dict(entry) if isinstance(entry, dict) else {}
    except (MetadataRejected, AttributeError, TypeError, OSError) as error:
        return {"problem": f"{path.name} could not be read: {error}"}


@functools.lru_cache(maxsize=1024)
def _read_yaml(path: Path, stamp: int):
    """``path`` parsed as YAML within bounds, once per modification time ``stamp`` (a plugin's file lists many
    models). Reads at most one byte past :data:`~brainscore.web.plugin_metadata.MAX_BYTES`."""
    with open(path, "rb") as handle:
        return plugin_metadata.parse(handle.read(plugin_metadata.MAX_BYTES + 1), path.name)


@functools.lru_cache(maxsize=4096)
def bibtex(folder: Path) -> str:
    """The literal ``BIBTEX = "..."`` of the plugin's sources (the reference's ``model.py`` convention), or "" (read
    once per folder: a plugin folder is not changed once uploaded)."""
    for path in sorted(folder.glob("*.py")):
        try:
            tree = parse_source(path.read_text(encoding="utf-8"), path.name)
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            if (isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "BIBTEX" for t in node.targets)
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                return node.value.value.strip()
    return ""


FILTERS = (("architecture", "architecture"), ("model_family", "family"), ("training_dataset", "training data"),
           ("task_specialization", "task"), ("framework", "framework"), ("submitter", "submitter"))
"""The fields the leaderboard filters models by (:func:`model_facts` keys), with their labels."""


def _count(value, least: int = 1) -> int | None:
    """A parameter count as an int (``11689512``, ``"11,689,512"``, ``1.2e7``); None when it is not a whole
    number >= ``least`` (0 is a count only where it is declared: a counted 0 means nothing was counted)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(str(value).replace(",", "").replace("_", "").strip())
    except (TypeError, ValueError):
        return None
    return int(number) if number >= least and number == int(number) else None


def model_facts(model: str, task=None, owner: str | None = None, provenance: dict | None = None,
                parameter_count: int | None = None) -> dict:
    """What is known about ``model`` for the leaderboard's filters and its card, without running its code.

    Parameters
    ----------
    task : SubmissionTask, optional
        The model's newest submission (its plugin folder).
    owner : str, optional
        Its submitter (None: a built-in model).
    provenance : dict, optional
        The provenance of one of its recorded scores (the framework's version).
    parameter_count : int, optional
        The number of parameters counted in its loaded network (the models table's ``parameter_count``),
        used over the one ``metadata.yml`` declares.

    Returns
    -------
    dict
        Every :data:`FILTERS` key (a string, or None when not known), ``parameter_count`` (int or None: not
        known; never 0: the count in the loaded network where there is one, else the declared one),
        ``parameter_source`` (``"counted in the network"``, ``"metadata.yml"`` or None),
        ``declared_parameter_count`` (its ``metadata.yml``'s ``total_parameter_count``, int or None),
        ``declared`` (its ``metadata.yml`` entry) and ``folder`` (its plugin folder, or None).
    """
    folder = next((f for f in plugin_folders(model, task) if _registers(f, model)), None)
    declared = metadata(folder, model) if folder is not None else {}
    facts = {key: (str(declared[key]).strip() if declared.get(key) not in (None, "") else None)
             for key, _ in FILTERS if key in declared}
    torch = ((provenance or {}).get("environment") or {}).get("torch")
    facts.setdefault("framework", "PyTorch" if torch else None)
    facts["submitter"] = owner or "built-in"
    for key, _ in FILTERS:
        facts.setdefault(key, None)
    declared_count = _count(declared.get("total_parameter_count"), least=0)  # the pixels model has none
    counted = _count(parameter_count)
    # what the network holds beats what its submitter declares (a filter by size cannot be gamed by metadata.yml)
    facts["parameter_count"] = counted if counted is not None else declared_count
    facts["parameter_source"] = ("counted in the network" if counted is not None
                                 else "metadata.yml" if declared_count is not None else None)
    facts["declared_parameter_count"] = declared_count
    facts["declared"], facts["folder"] = declared, folder
    return facts


def model_card(model: str, task=None, owner: str | None = None, scores: list[dict] | None = None,
               parameter_count: int | None = None) -> dict:
    """The card of ``model``: ``rows`` (label, value) to show, ``bibtex``, ``source`` (where the fields came from).

    Parameters
    ----------
    task : SubmissionTask, optional
        The model's newest submission (its plugin folder, date).
    owner : str, optional
        Its submitter (None: a built-in model).
    scores : list of dict, optional
        Its recorded scores as :func:`brainscore.web.views.model_json` lists them (provenance: framework,
        weights' sha256).
    parameter_count : int, optional
        Its parameters counted in the loaded network (shown over the one ``metadata.yml`` declares, which is
        flagged beside it when it differs; "not known" when neither is known).
    """
    provenance = next((s["provenance"] for s in reversed(scores or []) if isinstance(s.get("provenance"), dict)), {})
    facts = model_facts(model, task, owner, provenance, parameter_count)
    declared, folder = facts["declared"], facts["folder"]
    rows = []
    for key, label in FIELDS:
        if key == "total_parameter_count":
            count, claimed = facts["parameter_count"], facts["declared_parameter_count"]
            if count is None:
                rows.append((label, "not known"))
            elif claimed is None:
                rows.append((label, f"{count:,} (counted in the network)"))
            elif claimed == count or facts["parameter_source"] == "metadata.yml":
                rows.append((label, count))
            else:  # the counted number, and the declared one flagged
                rows.append((label, f"{count:,} (counted in the network; its metadata.yml declares {claimed:,})"))
        elif declared.get(key) not in (None, ""):
            rows.append((label, declared[key]))
    torch = (provenance.get("environment") or {}).get("torch")
    if torch:
        rows.append(("framework", f"PyTorch {torch}"))
    elif declared.get("framework"):
        rows.append(("framework", declared["framework"]))
    weights = (provenance.get("model") or {}).get("weights_sha256")
    if weights:
        rows.append(("weights sha256", weights))
    rows.append(("submitted by", owner or "built-in model"))
    if task is not None and task.created:
        rows.append(("submitted", task.created.strftime("%Y-%m-%d")))
    return {"rows": rows, "bibtex": declared.get("bibtex") or (bibtex(folder) if folder is not None else ""),
            "source": "metadata.yml" if declared else None, "problem": declared.get("problem"),
            "parameter_count": facts["parameter_count"], "parameter_source": facts["parameter_source"]}


BENCHMARK_FIELDS = ("species", "recording", "metric", "ceiling", "formula", "data_source", "licence")
"""What a benchmark plugin declares for its card (``CARD``, and per benchmark ``CARDS[identifier]``), in words."""


def benchmark_card(identifier: str) -> dict:
    """The card of benchmark ``identifier``: what its plugin declares and what its data count.

    The plugin package that registers the benchmark declares ``CARD`` (its study's species, recording, metric,
    ceiling and formula in words, data source, licence) and may refine it per benchmark in
    ``CARDS[identifier]``; its ``card_counts.json`` holds the counts ``tools/benchmark_cards.py`` took from the
    data (:func:`brainscore.benchmarks.card.data_counts`). The package is imported (it registers the
    benchmark), no data are loaded.

    Returns
    -------
    dict
        Every :data:`BENCHMARK_FIELDS` key (None when not declared) and ``counts`` (dict, empty when not
        counted); ``problem`` when the plugin cannot be read.
    """
    import importlib
    import json

    from brainscore import registry
    from brainscore.errors import UnknownIdentifierError

    card: dict = {field: None for field in BENCHMARK_FIELDS}
    card["counts"] = {}
    try:
        module = importlib.import_module(registry.benchmarks.factory(identifier).__module__)
        package = module if hasattr(module, "__path__") else importlib.import_module(module.__name__.rsplit(".", 1)[0])
    except (UnknownIdentifierError, ImportError, AttributeError, ValueError) as error:
        return {**card, "problem": f"the benchmark's plugin could not be read: {error}"}
    declared = {**(getattr(package, "CARD", None) or {}), **((getattr(package, "CARDS", None) or {}).get(identifier) or {})}
    card.update({field: declared.get(field) for field in BENCHMARK_FIELDS})
    path = Path(package.__file__).parent / "card_counts.json"
    if path.is_file():
        try:
            card["counts"] = json.loads(path.read_text(encoding="utf-8")).get(identifier) or {}
        except (OSError, ValueError) as error:
            card["problem"] = f"{path.name} could not be read: {error}"
    return card
