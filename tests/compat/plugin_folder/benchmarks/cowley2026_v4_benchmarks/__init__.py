"""Three benchmarks on Cowley et al. (2026) V4 session 210325, written as the reference's neural-benchmark guide
shows: a NeuralBenchmark (PLS), a PropertiesBenchmark (lifetime sparseness) and a BenchmarkBase subclass with its
own ``__call__`` (PLS, recorded and normalised by hand)."""
from brainscore_vision import benchmark_registry
from .benchmark import CompatCowleyV4PLS, CompatCowleyV4Sparseness, CompatCowleyV4ByHand

benchmark_registry['CompatCowley2026.210325.V4-pls'] = CompatCowleyV4PLS
benchmark_registry['CompatCowley2026.210325.V4-sparseness'] = CompatCowleyV4Sparseness
benchmark_registry['CompatCowley2026.210325.V4-pls_by_hand'] = CompatCowleyV4ByHand
