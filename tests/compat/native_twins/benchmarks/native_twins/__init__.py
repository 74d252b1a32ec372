"""``NativeCowley2026.210325.V4-sparseness``: the lifetime-sparseness benchmark of
``plugin_folder/benchmarks/compat_cowley2026`` built natively on the built-in Cowley 2026 data."""
from brainscore.registry import register_benchmark


@register_benchmark("NativeCowley2026.210325.V4-sparseness", parent="V4")
def _sparseness():
    from .benchmark import sparseness_benchmark

    return sparseness_benchmark()
