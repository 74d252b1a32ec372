"""``LazyLoad``, ``fullname`` and ``recursive_dict_merge``: the reference's ``brainscore_vision.utils``. The compat
benchmark helpers unwrap a ``LazyLoad`` (:func:`unwrap`) into brainscore's lazy sources, so wrapped data are still
read only when a model is scored.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

__all__ = ["LazyLoad", "unwrap", "fullname", "recursive_dict_merge"]

_UNSET = object()


class LazyLoad:
    """Proxy for ``load_fn()``, called once on first use (thread-safe; TypeError if not callable): attribute access,
    indexing, ``len``, iteration and calls go to the content, and ``isinstance(lazy, cls)`` answers for the content
    (loading it), so brainscore's metrics and ceilings accept a ``LazyLoad`` of an assembly."""

    def __init__(self, load_fn: Callable[[], Any]):
        if not callable(load_fn):
            raise TypeError(f"LazyLoad needs a function that builds the content, got {type(load_fn).__name__}")
        object.__setattr__(self, "_load_fn", load_fn)
        object.__setattr__(self, "_content", _UNSET)
        object.__setattr__(self, "_lock", threading.Lock())

    @property
    def content(self) -> Any:
        """The built content (built now if needed)."""
        if self._content is _UNSET:
            with self._lock:
                if self._content is _UNSET:
                    object.__setattr__(self, "_content", self._load_fn())
        return self._content

    def load(self) -> Any:
        """The content (a zero-argument function, for ``brainscore``'s lazy sources)."""
        return self.content

    @property
    def __class__(self):  # noqa: D105 - isinstance(lazy, DataAssembly) sees the content's class (loads it)
        return type(self.content)

    @property
    def loaded(self) -> bool:
        """Whether the content has been built."""
        return self._content is not _UNSET

    def __getattr__(self, name: str) -> Any:
        return getattr(self.content, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.content, name, value)

    def __getitem__(self, item: Any) -> Any:
        return self.content[item]

    def __setitem__(self, item: Any, value: Any) -> None:
        self.content[item] = value

    def __len__(self) -> int:
        return len(self.content)

    def __iter__(self):
        return iter(self.content)

    def __contains__(self, item: Any) -> bool:
        return item in self.content

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.content(*args, **kwargs)

    def __repr__(self) -> str:
        state = repr(self._content) if self.loaded else f"not loaded: {getattr(self._load_fn, '__qualname__', '?')}"
        return f"LazyLoad({state})"


def unwrap(value: Any) -> Any:
    """A ``LazyLoad`` as a zero-argument function returning its content (``brainscore``'s lazy sources); else ``value``."""
    return value.load if isinstance(value, LazyLoad) else value


def content(value: Any) -> Any:
    """The content of a ``LazyLoad`` (built now if needed), else ``value`` itself (what a function of the data, e.g.
    a plugin's ceiler, is given; :func:`unwrap` gives ``brainscore``'s lazy sources the loader instead)."""
    return value.content if type(value) is LazyLoad else value


def fullname(obj: Any) -> str:
    """``module.ClassName`` of ``obj``'s class (only ``ClassName`` for built-in types).

    >>> from collections import OrderedDict
    >>> fullname(OrderedDict())
    'collections.OrderedDict'
    """
    cls = type(obj)  # the real class (a LazyLoad's __class__ answers for its content)
    module = cls.__module__
    return cls.__name__ if module in (None, "builtins") else f"{module}.{cls.__name__}"


def recursive_dict_merge(dict1: dict, dict2: dict) -> dict:
    """``dict1`` updated in place (and returned) with ``dict2``, nested dicts merged key by key (TypeError for a
    non-dict).

    >>> recursive_dict_merge({'a': {'x': 1, 'y': 2}, 'b': 1}, {'a': {'y': 3}, 'c': 4})
    {'a': {'x': 1, 'y': 3}, 'b': 1, 'c': 4}
    """
    if not isinstance(dict1, dict) or not isinstance(dict2, dict):
        raise TypeError(f"recursive_dict_merge merges two dicts, got {type(dict1).__name__} and {type(dict2).__name__}")
    for key, value in dict2.items():
        if isinstance(value, dict) and isinstance(dict1.get(key), dict):
            recursive_dict_merge(dict1[key], value)
        else:
            dict1[key] = value
    return dict1
