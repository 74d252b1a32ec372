"""Submission checks: :mod:`.check_models` (``check_base_models``, ``check_brain_model_processing``)."""
