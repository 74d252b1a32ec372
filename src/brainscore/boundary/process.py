"""Starting a model server in the sandbox: its limits, what it sees, its environment, and a handle for one process.

The website's queue (:mod:`brainscore.web.pairs`), ``brainscore score --sandbox`` and ``brainscore run --sandbox``
start the model server (:mod:`brainscore.boundary.server`) the same way: under the launcher
(:mod:`brainscore.boundary.launcher`) with :class:`Limits`, seeing only :func:`visible_paths` (never the data
mirrors, the server's packaged data, its home, database or configuration; the benchmark, data and metric plugin
folders inside what it sees are masked, :func:`masked_paths`), with the settings a model needs
(:func:`server_settings`: weights, offline, threads; never the data mirror), one end of the channel, a stimulus
folder the trusted side fills and, as its only data mirror, the files a model itself may read
(:func:`model_resources`: the ImageNet class metadata of the label readouts). :class:`ModelServer` is the handle of one such process for a trusted scorer that runs
in this process (the command line, a run's worker): its :attr:`~ModelServer.model` is the
:class:`~brainscore.boundary.remote.RemoteModel` to score.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from brainscore import config
from brainscore.boundary import launcher
from brainscore.boundary.channel import Channel
from brainscore.errors import BrainScoreError

__all__ = ["Limits", "ModelServer", "visible_paths", "masked_paths", "server_settings", "server_command",
           "server_environment", "model_resources", "prepare_resources", "MEMORY_LIMIT_BYTES", "CPU_LIMIT_S",
           "WALL_LIMIT_S", "DISK_LIMIT_BYTES", "LOG_LIMIT_BYTES", "PROCESS_LIMIT", "PACKAGE_ROOT"]

MEMORY_LIMIT_BYTES = 8 * 1024**3
CPU_LIMIT_S = 3600
WALL_LIMIT_S = 3600
DISK_LIMIT_BYTES = 2 * 1024**3
LOG_LIMIT_BYTES = 20 * 1024**2
PROCESS_LIMIT = 512
PACKAGE_ROOT = Path(__file__).resolve().parents[2]
"""The folder holding the brainscore package (and brainscore_vision, brainscore_core)."""
SERVER_SETTINGS = ("offline", "weights_mirror", "stand_ins", "torchvision_weights", "timm_weights", "plugin_dirs",
                   "torch_threads")
"""Settings a model server receives (resolved, as environment variables): what a model needs, never the data."""
BASE_ENVIRONMENT = ("PATH", "LANG", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
"""Variables of this process's environment a model server inherits (nothing else: no secrets, no data paths)."""
NON_MODEL_PLUGINS = ("benchmarks", "data", "metrics")
"""Plugin folders masked in the model server's view (in the brainscore package and in the plugin folders it sees)."""


@dataclass(frozen=True)
class Limits:
    """Limits of one sandboxed model server.

    Attributes
    ----------
    memory : int
        Address space in bytes (``RLIMIT_AS``); also the most bytes one answer may bring across the boundary.
    cpu, wall : int
        CPU time and wall-clock time in seconds.
    disk : int
        Bytes it may write (the size of its working directory's tmpfs; ``RLIMIT_FSIZE``).
    log : int
        Bytes of output (its log) it may print; a server that prints more is killed.
    processes : int
        Processes and threads of its user (``RLIMIT_NPROC``; with a user id of its own only).
    isolate : bool
        Run it in namespaces (own file system, no network, own PID namespace) where this process may create them
        (:func:`brainscore.boundary.launcher.isolation`); False runs it with the limits only.
    readable : tuple of str
        Further host folders it sees read-only (e.g. the server's ``--weights-dir`` folders).
    """

    memory: int = MEMORY_LIMIT_BYTES
    cpu: int = CPU_LIMIT_S
    wall: int = WALL_LIMIT_S
    disk: int = DISK_LIMIT_BYTES
    log: int = LOG_LIMIT_BYTES
    processes: int = PROCESS_LIMIT
    isolate: bool = True
    readable: tuple = ()


def server_settings() -> dict[str, str]:
    """The settings of :data:`SERVER_SETTINGS` resolved from this process's environment and configuration file, as the
    environment variables a model server reads them from (a broken configuration file is reported where it is read)."""
    values = {}
    for key in SERVER_SETTINGS:
        setting = config.SETTINGS[key]
        try:
            value, _ = config.get(key)
        except BrainScoreError:
            continue
        if value is None:
            continue
        if isinstance(value, bool):
            value = "1" if value else "0"
        elif isinstance(value, list):
            value = os.pathsep.join(str(v) for v in value)
        values[setting.env] = str(value)
    return values


def _configured(key: str) -> list[str]:
    try:
        value, _ = config.get(key)
    except BrainScoreError:
        return []
    return [str(v) for v in (value if isinstance(value, list) else [value] if value else [])]


def visible_paths(python: str, hidden: list[Path] = (), extra: tuple = (), shown: tuple = ()) -> tuple[str, ...]:
    """What a sandboxed model server sees, read-only: the system folders, the Python environment of ``python`` and of
    this process, the brainscore package, the weight and plugin folders, ``extra`` (e.g. weight folders) and ``shown``
    (its own folders: a submission's ``site``, the stimulus folder); never a folder that holds one of ``hidden`` (the
    database, the submissions, the server's home and configuration), except the virtual environment prepared for a
    submission (built by the server from named packages) and ``shown``. Never the data mirrors or packaged data.
    """
    paths = [*launcher.SYSTEM_FOLDERS, sys.prefix, sys.base_prefix, sys.exec_prefix, str(PACKAGE_ROOT), *extra]
    paths += [p for p in sys.path if os.path.isabs(p) and os.path.isdir(p)]
    paths += [p for key in ("weights_mirror", "stand_ins", "torchvision_weights", "timm_weights", "plugin_dirs")
              for p in _configured(key)]
    data = [Path(p).resolve() for key in ("data_mirror",) for p in _configured(key)] + [config.local_packages_dir()]
    interpreter = Path(python)
    prepared = []
    if (interpreter.parent.parent / "pyvenv.cfg").exists():  # a submission's environment, under the hidden folder
        prepared.append(str(interpreter.parent.parent))
    secret = [Path(h).resolve() for h in hidden] + [d.resolve() for d in data]

    def holds_secret(path: str) -> bool:
        resolved = Path(path).resolve()
        return any(h == resolved or resolved in h.parents for h in secret)

    def inside_data(path: str) -> bool:
        resolved = Path(path).resolve()
        return any(resolved == d or d in resolved.parents for d in data)
    kept = [p for p in paths if not holds_secret(p) and not inside_data(p)]
    return tuple(dict.fromkeys([*kept, *prepared, *(str(p) for p in shown)]))


def masked_paths(readable: tuple[str, ...]) -> tuple[str, ...]:
    """The benchmark, data and metric plugin folders inside ``readable`` (of the brainscore package and of the plugin
    folders, in the reference's layout too): a model server sees them empty."""
    from brainscore.plugin_sources import REFERENCE_FOLDERS

    roots = [PACKAGE_ROOT / "brainscore" / "plugins"]
    for folder in _configured("plugin_dirs"):
        base = Path(folder) / "brainscore_vision" if (Path(folder) / "brainscore_vision").is_dir() else Path(folder)
        roots.append(base)
    masked = [str(root / kind) for root in roots for kind in {*NON_MODEL_PLUGINS, *REFERENCE_FOLDERS} - {"models"}
              if (root / kind).is_dir()]
    return tuple(dict.fromkeys(masked))


def server_command(python: str, model: str, channel_fd: int, stimuli: Path, model_kwargs: dict | None = None,
                   max_bytes: int = 1 << 30) -> list[str]:
    """The model server's command line."""
    return [python, "-m", "brainscore.boundary.server", "--model", model, "--channel-fd", str(channel_fd),
            "--stimuli", str(stimuli), "--kwargs", json.dumps(model_kwargs or {}), "--max-bytes", str(max_bytes)]


def model_resources() -> tuple:
    """Data files a model itself may read (never a benchmark's): the ImageNet class metadata of the label readouts
    (:data:`brainscore.models.readouts.IMAGENET16_SOURCE`: class ids, names, the 16 entry-level categories)."""
    from brainscore.models import readouts

    return (readouts.IMAGENET16_SOURCE,)


def prepare_resources(folder: Path) -> Path:
    """``folder`` holding the :func:`model_resources` this process can fetch (linked or copied): the model server's
    only data mirror. A resource this process lacks is left out (the model says so if it needs it)."""
    from brainscore.boundary.crossing import share_file
    from brainscore.data import store

    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o755)
    for source in model_resources():
        target = folder / source.path
        if target.exists():
            continue
        try:
            found = store.fetch(source)
        except BrainScoreError:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        share_file(found, target)
    return folder


def server_environment(home: Path, python_path: tuple = (), plugin_dirs: tuple = (),
                       resources: Path | None = None) -> dict[str, str]:
    """A model server's environment: :data:`BASE_ENVIRONMENT`, :func:`server_settings`, offline, its own ``home``
    (in its working directory), ``PYTHONPATH`` = ``python_path`` and the brainscore package, ``plugin_dirs`` added
    to the configured ones, and ``resources`` (:func:`prepare_resources`) as its only data mirror."""
    env = {name: value for name, value in os.environ.items() if name in BASE_ENVIRONMENT}
    env.update(server_settings())
    if resources is not None:
        env["BRAINSCORE_DATA_MIRROR"] = str(resources)
    env.update(BRAINSCORE_OFFLINE="1", PYTHONUNBUFFERED="1", BRAINSCORE_HOME=str(home), HOME=str(home.parent),
               PYTHONPATH=os.pathsep.join([*map(str, python_path), str(PACKAGE_ROOT)]))
    folders = [*map(str, plugin_dirs), *_configured("plugin_dirs")]
    if folders:
        env["BRAINSCORE_PLUGIN_DIRS"] = os.pathsep.join(dict.fromkeys(folders))
    return env


def hidden_paths(*more: Path) -> list[Path]:
    """The folders no sandboxed model server may see, whoever starts it: ``more`` (the caller's own: the website's
    submissions and database) and this process's home (:func:`brainscore.config.home`: the store, caches, the
    website's secret key), its configuration folder and the user's home folder."""
    return [*map(Path, more), config.home(), config.config_file().parent, Path.home()]


@dataclass(frozen=True)
class Sandbox:
    """What one sandboxed model server is started with (built by :func:`sandbox`).

    Attributes
    ----------
    spec : launcher.Spec
        The launcher's settings: what it sees (read-only), its limits, its user, its working directory.
    env : dict of str to str
        Its environment (:func:`server_environment`).
    home : Path
        Its own ``BRAINSCORE_HOME``, inside its working directory.
    """

    spec: launcher.Spec
    env: dict
    home: Path


def sandbox(python: str, workdir: Path, limits: "Limits", *, uid: int, resources: Path, shown: tuple = (),
            hidden: tuple = (), python_path: tuple = (), plugin_dirs: tuple = (), readable_plugin_dirs: tuple = (),
            report_fd: int = -1, keep_fds: tuple = ()) -> Sandbox:
    """The one way a model server's sandbox is put together, for :class:`ModelServer` (``brainscore score
    --sandbox``, a run's workers) and the website's queue (:func:`brainscore.web.pairs.run_pair`) alike.

    Parameters
    ----------
    python : str
        The interpreter the server runs in (its environment is readable).
    workdir : Path
        The server's working directory (writable; its home is made inside it).
    limits : Limits
        Memory, CPU, processes, disk, isolation, and the extra readable folders (``limits.readable``).
    uid : int
        The user (and group) the server runs as when isolated as root.
    resources : Path
        :func:`prepare_resources`: the server's only data mirror.
    shown : tuple of paths
        Its own folders it sees even inside a hidden one (the stimulus folder, a submission's code).
    hidden : tuple of paths
        Folders hidden besides :func:`hidden_paths`' (the website's submissions folder and database file).
    python_path, plugin_dirs : tuple
        Added to its ``PYTHONPATH`` and its plugin folders (:func:`server_environment`).
    readable_plugin_dirs : tuple
        Plugin folders it may read besides the configured ones.
    report_fd, keep_fds
        The launcher's verdict descriptor and the descriptors handed to the server (the channel).

    Returns
    -------
    Sandbox
    """
    isolate = limits.isolate and launcher.isolation() != "none"
    home = workdir / (".home" if isolate else "home") / "brainscore"
    env = server_environment(home, python_path=python_path, plugin_dirs=plugin_dirs, resources=resources)
    readable = visible_paths(python, hidden_paths(*hidden), extra=(*limits.readable, *readable_plugin_dirs),
                             shown=tuple(str(p) for p in shown))
    spec = launcher.Spec(readable=readable, workdir=str(workdir), isolate=isolate, uid=uid, gid=uid,
                         memory=limits.memory, cpu=limits.cpu, processes=limits.processes, disk=limits.disk,
                         report_fd=report_fd, keep_fds=tuple(keep_fds), masked=masked_paths(readable))
    return Sandbox(spec=spec, env=env, home=home)


def _readable_by_others(folders) -> None:
    """Raise unless every folder lets another user in: as root, the model server runs as a user of its own (the folders
    above it do not matter: the sandbox binds the folder itself into a file system of its own).

    Raises
    ------
    ValidationError
        Naming the folder and the ``chmod`` that fixes it.
    """
    from brainscore.errors import ValidationError

    for folder in folders:
        try:
            mode = Path(folder).stat().st_mode
        except OSError:
            continue
        if mode & 0o005 != 0o005:
            raise ValidationError(f"the plugin folder {folder} cannot be read by the sandboxed model server, which runs "
                                  f"as a user of its own: it has mode {oct(mode & 0o777)}; allow others in (chmod o+rx "
                                  f"{folder}) or copy the plugin to a folder they may read")


class ModelServer:
    """One sandboxed model server for a trusted scorer in this process (``brainscore score --sandbox``, a run's
    worker with ``--sandbox``). Use as a context manager; :attr:`model` is the model to score.

    Parameters
    ----------
    identifier : str
        The model to load (registered by an installed plugin or a plugin folder of ``plugin_dirs``).
    limits : Limits
    model_kwargs : dict, optional
        JSON-able keyword arguments of the model's factory (e.g. ``region_layer_map``).
    plugin_dirs : tuple of path
        Further plugin folders the server may load the model from (seen read-only, models only).
    log : callable (str) -> None, optional
        Receives what the server prints (its log), as it comes; default: this process's standard error.

    Raises
    ------
    ModelError, ModelServerEnded, BoundaryViolation
        From :class:`~brainscore.boundary.remote.RemoteModel` when the model cannot be loaded.
    """

    def __init__(self, identifier: str, limits: Limits = Limits(), model_kwargs: dict | None = None,
                 plugin_dirs: tuple = (), log: Callable[[str], None] | None = None):
        self.identifier, self.limits = identifier, limits
        self.model_kwargs, self.plugin_dirs = dict(model_kwargs or {}), tuple(str(p) for p in plugin_dirs)
        self.log = log or (lambda text: (sys.stderr.write(text), sys.stderr.flush()))
        self.killed_for: str | None = None
        self.verdict: dict[str, Any] = {}
        self.process: subprocess.Popen | None = None
        self.model = None
        self.spec_isolated = False

    def __enter__(self):
        from brainscore.boundary.remote import RemoteModel

        base = config.home() / "sandbox"
        base.mkdir(parents=True, exist_ok=True)
        self.folder = Path(tempfile.mkdtemp(prefix="server-", dir=base))
        os.chmod(self.folder, 0o755)
        run, stimuli = self.folder / "run", self.folder / "stimuli"
        run.mkdir()
        resources = prepare_resources(self.folder / "resources")
        ours, theirs = socket.socketpair()
        report_read, report_write = os.pipe()
        box = sandbox(sys.executable, run, self.limits, uid=launcher.UID_BASE + os.getpid() % launcher.UID_RANGE,
                      resources=resources, shown=(stimuli, resources), plugin_dirs=self.plugin_dirs,
                      readable_plugin_dirs=self.plugin_dirs, report_fd=report_write, keep_fds=(theirs.fileno(),))
        spec, env = box.spec, box.env
        self.spec_isolated = spec.isolate
        if spec.isolate and launcher.isolation() == "root":
            _readable_by_others([*self.plugin_dirs, *_configured("plugin_dirs")])
        argv = server_command(sys.executable, self.identifier, theirs.fileno(), stimuli, self.model_kwargs,
                              self.limits.memory)
        try:
            self.process = subprocess.Popen(launcher.launcher_command(spec, argv), cwd=run, env=env,
                                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                                            pass_fds=(report_write, theirs.fileno()))
        finally:
            os.close(report_write)
            theirs.close()
        self._report = report_read
        self._timer = threading.Timer(self.limits.wall, self._kill,
                                      [f"exceeded the wall-clock time limit of {self.limits.wall} s (killed)"])
        self._timer.start()
        self._reader = threading.Thread(target=self._read_log, name="brainscore-model-log", daemon=True)
        self._reader.start()
        try:
            self.model = RemoteModel(self.identifier, Channel(ours, self.limits.memory), stimuli, on_end=self.why_ended)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _kill(self, reason: str) -> None:
        if self.killed_for is None:
            self.killed_for = reason
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def _read_log(self) -> None:
        total = 0
        while chunk := self.process.stdout.read1(65536):
            total += len(chunk)
            if total > self.limits.log:
                self._kill(f"printed more than the log limit of {self.limits.log} bytes (killed)")
                continue
            self.log(chunk.decode("utf-8", "replace"))

    def why_ended(self) -> str | None:
        """Why the server's process ended, once it has (its verdict: a limit, a signal, an exit code)."""
        if self.process is None:
            return None
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            return None
        self._collect()
        if self.killed_for:
            return self.killed_for
        if "error" in self.verdict:
            return self.verdict["error"]
        if self.verdict.get("signal") is not None:
            number = self.verdict["signal"]
            name = signal.Signals(number).name if number in signal.Signals._value2member_map_ else str(number)
            return (f"killed by {name}" + (f" (the CPU-time limit of {self.limits.cpu} s)" if name == "SIGXCPU" else "")
                    + " (its log says more)")
        if self.verdict.get("exit") not in (None, 0):
            return f"exited with code {self.verdict['exit']} (its log says why)"
        return None

    def _collect(self) -> None:
        if self._report is not None:
            with os.fdopen(self._report, "rb") as report:
                line = report.read(65536)
            self._report = None
            try:
                self.verdict = json.loads(line) if line.strip() else {"error": "the sandbox ended without a verdict"}
            except ValueError:
                self.verdict = {"error": "the sandbox's verdict is unreadable"}

    def __exit__(self, kind=None, *exc) -> None:
        if self.model is not None:
            self.model.close()
        if self.process is not None:
            # after a score the server has nothing left to say: in its namespaces it goes at once, with all it started
            # (waiting for its interpreter to shut down costs seconds); after a failure its verdict names the cause
            grace = 0.5 if kind is None and self.spec_isolated else 30
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self._kill("did not exit when told to (killed)")
                self.process.wait()
            self._timer.cancel()
            self._reader.join(timeout=10)
            self.process.stdout.close()
            self._collect()
        shutil.rmtree(self.folder, ignore_errors=True)
