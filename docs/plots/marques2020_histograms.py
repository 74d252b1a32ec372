"""Plot a model's V1 property histograms against the data's (Marques et al. 2021 benchmarks).

Reads the JSON written by ``perf/marques2020.py --json`` (the model's property values per
benchmark) and draws, for each of the seven benchmarks, the data's histogram and the model's over
the data's bins (values clipped into the end bins and NaN left out, as ``ks_similarity`` sees
them), both as fractions of their values::

    PYTHONPATH=src python docs/plots/marques2020_histograms.py /tmp/lite0.json docs/plots/marques2020_efficientnet-lite0.png
"""
from __future__ import annotations

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import brainscore  # noqa: E402
from brainscore.metrics.neural.distribution_similarity import histogram  # noqa: E402


def main(source: str, target: str) -> None:
    results = json.load(open(source))
    identifiers = sorted(results["benchmarks"])
    figure, axes = plt.subplots(2, 4, figsize=(16, 7))
    for ax, identifier in zip(axes.ravel(), identifiers):
        benchmark = brainscore.load_benchmark(identifier)
        name = benchmark.metric.property_name
        data = benchmark.assembly.sel(neuronal_property=name).values
        edges = np.asarray(benchmark.assembly.attrs[f"{name}_bins"], dtype=float)
        model = np.array([np.nan if v is None else v for v in results["benchmarks"][identifier]["values"]])
        log = np.all(edges > 0) and edges[-1] / edges[0] > 20
        position = np.log2(edges) if log else edges
        for values, label, style in ((data, f"data (n={np.sum(~np.isnan(data))})", dict(color="0.6")),
                                     (model, f"{results['model']} (n={np.sum(~np.isnan(model))})",
                                      dict(fill=False, edgecolor="C3", linewidth=2))):
            counts = histogram(np.clip(values, edges[0], edges[-1]), edges).astype(float)
            ax.bar(position[:-1], counts / max(counts.sum(), 1), width=np.diff(position), align="edge",
                   label=label, **style)
        entry = results["benchmarks"][identifier]
        ax.set_title(f"{identifier.split('_', 1)[1]}\nscore {entry['score']:.3f} (raw {entry['raw']:.3f})", fontsize=9)
        ax.set_xlabel(f"{name}" + (" (log2)" if log else ""), fontsize=8)
        if log:
            ax.set_xticks(position)
            ax.set_xticklabels([f"{e:g}" for e in edges], fontsize=7, rotation=45)
        ax.legend(fontsize=7)
    axes.ravel()[-1].axis("off")
    figure.suptitle(f"V1 single-neuron properties: {results['model']} (V1 layer {entry['layer']}) against the "
                    f"published histograms", fontsize=11)
    figure.tight_layout()
    figure.savefig(target, dpi=80)


if __name__ == "__main__":
    main(*sys.argv[1:3])
