"""Scoring at scale: a grid of models x benchmarks on Dask (``brainscore run``), or in-process (``brainscore score``).

- :func:`~brainscore.runner.grid.pairs` expands patterns and comma lists into (model, benchmark) pairs;
- :func:`~brainscore.runner.engine.run` runs them on a Dask cluster as staged tasks (layer selection ->
  shared activations -> score, ceilings once per benchmark), :func:`~brainscore.runner.engine.run_sequential`
  one after the other here; both skip pairs already recorded and record every result and failure;
- :func:`~brainscore.runner.clusters.connect` builds the cluster (LocalCluster, an existing scheduler,
  or dask-jobqueue).

This layer imports scoring, the registry and below; the command line (``brainscore.cli.run``) is a
thin shell over it.
"""
from brainscore.runner.engine import all_recorded, run, run_sequential
from brainscore.runner.grid import Pair, expand, pairs
from brainscore.results.records import open_outcome_store

__all__ = ["run", "run_sequential", "all_recorded", "pairs", "expand", "Pair", "open_outcome_store"]
