"""timm architectures: weights from a local file with a declared sha256, or untrained.

timm's pretrained weights live on the Hugging Face hub, which brainscore does not download from.
``timm:<architecture>`` names the trained network and needs a local checkpoint (``.safetensors``
or ``.pth``): ``weights_path=`` with its ``weights_sha256=`` (checked), or
``<folder>/<architecture>.safetensors`` where the folder is the ``timm_weights`` setting
(``brainscore config set timm_weights FOLDER`` or ``$BRAINSCORE_TIMM_WEIGHTS``), again with
``weights_sha256=``. Without one, loading fails with an error that says so: a name never stands
for other weights. The untrained (seeded) network is the separate model ``timm:<architecture>-untrained``.

Preprocessing: the reference's square squash at the architecture's input size, with the
mean and std of timm's pretrained configuration. Field of view: 8 degrees.

timm is part of the model zoo: ``python -m pip install -e ".[zoo]"`` (it imports torchvision,
loaded through :func:`brainscore.models.torchvision_loading.import_torchvision`).
"""
from __future__ import annotations

from pathlib import Path

from brainscore import config
from brainscore.errors import ZOO_INSTALL, DataNotFoundError, MissingDependencyError, ValidationError
from brainscore.models.commitment import ModelCommitment, pytorch_commitment
from brainscore.models.preprocessing import Preprocessing
from brainscore.models.weights import check_weights_file, resnet_layers, seeded

PLUGIN_DIR = Path(__file__).parent
SETTING = "timm_weights"  # brainscore.config; environment variable BRAINSCORE_TIMM_WEIGHTS
ENV_VAR = "BRAINSCORE_TIMM_WEIGHTS"
VISUAL_DEGREES = 8

#: architecture -> candidate layers
ARCHITECTURES: dict[str, list[str]] = {
    "convnext_tiny": ["stem"] + [f"stages.{s}.blocks.{b}" for s, n in enumerate((3, 3, 9, 3)) for b in range(n)]
                     + ["head.global_pool"],
    "resnet50": resnet_layers([3, 4, 6, 3], pool="global_pool"),
    "efficientnet_b0": ["conv_stem"] + [f"blocks.{i}" for i in range(7)] + ["conv_head", "global_pool"],
    "vit_small_patch16_224": ["patch_embed"] + [f"blocks.{i}" for i in range(12)] + ["norm"],
}


def _timm():
    from brainscore.models.torchvision_loading import import_torchvision

    import_torchvision()
    try:
        import timm
    except ImportError:
        raise MissingDependencyError(f"timm is not installed; install the model zoo: {ZOO_INSTALL}") from None
    return timm


def layers(architecture: str) -> list[str]:
    """Candidate layers of ``architecture`` in depth order."""
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown timm architecture {architecture!r}; known: {sorted(ARCHITECTURES)}")
    return list(ARCHITECTURES[architecture])


def get_model(architecture: str, weights_path=None, weights_sha256: str | None = None, pretrained: bool = True):
    """``(network, weights sha256 or None)``; None means untrained (seeded).

    Raises
    ------
    DataNotFoundError
        With ``pretrained=True`` and no weights file.
    ValidationError
        If a weights file is given without its sha256, or to the untrained network.
    MissingDependencyError
        If timm is not installed.
    """
    layers(architecture)
    if not pretrained:
        if weights_path is not None:
            raise ValidationError(f"timm:{architecture}-untrained takes no weights_path; load timm:{architecture} "
                                  f"with weights_path=... instead")
        timm = _timm()
        return seeded(lambda: timm.create_model(architecture, pretrained=False)).eval(), None
    if weights_path is None:
        folder = config.path_setting(SETTING)
        candidate = folder / f"{architecture}.safetensors" if folder else None
        weights_path = candidate if candidate is not None and candidate.is_file() else None
    if weights_path is None:
        raise DataNotFoundError(
            f"timm:{architecture} is the trained network, and no weights file was given. Put {architecture}.safetensors "
            f"in a folder and run `brainscore config set timm_weights FOLDER` (or set {ENV_VAR}=FOLDER), then load it "
            f"with weights_sha256=...; or pass weights_path=... and weights_sha256=... in Python. For the untrained "
            f"network, ask for timm:{architecture}-untrained.")
    if not weights_sha256:
        raise ValidationError(f"timm:{architecture}: give weights_sha256=... for {weights_path} "
                              f"(`sha256sum {weights_path}` prints it)")
    sha256 = check_weights_file(weights_path, weights_sha256)
    timm = _timm()
    model = seeded(lambda: timm.create_model(architecture, pretrained=False))
    timm.models.load_checkpoint(model, str(weights_path))
    return model.eval(), sha256


def preprocessing(model) -> Preprocessing:
    """Squash to the architecture's input size with the mean and std of its timm configuration."""
    cfg = getattr(model, "pretrained_cfg", {}) or {}
    size = int(cfg.get("input_size", (3, 224, 224))[-1])
    return Preprocessing("imagenet", size, mean=tuple(cfg.get("mean", (0.485, 0.456, 0.406))),
                         std=tuple(cfg.get("std", (0.229, 0.224, 0.225))))


def commitment(architecture: str, region_layer_map: dict | None = None, weights_path=None,
               weights_sha256: str | None = None, pretrained: bool = True, **kwargs) -> ModelCommitment:
    """The brain model ``timm:<architecture>`` (trained, needs weights) or ``timm:<architecture>-untrained``."""
    identifier = f"timm:{architecture}" + ("" if pretrained else "-untrained")
    model, sha256 = get_model(architecture, weights_path, weights_sha256, pretrained)
    kwargs.setdefault("visual_degrees", VISUAL_DEGREES)
    return pytorch_commitment(identifier, model, kwargs.pop("layers", layers(architecture)),
                              preprocessing=preprocessing(model), weights_hash=sha256,
                              region_layer_map=region_layer_map, plugin_dir=PLUGIN_DIR, **kwargs)
