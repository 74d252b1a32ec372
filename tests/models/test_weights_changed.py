"""A model whose weights change between builds is named, with how to seed it (issue 29).

An unseeded random initialisation (``weights=None``) scored 0.1481 in one process and 0.1584 in the next,
without a word: the weights fingerprint now warns when it changes between two builds in one process or
differs from the one the model's earlier records were computed with.
"""
from __future__ import annotations

import warnings

import pytest
import torch

from brainscore.errors import WeightsChangedWarning
from brainscore.metrics.score import Score
from brainscore.models.commitment import pytorch_commitment
from brainscore.models.preprocessing import Preprocessing
from brainscore.results import Database, record
from brainscore.scoring.outcome import Outcome


def _build(identifier: str, seed: int | None):
    if seed is not None:
        torch.manual_seed(seed)
    network = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(2))
    return pytorch_commitment(identifier, network, ["0", "2"], preprocessing=Preprocessing("imagenet", 16),
                              region_layer_map={"IT": "2"}, visual_degrees=8)


def test_an_unseeded_network_warns_at_its_second_build_and_a_seeded_one_does_not():
    first = _build("unseeded-test-net", None).weights_hash
    with pytest.warns(WeightsChangedWarning,
                      match=r"changed between two builds in this process.*torch\.manual_seed\(0\)"):
        second = _build("unseeded-test-net", None).weights_hash
    assert first != second
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeightsChangedWarning)
        assert _build("seeded-test-net", 0).weights_hash == _build("seeded-test-net", 0).weights_hash


def _outcome(model: str, benchmark: str, weights: str) -> Outcome:
    score = Score.of(0.5, raw=Score.of(0.5), model_identifier=model, benchmark_identifier=benchmark,
                     benchmark_version=1, provenance={"model": {"identifier": model, "weights_sha256": weights}})
    return Outcome.from_score(score)


def test_recording_weights_that_differ_from_the_recorded_ones_warns(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'r.sqlite'}")
    first = record(_outcome("random-net", "Kiani2007.IT-rdm", "a" * 64), db)
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeightsChangedWarning)
        record(_outcome("random-net", "Mur2013-rdm", "a" * 64), db)  # the same weights: silent
    with pytest.warns(WeightsChangedWarning, match=rf"differ from those of its record #\d+ on Mur2013-rdm.*seed"):
        record(_outcome("random-net", "Kiani2007.IT-rdm", "b" * 64), db)
    assert first == 1 and len(db.scores("random-net")) == 3  # warned, never refused: the score is recorded
