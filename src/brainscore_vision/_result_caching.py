"""``result_caching``'s decorators, caching nothing: what plugin code imports under that name when the package is not
installed (:mod:`brainscore.plugin_imports`). brainscore caches by content, never by a function's name and
arguments, which could serve a result computed from other data or weights.
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
