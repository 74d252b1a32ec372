"""Candidate layers of a network that lists none: the outputs of its top-level blocks.

A model plugin normally names its candidate layers (``layers=[...]``, in depth order). A network
given without them (an untrained torchvision or timm architecture, a bare ``torch.nn.Module``)
gets them from its structure, by this definition:

1. Walk the module's children in registration order (``named_children``).
2. **Descend** into a child that is a plain container (exactly ``nn.Sequential``, ``nn.ModuleList``
   or ``nn.ModuleDict``, not a subclass such as torchvision's ``Conv2dNormActivation``), or a
   *stage*: a module with a plain-container child of at least two entries that are all of one
   class, its only such child, holding more than half of the module's parameters (a stack of repeated blocks, e.g.
   timm's ``ConvNeXtStage.blocks`` or torchvision's ``Encoder.layers``). A stage contributes its
   other children and the blocks of its stack.
3. **Skip** children that do not change a tensor in evaluation (``Dropout*``, ``Identity``,
   ``Flatten``).
4. Every other child is a candidate: its output is a candidate layer, named by its dotted path.

So a ResNet gives ``conv1, bn1, relu, maxpool, layer1.0, …, layer4.1, avgpool, fc``; a timm
EfficientNet gives ``conv_stem, bn1, blocks.0.0, …, blocks.6.0, conv_head, bn2, global_pool,
classifier``; a ViT gives its patch embedding, each transformer block, the final norm and the head.

Registration order is taken for depth order; a network whose forward runs its children in
another order (rare: e.g. the inception auxiliary head, registered before the last blocks) should
list its layers itself.
"""
from __future__ import annotations

from brainscore.errors import ValidationError

__all__ = ["structural_candidates", "CANDIDATE_DEFINITION"]

#: Short name of the definition above, stored with every commitment that used it.
CANDIDATE_DEFINITION = "top-level-blocks-v1"


def _plain_container(module) -> bool:
    import torch.nn as nn

    return type(module) in (nn.Sequential, nn.ModuleList, nn.ModuleDict)


def _skipped(module) -> bool:
    import torch.nn as nn
    from torch.nn.modules.dropout import _DropoutNd

    return isinstance(module, (_DropoutNd, nn.Identity, nn.Flatten))


def _parameters(module) -> int:
    return sum(parameter.numel() for parameter in module.parameters())


def _stack(module):
    """The name of ``module``'s stack of repeated blocks, or None.

    A stack is ``module``'s only plain-container child of >= 2 entries of one class, and it holds
    more than half of ``module``'s parameters (so a block's inner lists, e.g. inception branches or
    Res2Net's ``convs`` and ``bns``, are not stacks).
    """
    stacks = [(name, child) for name, child in module.named_children()
              if _plain_container(child) and len(child) >= 2 and len({type(entry) for entry in child.children()}) == 1]
    if len(stacks) == 1 and 2 * _parameters(stacks[0][1]) > _parameters(module):
        return stacks[0][0]
    return None


def structural_candidates(module) -> list[str]:
    """Candidate layers of ``module`` from its structure (see the module docstring for the definition).

    Parameters
    ----------
    module : torch.nn.Module
        The network (weights are not read: a model built on the ``meta`` device works).

    Returns
    -------
    list of str
        Dotted module names (as in ``named_modules``) in registration order, at least one.

    Raises
    ------
    ValidationError
        If ``module`` is not a torch module or has no child module to take an output from.
    """
    import torch.nn as nn

    if not isinstance(module, nn.Module):
        raise ValidationError(f"candidate layers come from a torch.nn.Module's structure; got "
                              f"{type(module).__name__}. Give the layers yourself: layers=[...]")
    names: list[str] = []

    def visit(prefix: str, parent) -> None:
        for name, child in parent.named_children():
            path = f"{prefix}.{name}" if prefix else name
            if _skipped(child):
                continue
            if _plain_container(child) and len(child) > 0:
                visit(path, child)
            elif _stack(child) is not None:
                visit(path, child)
            else:
                names.append(path)

    visit("", module)
    if not names:
        raise ValidationError(f"{type(module).__name__} has no child modules to take candidate layers from; "
                              f"give them yourself: layers=[...]")
    return names
