"""The reference's ``bootstrap_error``, ``attach_error`` and ``declare_no_error`` and their attribute keys: names over
:mod:`brainscore.metrics.bootstrap` (:func:`~brainscore.metrics.bootstrap.unit_bootstrap_error`,
:func:`~brainscore.metrics.bootstrap.attach_unit_error`, :func:`~brainscore.metrics.bootstrap.declare_no_error`)."""
from __future__ import annotations

from brainscore.metrics.bootstrap import (ERROR_KEY, ERROR_NAN_REASON_KEY, ERROR_OVER_KEY, N_BOOTSTRAP_KEY,
                                          declare_no_error)
from brainscore.metrics.bootstrap import attach_unit_error as attach_error
from brainscore.metrics.bootstrap import unit_bootstrap_error as bootstrap_error

__all__ = ["bootstrap_error", "attach_error", "declare_no_error", "ERROR_KEY", "ERROR_OVER_KEY", "N_BOOTSTRAP_KEY",
           "ERROR_NAN_REASON_KEY"]
