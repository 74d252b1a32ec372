"""torchvision architectures: ImageNet weights from a local file (hash checked), or untrained.

No weights are downloaded. ``torchvision:<arch>`` names the ImageNet-trained network and is
loaded from, in order: the ``weights_path`` argument; ``<folder>/<official file name>`` where the
folder is the ``torchvision_weights`` setting (``brainscore config set torchvision_weights FOLDER``
or ``$BRAINSCORE_TORCHVISION_WEIGHTS``); the torch-hub cache
(``$TORCH_HOME/hub/checkpoints/<official file name>``, where torchvision keeps its downloads).
The file's sha256 is checked against ``weights_sha256`` when given, else against the hash prefix
in the official file name (the IMAGENET1K_V1 weights, which the reference's torchvision models
use). Without a file, loading fails with an error that says where to put it: a name never stands
for other weights. The untrained network (seeded, so its weights are the same on every run) is
the separate model ``torchvision:<arch>-untrained``.

Preprocessing is the reference's default (squash to 224 pixels, ImageNet mean and std); the
field of view is 8 degrees. Candidate layers follow the reference's choices where it has them
(AlexNet: ``features.2 … classifier.5``) and otherwise each stage's or block's output.

torchvision is part of the model zoo: ``python -m pip install -e ".[zoo]"``.
"""
from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

from brainscore.errors import ZOO_INSTALL, DataNotFoundError, ValidationError
from brainscore.models.commitment import ModelCommitment, pytorch_commitment
from brainscore.models.identity import NetworkRecipe
from brainscore.models.preprocessing import Preprocessing
from brainscore.models.weights import check_weights_file, find_weights, resnet_layers, seeded

PLUGIN_DIR = Path(__file__).parent
SETTING = "torchvision_weights"  # brainscore.config; environment variable BRAINSCORE_TORCHVISION_WEIGHTS
ENV_VAR = "BRAINSCORE_TORCHVISION_WEIGHTS"
VISUAL_DEGREES = 8

#: architecture -> (official IMAGENET1K_V1 file name, candidate layers)
ARCHITECTURES: dict[str, tuple[str, list[str]]] = {
    "alexnet": ("alexnet-owt-7be5be79.pth",
                ["features.2", "features.5", "features.7", "features.9", "features.12", "classifier.2",
                 "classifier.5"]),
    "vgg16": ("vgg16-397923af.pth",
              ["features.4", "features.9", "features.16", "features.23", "features.30", "classifier.1",
               "classifier.4"]),
    "vgg19": ("vgg19-dcbb9e9d.pth",
              ["features.4", "features.9", "features.18", "features.27", "features.36", "classifier.1",
               "classifier.4"]),
    "resnet18": ("resnet18-f37072fd.pth", resnet_layers([2, 2, 2, 2])),
    "resnet34": ("resnet34-b627a593.pth", resnet_layers([3, 4, 6, 3])),
    "resnet50": ("resnet50-0676ba61.pth", resnet_layers([3, 4, 6, 3])),
    "resnet101": ("resnet101-63fe2227.pth", resnet_layers([3, 4, 23, 3])),
    "convnext_tiny": ("convnext_tiny-983f1562.pth",
                      ["features.0"] + [f"features.{s}.{b}" for s, n in ((1, 3), (3, 3), (5, 9), (7, 3))
                                        for b in range(n)] + ["avgpool"]),
    "densenet121": ("densenet121-a639ec97.pth",
                    [f"features.{n}" for n in ("pool0", "denseblock1", "transition1", "denseblock2", "transition2",
                                               "denseblock3", "transition3", "denseblock4", "norm5")]),
    "mobilenet_v2": ("mobilenet_v2-b0353104.pth", [f"features.{i}" for i in range(19)]),
    "efficientnet_b0": ("efficientnet_b0_rwightman-7f5810bc.pth", [f"features.{i}" for i in range(9)] + ["avgpool"]),
    "vit_b_16": ("vit_b_16-c867db91.pth",
                 ["conv_proj"] + [f"encoder.layers.encoder_layer_{i}" for i in range(12)] + ["encoder.ln"]),
}


def layers(architecture: str) -> list[str]:
    """Candidate layers of ``architecture`` in depth order."""
    return list(_entry(architecture)[1])


def _entry(architecture: str):
    try:
        return ARCHITECTURES[architecture]
    except KeyError:
        raise ValueError(f"unknown torchvision architecture {architecture!r}; known: {sorted(ARCHITECTURES)}") from None


def missing_weights_message(architecture: str) -> str:
    """What to do when the ImageNet weights of ``torchvision:<architecture>`` are not found."""
    filename = _entry(architecture)[0]
    return (f"torchvision:{architecture} is the ImageNet-trained network, and its weights file {filename} was not "
            f"found. Download https://download.pytorch.org/models/{filename} into a folder and run "
            f"`brainscore config set torchvision_weights FOLDER` (or set {ENV_VAR}=FOLDER), or put it in the "
            f"torch-hub cache (torch.hub.get_dir()/checkpoints); in Python, pass weights_path=... (and "
            f"weights_sha256=...). For the untrained network, ask for torchvision:{architecture}-untrained."
            + ("" if importlib.util.find_spec("torchvision") is not None
               else f" torchvision itself is not installed either: {ZOO_INSTALL}"))


def get_model(architecture: str, weights_path=None, weights_sha256: str | None = None, pretrained: bool = True):
    """The network and its weights hash: ``(torch.nn.Module, sha256 or None)``; None means untrained.

    Parameters
    ----------
    pretrained : bool
        True: load the ImageNet weights (a file must be found); False: the seeded untrained network
        (``weights_path`` must then be None).

    Raises
    ------
    DataNotFoundError
        With ``pretrained=True`` and no weights file found; the message says where to put it.
    HashMismatchError
        If the file's content does not match.
    ValidationError
        If ``weights_path`` is given for the untrained network.
    """
    import torch

    from brainscore.models.torchvision_loading import import_torchvision

    filename = _entry(architecture)[0]
    if not pretrained:
        if weights_path is not None:
            raise ValidationError(f"torchvision:{architecture}-untrained takes no weights_path; load "
                                  f"torchvision:{architecture} with weights_path=... instead")
        torchvision = import_torchvision()
        return seeded(lambda: torchvision.models.get_model(architecture, weights=None)).eval(), None
    path = find_weights(filename, SETTING, weights_path)
    if path is None:
        raise DataNotFoundError(missing_weights_message(architecture))
    sha256 = check_weights_file(path, weights_sha256, official_name=filename if weights_path is None else None)
    torchvision = import_torchvision()
    model = seeded(lambda: torchvision.models.get_model(architecture, weights=None))
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    return model.eval(), sha256


def _build(architecture: str, path: Path, sha256: str):
    return get_model(architecture, path, sha256)[0]


def _listed(path: Path) -> list[Path]:
    return [path]


def recipe(architecture: str, weights_path=None, weights_sha256: str | None = None) -> NetworkRecipe | None:
    """What builds the ImageNet-trained ``torchvision:<architecture>``, described without torch, or None.

    For a weights file given by ``weights_path`` or found in the ``torchvision_weights`` folder,
    the file is checked now (as :func:`get_model` does: its sha256 against ``weights_sha256`` or
    the official name's prefix), and the network is built only when an activation is not cached
    (:mod:`brainscore.models.identity`). None when the file is elsewhere (the torch-hub cache,
    which needs torch to find) or torchvision is not installed: the caller builds the network.

    Raises
    ------
    DataNotFoundError, HashMismatchError, ValidationError
        As :func:`brainscore.models.weights.check_weights_file` for a file that is given or found.
    """
    from brainscore import config

    filename = _entry(architecture)[0]
    if importlib.util.find_spec("torchvision") is None:
        return None
    if weights_path is not None:
        path, official = Path(weights_path).expanduser(), None
    else:
        folder = config.path_setting(SETTING)
        path, official = (Path(folder).expanduser() / filename if folder else None), filename
        if path is None or not path.is_file():
            return None
    sha256 = check_weights_file(path, weights_sha256, official_name=official)
    return NetworkRecipe(build=functools.partial(_build, architecture, path, sha256),
                         arguments={"architecture": architecture, "weights": str(path.resolve()), "sha256": sha256},
                         code=[__name__], libraries=["torchvision"], files=functools.partial(_listed, path),
                         weights_hash=sha256)


def commitment(architecture: str, region_layer_map: dict | None = None, weights_path=None,
               weights_sha256: str | None = None, pretrained: bool = True, **kwargs) -> ModelCommitment:
    """The brain model ``torchvision:<architecture>`` (trained) or ``torchvision:<architecture>-untrained``.

    Raises
    ------
    DataNotFoundError
        If ``pretrained`` and no weights file is found (see :func:`missing_weights_message`).
    """
    identifier = f"torchvision:{architecture}" + ("" if pretrained else "-untrained")
    model = recipe(architecture, weights_path, weights_sha256) if pretrained else None
    if model is None:  # untrained, in the torch-hub cache, or missing: build now (errors as ever)
        model, sha256 = get_model(architecture, weights_path, weights_sha256, pretrained)
    else:
        sha256 = model.weights_hash
    kwargs.setdefault("visual_degrees", VISUAL_DEGREES)
    return pytorch_commitment(identifier, model, kwargs.pop("layers", layers(architecture)),
                              preprocessing=Preprocessing("imagenet", 224), weights_hash=sha256,
                              region_layer_map=region_layer_map, plugin_dir=PLUGIN_DIR, **kwargs)
