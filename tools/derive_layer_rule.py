"""Derive the layer-commitment rule from the reference's published region->layer maps.

Usage::

    python tools/derive_layer_rule.py PATH_TO_brain-score_vision_GIT [--output src/brainscore/models/layer_rule.json]

PATH is a clone (or bare mirror) of https://github.com/brain-score/vision. For every
``brainscore_vision/models/<plugin>/region_layer_map/<identifier>.json`` whose architecture can be
built here (torchvision or timm, on the ``meta`` device: no weights, no memory), the network's
candidate layers are taken by :func:`brainscore.models.structure.structural_candidates`, and each
region's committed layer is placed among them: the candidate that is the layer, contains it, or
(for a container such as ``layer4``) its last candidate, whose output is the container's. The
relative depth of a region is ``index / (n_candidates - 1)``.

Only numbers are written (per map: the plugin, the architecture built, the number of candidates and
each region's candidate index), plus the rule fitted on them (see :mod:`brainscore.models.layer_rule`).
Maps of architectures that cannot be built here (TensorFlow names, Hugging Face models, custom
networks) are counted as skipped, with the reason.
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
from pathlib import Path

REGIONS = ("V1", "V2", "V4", "IT")

# (pattern on "<plugin>/<identifier>", library, architecture); first match wins
ARCHITECTURES: list[tuple[str, str, str]] = [
    (r"efficientnet[-_]b2|AT_efficientnet", "timm", "efficientnet_b2"),
    (r"AdvProp_efficientnet[-_]b4", "timm", "efficientnet_b4"),
    (r"efficientnet[-_]b7", "timm", "efficientnet_b7"),
    (r"efficientnet[-_]b8", "timm", "tf_efficientnet_b8"),
    (r"^efficientnet_b0/", "torchvision", "efficientnet_b0"),
    (r"scaling_models/efficientnet_b0", "torchvision", "efficientnet_b0"),
    (r"scaling_models/efficientnet_b1", "torchvision", "efficientnet_b1"),
    (r"scaling_models/efficientnet_b2", "torchvision", "efficientnet_b2"),
    (r"^effnetb1", "timm", "efficientnet_b1"),
    (r"BiT-S-R50x", "timm", "resnetv2_50x1_bit"),
    (r"BiT-S-R101x", "timm", "resnetv2_101x1_bit"),
    (r"BiT-S-R152x", "timm", "resnetv2_152x2_bit"),
    (r"scaling_models/convnext_small", "torchvision", "convnext_small"),
    (r"scaling_models/convnext_base", "torchvision", "convnext_base"),
    (r"scaling_models/convnext_large", "torchvision", "convnext_large"),
    (r"scaling_models/deit_small", "timm", "deit_small_patch16_224"),
    (r"scaling_models/deit_base", "timm", "deit_base_patch16_224"),
    (r"scaling_models/deit_large", "timm", "deit3_large_patch16_224"),
    (r"scaling_models/resnet18", "torchvision", "resnet18"),
    (r"scaling_models/resnet34", "torchvision", "resnet34"),
    (r"scaling_models/resnet50", "torchvision", "resnet50"),
    (r"scaling_models/resnet101", "torchvision", "resnet101"),
    (r"scaling_models/resnet152", "torchvision", "resnet152"),
    (r"convnext_tiny_imagenet1k_torchvision|convnext_tiny_sup", "torchvision", "convnext_tiny"),
    (r"convnext_tiny_imagenet1k", "timm", "convnext_tiny"),  # the original ConvNeXt code's names, renamed
    (r"convnext_base_fb", "timm", "convnext_base"),
    (r"convnext_large", "timm", "convnext_large"),
    (r"convnext_xxlarge", "timm", "convnext_xxlarge"),
    (r"deit3_base_patch16_224", "timm", "deit3_base_patch16_224"),
    (r"dinov2_vitg14", "timm", "vit_giant_patch14_dinov2"),
    (r"dinov2_vitl14", "timm", "vit_large_patch14_dinov2"),
    (r"eva02_large", "timm", "eva02_large_patch14_224"),
    (r"vit_huge_clip336", "timm", "vit_huge_patch14_clip_336"),
    (r"vit_large_clip336", "timm", "vit_large_patch14_clip_336"),
    (r"ViT_L_32", "timm", "vit_large_patch32_224"),
    (r"omnivore_swinB", "timm", "swin_base_patch4_window7_224"),
    (r"omnivore_swinS", "timm", "swin_small_patch4_window7_224"),
    (r"Res2Net50_26w_4s", "timm", "res2net50_26w_4s"),
    (r"seresnext50_32x4d", "timm", "seresnext50_32x4d"),
    (r"resnext101_32x\d+d", "torchvision", "resnext101_32x8d"),  # 32x16/32/48d: same blocks, wider
    (r"densenet[-_]121", "torchvision", "densenet121"),
    (r"densenet[-_]169", "torchvision", "densenet169"),
    (r"densenet[-_]201", "torchvision", "densenet201"),
    (r"^inception_v3/", "torchvision", "inception_v3"),
    (r"^inception_v4/", "timm", "inception_v4"),
    (r"^xception/", "timm", "legacy_xception"),
    (r"^nasnet_large/", "timm", "nasnetalarge"),
    (r"^pnasnet_large", "timm", "pnasnet5large"),
    (r"^shufflenet", "torchvision", "shufflenet_v2_x1_0"),
    (r"^regnety_032/", "timm", "regnety_032"),
    (r"^vgg_16/", "torchvision", "vgg16"),
    (r"alexnet", "torchvision", "alexnet"),
    (r"resnet[-_]?18", "torchvision", "resnet18"),
    (r"resnet[-_]?34", "torchvision", "resnet34"),
    (r"resnet[-_]?101", "torchvision", "resnet101"),
    (r"resnet[-_]?152", "torchvision", "resnet152"),
    (r"resnet[-_]?50|[-_]r50", "torchvision", "resnet50"),
]
#: plugins whose name says nothing of the architecture: the depth their own code names most
#: often (a ResNet, by the layer names of their maps); ties are skipped
RESNET_MENTION = re.compile(r"resnet[-_ ]?(18|34|50|101|152)", re.IGNORECASE)


def git(repo: Path, *args: str) -> str:
    """Output of ``git -C repo args`` (the mirror may be bare)."""
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def build(library: str, architecture: str):
    """The untrained network on the meta device (structure only)."""
    import torch

    from brainscore.models.torchvision_loading import import_torchvision

    torchvision = import_torchvision()
    with torch.device("meta"):
        if library == "torchvision":
            return torchvision.models.get_model(architecture, weights=None)
        import timm

        return timm.create_model(architecture, pretrained=False)


def rename(layer: str, library: str, architecture: str, network_names: set[str], flat_blocks: list[str]) -> str:
    """The reference's layer name in the built network's naming."""
    name = re.sub(r"(^|\.)module(?=\.|$)", "", layer).lstrip(".")
    for prefix in ("backbone.", "trunk.", "shufflenet.", "model."):
        if name.startswith(prefix) and name not in network_names:
            name = name[len(prefix):]
    match = re.match(r"_blocks\.(\d+)(.*)", name)  # EfficientNet-PyTorch numbers blocks flat
    if match and flat_blocks:
        index = int(match.group(1))
        return flat_blocks[index] + match.group(2) if index < len(flat_blocks) else name
    match = re.match(r"body\.block(\d+)\.unit(\d+)(.*)", name)  # BiT's original names
    if match:
        return f"stages.{int(match.group(1)) - 1}.blocks.{int(match.group(2)) - 1}{match.group(3)}"
    match = re.match(r"transformer\.blocks\.(\d+)(.*)", name)  # pytorch-pretrained-vit
    if match:
        return f"blocks.{match.group(1)}{match.group(2)}"
    if architecture.startswith("convnext") and library == "timm":  # the original ConvNeXt code's names
        match = re.match(r"downsample_layers\.(\d+)(.*)", name)
        if match:
            return "stem" if match.group(1) == "0" else f"stages.{match.group(1)}.downsample"
        match = re.match(r"stages\.(\d+)\.(\d+)(.*)", name)
        if match:
            return f"stages.{match.group(1)}.blocks.{match.group(2)}"
    return name


def place(layer: str, candidates: list[str], modules: list[str]) -> int | None:
    """Index of the candidate that is ``layer``, contains it, or (a container) ends it; for a module that is
    no candidate (a skipped ``Dropout``: its output is its input) the last candidate before it; None if none.

    ``modules`` are the network's module names in registration order.
    """
    if layer in candidates:
        return candidates.index(layer)
    for index, candidate in enumerate(candidates):
        if layer.startswith(candidate + "."):
            return index
    inside = [index for index, candidate in enumerate(candidates) if candidate.startswith(layer + ".")]
    if inside:
        return inside[-1]
    if layer in modules:
        position = {name: i for i, name in enumerate(modules)}
        before = [index for index, candidate in enumerate(candidates) if position[candidate] < position[layer]]
        return before[-1] if before else None
    return None


def resolve(repo: Path, plugin: str, identifier: str, regions: dict[str, str]):
    """(library, architecture) for one map, or (None, reason)."""
    key = f"{plugin}/{identifier}"
    for pattern, library, architecture in ARCHITECTURES:
        if re.search(pattern, key, re.IGNORECASE):
            return library, architecture
    if all(re.match(r"(model\.|module\.)?(layer[1-4]|maxpool|conv1)(\.|$)", layer) for layer in regions.values()):
        found = subprocess.run(["git", "-C", str(repo), "grep", "-h", "-i", "-E", RESNET_MENTION.pattern, "HEAD", "--",
                                f"brainscore_vision/models/{plugin}/*.py"], capture_output=True, text=True).stdout
        counts = collections.Counter(RESNET_MENTION.findall(found))
        ranked = counts.most_common()
        if ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]):
            return "torchvision", f"resnet{ranked[0][0]}"
        return None, "ResNet of unknown depth"
    return None, "architecture not buildable here"


def derive(repo: Path) -> dict:
    """Per-map candidate indices and the skipped maps with reasons."""
    from brainscore.models.structure import structural_candidates

    paths = [p for p in git(repo, "ls-tree", "-r", "--name-only", "HEAD").split()
             if re.fullmatch(r"brainscore_vision/models/[^/]+/region_layer_map/[^/]+\.json", p)]
    commit = git(repo, "rev-parse", "HEAD").strip()
    networks: dict[tuple[str, str], tuple[list[str], list[str], list[str]]] = {}
    maps, skipped = [], collections.Counter()
    for path in sorted(paths):
        plugin, identifier = path.split("/")[2], Path(path).stem
        try:
            regions = json.loads(git(repo, "show", f"HEAD:{path}"))
        except json.JSONDecodeError:
            skipped["not JSON"] += 1
            continue
        if not isinstance(regions, dict) or not all(r in regions for r in REGIONS):
            skipped["not all four regions"] += 1
            continue
        library, architecture = resolve(repo, plugin, identifier, regions)
        if library is None:
            skipped[architecture] += 1
            continue
        if (library, architecture) not in networks:
            network = build(library, architecture)
            candidates = structural_candidates(network)
            flat = [c for c in candidates if re.fullmatch(r"blocks\.\d+\.\d+", c)]
            networks[(library, architecture)] = (candidates, [n for n, _ in network.named_modules() if n], flat)
        candidates, names, flat = networks[(library, architecture)]
        indices = {}
        for region in REGIONS:
            index = place(rename(regions[region], library, architecture, set(names), flat), candidates, names)
            if index is not None:
                indices[region] = index
        if len(indices) < len(REGIONS):
            skipped["a committed layer not found in the built network"] += 1
            continue
        maps.append({"plugin": plugin, "identifier": identifier, "architecture": f"{library}:{architecture}",
                     "n_candidates": len(candidates), "index": indices})
    return {"source": {"repository": "https://github.com/brain-score/vision", "commit": commit,
                       "maps_found": len(paths), "maps_used": len(maps), "skipped": dict(skipped.most_common())},
            "maps": maps}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repository", type=Path, help="clone or bare mirror of brain-score/vision")
    parser.add_argument("--output", type=Path,
                        default=Path(__file__).resolve().parents[1] / "src/brainscore/models/layer_rule.json")
    args = parser.parse_args(argv)
    from brainscore.models import layer_rule

    derived = derive(args.repository)
    data = layer_rule.fit_file(derived)
    maps = data.pop("maps")
    text = json.dumps(data, indent=1)[:-2] + ',\n "maps": [\n' + ",\n".join(json.dumps(m) for m in maps) + "\n ]\n}\n"
    json.loads(text)  # still one JSON document
    args.output.write_text(text, encoding="utf-8")
    print(f"{derived['source']['maps_used']} of {derived['source']['maps_found']} maps used; wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
