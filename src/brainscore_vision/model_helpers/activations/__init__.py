"""Activations wrappers: :mod:`.pytorch` (``PytorchWrapper``, ``load_preprocess_images``)."""
