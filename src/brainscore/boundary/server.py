"""The model server: ``python -m brainscore.boundary.server --model M --channel-fd N --stimuli DIR``.

The only process that runs a submission's (or a stranger's) model code, inside the sandbox
(:mod:`brainscore.boundary.launcher`). It loads the model from the registry and answers, over the channel
(:mod:`brainscore.boundary.channel`), the trusted scorer's calls of the :class:`~brainscore.models.BrainModel`
interface:

``start_recording(region, time_bins)``, ``start_task(task, fitting)``, ``look_at(stimuli, number_of_trials)``,
``look_at_layers(stimuli)`` (the candidate layers' features, during a layer selection the scorer runs), ``commit``
(``layer_for(region)``), ``facts`` (what the score's provenance says of the model) and ``exit``.

It never receives the data a model is scored against: stimuli arrive as opaque ids (random tokens drawn by the scorer
for each call, never the benchmark's stimulus ids or stimulus set name; a ``look_at``'s in a fresh random order) and
image files under random names in the folder ``DIR`` the scorer fills (a fitting set with its ``image_label``
column); answers leave as arrays
(:func:`brainscore.boundary.crossing.assembly_message`). A model that has no layer for a region asks the scorer for
one (``score_layers``): the scorer runs the layer selection on its own data, asking this server for the candidate
layers' features, and answers with the chosen layer only. What the model prints is the submission's log; this
process prints nothing else on its standard output, and nothing it prints is ever read as a result.
"""
from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path
from typing import Any

from brainscore.boundary.channel import Channel, ChannelClosed
from brainscore.boundary.crossing import assembly_message, stimuli_of

__all__ = ["main", "remote_layer_scorer", "load_failure"]

_state: dict[str, Any] = {"channel": None, "folder": None, "candidates": None, "benchmarks": {}}


def _call_scorer(call: str, args: dict) -> Any:
    """Ask the scorer (inside one of its calls), serving the calls it makes meanwhile; its reply."""
    channel: Channel = _state["channel"]
    channel.send({"call": call, "args": args})
    while True:
        message = channel.receive()
        if "reply" in message:
            return message["reply"]
        if "error" in message:
            raise RuntimeError(str((message.get("error") or {}).get("message", "the scorer refused")))
        _serve_one(message)


def remote_layer_scorer(region: str, candidates) -> dict[str, float]:
    """The model's layer scorer inside the sandbox: the trusted scorer runs the selection on its data (asking for the
    candidates' features) and answers with the chosen layer, given here as score 1 against 0 for the others.

    Raises
    ------
    NoSelectionDataError
        Where the scorer has no selection data for ``region`` (the model then commits it by the layer rule).
    """
    from brainscore.errors import NoSelectionDataError

    _state["candidates"] = candidates
    try:
        reply = _call_scorer("score_layers", {"region": str(region), "layers": [str(layer) for layer in candidates.layers],
                                              "visual_degrees": float(candidates.visual_degrees())})
    finally:
        _state["candidates"] = None
    if reply.get("no_selection"):
        raise NoSelectionDataError(str(reply["no_selection"]))
    _state["benchmarks"][str(region)] = tuple(reply.get("benchmarks") or ())
    return {layer: (1.0 if layer == reply["layer"] else 0.0) for layer in candidates.layers}


def _selection_identity() -> str:
    from brainscore.scoring import selection

    return selection.layer_scorer.identifier


remote_layer_scorer.benchmarks = lambda region: _state["benchmarks"].get(str(region), ())  # type: ignore[attr-defined]


def _jsonable(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON data (facts for the provenance), or None where it is not."""
    import numpy as np

    if depth > 8:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, depth + 1) for v in value]
    return str(value)


def _facts(model) -> dict[str, Any]:
    from brainscore.scoring.job import device_of, model_facts, model_hashes

    import resource

    weights, fingerprint = model_hashes(model)
    table = getattr(model, "layer_commitments", None)
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return _jsonable({"cpu_s": sum(u.ru_utime + u.ru_stime for u in usage),  # this server's so far (perf/boundary.py)
                      "region_layer_map": dict(getattr(model, "region_layer_map", None) or {}) or None,
                      "layer_commitments": table() if callable(table) else None,
                      "layers": list(getattr(model, "layers", None) or []) or None,
                      "weights_sha256": weights, "architecture_fingerprint": fingerprint,
                      "parameter_count": (model_facts(model) or {}).get("parameter_count"), "device": device_of(model),
                      "weights": _state.get("weights")})


def _serve_one(message: dict) -> bool:
    """Answer one call of the scorer; False after ``exit``."""
    channel: Channel = _state["channel"]
    model = _state["model"]
    call, args = message.get("call"), message.get("args") or {}
    if call == "exit":
        return False
    try:
        if call == "start_recording":
            model.start_recording(args["region"], time_bins=[tuple(b) for b in args["time_bins"]]
                                  if args.get("time_bins") is not None else None)
            reply: Any = None
        elif call == "start_task":
            fitting = args.get("fitting")
            if isinstance(fitting, dict):
                fitting = stimuli_of(fitting, _state["folder"])
            model.start_task(args["task"], fitting)
            reply = None
        elif call == "look_at":
            answer = model.look_at(stimuli_of(args["stimuli"], _state["folder"]),
                                   number_of_trials=int(args.get("number_of_trials", 1)), **(args.get("kwargs") or {}))
            reply = assembly_message(answer)
        elif call == "look_at_layers":
            candidates = _state["candidates"]
            if candidates is None:
                raise RuntimeError("look_at_layers outside a layer selection")
            features = candidates.look_at_layers(stimuli_of(args["stimuli"], _state["folder"]),
                                                 time_bins=[tuple(b) for b in args["time_bins"]]
                                                 if args.get("time_bins") is not None else None)
            reply = {str(layer): assembly_message(features[layer], f"the features of layer {layer!r}")
                     for layer in candidates.layers}
        elif call == "commit":
            reply = model.layer_for(args["region"])
        elif call == "facts":
            reply = _facts(model)
        else:
            raise RuntimeError(f"unknown call {call!r}")
        channel.send({"reply": reply})  # encoded (and refused, e.g. an array of objects) before a byte is sent
    except ChannelClosed:
        raise
    except Exception as error:  # noqa: BLE001 - the model's failure, told to the scorer and printed in the log
        traceback.print_exc()
        sys.stderr.flush()
        channel.send({"error": {"type": type(error).__name__, "message": str(error)[:4000]}})
    return True


def load_failure(error: BaseException) -> dict:
    """The error the scorer is told when the model cannot be loaded: its type, one line, and ``blame``
    ``"server"`` where the cause is this installation (a reference name it lacks, a weights file it does not have,
    an installed package that fails to import: :func:`brainscore.plugin_imports.import_failure`), not the model."""
    from brainscore.errors import DataNotFoundError, HashMismatchError, NetworkError

    failure = getattr(error, "failure", None)
    folder = getattr(error, "folder", None)
    plugin = f"the plugin {folder.parent.name}/{folder.name}" if folder is not None else "the plugin"
    server = False
    if failure is not None:
        server = failure.environment
        text = (f"this server's installation could not import {plugin} (not a fault of the submission): "
                f"{failure.summary}" + (f" (raised in {failure.where})" if failure.where else "")
                if server else failure.message(plugin))
    elif isinstance(error, (DataNotFoundError, HashMismatchError, NetworkError)):
        server = True
        text = f"this server does not have a file the model needs (not a fault of the submission's code): {error}"
    else:
        text = str(error)
    return {"type": type(error).__name__, "message": " ".join(text.split())[:4000],
            **({"blame": "server"} if server else {})}


def main(argv: list[str] | None = None) -> int:
    """Load the model, say hello (its identifier, visual degrees, whether it commits layers), serve until ``exit``."""
    parser = argparse.ArgumentParser(prog="python -m brainscore.boundary.server")
    parser.add_argument("--model", required=True)
    parser.add_argument("--channel-fd", type=int, required=True)
    parser.add_argument("--stimuli", required=True, help="the folder the scorer puts the images in")
    parser.add_argument("--kwargs", default="{}", help="the model factory's keyword arguments, as JSON")
    parser.add_argument("--max-bytes", type=int, default=1 << 30, help="largest message accepted from the scorer")
    args = parser.parse_args(argv)
    # The model server runs only the submission's own code, sandboxed: a pyc beside it is the submitter's own code, so
    # its imports read the installed packages' bytecode (a private prefix recompiled torch for every pair: ~4 s) and
    # write none beside a submission. The trusted processes (scorer, website, stimuli helper) keep a private prefix.
    sys.dont_write_bytecode = True
    channel = Channel.from_fd(args.channel_fd, args.max_bytes)
    _state.update(channel=channel, folder=Path(args.stimuli))
    try:
        from brainscore import registry
        from brainscore.models.weights import recording_weights, weights_summary

        with recording_weights() as weights_files:  # the weights files the build read, told with the facts
            model = registry.models.load(args.model, **json.loads(args.kwargs))
        _state["weights"] = weights_summary(weights_files)
        if getattr(model, "layer_scorer", False) is None:
            remote_layer_scorer.identifier = _selection_identity()  # type: ignore[attr-defined]
            model.layer_scorer = remote_layer_scorer
        hello = {"identifier": str(model.identifier), "visual_degrees": float(model.visual_degrees()),
                 "commits_layers": callable(getattr(model, "layer_for", None))}
    except Exception as error:  # noqa: BLE001 - the model's failure to load, told to the scorer
        traceback.print_exc()
        failure = load_failure(error)
        print(failure["message"], file=sys.stderr)  # the log's last line, which the website quotes as the failure
        sys.stderr.flush()
        try:
            channel.send({"error": failure})
        except ChannelClosed:
            pass
        return 1
    _state["model"] = model
    try:
        channel.send({"reply": hello})
        while _serve_one(channel.receive()):
            pass
    except ChannelClosed:  # the scorer ended the conversation (it has its score, or refused an answer)
        pass
    finally:
        channel.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
