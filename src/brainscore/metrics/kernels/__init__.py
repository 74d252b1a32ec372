"""Array kernels of the metrics: pure functions on numpy arrays or torch tensors (CPU or CUDA).

Each kernel is written once against the Array API standard, with the namespace that
``array_api_compat.array_namespace`` gives for its inputs and the few operations the standard lacks
kept in :mod:`.backend` (the one backend mechanism), and gives the same numbers on numpy and
torch. No labels, no xarray: the metric classes align assemblies and call these.

- :mod:`.correlation`: Pearson r per column (vectorised over neuroids), Spearman-Brown, Pearson r of
  every pair of columns of two arrays.
- :mod:`.regression`: cross-validated regression chosen by name (``pls``, ``ridge``, ``ridgecv``,
  ``linear``, ``neuron_to_neuron``); one module per solver family (:mod:`.pls`, :mod:`.ridge`,
  :mod:`.least_squares`, :mod:`.single_unit`) sharing :mod:`.design`, one Gram (or covariance)
  matrix across folds.
- :mod:`.rdm`: correlation RDMs and their Spearman comparison; :mod:`.cka`: linear CKA.

Submodules are imported on demand (``from brainscore.metrics.kernels import regression``).
"""
