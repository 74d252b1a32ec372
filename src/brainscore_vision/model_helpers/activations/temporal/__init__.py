"""The reference's temporal (video) activations helpers, over :mod:`brainscore.data.clips` and
:mod:`brainscore.models.extraction.temporal`; importing it imports nothing heavy (no torch, PyAV on first read)."""
