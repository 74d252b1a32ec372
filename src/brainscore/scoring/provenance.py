"""Provenance: what a score was computed from, and a key that names the computation.

Every score :func:`brainscore.score` returns carries ``attrs["provenance"]``, a JSON-serialisable
dict (Brain-Score's database keeps only the score and timestamps; this is what lets two scores be
compared for "same computation"). Its sections:

``code``
    ``brainscore`` version and, in a git checkout, the commit and whether the tree was dirty.
``environment``
    Python, numpy, scipy, xarray, scikit-learn and torch versions, and the compute ``device``.
``host``
    Host name, platform and thread count (not part of the key).
``model``
    Identifier, weights sha256, architecture fingerprint (the ones the activation cache keys on)
    and the committed region -> layer map.
``benchmark``
    Identifier, version and ``data_files``: path -> sha256 of every data file the store resolved
    while the score was computed (stimuli and assemblies; hashes the store already verified).
``metric``, ``ceiling``, ``formula``
    The metric's and ceiling's stable ``repr`` (class, parameters, seeds), the ceiling's value and
    error, and the normalisation formula (``r2_over_ceiling``, ``raw_over_ceiling``, ...).
``bootstrap``
    Resamples, seed and resampled unit of the confidence interval.
``start``, ``end``, ``duration_s``
    UTC ISO timestamps and seconds (not part of the key).
``plugin_sources``
    Where the plugin folders (``--plugin-dir``) that declare the model or the benchmark were found (not part of
    the key), so a record can be re-run without naming them again.
``weights``
    The weights files the model read, each ``verified`` (checked against a published hash), ``unverified`` (none
    checked: e.g. a Hugging Face file with no hash beside it) or ``stand-in`` (a declared stand-in, not the
    original), and the worst of them as the network's ``status`` (not part of the key).
``layer_selection``
    For each region whose layer was chosen automatically, every candidate layer's selection score
    and the committed layer (what the model page plots). Not part of the key: it is an outcome of
    the computation, whose committed layers the key holds in ``model``.

:func:`provenance_key` hashes everything except timestamps, durations, host details and the layer
selection's curve, so two runs
of the same computation share a key, and two scores with equal keys are equal.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import platform
import subprocess
from pathlib import Path

from brainscore.caching import jsonable  # noqa: F401 - re-exported: provenance is plain JSON data

__all__ = ["provenance_key", "collect", "jsonable", "code_info", "environment_info", "host_info", "utc_now",
           "EXCLUDED_FROM_KEY"]

EXCLUDED_FROM_KEY = ("start", "end", "duration_s", "host", "layer_selection", "reproduction_of", "model_facts",
                     "plugin_sources", "run_key", "unclipped_score", "weights")
"""Top-level provenance entries that do not name the computation (timestamps, durations, host, the layer
selection's per-layer scores, an outcome whose committed layers the key holds, the record a recorded
rerun reproduces, ``brainscore reproduce --record``, where on this machine plugin folders were found (their
code is keyed by content), and the run key ``brainscore score`` and ``brainscore run`` find records by
(:mod:`brainscore.runner.keys`, made of what the provenance holds): the same computation has one key whichever
command made it), and a clipped score's unclipped value (a result, not part of the computation)."""


def provenance_key(provenance: dict) -> str:
    """sha256 hex digest naming the computation that ``provenance`` describes.

    Everything in ``provenance`` enters the key except :data:`EXCLUDED_FROM_KEY` (timestamps,
    durations and host details), after conversion to canonical JSON (sorted keys).

    Parameters
    ----------
    provenance : dict
        As in ``score.attrs["provenance"]``.

    Returns
    -------
    str
        64 hex characters.

    Raises
    ------
    TypeError
        If ``provenance`` is not a dict.

    Examples
    --------
    >>> provenance_key({"model": {"identifier": "m"}, "start": "x"}) == provenance_key({"model": {"identifier": "m"}})
    True
    """
    if not isinstance(provenance, dict):
        raise TypeError(f"provenance must be a dict (score.attrs['provenance']), got {type(provenance).__name__}")
    kept = {k: v for k, v in provenance.items() if k not in EXCLUDED_FROM_KEY}
    text = json.dumps(jsonable(kept), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def utc_now() -> str:
    """The current time as a UTC ISO-8601 string with microseconds."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat()


_CODE: dict | None = None


def code_info() -> dict:
    """``{"brainscore": version, "git_commit": sha or None, "git_dirty": bool or None}`` (computed once).

    The commit and dirty flag come from ``git`` in the checkout the package is imported from; both
    are ``None`` for an installed (non-checkout) package or when git is unavailable.
    """
    global _CODE
    if _CODE is None:
        from importlib.metadata import PackageNotFoundError, version
        try:
            package_version = version("brainscore")
        except PackageNotFoundError:
            package_version = None
        root = Path(__file__).resolve().parents[3]
        commit = dirty = None
        if (root / ".git").exists():
            try:
                commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                                        text=True, timeout=10, check=True).stdout.strip() or None
                status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                        capture_output=True, text=True, timeout=10, check=True).stdout
                dirty = bool(status.strip())
            except (OSError, subprocess.SubprocessError):
                commit = dirty = None
        _CODE = {"brainscore": package_version, "git_commit": commit, "git_dirty": dirty}
    return dict(_CODE)


def environment_info(device: str | None = None) -> dict:
    """Versions of Python and the numerical libraries, and the compute device (``"cpu"`` by default)."""
    from importlib.metadata import PackageNotFoundError, version
    info = {"python": platform.python_version()}
    for name, dist in (("numpy", "numpy"), ("scipy", "scipy"), ("xarray", "xarray"),
                       ("scikit-learn", "scikit-learn"), ("torch", "torch")):
        try:
            info[name] = version(dist)
        except PackageNotFoundError:
            info[name] = None
    info["device"] = device or "cpu"
    return info


def host_info() -> dict:
    """Host name, platform and the CPU threads networks run with (the setting ``torch_threads``).

    The thread count is :func:`brainscore.config.torch_threads`, the count the extractor runs
    torch with and keys activations on; read without importing torch.
    """
    from brainscore import config

    return {"hostname": platform.node(), "platform": platform.platform(), "threads": config.torch_threads()}


def collect(*, model: dict, benchmark: dict, metric: str | None = None, ceiling: dict | None = None,
            formula: str | None = None, bootstrap: dict | None = None, device: str | None = None,
            start: str | None = None, end: str | None = None, duration_s: float | None = None,
            layer_selection: dict | None = None, model_facts: dict | None = None,
            plugin_sources: dict | None = None, weights: dict | None = None) -> dict:
    """Assemble a provenance dict (see the module docstring for the sections).

    Parameters
    ----------
    model : dict
        ``identifier``, ``weights_sha256``, ``architecture_fingerprint``, ``layers``.
    benchmark : dict
        ``identifier``, ``version``, ``data_files`` (path -> sha256).
    metric : str, optional
        The metric's ``repr`` (class and parameters, seeds included).
    ceiling : dict, optional
        ``method`` (the ceiling's ``repr``), ``value``, ``error``.
    formula : str, optional
        Normalisation formula, e.g. ``"r2_over_ceiling"``.
    bootstrap : dict, optional
        ``resamples``, ``seed``, ``unit``.
    device : str, optional
        Compute device (``"cpu"``, ``"cuda:0"``).
    start, end : str, optional
        UTC ISO timestamps; ``duration_s`` seconds.
    layer_selection : dict, optional
        Region -> ``{"layer", "scores": [[layer, score], ...]}`` (recorded only when given).
    model_facts : dict, optional
        What was read off the loaded network: ``parameter_count`` (recorded only when known; not part of the
        key, since the weights' hash and the architecture fingerprint already name the network).
    plugin_sources : dict, optional
        ``"model"`` / ``"benchmark"`` -> ``{"folder", "plugin_dir"}`` for a model or benchmark declared by a plugin
        folder of ``--plugin-dir`` (:func:`brainscore.registry.plugin_source`), so ``brainscore reproduce`` finds it
        again (recorded only when given; not part of the key).
    weights : dict, optional
        ``{"status": "verified" | "unverified" | "stand-in", "files": {name: {"sha256", "status"}}}``: the weights files
        the model read and whether each was checked against a published hash
        (:func:`brainscore.models.weights.weights_summary`; recorded only when a file was read; not part of the key,
        since the weights' hash names the network).

    Returns
    -------
    dict
        JSON-serialisable.
    """
    return jsonable({
        "code": code_info(), "environment": environment_info(device), "host": host_info(),
        "model": model, "benchmark": benchmark, "metric": metric, "ceiling": ceiling, "formula": formula,
        "bootstrap": bootstrap, "start": start, "end": end, "duration_s": duration_s,
        **({"layer_selection": layer_selection} if layer_selection else {}),
        **({"model_facts": model_facts} if model_facts else {}),
        **({"plugin_sources": plugin_sources} if plugin_sources else {}),
        **({"weights": weights} if weights else {}),
    })
