"""The content-keyed cache: keys built from everything a value depends on (code included), verified
entries, inter-process locks.

See :mod:`brainscore.caching.cache` and :mod:`brainscore.caching.code`.
"""
from brainscore.caching.cache import (Cache, CacheWarning, check_home, commit_file, content_key, enabled, entry_lock,
                                      file_sha256, jsonable, locked_entry, remove_stale_parts, verified, verify_file,
                                      verify_manifest, write_manifest)
from brainscore.caching.code import callable_identity, code_hash
from brainscore.caching.files import SETTLE_NS, file_hashes, file_state, file_state_text, is_settled

__all__ = ["Cache", "CacheWarning", "SETTLE_NS", "callable_identity", "check_home", "content_key", "enabled",
           "code_hash", "commit_file", "entry_lock", "file_hashes", "file_sha256", "file_state", "file_state_text",
           "is_settled", "jsonable", "locked_entry", "remove_stale_parts", "verified", "verify_file", "verify_manifest",
           "write_manifest"]
