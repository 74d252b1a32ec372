"""The reference's model helpers (activations wrappers, brain transformation, submission checks, weights),
on :mod:`brainscore.models`."""
