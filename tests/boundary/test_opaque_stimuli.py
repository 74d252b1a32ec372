"""The model server never sees a benchmark's stimulus ids, paths or metadata, and nothing a model invents besides its
answer reaches the trusted metric (issue 36).

A model that never opens an image and answers the category spelled in each stimulus id (``airplane1`` ->
``airplane``) gets a perfect Geirhos2021 top-1 in this process (its ids are the benchmark's); through the boundary it
sees random tokens, scores at chance, and the ids, file paths and stimulus-set name it printed hold none of the
benchmark's. A model that answers the benchmark's public ids instead of the tokens it was given is refused. A model
that decorates its answers with coordinates of its own (``object_name``, ``image_label``, a wrong ``region``) has
them dropped at the crossing, on every answer kind.
"""
from __future__ import annotations

import ast
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import brainscore
from brainscore import registry
from brainscore.boundary import Limits, ModelServer
from brainscore.boundary.crossing import BoundaryViolation

HERE = Path(__file__).resolve().parent
LIMITS = Limits(memory=4 * 1024**3, wall=600, disk=1024**3)
BENCHMARK = "Geirhos2021silhouette-top1"


@pytest.fixture(scope="module")
def plugins(tmp_path_factory):
    """A plugin folder with the cheating models of ``cheats/`` (``id-cheat``, ``public-ids-cheat``,
    ``coordinate-injector``)."""
    root = tmp_path_factory.mktemp("cheats")
    root.chmod(0o755)  # the model server runs as a user of its own (as root): it must be let in
    shutil.copytree(HERE / "cheats", root / "models" / "cheats", ignore=shutil.ignore_patterns("__pycache__"))
    for path in [root / "models", *(root / "models").rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BRAINSCORE_PLUGIN_DIRS", str(root))
        registry._discovery.reset()
        yield root / "models" / "cheats"
    registry._discovery.reset()


def seen_by_the_model(log: str) -> list[dict]:
    """What the cheating model printed it was given, one dict per ``look_at``."""
    return [ast.literal_eval(line[len("SEEN "):]) for line in log.splitlines() if line.startswith("SEEN ")]


def test_a_model_reading_the_category_from_the_id_scores_at_chance_through_the_boundary(plugins, capfd):
    benchmark = brainscore.load_benchmark(BENCHMARK)
    real = [str(i) for i in benchmark.stimulus_set["stimulus_id"]]
    names = {Path(str(benchmark.stimulus_set.get_stimulus(i))).name for i in real}
    here = brainscore.score("id-cheat", BENCHMARK)
    assert float(here) == 1.0  # the cheat works where the model sees the benchmark's ids (trusted, in-process)
    log: list[str] = []
    with ModelServer("id-cheat", LIMITS, log=log.append) as server:
        there = brainscore.score("id-cheat", BENCHMARK, model=server.model)
    assert float(there) <= 0.15, float(there)  # 16 categories: chance is 1/16
    seen = seen_by_the_model("".join(log))
    assert len(seen) == 1 and len(seen[0]["ids"]) == len(real) == 160
    text = json.dumps(seen)
    leaked = [i for i in real if i in text] + [n for n in names if n in text]
    assert leaked == []
    assert seen[0]["columns"] == ["stimulus_id"]
    assert seen[0]["identifier"] != benchmark.stimulus_set.identifier and "eirhos" not in text.lower()
    assert all(len(i) == 16 and int(i, 16) >= 0 for i in seen[0]["ids"])  # random tokens
    assert all(len(Path(p).stem) == 16 and int(Path(p).stem, 16) >= 0 for p in seen[0]["paths"])  # random names


def test_the_id_cheat_scores_at_chance_on_the_command_line_with_sandbox(plugins, capsys):
    """``brainscore score --sandbox`` (the boundary a stranger's plugin is scored through): chance, not 1.0."""
    from brainscore.cli import main

    assert main(["score", "--model", "id-cheat", "--benchmark", BENCHMARK, "--bootstrap", "0", "--json",
                 "--no-record", "--sandbox"]) == 0
    there = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert there["score"] <= 0.15, there


def test_a_model_answering_by_row_position_scores_at_chance_through_the_boundary(plugins):
    """Geirhos2021silhouette's 160 rows are sorted by id, ten per category: a model that knows only that rule (row k
    is the k // 10-th category alphabetically) and never opens an image nor reads an id scores 1.0 in-process; through
    the boundary the rows come in a fresh random order under random tokens, and it scores at chance."""
    here = brainscore.score("position-cheat", BENCHMARK)
    assert float(here) == 1.0  # the rule is real: in-process (trusted) the rows come in the benchmark's order
    log: list[str] = []
    with ModelServer("position-cheat", LIMITS, log=log.append) as server:
        there = brainscore.score("position-cheat", BENCHMARK, model=server.model)
    assert float(there) <= 0.2, float(there)  # 16 categories: chance is 1/16
    (seen,) = seen_by_the_model("".join(log))
    assert sorted(seen["ids"]) != seen["ids"]  # nor can it sort its way back: the tokens do not sort as the ids
    assert sorted(seen["paths"]) != seen["paths"]  # nor by file name


def test_every_call_sends_the_stimuli_in_a_fresh_random_order_under_fresh_tokens(plugins, images92):
    """Two offers of a task's stimuli (in one pair and in two pairs) share no token, come in different orders (odd-one-
    out: of whole triplets), and their tokens sort unlike the real ids; the answers come back in the benchmark's order."""
    from brainscore.data.stimuli import StimulusSet

    picked = [int(k) for k in np.random.default_rng(7).permutation(92)[:30]]  # 10 triplets: 10! orders
    shown = StimulusSet(images92.iloc[picked].reset_index(drop=True), identifier="k92-shown",
                        stimulus_paths=images92.stimulus_paths)
    real = shown["stimulus_id"].astype(str).tolist()
    file_of = {i: Path(str(shown.get_stimulus(i))).read_bytes() for i in real}
    offers, answers, sent_rows = [], [], []
    for _ in range(2):
        log: list[str] = []
        with ModelServer("coordinate-injector", LIMITS, log=log.append) as server:
            server.model.start_task("odd_one_out", None)
            answers += [server.model.look_at(shown), server.model.look_at(shown)]
            folder = server.model.folder.path  # the files the model was shown: which benchmark row each one is
            row_of = {path.name: next(k for k, i in enumerate(real) if file_of[i] == path.read_bytes())
                      for path in folder.iterdir()}
        seen = seen_by_the_model("".join(log))
        offers += seen
        sent_rows += [tuple(row_of[Path(p).name] for p in offer["paths"]) for offer in seen]
    assert len(offers) == 4 and len(sent_rows) == 4
    for k, offer in enumerate(offers):
        assert offer["identifier"] != "k92-shown" and not set(offer["ids"]) & set(real)
        assert sorted(offer["ids"]) != offer["ids"]  # 1 / 30! that random tokens sort as sent
        for other in offers[k + 1:]:
            assert not set(offer["ids"]) & set(other["ids"]) and offer["identifier"] != other["identifier"]
    assert len(set(sent_rows)) == 4, sent_rows  # every call its own order
    for rows in sent_rows:  # whole triplets moved: (3t, 3t + 1, 3t + 2) in a random order of t
        assert sorted(rows) == list(range(30)) != list(rows)
        assert all(rows[3 * j:3 * j + 3] == tuple(range(rows[3 * j], rows[3 * j] + 3)) and rows[3 * j] % 3 == 0
                   for j in range(10))
    for answer in answers:  # back in the benchmark's order, each triplet's odd one out its own (the first, as sent)
        assert answer["stimulus_id"].values.tolist() == ["|".join(real[k:k + 3]) for k in range(0, 30, 3)]
        assert answer["odd_one_out_id"].values.tolist() == real[0::3]


def test_recordings_and_probabilities_keep_the_benchmarks_order_under_tokens_sorting_as_its_ids(plugins, images92):
    """Not hidden (a network's numbers depend on a row's place in its batch, to a float32 ulp): a recording's and a
    fitted readout's stimuli come in the benchmark's order, under fresh tokens that sort as the real ids."""
    from brainscore.data.stimuli import StimulusSet

    shown = StimulusSet(images92.iloc[[5, 1, 4, 0, 3, 2]].reset_index(drop=True), identifier="k92-shown",
                        stimulus_paths=images92.stimulus_paths)
    fitting = StimulusSet(images92.iloc[20:26].reset_index(drop=True), identifier="k92-fitting",
                          stimulus_paths=images92.stimulus_paths)
    fitting["image_label"] = ["animal", "object"] * 3
    real = shown["stimulus_id"].astype(str).tolist()
    log: list[str] = []
    with ModelServer("coordinate-injector", LIMITS, log=log.append) as server:
        server.model.start_recording("IT", [(70, 170)])
        server.model.look_at(shown)
        server.model.start_task("probabilities", fitting)
        server.model.look_at(shown)
    offers = seen_by_the_model("".join(log))
    assert len(offers) == 2 and not set(offers[0]["ids"]) & set(offers[1]["ids"])
    for offer in offers:
        assert sorted(range(6), key=lambda i: offer["ids"][i]) == sorted(range(6), key=lambda i: real[i])


def test_an_answer_is_put_back_in_the_benchmarks_order_row_by_row():
    """answer_of: rows answered in the order sent (trials grouped or tiled) become the rows the model gives for the
    benchmark's order, each value with its own stimulus."""
    from brainscore.boundary.crossing import answer_of

    shown = _stimulus_set(["a", "b", "c", "d"])
    order = ("c", "a", "d", "b")
    opaque = {"a": "t1", "b": "t2", "c": "t3", "d": "t4"}
    value = {"a": 10.0, "b": 20.0, "c": 30.0, "d": 40.0}
    for layout, expected in ((lambda ids: [i for i in ids for _ in range(2)], ["a", "a", "b", "b", "c", "c", "d", "d"]),
                             (lambda ids: ids * 2, ["a", "b", "c", "d"] * 2)):
        sent = layout(list(order))  # the model's layout of the order it was sent
        trial = {i: 0 for i in order}
        values = []
        for i in sent:
            values.append(value[i] + trial[i])
            trial[i] += 1
        message = {"type": "NeuroidAssembly", "dims": ["presentation", "neuroid"],
                   "values": np.asarray(values, dtype=np.float32)[:, None],
                   "coords": [["stimulus_id", ["presentation"], np.asarray([opaque[i] for i in sent])],
                              ["neuroid_id", ["neuroid"], np.asarray(["n"])]]}
        answer = answer_of(message, shown, "look_at", opaque=opaque, order=order)
        assert answer["stimulus_id"].values.tolist() == expected
        ordinal = {i: 0 for i in order}
        for i, got in zip(expected, answer.values[:, 0].tolist()):
            assert got == value[i] + ordinal[i]
            ordinal[i] += 1


def _stimulus_set(ids):
    """A trusted stimulus set of ``ids`` (files never opened: answer_of reads only its columns)."""
    import pandas as pd

    from brainscore.data.stimuli import StimulusSet

    return StimulusSet(pd.DataFrame({"stimulus_id": ids, "truth": [f"x{i}" for i in ids]}), identifier="s",
                       stimulus_paths={i: Path(f"/nonexistent/{i}.png") for i in ids})


def test_an_answer_naming_the_benchmarks_public_ids_is_refused(plugins):
    """The ids are public: a model that knows them and answers them instead of the tokens it was given is refused."""
    benchmark = brainscore.load_benchmark(BENCHMARK)
    (plugins / "public_ids.json").write_text(json.dumps([str(i) for i in benchmark.stimulus_set["stimulus_id"]]))
    (plugins / "public_ids.json").chmod(0o644)
    with ModelServer("public-ids-cheat", LIMITS) as server:
        with pytest.raises(BoundaryViolation, match="names 160 stimuli it was not shown"):
            brainscore.score("public-ids-cheat", BENCHMARK, model=server.model)


def test_coordinates_a_model_invents_never_reach_the_metric(plugins, images92):
    """On a recording, a label answer, probabilities and odd-one-out: the model's extra coordinates (presentation,
    neuroid, choice) are dropped, the interface's kept, the stimulus columns the trusted set's."""
    from brainscore.data.stimuli import StimulusSet

    shown = StimulusSet(images92.iloc[:6].reset_index(drop=True), identifier="k92-shown",
                        stimulus_paths=images92.stimulus_paths)
    fitting = StimulusSet(images92.iloc[20:26].reset_index(drop=True), identifier="k92-fitting",
                          stimulus_paths=images92.stimulus_paths)
    fitting["image_label"] = ["animal", "object"] * 3
    invented = {"object_name", "image_label", "truth_copy", "stimulus_id_copy", "subject"}
    with ModelServer("coordinate-injector", LIMITS) as server:
        remote = server.model
        remote.start_recording("IT", [(70, 170)])
        answer = remote.look_at(shown)
        assert not invented & set(answer.coords), sorted(answer.coords)
        assert "region" not in answer.coords  # it claimed V1 while recording IT
        assert set(answer.coords) >= {"neuroid_id", "layer", "time_bin_start", "stimulus_id"}
        assert answer["stimulus_id"].values.tolist() == shown["stimulus_id"].tolist()
        for column in shown.columns:
            assert answer[column].values.tolist() == shown[column].tolist()
        remote.start_recording("V1", [(70, 170)])
        assert remote.look_at(shown)["region"].values.tolist() == ["V1"] * 3  # the region recorded: kept
        for task, fit, stimuli in (("label", ["a", "b"], shown), ("probabilities", fitting, shown),
                                   ("odd_one_out", None, shown)):
            remote.start_task(task, fit)
            answer = remote.look_at(stimuli)
            assert not invented & set(answer.coords), (task, sorted(answer.coords))
            if task == "label":
                assert answer["label_name"].values.tolist() == ["a"] * 6
            if task == "probabilities":
                assert answer["choice"].values.tolist() == ["animal", "object"]
            if task == "odd_one_out":
                real = shown["stimulus_id"].tolist()
                assert answer["stimulus_id"].values.tolist() == ["|".join(real[:3]), "|".join(real[3:])]
                assert answer["odd_one_out_id"].values.tolist() == [real[0], real[3]]


def test_an_odd_one_out_answer_naming_a_stimulus_outside_its_triplet_is_refused(plugins, images92):
    from brainscore.data.stimuli import StimulusSet

    shown = StimulusSet(images92.iloc[:6].reset_index(drop=True), identifier="k92-shown",
                        stimulus_paths=images92.stimulus_paths)
    with ModelServer("coordinate-injector", LIMITS, model_kwargs={"odd_elsewhere": True}) as server:
        server.model.start_task("odd_one_out", None)
        with pytest.raises(BoundaryViolation, match="outside its triplet"):
            server.model.look_at(shown)
