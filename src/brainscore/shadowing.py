"""Say which ``brainscore_vision`` / ``brainscore_core`` is in use when the reference's own are installed too.

brainscore ships thin ``brainscore_vision`` and ``brainscore_core`` packages (adapters over its own
registries, models, benchmarks, metrics and data). The reference Brain-Score distributions
(``brainscore-vision``, ``brainscore-core`` on PyPI, or a clone installed with ``pip install -e``)
use the same import names; Python imports whichever comes first on ``sys.path``. Two mistakes are
possible, and both are caught here when one of our packages is imported:

- one of the reference's distributions is installed and shadowed by ours: a :class:`ShadowWarning`
  says which package is in use (by its folder), which is shadowed, and how to switch;
- ours and the reference's would be mixed (our ``brainscore_vision`` with the reference's
  ``brainscore_core``, or the other way round): an :class:`ImportError` says which is which and how
  to use one pair. Their classes are not interchangeable, so mixing them never works.

Only the standard library is used and the reference's packages are never imported (their location
is read from their metadata and from :func:`importlib.util.find_spec`).
"""
from __future__ import annotations

import importlib.util
import warnings
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent
"""The folder holding brainscore's own ``brainscore``, ``brainscore_vision`` and ``brainscore_core``."""
PACKAGES = ("brainscore_vision", "brainscore_core")


class ShadowWarning(UserWarning):
    """The reference's own ``brainscore_vision``/``brainscore_core`` is installed but brainscore's is in use."""


def _installed(package: str) -> tuple[str, Path | None] | None:
    """(distribution name and version, folder of its package) of the reference's distribution of ``package``,
    or None when none is installed (brainscore's own distribution, ``brainscore``, does not count)."""
    for name in (package.replace("_", "-"), package):
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            continue
        if (dist.metadata.get("Name") or "").lower().replace("_", "-") == "brainscore":
            continue
        folder = None
        try:
            located = Path(dist.locate_file(package))
            if (located / "__init__.py").is_file():
                folder = located.resolve()
        except (OSError, TypeError, ValueError):
            folder = None
        return f"{dist.metadata.get('Name', name)} {dist.version}", folder
    return None


def _origin(package: str) -> Path | None:
    """The folder ``import package`` would load (without importing it), or None when it is not importable."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).resolve().parent


def check(package: str) -> None:
    """Check, at the import of brainscore's ``package``, that it is not mixed with the reference's other package,
    and warn when the reference's own distribution of it is installed but shadowed.

    Parameters
    ----------
    package : {"brainscore_vision", "brainscore_core"}

    Raises
    ------
    ImportError
        If the sibling package (``brainscore_core`` for ``brainscore_vision`` and vice versa) would be
        imported from the reference's distribution: the message names both folders and how to switch.
    """
    if package not in PACKAGES:
        raise ValueError(f"package must be one of {PACKAGES}, got {package!r}")
    ours = SOURCE / package
    sibling = PACKAGES[1 - PACKAGES.index(package)]
    sibling_origin = _origin(sibling)
    if sibling_origin is not None and sibling_origin != SOURCE / sibling:
        raise ImportError(
            f"{package} is brainscore's (from {ours}) but {sibling} would be imported from {sibling_origin}, the "
            f"reference Brain-Score's own: the two are not interchangeable and must not be mixed. To use "
            f"brainscore's adapters, put {SOURCE} first on sys.path (or `pip uninstall {sibling.replace('_', '-')}`); "
            f"to use the reference's packages, put the folder holding both of them first on PYTHONPATH "
            f"(or `pip uninstall brainscore`).")
    found = _installed(package)
    if found is None:
        return
    name, folder = found
    if folder is not None and folder == ours:
        return
    where = f" in {folder}" if folder is not None else ""
    warnings.warn(
        f"{package} is brainscore's adapter package (from {ours}); the reference's distribution {name}{where} is "
        f"installed too and is not used. Scores are computed by brainscore. To use the reference's package "
        f"instead, put its folder before {SOURCE} on PYTHONPATH or `pip uninstall brainscore`; to silence this, "
        f"`pip uninstall {name.split()[0]}`.", ShadowWarning, stacklevel=3)
