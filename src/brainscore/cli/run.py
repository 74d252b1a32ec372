"""``brainscore run --models M --benchmarks B``: a grid of models x benchmarks on Dask."""
from __future__ import annotations

from brainscore.cli import add_plugin_dir_argument

import importlib
import logging
import sys


class _ClusterNames:
    """The batch systems ``--cluster`` accepts: the keys of :data:`brainscore.runner.clusters.JOBQUEUE` (the one
    list), read when argparse first checks or shows them. Importing the runner while the parser is built would
    make every command (``brainscore --help`` too) pay for the scientific stack, so the parser's usage names
    them ``SYSTEM`` and its help lists them."""

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __iter__(self):
        return iter(self._names())

    @staticmethod
    def _names() -> tuple[str, ...]:
        from brainscore.runner.clusters import JOBQUEUE

        return tuple(JOBQUEUE)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "run", help="score many models on many benchmarks on Dask",
        description="Score every model on every benchmark on a Dask cluster (local worker processes by default), "
                    "skipping pairs already recorded (by `brainscore run` or `brainscore score`: one key). Prints "
                    "progress on stderr (per stage: tasks done, running and failed, the time left; per task: when it "
                    "started and ended) and a summary table; "
                    "exits 1 if any pair failed, listing each failure with its log.")
    parser.add_argument("--models", required=True, help="identifiers and shell patterns, comma-separated, "
                                                         "e.g. 'efficientnet-lite*,pixels'")
    parser.add_argument("--benchmarks", required=True, help="identifiers and shell patterns, e.g. '*' or "
                                                             "'Cowley2026*,Kriegeskorte2008.IT-rdm'")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--scheduler", default=None, metavar="ADDR", help="an existing Dask scheduler, e.g. "
                                                                         "tcp://host:8786")
    where.add_argument("--cluster", choices=_ClusterNames(), default=None, metavar="SYSTEM",
                       help="submit workers as batch jobs with dask-jobqueue, configured by jobqueue.yaml "
                            "(docs/cluster.md); SYSTEM is one of %(choices)s")
    parser.add_argument("--workers", type=_worker_count, default=None,
                        help="worker processes (local) or jobs (--cluster); default: sized to the machine")
    parser.add_argument("--memory-per-worker", type=_memory_size, default=None, metavar="SIZE",
                        help="memory limit of each local worker, e.g. 3GiB (default: the setting memory_per_worker, "
                             "else the machine's memory shared among the workers, at least 4 GiB for the one "
                             "running networks); in-worker budgets follow it")
    parser.add_argument("--device", default=None, help="torch device of the models and of the metrics and ceilings, "
                                                        "e.g. cuda (one model per GPU; with --scheduler or --cluster "
                                                        "checked on the workers); default: numpy metrics")
    parser.add_argument("--wait-for-workers", type=float, default=None, metavar="SECONDS",
                        help="how long to wait for the workers the run needs, at its start (batch jobs still "
                             "queued) and when the last one holding a needed resource leaves (default 3600)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per pair as it finishes "
                                                            "(the table goes to stderr)")
    parser.add_argument("--rerun", action="store_true", help="score pairs already recorded again")
    parser.add_argument("--preload", action="append", default=[], metavar="MODULE",
                        help="a module every worker (and this process) imports first, e.g. an uninstalled plugin")
    parser.add_argument("--no-progress", action="store_true", help="the same as --quiet")
    parser.add_argument("--sandbox", action="store_true",
                        help="put the model calls through the boundary on the workers: each model runs in a sandboxed "
                             "model server of its own (no data, no network, limits), the benchmarks, metrics and "
                             "ceilings on the workers; --plugin-dir folders then serve the models only. See "
                             "docs/security.md")
    add_plugin_dir_argument(parser)
    parser.set_defaults(func=run)


def _worker_count(text: str) -> int:
    """``--workers``: a whole number of at least 1 (0 is an error, never "the default")."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of workers, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}; leave --workers out for a count sized "
                                         f"to the machine")
    return value


def _memory_size(text: str) -> int:
    """``--memory-per-worker``: a memory size such as ``3GiB`` in bytes."""
    import argparse

    from brainscore.config import parse_bytes
    from brainscore.errors import ValidationError

    try:
        return parse_bytes(text)
    except ValidationError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def run(args) -> int:
    from brainscore import progress, runner
    from brainscore.runner import clusters, report

    for module in args.preload:
        importlib.import_module(module)
    from brainscore.device import is_cuda, named, resolve
    from brainscore.runner import watch

    elsewhere = bool(args.scheduler or args.cluster)
    # here the one check (no GPU for cuda is a clear error now); on a cluster the name only: the workers
    # have the GPUs, not the machine the run is started from, and are asked once they are there
    device = (named if elsewhere else resolve)(args.device, option="--device")
    pairs = runner.pairs(args.models, args.benchmarks, device=device)
    gpus = 0
    if is_cuda(device):
        import torch

        gpus = 1 if elsewhere else max(1, torch.cuda.device_count())
    on_result = (lambda s: print(report.json_line(s), flush=True)) if args.json else None
    stats: dict = {}
    store = runner.open_outcome_store()
    recorded = None if args.rerun else runner.all_recorded(pairs, store)
    if recorded is not None:  # nothing to compute: no cluster started
        for summary in recorded:
            if on_result:
                on_result(summary)
        print(report.table(recorded), file=sys.stderr if args.json else sys.stdout, flush=True)
        return 0
    with progress.stage("starting the Dask cluster" if args.scheduler is None else f"connecting to {args.scheduler}"):
        client, cluster = clusters.connect(args.scheduler, args.cluster, args.workers, gpus=gpus,
                                           preload=args.preload, memory_per_worker=args.memory_per_worker)
    try:
        summaries = runner.run(pairs, client, store=store, rerun=args.rerun, on_result=on_result,
                               progress=True, gpu=bool(gpus),
                               stream=_Quiet() if args.no_progress or not progress.enabled() else None, stats=stats,
                               **_sandbox(args), needs=clusters.resources_needed(args.scheduler, args.cluster, gpus),
                               wait_s=watch.DEFAULT_WAIT_S if args.wait_for_workers is None else args.wait_for_workers)
    finally:
        # workers still finishing their last task at shutdown are killed; that is expected, not news
        logging.getLogger("distributed.nanny").setLevel(logging.ERROR)
        client.close()
        if cluster is not None:
            cluster.close()
    out = sys.stderr if args.json else sys.stdout
    print(report.table(summaries), file=out, flush=True)
    if stats:
        print(report.stage_seconds(stats), file=out, flush=True)
    return 1 if report.failures(summaries, sys.stderr) else 0


def _sandbox(args) -> dict:
    if not args.sandbox:
        return {}
    from brainscore.boundary import Limits

    return {"sandbox": Limits(), "model_plugin_dirs": tuple(args.plugin_dir)}


class _Quiet:
    """A stream that drops the progress display (``--no-progress``) while its counts are still kept."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False
