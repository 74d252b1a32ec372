"""The benchmark plugin's own test, as the reference's tutorial asks for."""
from pytest import approx


def test_the_benchmarks_load_with_their_ceilings():
    from brainscore_vision import load_benchmark

    for identifier in ['CompatCowley2026.210325.V4-pls', 'CompatCowley2026.210325.V4-pls_by_hand']:
        benchmark = load_benchmark(identifier)
        assert benchmark.identifier == identifier
        assert 0 < float(benchmark.ceiling) <= 1
    # the data against bootstrap resamples of themselves (50 neurons): below 1
    assert load_benchmark('CompatCowley2026.210325.V4-sparseness').ceiling == approx(0.909, abs=0.001)
