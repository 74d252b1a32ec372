"""``CKA``, ``CKACrossValidated``: the reference's ``cka`` metric module (see :mod:`.metric`)."""
from brainscore_vision.metrics.cka.metric import CKA, CKACrossValidated

__all__ = ["CKA", "CKACrossValidated"]
