"""What plugin code imports as ``result_caching`` when that package is not installed: its decorators, caching
nothing.

The reference's benchmarks and some model plugins decorate functions with ``result_caching.store`` (results
kept on disk under the function's name and arguments). brainscore caches by content instead (its own
activations, ceilings and scores), never by a name, which could serve a result computed from other data or
weights; so here the decorated functions simply run. :mod:`brainscore.plugin_imports` maps the name
``result_caching`` to this module only when no ``result_caching`` is installed.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

__all__ = ["store", "store_xarray", "store_dict", "store_netcdf", "cache", "is_iterable"]


def store(*args: Any, **kwargs: Any) -> Callable:
    """``@store()`` / ``@store(identifier_ignore=[...])``: the function itself (nothing is cached)."""
    if len(args) == 1 and callable(args[0]) and not kwargs:  # used without parentheses
        return args[0]

    def decorator(function: Callable) -> Callable:
        @functools.wraps(function)
        def run(*call_args: Any, **call_kwargs: Any) -> Any:
            return function(*call_args, **call_kwargs)
        return run
    return decorator


store_xarray = store_dict = store_netcdf = cache = store


def is_iterable(value: Any) -> bool:
    """True for lists, tuples, sets, arrays and other iterables except strings (result_caching's helper)."""
    if isinstance(value, (str, bytes)):
        return False
    try:
        iter(value)
    except TypeError:
        return False
    return True
