"""Shared pieces of the data-authoring tests: real datasets built from raw files, and loopback servers.

Servers bind 127.0.0.1 on a free port, run in daemon threads of the test process, and are shut
down by the context managers here (each test module wraps them in fixtures).
"""
from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import socket
import sys
import threading
import zipfile
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from brainscore.data import DataAssembly, NeuroidAssembly, StimulusSet

LOOPBACK = "127.0.0.1"


# ---- real data, built from the published raw files ----------------------------------------------
def cowley_210325(shared_data: Path, workdir: Path) -> tuple[NeuroidAssembly, StimulusSet]:
    """Cowley et al. 2026 session 210325: per-repeat V4 spike counts and the 640 images.

    One presentation per (image, non-NaN repeat); ``repetition`` from 0; ``neuroid_id``
    ``neuron_<i>``; region V4; one time bin 50-150 ms (REFERENCE_FACTS (g)).
    """
    images = workdir / "cowley_images"
    if not images.is_dir():
        with zipfile.ZipFile(shared_data / "cowley2026_v4/images/images_210325.zip") as archive:
            archive.extractall(images)
    files = sorted(images.glob("image*.jpg"))
    stimuli = StimulusSet({"stimulus_id": [f.stem for f in files],
                           "image_number": np.arange(1, len(files) + 1)},
                          identifier="AuthorTest.Cowley210325", stimulus_paths={f.stem: f for f in files})
    responses = np.load(shared_data / "cowley2026_v4/responses_raw/responses_210325.npy")
    n_neurons = responses.shape[0]
    image, repeat = np.nonzero(~np.isnan(responses[0]))
    values = responses[:, image, repeat].T[:, :, np.newaxis]
    assembly = NeuroidAssembly(values, dims=("presentation", "neuroid", "time_bin"), coords={
        "stimulus_id": ("presentation", [f"image{i + 1:04d}" for i in image]),
        "repetition": ("presentation", repeat),
        "neuroid_id": ("neuroid", [f"neuron_{i}" for i in range(n_neurons)]),
        "region": ("neuroid", ["V4"] * n_neurons),
        "time_bin_start": ("time_bin", [50]),
        "time_bin_end": ("time_bin", [150]),
    })
    return assembly, stimuli


def kriegeskorte_92(shared_data: Path) -> tuple[DataAssembly, StimulusSet]:
    """Kriegeskorte et al. 2008: the 92 images and the 8 human IT fMRI RDMs (4 subjects x 2 sessions).

    The RDMs form a :class:`DataAssembly` ``(rdm, presentation, presentation_b)``.
    """
    import scipy.io

    folder = shared_data / "kriegeskorte2008/images92"
    files = sorted(folder.glob("img*.png"))
    stimuli = StimulusSet({"stimulus_id": [f.stem for f in files], "image_number": np.arange(1, len(files) + 1)},
                          identifier="AuthorTest.Kriegeskorte92", stimulus_paths={f.stem: f for f in files})
    mat = scipy.io.loadmat(shared_data / "kriegeskorte2008/92_brainRDMs.mat", squeeze_me=True,
                           struct_as_record=False)["RDMs"]
    entries = [mat[s, k] for s in range(mat.shape[0]) for k in range(mat.shape[1])]
    values = np.stack([np.asarray(e.RDM, dtype=float) for e in entries])
    ids = stimuli["stimulus_id"].tolist()
    assembly = DataAssembly(values, dims=("rdm", "presentation", "presentation_b"), coords={
        "name": ("rdm", [str(e.name) for e in entries]),
        "subject": ("rdm", [str(e.name).split("|")[1].strip() for e in entries]),
        "stimulus_id": ("presentation", ids),
        "stimulus_id_b": ("presentation_b", ids),
    })
    return assembly, stimuli


# ---- loopback HTTP -------------------------------------------------------------------------------
class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a folder; no request logging on stderr."""

    def log_message(self, format, *args):  # noqa: A002 - signature of the base class
        pass


@contextlib.contextmanager
def http_server(root: Path, handler: type = QuietHandler) -> Iterator[str]:
    """Serve ``root`` over HTTP on 127.0.0.1 (free port) in a thread; yields the base URL."""
    server = http.server.ThreadingHTTPServer((LOOPBACK, 0), functools.partial(handler, directory=str(root)))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://{LOOPBACK}:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def closed_port_url() -> str:
    """URL of 127.0.0.1 on a port where nothing listens (a server that is down)."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        port = sock.getsockname()[1]
    return f"http://{LOOPBACK}:{port}"


def truncating_handler(truncate_first: int, send_length: bool = True) -> tuple[type, dict]:
    """A handler whose first ``truncate_first`` GETs of each path send only half the file, then close.

    With ``send_length`` the full Content-Length is announced (the client sees a broken transfer);
    without it the connection just ends early (the client sees a short file).
    Returns ``(handler class, counts)`` where ``counts`` maps path -> number of GETs.
    """
    counts: dict[str, int] = {}
    lock = threading.Lock()

    class Truncating(QuietHandler):
        def do_GET(self):  # noqa: N802 - http.server's naming
            with lock:
                counts[self.path] = counts.get(self.path, 0) + 1
                n = counts[self.path]
            if n > truncate_first:
                return super().do_GET()
            path = Path(self.translate_path(self.path))
            if not path.is_file():
                return self.send_error(404)
            data = path.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            if send_length:
                self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True

    return Truncating, counts


def status_handler(statuses: dict[str, int]) -> type:
    """A handler answering the given HTTP status for the given paths (e.g. ``{"/secret.nc": 403}``)."""

    class Status(QuietHandler):
        def do_GET(self):  # noqa: N802
            if self.path in statuses:
                return self.send_error(statuses[self.path])
            return super().do_GET()

    return Status


# ---- loopback S3 ---------------------------------------------------------------------------------
@contextlib.contextmanager
def moto_s3() -> Iterator[str]:
    """moto's S3 API on 127.0.0.1 (free port) in a thread; yields the endpoint URL.

    Authentication is off (moto's default): any key is accepted and unsigned requests get what the
    object's ACL allows. Use :func:`moto_authentication` to check credentials.
    """
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address=LOOPBACK, port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@contextlib.contextmanager
def moto_authentication(endpoint: str) -> Iterator[None]:
    """Make the moto server check signatures and access keys while the block runs."""
    import requests

    requests.post(f"{endpoint}/moto-api/reset-auth", data=b"0", timeout=10).raise_for_status()
    try:
        yield
    finally:
        requests.post(f"{endpoint}/moto-api/reset-auth", data=b"inf", timeout=10)


def moto_iam_key(endpoint: str) -> tuple[str, str]:
    """An IAM user with full S3 access on the moto server; returns (access key id, secret)."""
    import boto3

    iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1",
                       aws_access_key_id="setup", aws_secret_access_key="setup")
    iam.create_user(UserName="author")
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
    iam.put_user_policy(UserName="author", PolicyName="s3", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName="author")["AccessKey"]
    return key["AccessKeyId"], key["SecretAccessKey"]


def env_without(names: tuple[str, ...]) -> dict:
    """A copy of the environment without ``names`` (for subprocesses)."""
    return {k: v for k, v in os.environ.items() if k not in names}


def call_counter(function: Callable) -> tuple[Callable, list]:
    """Wrap ``function``; the returned list receives the first argument of every call."""
    calls: list = []

    def counted(*args, **kwargs):
        calls.append(args[0] if args else None)
        return function(*args, **kwargs)

    return counted, calls


@contextlib.contextmanager
def isolated_registrations() -> Iterator[None]:
    """Undo, after the block, every dataset/stimulus-set registration and source declaration made in it.

    Tests that execute generated plugin code use it, so other tests never see their identifiers.
    """
    from brainscore import registry
    from brainscore.data import store

    saved = {name: dict(r._factories) for name, r in registry.REGISTRIES.items()}
    declared = {k: list(v) for k, v in store._DECLARED.items()}
    imported = set(registry._discovery._imported)
    try:
        yield
    finally:
        for name, r in registry.REGISTRIES.items():
            r._factories.clear()
            r._factories.update(saved[name])
        store._DECLARED.clear()
        store._DECLARED.update(declared)
        # plugins first imported in the block lost their registrations above: forget the import too,
        # so that the next test that needs one imports it again (and it registers again)
        for module in registry._discovery._imported - imported:
            registry._discovery._imported.discard(module)
            for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
                del sys.modules[name]
