"""The content-keyed cache: keys built from everything a value depends on, atomic entries.

See :mod:`brainscore.caching.cache`.
"""
from brainscore.caching.cache import CODE_VERSION, Cache, content_key, enabled

__all__ = ["Cache", "content_key", "enabled", "CODE_VERSION"]
