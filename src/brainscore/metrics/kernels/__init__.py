"""Array kernels of the metrics: pure functions on numpy arrays or torch tensors (CPU or CUDA).

Each kernel is written once against the Array API standard, with the namespace that
``array_api_compat.array_namespace`` gives for its inputs and the few operations the standard lacks
kept in :mod:`._namespace` (the one backend mechanism), and gives the same numbers on numpy and
torch. No labels, no xarray: the metric classes align assemblies and call these.

- :mod:`.correlation`: Pearson r per column (vectorised over neuroids), Spearman-Brown, correlation
  matrices.
- :mod:`.regression`: cross-validated PLS, ridge, ridge with leave-one-out alpha, least squares and
  single-unit predictions, sharing one Gram (or covariance) matrix across folds.
- :mod:`.similarity`: RDMs, RDM comparison and CKA.

Submodules are imported on demand (``from brainscore.metrics.kernels import regression``).
"""
