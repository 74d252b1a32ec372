"""``brainscore score --model M --benchmark B``: the main job from the command line."""
from __future__ import annotations

import json
import math
import sys

ERROR_HELP = ("error: the bootstrap standard error of the ceiled score (std of the score recomputed on N seeded "
              "resamples of the experiment's unit, stimuli or images, with the ceiling recomputed on the same "
              "resamples); ci95: the bootstrap 95% percentile interval. The reference's own error (e.g. the SEM over "
              "cross-validation splits) is kept as error_reference in --json.")

from brainscore.cli import add_plugin_dir_argument  # noqa: E402
from brainscore.errors import BrainScoreError  # noqa: E402 (after the help text it documents)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("score", help="score a model on a benchmark (or several, in this process)",
                                   description="Score a model on a benchmark, print the ceiled score with its formula, "
                                               "its bootstrap 95% interval and the committed layer, and record it in "
                                               "the results database; a pair the database already records with the "
                                               "same model arguments, benchmark version, bootstrap settings and code "
                                               "(by `brainscore score` or `brainscore run`) is shown from its record "
                                               "(--rerun scores it again). Patterns and comma lists score every pair "
                                               "one after the other and print one table (`brainscore run` does the "
                                               "same on Dask). Progress goes to stderr (--quiet: none). "
                                               + ERROR_HELP)
    parser.add_argument("--model", required=True, help="model identifier, e.g. efficientnet-lite0; or identifiers "
                                                       "and shell patterns, comma-separated")
    parser.add_argument("--benchmark", required=True, help="benchmark identifier, e.g. Cowley2026.210325.V4-pls; or "
                                                           "identifiers and patterns, e.g. 'Cowley2026*,Mur2013-rdm'")
    parser.add_argument("--layer", default=None,
                        help="commit the benchmark's region to this layer instead of the model's map")
    parser.add_argument("--device", default=None,
                        help="torch device of the model and of the metric and ceiling, e.g. cuda or cpu (torch on the "
                             "CPU); default: the model's own device and numpy for the metric")
    parser.add_argument("--bootstrap", type=_resamples, default=1000, metavar="N",
                        help="bootstrap resamples for error and ci95 (default 1000, seed 0; 0 skips them; at most "
                             "100000)")
    parser.add_argument("--db", default=None, metavar="URL",
                        help="results database (SQLAlchemy URL; default $BRAINSCORE_DB_URL, else "
                             "sqlite:///$BRAINSCORE_HOME/results.sqlite)")
    parser.add_argument("--no-record", action="store_true",
                        help="compute the score without the results database: no record is written, none reused")
    parser.add_argument("--rerun", action="store_true",
                        help="score again even if the results database already records this pair with the same "
                             "model arguments, benchmark version, bootstrap settings and code (`brainscore run` "
                             "and `brainscore score` key their records alike, so each reuses the other's)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (with the provenance)")
    parser.add_argument("--sandbox", action="store_true",
                        help="run the model's code in a sandbox (a model server of its own: no data, no network, no access to your files, limits on memory, time and disk) and compute the score here from its answers, for a model plugin you do not trust; --plugin-dir folders then serve the model only (a benchmark comes from the installed plugins and the plugin_dirs setting). See docs/security.md")
    add_plugin_dir_argument(parser)
    parser.set_defaults(func=run)


def _device(args) -> str | None:
    """``--device``, checked once (:func:`brainscore.device.resolve`: ``cuda`` without a GPU is a clear error now)."""
    from brainscore.device import resolve

    return resolve(args.device, option="--device")


def _several(spec: str) -> bool:
    return any(c in spec for c in ",*?[")


def run_grid(args) -> int:
    """Several pairs, one after the other in this process: one JSON line per pair, or one table."""
    from brainscore import runner
    from brainscore.runner import report

    if args.layer:
        raise SystemExit("error: --layer applies to one benchmark; name a single --benchmark with it")
    pairs = runner.pairs(args.model, args.benchmark, device=_device(args))
    on_result = (lambda s: print(report.json_line(s), flush=True)) if args.json else None
    store = None
    if not args.no_record:  # every score and failure is recorded, as for a single pair
        from brainscore.results import Database
        from brainscore.results.records import DatabaseOutcomeStore

        store = DatabaseOutcomeStore(Database(args.db))
    summaries = runner.run_sequential(pairs, store=store, rerun=args.rerun, on_result=on_result, **_sandbox(args))
    if not args.json:
        print(report.table(summaries))
    return 1 if report.failures(summaries, sys.stderr) else 0


def _sandbox(args) -> dict:
    """``--sandbox``: the keyword arguments that put the model through the boundary (:mod:`brainscore.boundary`)."""
    if not getattr(args, "sandbox", False):
        return {}
    from brainscore.boundary import Limits

    return {"sandbox": Limits(), "model_plugin_dirs": tuple(args.plugin_dir)}


def _score(args, device, kwargs):
    """The score of the one pair, its model in this process or (``--sandbox``) in a sandboxed model server."""
    from brainscore import api

    sandbox = _sandbox(args)
    if not sandbox:
        return api.score(args.model, args.benchmark, device=device, bootstrap=args.bootstrap, **kwargs)
    from brainscore.boundary import ModelServer

    with ModelServer(args.model, sandbox["sandbox"], {**kwargs, **({"device": device} if device else {})},
                     plugin_dirs=sandbox["model_plugin_dirs"]) as server:
        return api.score(args.model, args.benchmark, device=device, bootstrap=args.bootstrap, model=server.model,
                         **kwargs)


def formula_text(summary: dict) -> str:
    """``score 0.3915 = r² / ceiling = 0.5501² / 0.7731``: the value and how the benchmark computed it."""
    score, raw, ceiling, formula = summary["score"], summary["raw"], summary["ceiling"], summary["formula"]
    head = "score " + ("nan" if score is None else f"{score:.4f}")
    if formula == "raw":
        return head + " = raw score (no ceiling)"
    if formula == "r2" and raw is not None:
        return f"{head} = r² = {raw:.4f}² (no ceiling)"
    if raw is None or ceiling is None:
        return head
    forms = {"r2_over_ceiling": f"r² / ceiling = {raw:.4f}² / {ceiling:.4f}",
             "legacy": f"(r / ceiling)² = ({raw:.4f} / {ceiling:.4f})²",
             "raw_over_ceiling": f"raw / ceiling = {raw:.4f} / {ceiling:.4f}",
             "raw_over_ceiling_clipped": f"clip(raw / ceiling, 0, 1) = clip({raw:.4f} / {ceiling:.4f})"}
    return f"{head} = {forms[formula]}" if formula in forms else f"{head} (raw {raw:.4f}, ceiling {ceiling:.4f})"


def _record(args, outcome, key: str | None = None) -> tuple[int | None, str | None]:
    """Record ``outcome`` (a score or a failure, with its run ``key`` in the provenance) unless ``--no-record``;
    returns (row id, database shown).

    Raises
    ------
    NotRecorded
        If the database cannot take it (then it is kept in the journal, see :mod:`brainscore.results.records`).
    """
    if args.no_record:
        return None, None
    from brainscore.results.database import identity_of
    from brainscore.results.records import record

    return record(outcome.with_provenance(run_key=key) if key else outcome, args.db), identity_of(args.db)


def _key(args, benchmark, model_kwargs: dict) -> str:
    """The pair's run key (:func:`brainscore.runner.keys.run_key`, the one ``brainscore run`` keys records by)."""
    from brainscore.runner.keys import run_key

    return run_key(args.model, args.benchmark, getattr(benchmark, "version", None), model_kwargs,
                   bootstrap=args.bootstrap)


def _recorded(args, key: str):
    """The latest record of this pair with run key ``key`` (a StoredScore), or None (also with --no-record or
    --rerun, or when the database cannot be read: then the pair is scored, and the error shows when recording)."""
    if args.no_record or args.rerun:
        return None
    from brainscore.results import Database, DatabaseError
    from brainscore.results.records import DatabaseOutcomeStore

    try:
        database = Database(args.db)
    except DatabaseError:
        return None
    try:
        return DatabaseOutcomeStore(database).find_record(args.model, args.benchmark, key)
    except DatabaseError:
        return None
    finally:
        database.close()


def _record_failure(args, failure: BaseException) -> None:
    """Record that the pair failed with ``failure`` and say so on stderr; a failure to record it is a warning."""
    from brainscore.errors import HomeUnusableError, MissingDependencyError, UnknownIdentifierError
    # an unknown name, a missing package or an unusable BRAINSCORE_HOME is the command's problem, not a
    # result: nothing to record (and the home's message must not be buried under a second error from it)
    if isinstance(failure, (UnknownIdentifierError, MissingDependencyError, HomeUnusableError)):
        return
    if getattr(failure, "kind", None) in ("UnknownIdentifierError", "MissingDependencyError"):  # said by a sandbox
        return
    from brainscore.results import DatabaseError
    from brainscore.scoring.outcome import Outcome

    try:
        row, where = _record(args, Outcome.from_failure(args.model, args.benchmark, failure))
    except DatabaseError as error:  # the failure itself is what the user must see
        print(f"warning: the failure could not be recorded: {error}", file=sys.stderr)
        return
    if row is not None:
        print(f"recorded as failed: #{row} in {where}", file=sys.stderr)


def _refuse_non_finite(result, model: str, benchmark: str) -> None:
    """A NaN or infinite score is an error (exit code 2) with its reason, never ``"score": null``."""
    value = float(result)
    if math.isfinite(value):
        return
    reasons = []
    for name in ("raw", "ceiling"):
        part = result.attrs.get(name)
        if part is not None and not math.isfinite(float(part)):
            reasons.append(f"the {name} score is {float(part)}")
    ceiling = result.attrs.get("ceiling")
    if ceiling is not None and math.isfinite(float(ceiling)) and float(ceiling) == 0:
        reasons.append("the ceiling is 0 (the data are not reliable enough to normalise by)")
    reason = "; ".join(reasons) or "the metric returned a non-finite value"
    raise BrainScoreError(f"the score of {model} on {benchmark} is {value} ({reason}); no number is reported. "
                          f"Check the model's activations and the benchmark's data for constant or missing values")


def run(args) -> int:
    if args.layer is not None and not args.layer.strip():
        raise SystemExit("error: --layer is empty; name a layer of the model (`brainscore layers MODEL` lists them), "
                         "or leave --layer out to use the model's own map")
    if _several(args.model) or _several(args.benchmark):
        return run_grid(args)
    from brainscore import api
    from brainscore.results import InvalidScore, NotRecorded, check_outcome
    from brainscore.scoring.outcome import Outcome

    device = _device(args)
    kwargs = {}
    benchmark = api.load_benchmark(args.benchmark)
    if args.layer:
        region = getattr(benchmark, "region", None)
        if region is None:
            raise SystemExit(f"error: --layer needs a neural benchmark; {args.benchmark} records no region")
        kwargs["region_layer_map"] = {region: args.layer}
    key = None if args.no_record else _key(args, benchmark, kwargs)
    found = _recorded(args, key) if key else None
    if found is not None:  # the same computation is recorded (by `brainscore score` or `brainscore run`)
        from brainscore.results.database import identity_of
        from brainscore.results.records import stored_outcome

        _show(args, stored_outcome(found, args.model, args.benchmark), found.id, identity_of(args.db), None,
              reused=found)
        return 0
    try:
        result = _score(args, device, kwargs)
        _refuse_non_finite(result, args.model, args.benchmark)  # recorded as a failure, with its reason
    except Exception as failure:
        _record_failure(args, failure)
        raise
    outcome = Outcome.from_score(result, args.model, args.benchmark)
    try:  # recorded or not, a number that cannot be a score of this benchmark is no score
        check_outcome(outcome)
    except InvalidScore as refused:
        _record_failure(args, refused)
        raise
    not_recorded = None
    try:
        row, where = _record(args, outcome, key)
    except NotRecorded as error:  # the score is printed all the same, and kept in the journal
        row, where, not_recorded = None, None, error
    _show(args, outcome, row, where, not_recorded)
    if not_recorded is not None:
        print(f"error: the score was computed but not recorded: {not_recorded}", file=sys.stderr)
        return 2
    return 0


def _show(args, outcome, row: int | None, where: str | None, not_recorded, reused=None) -> None:
    """Print ``outcome``: one JSON object (``--json``), else the formula, interval, ceiling, layer and record
    (``reused``: the StoredScore it was read from, instead of computed)."""
    summary = outcome.summary()
    if args.json:
        kept = getattr(not_recorded, "kept", None)
        from brainscore.models.weights import weights_status

        print(json.dumps({**summary, "record": row, "database": where, "reused": reused is not None,
                          "weights": weights_status(outcome.provenance), "provenance": outcome.provenance,
                          **({"journal": str(kept) if kept else None} if not_recorded is not None else {})}))
        return
    lines = [formula_text(summary)]
    if summary["ci95"] is not None:
        unit = outcome.bootstrap_unit or "unit"
        units = {"stimulus": "stimuli"}.get(unit, unit + "s")
        lines.append(f"ci95  [{summary['ci95'][0]:.4f}, {summary['ci95'][1]:.4f}]   error {summary['error']:.4f} "
                     f"(bootstrap SE over {units}: {args.bootstrap} resamples, seed 0)")
    if summary["ceiling"] is not None and summary["formula"] not in ("raw", "r2"):
        spread = (f" ± {summary['ceiling_error']:.4f}" if summary["ceiling_error"] is not None else "") + (
            f", ci95 [{summary['ceiling_ci95'][0]:.4f}, {summary['ceiling_ci95'][1]:.4f}]"
            if summary["ceiling_ci95"] is not None else "")
        lines.append(f"ceiling {summary['ceiling']:.4f}{spread}")
    if summary["layer"] is not None:
        from brainscore.models.layer_rule import describe

        region = outcome.region
        how = describe(outcome.commitment)
        lines.append(f"layer {region + ' -> ' if region else ''}{summary['layer']}" + (f"   ({how})" if how else ""))
    from brainscore.models.weights import weights_note

    note = weights_note(outcome.provenance)
    if note:
        lines.append(note)
    took = f" in {summary['duration_s']:.1f} s" if summary["duration_s"] is not None else ""
    if reused is not None:
        when = f" on {reused.end:%Y-%m-%d %H:%M} UTC" if reused.end is not None else ""
        lines.append(f"model {args.model} on {args.benchmark}: scored{when}{took}")
        lines.append(f"reused record #{row} in {where} (the same model, benchmark version, settings and code); "
                     f"--rerun scores it again")
        print("\n".join(lines))
        return
    lines.append(f"model {args.model} on {args.benchmark}{took}")
    if not_recorded is not None:
        kept = not_recorded.kept
        lines.append("NOT recorded: " + (f"kept in {kept}" if kept else "see the error below"))
    else:
        lines.append(f"recorded as #{row} in {where}" if row is not None else "not recorded (--no-record)")
    print("\n".join(lines))


def _resamples(text: str) -> int:
    """``--bootstrap``: a whole number from 0 to :data:`~brainscore.scoring.job.MAX_RESAMPLES` (argparse says what is
    wrong, without a traceback)."""
    import argparse

    from brainscore.scoring.job import MAX_RESAMPLES

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of resamples (e.g. 1000; 0 skips the "
                                         f"interval)") from None
    if not 0 <= value <= MAX_RESAMPLES:
        raise argparse.ArgumentTypeError(f"{text} resamples is out of range: give 0 (no interval) to {MAX_RESAMPLES}")
    return value
