"""The trusted side of the boundary: a :class:`~brainscore.models.BrainModel` whose calls a sandboxed model server
answers.

:class:`RemoteModel` is what the benchmark, the metric, the ceiling, the bootstrap and the record (all in the trusted
process, loaded from the server's own plugins) see of a model that runs in the sandbox
(:mod:`brainscore.boundary.server`). Each call goes over the channel (:mod:`brainscore.boundary.channel`); each answer
is checked and rebuilt (:func:`brainscore.boundary.crossing.answer_of`) before the benchmark sees it. The model
receives the stimuli's images under opaque ids (random tokens of each call, mapped back here; a task's fitting set
also its ``image_label``), never the benchmark's stimulus ids, file names or stimulus set name, the responses,
labels or ceilings it is scored against.

Layer selection stays trusted too: when the model asks for a layer for the region it is recording from
(``score_layers``, once per region), this side runs :func:`brainscore.scoring.selection.layer_scorer` on its own
selection data with the model's candidate features (``look_at_layers``, checked like any answer), keeps the
per-layer scores for the record, and tells the model the chosen layer only. Any other request of the model is a
:class:`~brainscore.boundary.crossing.BoundaryViolation`, and so is an answer that fails its checks: the
conversation ends there and the pair fails with that message.

Errors
    :class:`ModelError` (the model raised, or could not be loaded: its message, in its author's terms),
    :class:`~brainscore.boundary.crossing.BoundaryViolation` (what it sent is refused),
    :class:`ModelServerEnded` (its process ended while it was to answer: a limit, a crash).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

from brainscore.boundary.channel import Channel, ChannelClosed, ChannelError
from brainscore.boundary.crossing import FITTING_COLUMNS, BoundaryViolation, StimulusFolder, answer_of
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import BrainScoreError, NoSelectionDataError
from brainscore.models.interface import BrainModel

__all__ = ["RemoteModel", "RemoteCandidates", "ModelError", "ModelServerEnded"]

MAX_FACT_CHARS = 100_000
"""Largest JSON of the facts a model reports for the provenance."""


class ModelError(BrainScoreError):
    """The model raised an exception while answering a call, or could not be loaded; ``kind`` is the exception's
    type name (as the model server reported it)."""

    def __init__(self, message: str, kind: str = "Exception"):
        super().__init__(message)
        self.kind = kind


class ModelServerEnded(BrainScoreError):
    """The model's process ended while it was to answer (a limit of the sandbox, a crash, an exit)."""


SHUFFLED_TASKS = ("label", "odd_one_out")
"""Tasks whose ``look_at`` rows are sent in a fresh random order (:meth:`StimulusFolder.offer`): their answers are
discrete (a label, a triplet's odd one out), where a float32 ulp of a row's numbers, which its position in a batch can
change, moves nothing but an exact tie."""


class RemoteCandidates:
    """Layer selection's view of the sandboxed model (:class:`brainscore.scoring.selection.LayerCandidates`): the
    candidate layers' features come from the model server, checked."""

    def __init__(self, remote: "RemoteModel", layers: Sequence[str], visual_degrees: float):
        self.remote, self.layers, self._degrees = remote, list(layers), float(visual_degrees)
        self.identifier = remote.identifier

    def visual_degrees(self) -> float:
        return self._degrees

    def look_at_layers(self, stimuli: StimulusSet, time_bins: Sequence[tuple[float, float]] | None = None
                       ) -> dict[str, Any]:
        """Every candidate layer's features on ``stimuli`` (PCA-reduced by the model side, as in-process; a video
        model's averaged over the window of ``time_bins``)."""
        offered = self.remote.folder.offer(stimuli, shuffled=False)  # the model-side PCA's numbers follow the order
        message = {"stimuli": offered.message}
        if time_bins is not None:
            message["time_bins"] = [[float(start), float(end)] for start, end in time_bins]
        reply = self.remote._call("look_at_layers", message, nested=True)
        if not isinstance(reply, dict) or sorted(reply) != sorted(self.layers):
            raise BoundaryViolation(f"the model answered the layer selection with layers "
                                    f"{sorted(reply)[:10] if isinstance(reply, dict) else type(reply).__name__}; it was "
                                    f"asked for its candidate layers {self.layers[:10]}")
        return {layer: answer_of(reply[layer], stimuli, f"the selection's request for layer {layer!r}",
                                 opaque=offered.opaque,
                                 region=self.remote._committing or self.remote.recording_target)
                for layer in self.layers}


class RemoteModel(BrainModel):
    """A model answered by a sandboxed model server over ``channel`` (see the module).

    Parameters
    ----------
    identifier : str
        The model it was started for (the server must report the same).
    channel : Channel
        Connected to the server; the first message is its hello (or its failure to load the model).
    folder : Path
        The stimulus folder the server sees (:class:`~brainscore.boundary.crossing.StimulusFolder`).
    on_end : callable () -> str or None, optional
        Called when the server's process ended unexpectedly: a sentence saying why (e.g. a limit), for the error.

    The server's hello (its model loaded) is awaited at the first call that needs it, so the server loads the
    model while this process loads the benchmark and its data. That call (or :meth:`hello`) raises

    - :class:`ModelError` if the server could not load the model;
    - :class:`~brainscore.boundary.crossing.BoundaryViolation` if its hello is malformed or names another model;
    - :class:`ModelServerEnded` if it ended before saying hello.
    """

    def __init__(self, identifier: str, channel: Channel, folder: Path, on_end=None):
        self._identifier, self.channel, self.on_end = str(identifier), channel, on_end
        self.folder = StimulusFolder(folder)
        self.task: str | None = None
        self.recording_target: str | None = None
        self.layer_scores: dict[str, dict[str, float]] = {}  # the selections run here: trusted
        self._selected: set[str] = set()
        self._committing: str | None = None
        self._facts: dict[str, Any] | None = None
        self._busy = False
        self._hello: dict[str, Any] | None = None

    def hello(self) -> dict[str, Any]:
        """The server's hello, awaited once: ``{"identifier", "visual_degrees", "commits_layers"}``, checked."""
        if self._hello is None:
            hello = self._receive_reply("loading the model")
            if not isinstance(hello, dict) or not isinstance(hello.get("identifier"), str) \
                    or not isinstance(hello.get("visual_degrees"), (int, float)) \
                    or isinstance(hello["visual_degrees"], bool):
                raise BoundaryViolation(f"the model server's hello is malformed: {str(hello)[:200]}")
            if hello["identifier"] != self._identifier:
                raise BoundaryViolation(f"the model loaded as {self._identifier!r} calls itself "
                                        f"{hello['identifier']!r}; its identifier must be the one it is registered under")
            degrees = float(hello["visual_degrees"])
            if not 0 < degrees < 1000:
                raise BoundaryViolation(f"the model's visual_degrees() is {degrees}; a field of view is a number of "
                                        f"degrees > 0")
            self._hello = {"identifier": hello["identifier"], "visual_degrees": degrees,
                           "commits_layers": bool(hello.get("commits_layers"))}
        return self._hello

    # ---- BrainModel ----------------------------------------------------------------------------
    @property
    def identifier(self) -> str:
        return self._identifier

    def visual_degrees(self) -> float:
        return self.hello()["visual_degrees"]

    def start_recording(self, recording_target: str, time_bins=None) -> None:
        bins = None if time_bins is None else [[int(start), int(end)] for start, end in time_bins]
        self._call("start_recording", {"region": str(recording_target), "time_bins": bins})
        self.recording_target, self.task = str(recording_target), None

    def start_task(self, task: str, fitting_stimuli=None) -> None:
        if fitting_stimuli is None or isinstance(fitting_stimuli, str):
            fitting: Any = fitting_stimuli
        elif isinstance(fitting_stimuli, StimulusSet):
            fitting = self.folder.offer(fitting_stimuli, FITTING_COLUMNS, shuffled=False).message  # labelled anyway
        elif isinstance(fitting_stimuli, (list, tuple)) or hasattr(fitting_stimuli, "tolist"):
            fitting = [str(label) for label in list(fitting_stimuli)]
        else:
            raise BrainScoreError(f"the boundary cannot send fitting_stimuli of type {type(fitting_stimuli).__name__} "
                                  f"to a sandboxed model (a label set, 'imagenet' or a StimulusSet)")
        self._call("start_task", {"task": str(task), "fitting": fitting})
        self.task = None if task == "passive" else str(task)
        self.recording_target = None

    def look_at(self, stimuli: StimulusSet, number_of_trials: int = 1, **kwargs):
        extra = {key: value for key, value in kwargs.items() if isinstance(value, (bool, int, float, str))}
        # a task's discrete answers (labels, odd ones out) get a fresh random order. Recordings and probabilities keep
        # the benchmark's (under tokens sorting as its ids): a network's forward pass and a readout's matrix product
        # give a row's numbers by its position in the batch, to a float32 ulp (boundary-tiny: up to 9.3e-8 of 0.28,
        # on 2 of 9 rows), so shuffled rows would move an honest model's numbers (see docs/security.md)
        offered = self.folder.offer(stimuli, shuffled=self.task in SHUFFLED_TASKS,
                                    unit=3 if self.task == "odd_one_out" else 1)
        reply = self._call("look_at", {"stimuli": offered.message, "number_of_trials": int(number_of_trials),
                                       "kwargs": extra})
        return answer_of(reply, stimuli, "look_at", self.task, opaque=offered.opaque, region=self.recording_target,
                         order=offered.order)

    # ---- layers and facts (for the provenance) --------------------------------------------------
    def layer_for(self, region: str) -> str | None:
        """Commit ``region`` now (as the in-process ``layer_for``; a selection it needs runs here, trusted); None for a
        model that commits no layers."""
        if not self.hello()["commits_layers"]:
            return None
        self._committing = str(region)
        try:
            layer = self._call("commit", {"region": str(region)})
        finally:
            self._committing = None
        if not isinstance(layer, str):
            raise BoundaryViolation(f"the model committed region {region!r} to {str(layer)[:100]!r}, not a layer name")
        self._facts = None
        return layer

    def facts(self) -> dict[str, Any]:
        """What the model reports of itself (layers, commitments, hashes, device): informational, for the provenance;
        malformed or oversized facts are left out."""
        if self._facts is None:
            import json

            reply = self._call("facts", {})
            try:
                ok = isinstance(reply, dict) and len(json.dumps(reply)) <= MAX_FACT_CHARS
            except (TypeError, ValueError):
                ok = False
            self._facts = reply if ok else {}
        return self._facts

    def _fact(self, name: str, kind: type):
        value = self.facts().get(name)
        return value if isinstance(value, kind) and not isinstance(value, bool) else None

    @property
    def region_layer_map(self) -> dict[str, str] | None:
        table = self._fact("region_layer_map", dict)
        return None if table is None else {str(k): str(v) for k, v in table.items() if isinstance(v, str)}

    @property
    def layers(self) -> list[str] | None:
        layers = self._fact("layers", list)
        return None if layers is None else [str(layer) for layer in layers]

    def layer_commitments(self) -> dict[str, dict]:
        table = self._fact("layer_commitments", dict) or {}
        return {str(region): dict(entry) for region, entry in table.items() if isinstance(entry, dict)}

    @property
    def weights_hash(self) -> str | None:
        value = self._fact("weights_sha256", str)
        return None if value is None else value[:128]

    @property
    def weights_record(self) -> dict | None:
        """The weights files the model server's build read, with their statuses (``weights`` of the provenance,
        :func:`brainscore.models.weights.weights_summary`), as that server reports them; None when it read none."""
        from brainscore.models.weights import WEIGHTS_STATUSES, weights_summary

        value = self._fact("weights", dict)
        if not value or value.get("status") not in WEIGHTS_STATUSES or not isinstance(value.get("files"), dict):
            return None
        files = {str(name)[:500]: {"sha256": str(entry.get("sha256", ""))[:64],
                                   "status": entry.get("status") if entry.get("status") in WEIGHTS_STATUSES
                                   else "unverified"}
                 for name, entry in list(value["files"].items())[:100] if isinstance(entry, dict)}
        return weights_summary(files)  # the status is the files' worst, not what the server says it is

    @property
    def architecture_fingerprint(self) -> str | None:
        value = self._fact("architecture_fingerprint", str)
        return None if value is None else value[:128]

    @property
    def parameter_count(self) -> int | None:
        return self._fact("parameter_count", int)

    @property
    def device_label(self) -> str:
        return (self._fact("device", str) or "cpu")[:64]

    # ---- the conversation ------------------------------------------------------------------------
    def close(self) -> None:
        """Tell the server to exit and close the channel."""
        try:
            self.channel.send({"call": "exit", "args": {}})
        except ChannelError:
            pass
        self.channel.close()

    def _ended(self, doing: str, error: BaseException) -> ModelServerEnded:
        why = self.on_end() if self.on_end is not None else None
        return ModelServerEnded(f"the model's process ended while {doing}" + (f": {why}" if why else
                                                                            f" ({error})"))

    def _call(self, call: str, args: dict, nested: bool = False) -> Any:
        if not nested:
            self.hello()
        if self._busy and not nested:
            raise BrainScoreError(f"{call} was called while the model was answering another call")
        self._busy = True
        try:
            try:
                self.channel.send({"call": call, "args": args})
            except ChannelClosed as error:
                raise self._ended(f"being asked {call}", error) from None
            return self._receive_reply(f"answering {call}")
        finally:
            if not nested:
                self._busy = False

    def _receive_reply(self, doing: str) -> Any:
        """The reply to the call in flight, serving the model's layer-selection requests meanwhile."""
        while True:
            try:
                message = self.channel.receive()
            except ChannelClosed as error:
                raise self._ended(doing, error) from None
            except ChannelError as error:
                raise BoundaryViolation(f"while {doing}, the model sent a message the boundary refuses: {error}") from None
            if "reply" in message and len(message) == 1:
                return message["reply"]
            if "error" in message and len(message) == 1:
                error = message["error"] if isinstance(message["error"], dict) else {}
                kind = str(error.get("type", "Exception"))[:100]
                said = str(error.get("message", ""))[:4000]
                if error.get("blame") == "server":  # the model server's own judgement (it names the cause)
                    raise ModelError(f"while {doing}: {said}", kind)
                raise ModelError(f"the model raised {kind} while {doing}: {said}", kind)
            if "call" in message and set(message) <= {"call", "args"}:
                self._serve(message)
                continue
            raise BoundaryViolation(f"while {doing}, the model sent a message that is neither an answer nor a request "
                                    f"the boundary serves (keys {sorted(message)[:5]})")

    def _serve(self, message: dict) -> None:
        """Answer the one request a model may make: the layer selection of the region it is committing now."""
        call, args = message.get("call"), message.get("args")
        if call != "score_layers":
            raise BoundaryViolation(f"the model asked the scorer for {str(call)[:100]!r}; the only request a model may "
                                    f"make is the layer selection of the region it records from (score_layers): "
                                    f"the benchmark's data, labels and ceilings never cross the boundary")
        region = (args or {}).get("region") if isinstance(args, dict) else None
        layers = (args or {}).get("layers") if isinstance(args, dict) else None
        degrees = (args or {}).get("visual_degrees") if isinstance(args, dict) else None
        current = self._committing or self.recording_target
        if region != current or region in self._selected:
            raise BoundaryViolation(f"the model asked for the layer selection of region {str(region)[:50]!r}, but it "
                                    f"is committing {current!r} now"
                                    + (" and that selection was already made" if region in self._selected else "")
                                    + ": a model asks once, for the region it records from")
        if not (isinstance(layers, list) and 0 < len(layers) <= 1000 and all(isinstance(l, str) and 0 < len(l) <= 300
                                                                             for l in layers)
                and len(set(layers)) == len(layers) and isinstance(degrees, (int, float)) and not isinstance(degrees, bool)
                and 0 < degrees < 1000):
            raise BoundaryViolation("the model's layer-selection request is malformed (its candidate layers must be "
                                    "1 to 1000 distinct names, its visual degrees a number)")
        self._selected.add(region)
        from brainscore.scoring import selection

        try:
            scores = selection.layer_scorer(region, RemoteCandidates(self, layers, degrees))
        except NoSelectionDataError as error:
            self.channel.send({"reply": {"no_selection": str(error)}})
            return
        ordered = [layer for layer in layers if layer in scores and math.isfinite(scores[layer])]
        if not ordered:
            raise BrainScoreError(f"layer selection gave no finite score for region {region!r} of {self.identifier!r}")
        best = max(ordered, key=lambda layer: scores[layer])  # the first of equal maxima, in depth order
        self.layer_scores[region] = {str(layer): float(value) for layer, value in scores.items()}
        self.channel.send({"reply": {"layer": best, "benchmarks": list(selection.layer_scorer.benchmarks(region))}})
