"""The results layer stores outcomes without reaching into scoring's internals or the registry (docs/architecture.md)."""
from __future__ import annotations

from test_layering import GRAPH


def test_results_imports_of_scoring_only_the_outcome_and_never_the_registry():
    imported = {target for module, targets in GRAPH.items() if module.startswith("brainscore.results")
                for target in targets}
    assert {t for t in imported if t.startswith("brainscore.scoring")} == {"brainscore.scoring.outcome"}
    assert not {t for t in imported if t.startswith(("brainscore.registry", "brainscore.plugins", "brainscore.api"))}
