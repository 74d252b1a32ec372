"""The reference's benchmark helpers (``neural_common``, ``properties_common``, ``screen``), on ``brainscore``'s benchmarks."""
