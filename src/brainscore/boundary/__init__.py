"""The boundary between an untrusted model and the trusted scorer (issue 32: scores no submitter can forge).

A submitted (or a stranger's) model is the only untrusted part of a score. It runs alone in a sandbox
(:mod:`~brainscore.boundary.launcher`) as a *model server* (:mod:`~brainscore.boundary.server`) that answers the
:class:`~brainscore.models.BrainModel` calls over a narrow channel (:mod:`~brainscore.boundary.channel`). The
benchmark, its data, the metric, the ceiling, the bootstrap and the record stay in the trusted process, which sees
the model as a :class:`~brainscore.boundary.remote.RemoteModel` and checks every answer before the benchmark does
(:mod:`~brainscore.boundary.crossing`). The model receives the stimuli's images and ids (a task's fitting set also
its labels), never the responses, labels or ceilings it is scored against, and nothing it prints is read as a result.

Who uses it: the website's queue (the trusted side is :mod:`~brainscore.boundary.scorer`, a process of its own
beside the model server), ``brainscore score --sandbox`` and ``brainscore run --sandbox`` (the trusted side is the
scoring process itself, with a :class:`~brainscore.boundary.process.ModelServer`).
"""
from brainscore.boundary.crossing import BoundaryViolation
from brainscore.boundary.process import Limits, ModelServer
from brainscore.boundary.remote import ModelError, ModelServerEnded, RemoteModel

__all__ = ["BoundaryViolation", "Limits", "ModelServer", "ModelError", "ModelServerEnded", "RemoteModel"]
