"""Cheating model plugins for tests/boundary/test_opaque_stimuli.py (issue 36), served by the sandboxed model server.

- ``id-cheat``: never opens an image; answers the label its stimulus id begins with (``airplane1`` -> ``airplane``).
- ``public-ids-cheat``: answers the benchmark's public stimulus ids (``public_ids.json`` beside this file, written by
  the test) with the label each begins with, whatever ids it was given.
- ``position-cheat``: never opens an image nor reads an id; answers by row position, the rule of
  Geirhos2021silhouette's rows (sorted by id, ten per category): row k is the k // 10-th label alphabetically.
- ``coordinate-injector``: honest-looking answers of every kind, decorated with coordinates of its own
  (``object_name``, ``image_label``, copies of ``truth`` and ``stimulus_id``, a ``region`` it is not recording, a
  ``subject`` on the neuroid and choice dims).

Each prints ``SEEN {...}`` (the identifier, ids, file paths and columns it was given) on its log.
"""
import json
import re
import sys
from pathlib import Path

import numpy as np

from brainscore.data.assemblies import BehavioralAssembly, NeuroidAssembly
from brainscore.models.interface import BrainModel
from brainscore.registry import register_model


def _seen(stimuli) -> list[str]:
    ids = [str(i) for i in stimuli["stimulus_id"]]
    print("SEEN " + repr({"identifier": stimuli.identifier, "ids": ids,
                          "paths": [str(stimuli.get_stimulus(i)) for i in dict.fromkeys(ids)],
                          "columns": [str(c) for c in stimuli.columns]}), file=sys.stderr, flush=True)
    return ids


class Cheat(BrainModel):
    def __init__(self, name: str, **options):
        self.name, self.options = name, options
        self.labels, self.task, self.region = [], None, None

    @property
    def identifier(self):
        return self.name

    def visual_degrees(self):
        return 8.0

    def start_task(self, task, fitting_stimuli=None):
        self.task, self.region = task, None
        if isinstance(fitting_stimuli, (list, tuple)):
            self.labels = sorted(str(label) for label in fitting_stimuli)
        elif fitting_stimuli is not None and not isinstance(fitting_stimuli, str):
            self.labels = sorted({str(label) for label in fitting_stimuli["image_label"]})

    def start_recording(self, recording_target, time_bins=None):
        self.task, self.region, self.bins = None, recording_target, list(time_bins or [(70, 170)])

    def _label_of(self, stimulus_id: str) -> str:
        found = [label for label in sorted(self.labels, key=len, reverse=True) if stimulus_id.startswith(label)]
        return found[0] if found else self.labels[0]

    def look_at(self, stimuli, number_of_trials=1):
        ids = _seen(stimuli)
        if self.name == "public-ids-cheat":
            ids = json.loads((Path(__file__).parent / "public_ids.json").read_text())
        if self.name == "position-cheat":
            answers = np.asarray([self.labels[min(k // 10, len(self.labels) - 1)] for k in range(len(ids))],
                                 dtype=object)
            return BehavioralAssembly(answers, dims=("presentation",),
                                      coords={"stimulus_id": ("presentation", np.asarray(ids, dtype=object))})
        if self.name != "coordinate-injector":
            answers = np.asarray([self._label_of(i) for i in ids], dtype=object)
            return BehavioralAssembly(answers, dims=("presentation",),
                                      coords={"stimulus_id": ("presentation", np.asarray(ids, dtype=object))})
        n = len(ids)
        invented = {"object_name": ("presentation", np.asarray(["car"] * n, dtype=object)),
                    "image_label": ("presentation", np.asarray(["car"] * n, dtype=object)),
                    "truth_copy": ("presentation", np.asarray(["car"] * n, dtype=object)),
                    "stimulus_id_copy": ("presentation", np.asarray(ids, dtype=object))}
        if self.task is None:  # a recording
            values = np.arange(n * 3, dtype=np.float32).reshape(n, 3, 1)
            coords = {"stimulus_id": ("presentation", np.asarray(ids, dtype=object)),
                      "neuroid_id": ("neuroid", np.asarray(["n0", "n1", "n2"], dtype=object)),
                      "layer": ("neuroid", np.asarray(["l"] * 3, dtype=object)),
                      "region": ("neuroid", np.asarray(["V1"] * 3, dtype=object)),
                      "subject": ("neuroid", np.asarray(["monkey"] * 3, dtype=object)),
                      "time_bin_start": ("time_bin", np.asarray([b[0] for b in self.bins])),
                      "time_bin_end": ("time_bin", np.asarray([b[1] for b in self.bins])), **invented}
            return NeuroidAssembly(values, dims=("presentation", "neuroid", "time_bin"), coords=coords)
        if self.task == "label":
            return BehavioralAssembly(np.asarray([self.labels[0]] * n, dtype=object), dims=("presentation",),
                                      coords={"stimulus_id": ("presentation", np.asarray(ids, dtype=object)),
                                              "label_name": ("presentation", np.asarray([self.labels[0]] * n,
                                                                                        dtype=object)), **invented})
        if self.task == "probabilities":
            k = len(self.labels)
            return BehavioralAssembly(np.full((n, k), 1.0 / k), dims=("presentation", "choice"),
                                      coords={"stimulus_id": ("presentation", np.asarray(ids, dtype=object)),
                                              "choice": ("choice", np.asarray(self.labels, dtype=object)),
                                              "subject": ("choice", np.asarray(["x"] * k, dtype=object)), **invented})
        grid = np.asarray(ids, dtype=object).reshape(-1, 3)  # odd one out: always the first of each triplet
        odd = grid[:, 0] if not self.options.get("odd_elsewhere") else np.roll(grid[:, 0], 1)
        m = len(grid)
        return BehavioralAssembly(np.zeros(m, dtype=int), dims=("presentation",),
                                  coords={"stimulus_id": ("presentation", np.asarray(["|".join(t) for t in grid],
                                                                                     dtype=object)),
                                          "stimulus_id_0": ("presentation", grid[:, 0]),
                                          "stimulus_id_1": ("presentation", grid[:, 1]),
                                          "stimulus_id_2": ("presentation", grid[:, 2]),
                                          "odd_one_out_id": ("presentation", odd),
                                          "object_name": ("presentation", np.asarray(["car"] * m, dtype=object))})


@register_model("id-cheat")
def _id_cheat():
    return Cheat("id-cheat")


@register_model("public-ids-cheat")
def _public_ids_cheat():
    return Cheat("public-ids-cheat")


@register_model("coordinate-injector")
def _coordinate_injector(odd_elsewhere: bool = False):
    return Cheat("coordinate-injector", odd_elsewhere=odd_elsewhere)


@register_model("position-cheat")
def _position_cheat():
    return Cheat("position-cheat")
