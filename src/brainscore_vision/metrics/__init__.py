"""The reference's metric plugin modules (``brainscore_vision.metrics.<folder>``), naming ``brainscore``'s metrics.

Each folder of the reference's ``brainscore_vision/metrics`` that ``brainscore`` implements has a
package here exporting the reference's class names, and its ``metric.py``/``ceiling.py`` module where
the reference's tests or plugins import from them (``from brainscore_vision.metrics.rdm.metric import
RDM``). The names are ``brainscore``'s own classes (:mod:`brainscore.metrics`) or thin adapters that
take the reference's arguments; nothing here registers a metric: ``brainscore``'s metric plugins
(``brainscore/plugins/metrics``) register them under the reference's identifiers, which
``brainscore_vision.load_metric`` loads.

Here too: ``Score``, ``Metric`` and ``Ceiling`` (:mod:`brainscore_core.metrics`).
"""
from brainscore_core.metrics import Ceiling, Metric, Score

__all__ = ["Score", "Metric", "Ceiling"]
