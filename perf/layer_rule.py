"""How well the layer rule agrees with the reference's layer maps it was not fitted on.

Reads ``src/brainscore/models/layer_rule.json`` (derived by ``tools/derive_layer_rule.py`` from the
reference's published ``region_layer_map`` files), refits the rule on 4 of 5 folds of the maps
(folds by plugin, so a submission's variants are held out together), and prints, per region and
over all four, how often the rule picks the held-out map's layer (exact) or a candidate next to it
(neighbour, +-1), beside the naive baseline of the middle candidate for every region, and the same
agreement per architecture.

Usage::

    PYTHONPATH=src python perf/layer_rule.py [--architectures]
"""
from __future__ import annotations

import argparse
import sys

from brainscore.models import layer_rule


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--architectures", action="store_true", help="also print the agreement per architecture")
    args = parser.parse_args(argv)
    data = layer_rule.load()
    maps = data["maps"]
    result = layer_rule.held_out_agreement(maps)
    stored = data["held_out"]
    if abs(result["all"]["neighbour"] - stored["all"]["neighbour"]) > 1e-9:
        print("warning: recomputed agreement differs from the stored one; re-derive layer_rule.json", file=sys.stderr)
    source = data["source"]
    print(f"reference maps: {source['maps_used']} used of {source['maps_found']} "
          f"({data['architectures']} architectures; brain-score/vision @ {source['commit'][:12]})")
    print(f"rule ({data['rule']['name']}, fitted on all {data['rule']['maps']} maps): relative depth "
          + ", ".join(f"{r} {q:.3f}" for r, q in data["rule"]["relative_depth"].items()))
    print(f"held out ({result['folds']} folds by plugin, {result['maps']} maps):")
    print(f"  {'region':<8}{'exact':>8}{'neighbour':>11}")
    for region, row in result["per_region"].items():
        print(f"  {region:<8}{row['exact']:>8.1%}{row['neighbour']:>11.1%}")
    print(f"  {'all':<8}{result['all']['exact']:>8.1%}{result['all']['neighbour']:>11.1%}")
    baseline = result["middle_baseline"]
    print(f"  {'middle':<8}{baseline['exact']:>8.1%}{baseline['neighbour']:>11.1%}   (baseline: the middle candidate)")
    print(f"  mean over architectures (neighbour): {result['architecture_mean_neighbour']:.1%}")
    if args.architectures:
        for architecture, row in result["per_architecture"].items():
            print(f"    {architecture:<40}{row['maps']:>4} maps {row['exact']:>7.1%}{row['neighbour']:>8.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
