"""A model plugin's ``metadata.yml`` (the reference Brain-Score's model card fields), parsed within bounds.

YAML aliases let a few hundred bytes stand for gigabytes: nine anchors of nine aliases each (a "billion
laughs") parse into shared Python objects, but every page that prints them expands them again (a 362-byte
file made its model's page 45.7 MB in 29 s, and the anonymous leaderboard filter ``/?m.architecture=lol``
91 MB). A ``metadata.yml`` lists a few short fields per model, so it is held to:

- at most :data:`MAX_BYTES` bytes of text,
- at most :data:`MAX_ALIASES` uses of an alias (``*name``; merge keys ``<<: *name`` count too),
- at most :data:`MAX_DEPTH` levels of nested mappings and sequences,
- at most :data:`MAX_EXPANDED` units once every alias is expanded (one per mapping, sequence and scalar,
  plus each scalar's characters), which also refuses an alias that holds itself,

and only the YAML a safe loader builds (no Python objects); a number too long for Python to convert is
refused like the rest. :func:`parse` raises :class:`MetadataRejected` saying which bound was broken: the
upload check refuses the zip with it (:func:`brainscore.web.checks.check_zip`), and the model card shows it
as the file's problem for a file stored before these bounds (:func:`brainscore.web.cards.metadata`).
"""
from __future__ import annotations

import yaml

MAX_BYTES = 64 * 1024
MAX_ALIASES = 32
MAX_DEPTH = 12
MAX_EXPANDED = 256 * 1024

__all__ = ["MAX_BYTES", "MAX_ALIASES", "MAX_DEPTH", "MAX_EXPANDED", "MetadataRejected", "parse", "layout_problem"]

LAYOUT = "models:\n  my-model:\n    architecture: DCNN\n    total_parameter_count: 11689512"
"""The layout of a ``metadata.yml`` (the reference's): each model's fields under ``models:`` and its identifier."""


class MetadataRejected(ValueError):
    """A ``metadata.yml`` that is not YAML or breaks one of this module's bounds (the message says which)."""


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, counting alias uses and nesting while it composes the document's nodes."""

    def __init__(self, stream, name: str):
        super().__init__(stream)
        self.name, self.aliases, self.depth = name, 0, 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise MetadataRejected(f"{self.name} uses aliases (*name) more than {MAX_ALIASES} times; write the "
                                       f"values out (a model card needs no aliases)")
            return super().compose_node(parent, index)
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise MetadataRejected(f"{self.name} nests mappings and lists more than {MAX_DEPTH} levels deep; "
                                       f"write models: {{my-model: {{field: value}}}}")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _expanded_size(node: yaml.Node, name: str) -> int:
    """The size of ``node`` with every alias expanded: 1 per node plus each scalar's length.

    Raises
    ------
    MetadataRejected
        As soon as the size passes :data:`MAX_EXPANDED` or the expanded nesting passes :data:`MAX_DEPTH`
        (an alias inside its own anchor nests for ever).
    """
    size = 0
    stack = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise MetadataRejected(f"{name} nests more than {MAX_DEPTH} levels deep once its aliases are expanded "
                                   f"(an alias inside its own anchor?); write the values out")
        size += 1
        if isinstance(current, yaml.ScalarNode):
            size += len(current.value)
        elif isinstance(current, yaml.SequenceNode):
            stack += [(item, depth + 1) for item in current.value]
        else:  # a MappingNode: (key, value) pairs
            stack += [(part, depth + 1) for pair in current.value for part in pair]
        if size > MAX_EXPANDED:
            raise MetadataRejected(f"{name} expands to more than {MAX_EXPANDED // 1024} KiB once its aliases "
                                   f"(*name) are expanded; write the values out")
    return size


def parse(text: str | bytes, name: str = "metadata.yml"):
    """``text`` parsed as YAML within this module's bounds (a dict, list, scalar or None).

    Parameters
    ----------
    text : str or bytes
        The file's content (bytes are decoded as UTF-8).
    name : str
        The file's name in messages (``my_plugin/metadata.yml``).

    Raises
    ------
    MetadataRejected
        If the text is longer than :data:`MAX_BYTES`, not UTF-8, not YAML, or breaks a bound on aliases,
        nesting or expanded size, or holds a value Python cannot build (an integer of over 4300 digits).
    """
    size = len(text.encode("utf-8") if isinstance(text, str) else text)
    if size > MAX_BYTES:
        raise MetadataRejected(f"{name} has {size:,} bytes; the limit is {MAX_BYTES // 1024} KiB "
                               f"(a model card's fields are a few lines)")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise MetadataRejected(f"{name} is not UTF-8 text ({error})") from None
    loader = _BoundedLoader(text, name)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, name)
        return loader.construct_document(node)
    except MetadataRejected:
        raise
    except yaml.YAMLError as error:
        raise MetadataRejected(f"{name} is not valid YAML: {error}") from None
    except (ValueError, TypeError, RecursionError, MemoryError) as error:  # a value the constructor cannot build
        raise MetadataRejected(f"{name} holds a value that cannot be read: {str(error)[:200]}") from None
    finally:
        loader.dispose()


def layout_problem(data, name: str = "metadata.yml") -> str | None:
    """Why the parsed ``data`` of ``name`` is not laid out as the reference's (:data:`LAYOUT`: fields under
    ``models:`` and each model's identifier), else None. A flat file (fields at its top level) is refused with the
    expected layout rather than ignored (its card would show nothing, and nothing says why)."""
    if data is None:
        return None
    shown = LAYOUT.replace("\n", " / ")
    if not isinstance(data, dict):
        return f"{name} must be a mapping with a models: section, laid out as {shown}"
    models = data.get("models")
    if models is None:
        fields = ", ".join(sorted(str(k) for k in data)[:6])
        return (f"{name} has no models: section (it has {fields or 'nothing'} at its top level); put each model's "
                f"fields under models: and its identifier, laid out as {shown}")
    if not isinstance(models, dict) or not all(isinstance(v, dict) or v is None for v in models.values()):
        return f"{name}'s models: must map each model identifier to its fields, laid out as {shown}"
    return None
