"""pytest plugin that :mod:`tools.reference_suite` installs as the ``conftest.py`` of its scratch test tree.

It does two things, and changes no test:

1. **Loads each metric plugin's ``test.py`` as a submodule of our package.** The reference's metric
   tests live inside their plugin folder and import their neighbours relatively (``from .metric
   import RDM``, ``from .ceiling import PearsonCorrelation``). The runner copies each one to
   ``metric_tests/<folder>/test.py`` (a folder with no ``__init__.py`` and no package beside it) and
   this plugin loads it under the module name ``brainscore_vision.metrics.<folder>.test``, so
   ``.metric`` resolves to *our* ``brainscore_vision.metrics.<folder>.metric``. The reference's own
   ``brainscore_vision`` package is never on ``sys.path``.
2. **Makes torchvision importable** in the test process, as brainscore does in its own processes
   (:func:`pytest_configure`): the environment pairs the CPU torch with a CUDA torchvision build.
3. **Records every outcome** (collection errors included, with the exception's type and first
   line) into the JSON file named by ``BRAINSCORE_REFERENCE_OUTCOMES``, which the runner classifies.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

_OUTCOMES: list[dict] = []
_METRIC_TESTS = "metric_tests"


def _exception(excinfo) -> dict:
    """Type name and message (first 600 characters) of a pytest ``ExceptionInfo``."""
    if excinfo is None:
        return {}
    value = excinfo.value
    name = type(value).__name__
    module = type(value).__module__
    if module not in ("builtins", None):
        name = f"{module}.{name}"
    return {"exception": name, "message": str(value)[:600]}


class ReferencePluginTestModule(pytest.Module):
    """A metric plugin's ``test.py`` imported as ``brainscore_vision.metrics.<folder>.test``."""

    def _getobj(self):
        folder = self.path.parent.name
        package = f"brainscore_vision.metrics.{folder}"
        name = f"{package}.test"
        if name in sys.modules:
            return sys.modules[name]
        try:
            importlib.import_module(package)  # ours; its absence is the gap this test reports
            spec = None
            for finder in sys.meta_path:  # pytest's assertion-rewriting hook first, as pytest itself does
                if type(finder).__name__ == "AssertionRewritingHook":
                    spec = finder.find_spec(name, [str(self.path.parent)])
                    break
            if spec is None or spec.origin != str(self.path):
                spec = importlib.util.spec_from_file_location(name, self.path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                sys.modules.pop(name, None)
                raise
        except Exception as error:
            self._reference_collect_error = error
            raise self.CollectError(f"{type(error).__module__}.{type(error).__name__}: {error}") from error
        return module


def pytest_configure(config):
    """Make torchvision importable in this process as brainscore does in its own (the environment's torchvision is
    a CUDA build next to the CPU torch; its ``nms`` operator must be defined first, pytorch/vision 9085). The
    reference's tests import torchvision in their own code (``from torchvision.models.alexnet import alexnet``)."""
    try:
        from brainscore.models.torchvision_loading import import_torchvision

        import_torchvision()
    except Exception:  # noqa: BLE001 (no torchvision: the tests that need it fail and say so)
        pass


def pytest_pycollect_makemodule(module_path: Path, parent):
    """Metric plugin tests (``metric_tests/<folder>/test.py``) as :class:`ReferencePluginTestModule`."""
    if module_path.name == "test.py" and module_path.parent.parent.name == _METRIC_TESTS:
        return ReferencePluginTestModule.from_parent(parent, path=module_path)
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Record the exception of a failing setup/call/teardown."""
    outcome = yield
    report = outcome.get_result()
    if report.failed or (report.when == "call") or (report.skipped and report.when == "setup"):
        entry = {"nodeid": item.nodeid, "when": report.when, "outcome": report.outcome,
                 "markers": sorted({m.name for m in item.iter_markers()})}
        if report.failed:
            entry.update(_exception(call.excinfo))
        elif report.skipped and call.excinfo is not None:
            entry["message"] = str(call.excinfo.value)[:600]
        _OUTCOMES.append(entry)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """Record a file that does not collect, with its exception."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        error = getattr(collector, "_reference_collect_error", None)
        entry = {"nodeid": report.nodeid, "when": "collect", "outcome": "error"}
        if error is not None:
            entry.update({"exception": f"{type(error).__module__}.{type(error).__name__}".replace("builtins.", ""),
                          "message": str(error)[:600]})
        else:
            text = str(report.longrepr)
            last = [line for line in text.splitlines() if line.startswith("E   ")]
            entry["message"] = (last[-1][4:] if last else text[-600:])[:600]
            head = entry["message"].split(":", 1)[0].strip()
            entry["exception"] = head if head.replace(".", "").replace("_", "").isalnum() else "CollectError"
        _OUTCOMES.append(entry)


def pytest_deselected(items):
    """Record tests deselected by the marker expression (the reference's S3 and GPU markers)."""
    for item in items:
        _OUTCOMES.append({"nodeid": item.nodeid, "when": "collect", "outcome": "deselected",
                          "markers": sorted({m.name for m in item.iter_markers()})})


def pytest_sessionfinish(session):
    target = os.environ.get("BRAINSCORE_REFERENCE_OUTCOMES")
    if target:
        Path(target).write_text(json.dumps(_OUTCOMES, indent=1))
