"""Re-weighting the leaderboard (issue 25): reweight() of many records gives exactly what aggregate() gives per
record, and equal weights are the reference's unweighted means."""
from __future__ import annotations

import random

import pytest

from brainscore.leaderboard.aggregate import aggregate, build_tree, excluded_leaves, reweight, rule_counts

TREE = build_tree({"a": "V4", "b": "V4", "c": "IT", "d": "behavior_vision", "e": "behavior_vision"},
                  {"V4": "neural_vision", "IT": "neural_vision", "neural_vision": "average_vision",
                   "behavior_vision": "average_vision"})


def records(n=200, seed=0):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        values = {leaf: (rng.random() if rng.random() < 0.7 else None) for leaf in TREE.leaves}
        scores, missing = aggregate(TREE, values)
        rule = rule_counts(TREE, {leaf: rng.random() < 0.2 for leaf in TREE.leaves})
        out.append({"model": f"m{i}", "scores": scores, "missing": missing, "rule": rule})
    return out


@pytest.mark.parametrize("weights", [{}, {"IT": 2, "behavior_vision": 0}, {"a": 3, "d": 0}, {"V4": 0, "IT": 0}])
def test_reweight_is_aggregate_of_each_record(weights):
    many = records()
    left_out = excluded_leaves(TREE, weights)
    for record, again in zip(many, reweight(many, TREE, weights)):
        scores, missing = aggregate(TREE, {leaf: record["scores"][leaf] for leaf in TREE.leaves}, weights)
        assert again["scores"] == scores and again["missing"] == missing  # the same floats, bit for bit
        assert again["rule"] == rule_counts(TREE, {leaf: bool(record["rule"][leaf]) and leaf not in left_out
                                                   for leaf in TREE.leaves})


def test_weights_by_hand():
    (record,) = reweight([{"model": "m", "scores": {"a": 0.4, "b": 0.2, "c": 0.9, "d": 0.5, "e": None},
                           "missing": {}, "rule": {}}], TREE, {"a": 3, "IT": 2})
    v4, it, behaviour = (3 * 0.4 + 0.2) / 4, 0.9, (0.5 + 0) / 2
    assert record["scores"]["V4"] == pytest.approx(v4)
    assert record["scores"]["neural_vision"] == pytest.approx((v4 + 2 * it) / 3)
    assert record["scores"]["average_vision"] == pytest.approx(((v4 + 2 * it) / 3 + behaviour) / 2)
    assert record["missing"]["average_vision"] == 1  # e


def test_negative_or_unknown_weights_are_refused():
    with pytest.raises(ValueError, match="finite number >= 0"):
        reweight(records(2), TREE, {"IT": -1})
    with pytest.raises(ValueError, match="not a column"):
        reweight(records(2), TREE, {"V9": 1})
