"""``LayerPCA``: the reference's hook that reduces each layer to its first principal components.

The reference fits the components of every layer on 1,000 ImageNet validation images that it
downloads; those images are not available here, so the hook cannot be attached. ``brainscore`` reduces
large layers itself where a metric needs it (layer selection works on the full features).
"""
from __future__ import annotations

from typing import Any

__all__ = ["LayerPCA"]


class LayerPCA:
    """Not available here: :meth:`hook` raises (see the module notes)."""

    @classmethod
    def hook(cls, activations_extractor: Any, n_components: int) -> None:
        """Raises
        ------
        NotImplementedError
            Always: the components would be fitted on ImageNet validation images that are not here.
        """
        raise NotImplementedError(f"LayerPCA.hook(..., n_components={n_components}): the reference fits the "
                                  f"components on 1000 ImageNet validation images it downloads, which brainscore "
                                  f"does not have; extract the full layers instead")
