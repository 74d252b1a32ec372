"""Fetching the reference's S3 files (issue 37): a moto S3 server on 127.0.0.1 reached through AWS_ENDPOINT_URL_S3.

A data plugin written as the reference's submission guide shows (``load_stimulus_set_from_s3`` /
``load_assembly_from_s3`` with bucket, version id and sha1) whose files lie only in the bucket is loaded
and scored by a reference-style ``NeuralBenchmark``, then reused from the store by a second process with
the server stopped; a file whose sha1 differs is refused and not kept; weights come from the same bucket;
offline and a private object without credentials each give one clear line.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from brainscore import registry
from brainscore.data import remote
from brainscore.errors import DataNotFoundError, HashMismatchError, PermissionDeniedError

from authoring_helpers import isolated_registrations, moto_s3
from model_fixtures import make_stimuli

BUCKET = "brainscore-storage"
PREFIX = "brainscore-vision/data/s3fetch"
PRIVATE = "brainscore-private"
IDENTIFIER = "S3Fetch2026"
N_STIMULI, N_NEUROIDS = 40, 6

# the features of the 'model' are a fixed mix of the neurons' mean responses plus noise: a real, deterministic
# NeuralBenchmark score well above 0, computed the same way in both processes
MODEL_CODE = '''
import numpy as np
import pandas as pd
from brainscore.data import NeuroidAssembly
from brainscore.models.precomputed import PrecomputedFeatures


def model(assembly):
    recorded = assembly.squeeze("time_bin").transpose("presentation", "neuroid")
    means = pd.DataFrame(recorded.values).groupby(recorded["stimulus_id"].values).mean()  # average repetitions
    rng = np.random.default_rng(1)
    values = means.values @ rng.normal(size=(means.shape[1], 30)) + 0.3 * rng.normal(size=(means.shape[0], 30))
    features = NeuroidAssembly(values, dims=("presentation", "neuroid"),
                               coords={"stimulus_id": ("presentation", list(means.index)),
                                       "neuroid_id": ("neuroid", [f"f{i}" for i in range(30)])})
    return PrecomputedFeatures(features, visual_degrees=8, identifier="s3fetch-features")
'''

DATA_PLUGIN = '''
from brainscore_vision import data_registry, stimulus_set_registry, load_stimulus_set
from brainscore_core.supported_data_standards.brainio.s3 import load_stimulus_set_from_s3, load_assembly_from_s3
from brainscore_core.supported_data_standards.brainio.assemblies import NeuroidAssembly

stimulus_set_registry['{identifier}'] = lambda: load_stimulus_set_from_s3(
    identifier='{identifier}',
    bucket='{bucket}',
    csv_sha1='{csv_sha1}',
    zip_sha1='{zip_sha1}',
    csv_version_id='{csv_version}',
    zip_version_id='{zip_version}',
    filename_prefix='stimulus_')

data_registry['{identifier}'] = lambda: load_assembly_from_s3(
    identifier='{identifier}',
    version_id='{nc_version}',
    sha1='{nc_sha1}',
    bucket='{bucket}',
    cls=NeuroidAssembly,
    stimulus_set_loader=lambda: load_stimulus_set('{identifier}'))
'''

BENCHMARK_PLUGIN = '''
from brainscore_vision import benchmark_registry, load_ceiling, load_dataset, load_metric
from brainscore_vision.benchmark_helpers.neural_common import NeuralBenchmark, average_repetition


def S3FetchV4PLS():
    assembly_repetition = load_dataset('{identifier}')
    assembly = average_repetition(assembly_repetition)
    ceiler = load_ceiling('internal_consistency')
    return NeuralBenchmark(identifier='{identifier}.V4-pls', version=1, assembly=assembly,
                           similarity_metric=load_metric('pls', crossvalidation_kwargs=dict(stratification_coord=None)),
                           visual_degrees=8, number_of_trials=1,
                           ceiling_func=lambda: ceiler(assembly_repetition), parent='V4', bibtex='')


benchmark_registry['{identifier}.V4-pls'] = S3FetchV4PLS
'''

SECOND_PROCESS = '''
import sys
sys.path.insert(0, {folder!r})
import brainscore
from s3fetch_model import model
benchmark = brainscore.load_benchmark('{identifier}.V4-pls')
score = benchmark(model(brainscore.load_dataset('{identifier}')))
print("SCORE", repr(float(score)))
'''


def sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def _client(endpoint):
    import boto3

    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                        aws_secret_access_key="testing")


@pytest.fixture(scope="module")
def server():
    """moto's S3 server with a public versioned bucket and a private one; stopped by the test that needs it."""
    with moto_s3() as url:
        client = _client(url)
        client.create_bucket(Bucket=BUCKET)
        client.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        client.create_bucket(Bucket=PRIVATE)
        holder = {"url": url, "running": True}
        yield holder


def put(server, key: str, data: bytes, bucket: str = BUCKET, public: bool = True) -> str:
    """Upload ``data`` as ``s3://bucket/key``; returns its version id."""
    answer = _client(server["url"]).put_object(Bucket=bucket, Key=key, Body=data,
                                               ACL="public-read" if public else "private")
    return answer.get("VersionId") or "null"


@pytest.fixture(autouse=True)
def aws(server, tmp_path, monkeypatch):
    """No credentials, the endpoint through AWS_ENDPOINT_URL_S3 only, downloads allowed, a fresh store."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                 "BRAINSCORE_S3_ENDPOINT_URL", "BRAINSCORE_S3_ANONYMOUS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", server["url"])
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("BRAINSCORE_OFFLINE", "0")
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("BRAINSCORE_DATA_MIRROR", "")
    monkeypatch.setattr(remote, "RETRY_WAIT_S", 0.01)


def _files_under(folder: Path) -> list[str]:
    """The files under ``folder`` (not the hidden lock files of downloads)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))


@pytest.fixture(scope="module")
def packaged(tmp_path_factory):
    """A tiny reference-style dataset (40 images, 6 neuroids, 2 repetitions) packaged with package_*_locally."""
    from brainscore_core.supported_data_standards.brainio import packaging
    from brainscore_core.supported_data_standards.brainio.assemblies import NeuroidAssembly
    from brainscore_core.supported_data_standards.brainio.stimuli import StimulusSet

    folder = tmp_path_factory.mktemp("s3fetch_packaged")
    images = make_stimuli(folder / "images", N_STIMULI, size=16)
    proto = StimulusSet([{"stimulus_id": sid, "category": cat} for sid, cat in zip(images["stimulus_id"],
                                                                                      images["category"])])
    proto.stimulus_paths = {sid: path for sid, path in zip(images["stimulus_id"], images["stimulus_path"])}
    proto.name = IDENTIFIER
    stimuli = packaging.package_stimulus_set_locally(proto, IDENTIFIER, downloads_path=folder / "out")
    rng = np.random.default_rng(0)
    signal = rng.normal(size=(N_STIMULI, N_NEUROIDS))
    values = np.concatenate([signal + 0.2 * rng.normal(size=signal.shape) for _ in range(2)])
    ids = list(images["stimulus_id"]) * 2
    assembly = NeuroidAssembly(values[:, :, None], dims=("presentation", "neuroid", "time_bin"), coords={
        "stimulus_id": ("presentation", ids), "repetition": ("presentation", np.repeat([0, 1], N_STIMULI)),
        "neuroid_id": ("neuroid", [f"n{i}" for i in range(N_NEUROIDS)]), "region": ("neuroid", ["V4"] * N_NEUROIDS),
        "time_bin_start": ("time_bin", [70]), "time_bin_end": ("time_bin", [170])})
    data = packaging.package_data_assembly_locally(assembly, IDENTIFIER, IDENTIFIER, "NeuroidAssembly",
                                                   downloads_path=folder / "out")
    return {name: Path(info[f"{name}_path" if name != "nc" else "path"]).read_bytes()
            for name, info in (("csv", stimuli), ("zip", stimuli), ("nc", data))}


def write_plugins(root: Path, fields: dict) -> Path:
    for kind, code in (("data", DATA_PLUGIN), ("benchmarks", BENCHMARK_PLUGIN)):
        folder = root / kind / "s3fetch"
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text(code.format(**fields))
    (root / "s3fetch_model.py").write_text(MODEL_CODE)
    return root


@pytest.fixture
def plugin_dir(monkeypatch):
    """Point BRAINSCORE_PLUGIN_DIRS at a folder; forget its registrations and imports afterwards."""
    def use(folder: Path):
        monkeypatch.setenv("BRAINSCORE_PLUGIN_DIRS", str(folder))
        registry._discovery.reset()
    # recorded now, so the variable is restored after the test even where the test's code set it itself
    # (`brainscore fetch --plugin-dir` puts the folder in front of it, as every --plugin-dir does)
    monkeypatch.setenv("BRAINSCORE_PLUGIN_DIRS", os.environ.get("BRAINSCORE_PLUGIN_DIRS", ""))
    with isolated_registrations():
        yield use
        monkeypatch.delenv("BRAINSCORE_PLUGIN_DIRS", raising=False)
        registry._discovery.reset()


@pytest.fixture(scope="module")
def published(server, packaged, tmp_path_factory):
    """The files uploaded to the bucket only (then a newer content under one key), and the plugin folder."""
    name = IDENTIFIER  # no '.': the reference's key is the identifier as given
    versions = {kind: put(server, f"{PREFIX}/{'stimulus_' if kind != 'nc' else 'assy_'}{name}.{kind}", data)
                for kind, data in packaged.items()}
    fields = dict(identifier=IDENTIFIER, bucket=f"{BUCKET}/{PREFIX}", csv_sha1=sha1(packaged["csv"]),
                  zip_sha1=sha1(packaged["zip"]), nc_sha1=sha1(packaged["nc"]), csv_version=versions["csv"],
                  zip_version=versions["zip"], nc_version=versions["nc"])
    # a later upload of another content under the same key: version_id must select the registered one
    put(server, f"{PREFIX}/assy_{name}.nc", b"a newer, different file")
    return write_plugins(tmp_path_factory.mktemp("s3fetch") / "plugins", fields)


MIRRORED = [f"{BUCKET}/{PREFIX}/assy_{IDENTIFIER}.nc", f"{BUCKET}/{PREFIX}/stimulus_{IDENTIFIER}.csv",
            f"{BUCKET}/{PREFIX}/stimulus_{IDENTIFIER}.zip"]


def test_a_reference_data_plugin_loads_from_s3_scores_and_a_second_process_reuses_the_store_offline(
        server, packaged, published, plugin_dir):
    import brainscore

    name, root = IDENTIFIER, published
    plugin_dir(root)
    sys.path.insert(0, str(root))
    try:
        from s3fetch_model import model
        benchmark = brainscore.load_benchmark(f"{IDENTIFIER}.V4-pls")
        score = float(benchmark(model(brainscore.load_dataset(IDENTIFIER))))
    finally:
        sys.path.remove(str(root))
        sys.modules.pop("s3fetch_model", None)
    assert 0.3 < score <= 1.5, score
    store = Path(os.environ["BRAINSCORE_HOME"]) / "sources"
    assert _files_under(store) == MIRRORED
    assert (store / BUCKET / PREFIX / f"assy_{name}.nc").read_bytes() == packaged["nc"]

    server_url = server["url"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent.parent),
                                                                     os.environ.get("PYTHONPATH")]))}
    # the second process: the S3 endpoint stopped (closed port), downloads still allowed: only the store serves
    env["AWS_ENDPOINT_URL_S3"] = server_url.rsplit(":", 1)[0] + ":9"
    run = subprocess.run([sys.executable, "-c", SECOND_PROCESS.format(folder=str(root), identifier=IDENTIFIER)],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    second = float(run.stdout.split("SCORE", 1)[1])
    assert second == pytest.approx(score, abs=1e-9)


def test_a_bucket_file_whose_sha1_differs_is_refused_naming_both_hashes_and_nothing_is_kept(server):
    from brainscore_core.supported_data_standards.brainio.s3 import load_assembly_from_s3

    data = b"not the registered assembly"
    version = put(server, f"{PREFIX}/assy_S3FetchWrong.nc", data)
    registered = "1" * 40
    with pytest.raises(HashMismatchError) as refused:
        load_assembly_from_s3("S3FetchWrong", version_id=version, sha1=registered, bucket=f"{BUCKET}/{PREFIX}")
    message = str(refused.value)
    assert sha1(data) in message and registered in message and "not kept" in message
    assert f"s3://{BUCKET}/{PREFIX}/assy_S3FetchWrong.nc" in message
    home = Path(os.environ["BRAINSCORE_HOME"])
    assert _files_under(home / "sources") == []
    assert not [p for p in (home / "sources").rglob("*.partial")]


def test_load_weight_file_fetches_from_the_same_bucket_resuming_a_partial_download(server, monkeypatch):
    from brainscore_core.supported_data_standards.brainio.s3 import load_weight_file

    weights = bytes(range(256)) * 4000  # 1 MB
    version = put(server, "brainscore-vision/models/s3fetch_net/weights.pth", weights)
    target = Path(os.environ["BRAINSCORE_HOME"]) / "sources" / BUCKET / "brainscore-vision/models/s3fetch_net/weights.pth"
    target.parent.mkdir(parents=True)
    target.with_name(".weights.pth.partial").write_bytes(weights[:300_000])  # an interrupted earlier download
    ranges = []
    real_client = remote.s3_client

    def recording_client(signed):
        client = real_client(signed)
        client.meta.events.register("before-call.s3.GetObject",
                                    lambda params, **_: ranges.append(params.get("headers", {}).get("Range")))
        return client
    monkeypatch.setattr(remote, "s3_client", recording_client)
    found = load_weight_file(bucket=BUCKET, folder_name="brainscore-vision/models",
                             relative_path="s3fetch_net/weights.pth", version_id=version, sha1=sha1(weights))
    assert found == target and found.read_bytes() == weights
    assert ranges == ["bytes=300000-"]  # continued, not started again
    assert not target.with_name(".weights.pth.partial").exists()


def test_offline_is_one_line_naming_the_object_and_the_mirror_setting(server, monkeypatch):
    from brainscore_core.supported_data_standards.brainio.s3 import load_assembly_from_s3

    put(server, f"{PREFIX}/assy_S3FetchOffline.nc", b"data")
    monkeypatch.setenv("BRAINSCORE_OFFLINE", "1")
    with pytest.raises(DataNotFoundError) as missing:
        load_assembly_from_s3("S3FetchOffline", version_id="v1", sha1=sha1(b"data"), bucket=f"{BUCKET}/{PREFIX}")
    message = str(missing.value)
    assert "\n" not in message
    assert f"s3://{BUCKET}/{PREFIX}/assy_S3FetchOffline.nc version v1" in message
    assert "offline setting (BRAINSCORE_OFFLINE)" in message and "BRAINSCORE_DATA_MIRROR=<mirror>" in message
    assert _files_under(Path(os.environ["BRAINSCORE_HOME"]) / "sources") == []


def test_a_private_object_without_credentials_names_the_object_and_the_variables(server):
    from brainscore_core.supported_data_standards.brainio.s3 import load_file_from_s3

    put(server, "private/secret.pth", b"secret", bucket=PRIVATE, public=False)
    with pytest.raises(PermissionDeniedError) as refused:
        load_file_from_s3(PRIVATE, "private/secret.pth", Path(os.environ["BRAINSCORE_HOME"]) / "out.pth",
                          sha1=sha1(b"secret"))
    message = str(refused.value)
    assert f"s3://{PRIVATE}/private/secret.pth" in message and "no AWS credentials" in message
    assert "AWS_ACCESS_KEY_ID" in message and "AWS_PROFILE" in message and "\n" not in message


def test_a_private_object_is_read_with_the_credential_chain(server, monkeypatch, tmp_path):
    from brainscore_core.supported_data_standards.brainio.s3 import load_file_from_s3

    put(server, "private/shared.pth", b"shared with us", bucket=PRIVATE, public=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    load_file_from_s3(PRIVATE, "private/shared.pth", tmp_path / "shared.pth", sha1=sha1(b"shared with us"))
    assert (tmp_path / "shared.pth").read_bytes() == b"shared with us"


def test_brainscore_fetch_fills_a_mirror_that_serves_offline(server, packaged, published, plugin_dir, tmp_path,
                                                             monkeypatch, capsys):
    from brainscore.cli import main

    mirror = tmp_path / "mirror"
    code = main(["fetch", "--benchmark", f"{IDENTIFIER}.V4-*", "--plugin-dir", str(published), "--to", str(mirror),
                 "-q"])
    captured = capsys.readouterr()
    out = captured.out
    assert code == 0, captured.err
    assert f"benchmark {IDENTIFIER}.V4-pls: 3 file(s)" in out and f"BRAINSCORE_DATA_MIRROR={mirror}" in out
    assert _files_under(mirror) == MIRRORED
    assert (mirror / MIRRORED[0]).read_bytes() == packaged["nc"]
    # on the 'cluster': a fresh home, no S3, offline, the mirror as data mirror
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "cluster_home"))
    monkeypatch.setenv("BRAINSCORE_OFFLINE", "1")
    monkeypatch.setenv("BRAINSCORE_DATA_MIRROR", str(mirror))
    import brainscore
    plugin_dir(published)
    assembly = brainscore.load_dataset(IDENTIFIER)
    assert assembly.sizes["presentation"] == 2 * N_STIMULI and len(assembly.stimulus_set) == N_STIMULI
    assert _files_under(tmp_path / "cluster_home" / "sources") == []  # served from the mirror, nothing fetched
    assert main(["fetch", "--dataset", "NoSuchData*", "--to", str(mirror), "-q"]) == 2
    assert "no dataset matches 'NoSuchData*'" in capsys.readouterr().err


@pytest.mark.parametrize("bucket, folder, relative_path", [(BUCKET, "models", "../../../escape.pth"),
                                                           (f"{BUCKET}/../..", "models", "escape.pth")])
def test_a_key_that_would_leave_the_store_is_refused_before_any_request(bucket, folder, relative_path):
    from brainscore_core.supported_data_standards.brainio.s3 import load_weight_file
    from brainscore.errors import ValidationError

    with pytest.raises(ValidationError, match="not a bucket name and a relative key"):
        load_weight_file(bucket=bucket, folder_name=folder, relative_path=relative_path, sha1="1" * 40)
    home = Path(os.environ["BRAINSCORE_HOME"])
    assert not [p for p in home.parent.rglob("escape.pth*")]


PRIVATE_PLUGIN = '''
from brainscore_vision import benchmark_registry, data_registry, load_dataset
from brainscore_core.supported_data_standards.brainio.s3 import load_assembly_from_s3
from brainscore_core.supported_data_standards.brainio.assemblies import NeuroidAssembly

data_registry['S3FetchPrivate2026'] = lambda: load_assembly_from_s3(
    identifier='S3FetchPrivate2026', version_id=None, sha1='{sha1}', bucket='{bucket}', cls=NeuroidAssembly)
from brainscore_vision.benchmarks import BenchmarkBase
from brainscore_vision.utils import LazyLoad


class Lazy(BenchmarkBase):  # the reference's benchmarks load their data at the first score
    def __init__(self):
        super().__init__(identifier='S3FetchPrivate2026.V4-pls', version=1, ceiling_func=lambda: 1, parent='V4',
                         bibtex='')
        self._assembly = LazyLoad(lambda: load_dataset('S3FetchPrivate2026'))

    def __call__(self, candidate):
        raise NotImplementedError


benchmark_registry['S3FetchPrivate2026.V4-pls'] = Lazy


class Opaque(BenchmarkBase):  # loads its data only inside __call__: nothing to check before it scores
    def __init__(self):
        super().__init__(identifier='S3FetchOpaque2026.V4-pls', version=1, ceiling_func=lambda: 1, parent='V4',
                         bibtex='')

    def __call__(self, candidate):
        return load_dataset('S3FetchPrivate2026')


benchmark_registry['S3FetchOpaque2026.V4-pls'] = Opaque
benchmark_registry['S3FetchBroken2026.V4-pls'] = lambda: load_dataset('NoSuchDataset2026')
'''


def test_list_check_marks_what_runs_here_needs_a_fetch_or_needs_credentials(server, packaged, published, plugin_dir,
                                                                            tmp_path, monkeypatch, capsys):
    """``brainscore list benchmarks --check``: the public bucket's benchmark needs a fetch, the private one
    credentials, a broken one fails with its reason; after ``brainscore fetch`` into a mirror, the first runs here.
    Nothing is downloaded by the check."""
    from brainscore.cli import main

    put(server, "private/assy_S3FetchPrivate2026.nc", packaged["nc"], bucket=PRIVATE, public=False)
    import shutil

    root = tmp_path / "plugins"  # the published folder, and a folder of the private data
    shutil.copytree(published, root)
    (root / "benchmarks" / "s3private").mkdir()
    (root / "benchmarks" / "s3private" / "__init__.py").write_text(
        PRIVATE_PLUGIN.format(sha1=sha1(packaged["nc"]), bucket=f"{PRIVATE}/private"))

    def listed() -> dict[str, str]:
        code = main(["list", "benchmarks", "S3Fetch*", "--check", "--plugin-dir", str(root)])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        return {line.split()[0]: line.split(None, 1)[1] for line in captured.out.splitlines()}

    plugin_dir(root)
    marks = listed()
    versions = _client(server["url"]).list_object_versions(Bucket=BUCKET, Prefix=f"{PREFIX}/assy_{IDENTIFIER}.nc")
    registered = [v["VersionId"] for v in versions["Versions"] if not v["IsLatest"]]  # not the newer upload
    assert len(registered) == 1
    # the benchmark loads its assembly first: the registered version of the file, which anyone may read
    assert marks[f"{IDENTIFIER}.V4-pls"] == (f"needs fetch: s3://{BUCKET}/{PREFIX}/assy_{IDENTIFIER}.nc "
                                             f"version {registered[0]}")
    assert marks["S3FetchPrivate2026.V4-pls"] == f"needs credentials: s3://{PRIVATE}/private/assy_S3FetchPrivate2026.nc"
    assert marks["S3FetchOpaque2026.V4-pls"].startswith("not checked: it reads its data only when it scores")
    assert marks["S3FetchBroken2026.V4-pls"].startswith("fails: UnknownIdentifierError: ")
    assert "NoSuchDataset2026" in marks["S3FetchBroken2026.V4-pls"]
    assert _files_under(Path(os.environ["BRAINSCORE_HOME"]) / "sources") == []  # the check fetched nothing

    mirror = tmp_path / "mirror"
    assert main(["fetch", "--benchmark", f"{IDENTIFIER}.V4-pls", "--plugin-dir", str(root), "--to", str(mirror),
                 "-q"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("BRAINSCORE_HOME", str(tmp_path / "cluster_home"))
    monkeypatch.setenv("BRAINSCORE_DATA_MIRROR", str(mirror))
    monkeypatch.setenv("BRAINSCORE_OFFLINE", "1")
    marks = listed()
    assert marks[f"{IDENTIFIER}.V4-pls"] == "runs here"
    # offline, the private object cannot be asked: it needs a fetch whose access is not known
    assert marks["S3FetchPrivate2026.V4-pls"] == ("needs fetch: s3://brainscore-private/private/"
                                                  "assy_S3FetchPrivate2026.nc (access not checked)")
