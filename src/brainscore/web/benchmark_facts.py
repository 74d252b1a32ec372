"""What the website knows of a benchmark without reading any score: its version, parent, metric and ceiling in
words, card and study description (:func:`benchmark_info`), and the metadata the index pages filter on
(:func:`facets`). Below :mod:`brainscore.web.views`, :mod:`brainscore.web.values`, :mod:`brainscore.web.filters`
and :mod:`brainscore.web.catalogue`, which all read it (it imports none of them)."""
from __future__ import annotations

import re

from brainscore import registry
from brainscore.errors import UnknownIdentifierError
from brainscore.leaderboard import tree
from brainscore.web import cards

FORMULAS = {
    "r2_over_ceiling": "score = r² / ceiling: the share of the data's explainable variance the model explains "
                       "(r: the metric's raw correlation)",
    "legacy": "score = (r / ceiling)²: the raw correlation over the ceiling, squared (the reference before 2026)",
    "raw_over_ceiling": "score = raw / ceiling: the metric's raw value over the data's own consistency",
    "raw_over_ceiling_clipped": "score = raw / ceiling, clipped to [0, 1]",
    "r2": "score = r² (no ceiling)",
    "raw": "score = the metric's raw value (no ceiling)",
}
"""Each normalisation formula (:func:`brainscore.scoring.job.formula_of`) in words, for the benchmark page."""


def summary(thing) -> str | None:
    """The first sentence of the docstring of ``thing`` (a function, or an object's class), or None."""
    import inspect

    doc = inspect.getdoc(thing if inspect.isroutine(thing) or inspect.isclass(thing) else type(thing))
    if not doc:
        return None
    first = " ".join(doc.split("\n\n", 1)[0].split())
    return re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", first).replace("``", "")


_INFO: dict[str, dict] = {}


def _plugin_description(identifier: str) -> str | None:
    """The first paragraph of the docstring of the plugin package that registers benchmark ``identifier`` (its
    study in words), or None."""
    import importlib
    import inspect

    try:
        module = importlib.import_module(registry.benchmarks.factory(identifier).__module__)
        package = module if hasattr(module, "__path__") else importlib.import_module(module.__name__.rsplit(".", 1)[0])
    except (UnknownIdentifierError, ImportError, AttributeError, ValueError):
        return None
    doc = inspect.getdoc(package) or ""
    first = " ".join(doc.split("\n\n", 1)[0].split())
    return re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", first).replace("``", "") or None


def benchmark_info(identifier: str) -> dict:
    """Version, parent, bibtex and data of a benchmark (its object is built, no data is loaded); cached."""
    if identifier not in _INFO:
        declared = registry.benchmarks.metadata(identifier)
        info = {"parent": declared.get("parent"), "selection_for": declared.get("selection_for"),
                "version": None, "bibtex": "", "kind": None, "region": None, "data": None,
                "metric_name": None, "metric_summary": None, "ceiling_summary": None, "description": None,
                "visual_degrees": None, "number_of_trials": None}
        try:
            benchmark = registry.load_benchmark(identifier)
            info.update(version=getattr(benchmark, "version", None), bibtex=getattr(benchmark, "bibtex", "") or "",
                        kind=type(benchmark).__name__, region=getattr(benchmark, "region", None),
                        parent=getattr(benchmark, "parent", None) or info["parent"])
            info.update(description=_plugin_description(identifier),
                        visual_degrees=getattr(benchmark, "visual_degrees", None),
                        number_of_trials=getattr(benchmark, "number_of_trials", None))
            metric = getattr(benchmark, "metric", None)
            ceilings = [getattr(benchmark, name, None) for name in ("_ceiling_callable", "_noise_ceiling")]
            ceilings += list(getattr(benchmark, "_ceiling_code", None) or [])
            info.update(metric_name=type(metric).__name__ if metric is not None else None,
                        metric_summary=summary(metric) if metric is not None else None,
                        ceiling_summary=next((summary(c) for c in ceilings if c is not None and summary(c)), None))
            for attribute in ("assembly_identifier", "dataset_identifier", "data_identifier",
                              "stimulus_set_identifier"):
                if getattr(benchmark, attribute, None):
                    info["data"] = getattr(benchmark, attribute)
                    break
        except (UnknownIdentifierError, ImportError) as error:  # a broken plugin shows as such
            info["problem"] = str(error)
        info["card"] = cards.benchmark_card(identifier)
        _INFO[identifier] = info
    return dict(_INFO[identifier])


FACETS = (("region", "region"), ("species", "species"), ("task", "task"), ("data_type", "data type"),
          ("year", "year"))
"""The benchmark metadata the index filters on: (key, label)."""

REGIONS = ("V1", "V2", "V4", "IT")


def _data_type(card: dict, info: dict) -> str:
    """What was measured, in a word: from the card's ``data_type``, else its ``recording`` in words."""
    declared = card.get("data_type")
    if declared:
        return str(declared)
    text = f"{card.get('recording') or ''} {info.get('kind') or ''}".lower()
    for words, kind in ((("no measurement", "labels"), "labels"), (("fmri", "voxel"), "fMRI"),
                        (("distribution", "propert"), "single-cell properties"),
                        (("spike", "neuron", "multi-unit", "electrode"), "electrophysiology"),
                        (("judgement", "judgment", "choice", "psychophysic", "behavio"), "behaviour")):
        if any(word in text for word in words):
            return kind
    return "other"


def facets(benchmark: str) -> dict:
    """``benchmark``'s metadata for the index's filters: ``region`` (V1, V2, V4, IT, behaviour or engineering),
    ``species`` (the card's first words: ``macaque monkey``, ``human``; ``none`` for labels), ``task``
    (``neural``, ``behavioural`` or ``engineering``: where it sits in the tree), ``data_type`` (what was measured:
    electrophysiology, fMRI, single-cell properties, behaviour, labels) and ``year`` (the last year in its study's
    name, e.g. 1982 for ``Marques2020_DeValois1982``: the data's publication). A card may declare each of them
    (``CARD["region"]``, ...). None where nothing says."""
    info = benchmark_info(benchmark)
    card = info.get("card") or {}
    parent = info.get("parent")
    try:
        path = tree.path_to_root(parent) if parent else []
    except Exception:  # noqa: BLE001 - a parent outside the tree
        path = []
    task = ("engineering" if "engineering_vision" in path else "behavioural" if "behavior_vision" in path
            else "neural" if "neural_vision" in path else None)
    region = (next((node for node in path if node in REGIONS), None)
              or {"engineering": "engineering", "behavioural": "behaviour"}.get(task) or info.get("region"))
    species = str(card.get("species") or "").split(":")[0].split("(")[0].strip() or None
    study = re.split(r"[-.]", benchmark, maxsplit=1)[0]
    years = re.findall(r"(?:19|20)\d\d", study)
    return {"region": card.get("region") or region, "species": species, "task": card.get("task") or task,
            "data_type": _data_type(card, info), "year": str(card.get("year") or (years[-1] if years else "")) or None}
