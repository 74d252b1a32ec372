"""What a PyTorch network computes, apart from its weights: a fingerprint of its architecture.

Two networks with the same parameters can compute different activations: ReLU swapped for Tanh
(no parameters), a changed stride or padding, an edited ``forward``. A cache keyed on the weights
alone would serve one network's activations for the other (issue 10, finding 1). The fingerprint
is a sha256 over

- the module tree: every sub-module's qualified name and class (module and qualified name);
- each module's constructor settings: ``extra_repr()`` plus every plain attribute that is not a
  parameter, buffer or sub-module (stride, padding, inplace, eps, momentum, ...), and its
  ``training`` flag;
- the code of every module class's ``forward`` (and of the forward of the classes it inherits
  from): its source text where :func:`inspect.getsource` finds it, otherwise the compiled code
  object (bytecode, constants, names, recursively through nested code objects);
- forward hooks and pre-hooks registered on any module (their code, as above).

It does not cover code that ``forward`` calls outside the module classes (a helper function in
another file); :func:`brainscore.caching.code_hash` keys the framework's own code.
"""
from __future__ import annotations

import hashlib
import inspect
import types
from typing import Any

__all__ = ["architecture_fingerprint", "code_identity"]

_SKIPPED_ATTRIBUTES = {"_parameters", "_buffers", "_modules", "_non_persistent_buffers_set", "training",
                       "_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
                       "_state_dict_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks",
                       "_state_dict_pre_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                       "_forward_pre_hooks_with_kwargs", "_is_full_backward_hook", "_compiled_call_impl",
                       "_version", "dump_patches", "call_super_init"}


def _code_object_identity(code: types.CodeType) -> str:
    """Bytecode, constants and names of ``code``, nested code objects included (no line numbers)."""
    parts = [code.co_code.hex(), repr(code.co_names), repr(code.co_varnames)]
    for const in code.co_consts:
        parts.append(_code_object_identity(const) if isinstance(const, types.CodeType) else repr(const))
    return "|".join(parts)


def code_identity(function: Any) -> str:
    """Text identifying the code of ``function``: its source, or else its code object.

    Parameters
    ----------
    function : callable
        A function, method, bound method or ``functools.partial``.

    Returns
    -------
    str
        ``"source:<text>"``, ``"code:<bytecode and constants>"``, or ``"repr:<type>"`` for a callable
        without Python code (a builtin).
    """
    function = getattr(function, "__func__", function)
    inner = getattr(function, "func", None)  # functools.partial
    if inner is not None and not isinstance(function, types.FunctionType):
        return f"partial:{code_identity(inner)}|{function.args!r}|{sorted(function.keywords.items())!r}"
    try:
        return "source:" + inspect.getsource(function)
    except (OSError, TypeError):
        pass
    code = getattr(function, "__code__", None)
    if code is None and callable(function):
        code = getattr(getattr(type(function), "__call__", None), "__code__", None)
    if isinstance(code, types.CodeType):
        return "code:" + _code_object_identity(code)
    return f"repr:{type(function).__module__}.{type(function).__qualname__}"


def _setting(value: Any) -> str | None:
    """A stable text for a constructor setting, or None for values that do not describe one."""
    import torch

    if isinstance(value, (bool, int, float, str, type(None), torch.dtype, torch.device)):
        return repr(value)
    if isinstance(value, (tuple, list)):
        items = [_setting(v) for v in value]
        return None if any(i is None for i in items) else f"{type(value).__name__}({','.join(items)})"
    if isinstance(value, torch.Tensor):  # a plain tensor attribute (neither parameter nor buffer)
        array = value.detach().cpu().contiguous()
        digest = hashlib.sha256(array.reshape(-1).view(torch.uint8).numpy().tobytes() if array.numel() else b"")
        return f"tensor({array.dtype},{tuple(array.shape)},{digest.hexdigest()})"
    if isinstance(value, types.FunctionType) or callable(value):
        return code_identity(value)
    return f"{type(value).__module__}.{type(value).__qualname__}"


def _forward_codes(cls: type) -> list[str]:
    """Code of ``forward`` (and ``_conv_forward``-style helpers defined on module classes) along the MRO."""
    import torch

    codes = []
    for klass in cls.__mro__:
        if klass in (torch.nn.Module, object):
            continue
        for name, member in sorted(vars(klass).items()):
            if isinstance(member, (types.FunctionType, staticmethod, classmethod)) and not name.startswith("__"):
                function = getattr(member, "__func__", member)
                codes.append(f"{klass.__module__}.{klass.__qualname__}.{name}:{code_identity(function)}")
    return codes


def architecture_fingerprint(module) -> str:
    """sha256 hex of a network's architecture and forward code (not its weights).

    Parameters
    ----------
    module : torch.nn.Module
        Any network.

    Returns
    -------
    str
        64 hex characters; changes when a sub-module's class, constructor settings, training flag,
        hooks, or the code of any method of a module class (``forward`` included) changes.

    Raises
    ------
    TypeError
        If ``module`` is not a ``torch.nn.Module``.
    """
    import torch

    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"architecture_fingerprint needs a torch.nn.Module, got {type(module).__name__}")
    digest = hashlib.sha256()
    seen_classes: set[type] = set()
    for name, sub in module.named_modules(remove_duplicate=False):
        cls = type(sub)
        digest.update(f"\0module:{name}:{cls.__module__}.{cls.__qualname__}:training={sub.training}".encode())
        try:
            digest.update(f"\0extra:{sub.extra_repr()}".encode())
        except Exception as error:  # noqa: BLE001 - a broken extra_repr must not stop the fingerprint
            digest.update(f"\0extra-error:{type(error).__name__}".encode())
        for attribute, value in sorted(vars(sub).items()):
            if attribute in _SKIPPED_ATTRIBUTES:
                continue
            text = _setting(value)
            if text is not None:
                digest.update(f"\0attr:{attribute}={text}".encode())
        for kind in ("_forward_hooks", "_forward_pre_hooks"):
            for hook in getattr(sub, kind, {}).values():
                digest.update(f"\0{kind}:{code_identity(hook)}".encode())
        if cls not in seen_classes:
            seen_classes.add(cls)
            for code in _forward_codes(cls):
                digest.update(f"\0code:{code}".encode())
    for kind in ("_global_forward_hooks", "_global_forward_pre_hooks"):
        for hook in getattr(torch.nn.modules.module, kind, {}).values():
            digest.update(f"\0{kind}:{code_identity(hook)}".encode())
    return digest.hexdigest()
