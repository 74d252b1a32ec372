"""The trusted scorer of one pair: ``python -m brainscore.boundary.scorer --model M --benchmark B --channel-fd N
--stimuli DIR``.

Run by the website's queue (:mod:`brainscore.web.pairs`) beside the sandboxed model server of the pair, in the
server's own environment (its Python, its plugins, its data, its cache; never the submission's code or packages),
connected to the model server by the inherited channel ``N``. It loads the benchmark, its data, metric and ceiling
here, scores the :class:`~brainscore.boundary.remote.RemoteModel` with :func:`brainscore.scoring.score` (the bootstrap
included) and prints one line on its standard output, which only the queue reads (the model server cannot write to
it)::

    {"event": "done" | "failed", "kind": K, "outcome": {...}}

``kind`` says who failed: ``done``, ``model`` (the model raised or could not be loaded), ``boundary`` (it sent what
the boundary refuses: :class:`~brainscore.boundary.crossing.BoundaryViolation`), ``ended`` (its process ended while
it was to answer: the queue then names the limit from the sandbox's verdict) or ``scorer`` (the trusted side failed:
missing data, a broken benchmark plugin). Progress and warnings go to standard error (the submission's log).
"""
from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path

__all__ = ["main", "KINDS"]

KINDS = ("done", "model", "boundary", "ended", "scorer")


def main(argv: list[str] | None = None) -> int:
    """Score, print the outcome line; 0 when a line was printed."""
    parser = argparse.ArgumentParser(prog="python -m brainscore.boundary.scorer")
    parser.add_argument("--model", required=True)
    parser.add_argument("--benchmark", required=True)
    parser.add_argument("--channel-fd", type=int, required=True)
    parser.add_argument("--stimuli", required=True)
    parser.add_argument("--max-bytes", type=int, required=True, help="most bytes one answer of the model may bring")
    parser.add_argument("--kwargs", default="{}", help="the model factory's keyword arguments (for the provenance)")
    args = parser.parse_args(argv)
    from brainscore.plugin_sources import private_bytecode

    private_bytecode()  # before any plugin is imported: a __pycache__ planted beside a source is never read
    from brainscore.boundary.channel import Channel
    from brainscore.boundary.crossing import BoundaryViolation
    from brainscore.boundary.remote import ModelError, ModelServerEnded, RemoteModel
    from brainscore.scoring import score
    from brainscore.scoring.outcome import Outcome

    channel = Channel.from_fd(args.channel_fd, args.max_bytes)
    kind, model = "scorer", None
    try:
        model = RemoteModel(args.model, channel, Path(args.stimuli))
        result = score(args.model, args.benchmark, model=model, **json.loads(args.kwargs))
        outcome, kind = Outcome.from_score(result, args.model, args.benchmark), "done"
    except (BoundaryViolation, ModelError, ModelServerEnded) as error:
        kind = ("boundary" if isinstance(error, BoundaryViolation) else "model" if isinstance(error, ModelError)
                else "ended")
        outcome = Outcome.from_failure(args.model, args.benchmark, str(error), log="")
    except Exception as error:  # noqa: BLE001 - the trusted side failed: its traceback is for the log
        traceback.print_exc()
        outcome = Outcome.from_failure(args.model, args.benchmark, error, log="")
    finally:
        if model is not None:
            model.close()
        channel.close()
    sys.stdout.write(json.dumps({"event": "done" if kind == "done" else "failed", "kind": kind,
                                 "outcome": outcome.to_json()}) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
