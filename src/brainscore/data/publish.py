"""Publishing packaged files, and the data-plugin code that registers them.

A benchmark author packages a stimulus set and an assembly (:mod:`brainscore.data.packaging`),
then publishes the files:

- to an **S3 bucket** or any S3-compatible store (MinIO, Ceph...): ``destination="s3://bucket/folder"``,
  credentials from the standard AWS chain (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``,
  ``AWS_PROFILE``, ``~/.aws``, an instance role), endpoint from ``endpoint_url`` or
  ``$BRAINSCORE_S3_ENDPOINT_URL``. Public files are uploaded with the ``public-read`` ACL and
  fetched by users anonymously;
- to **any fsspec location**: a local folder that a web server serves (give ``public_url``), an
  HTTP server accepting PUT, Google Cloud Storage...

:func:`publish` checks afterwards that each file can be downloaded from its public URL with the
right content, and returns a :class:`Publication` whose :attr:`~Publication.snippet` is the Python
code of the data plugin: paste it into ``src/brainscore/plugins/data/<name>/__init__.py``.

A published file is never silently replaced: publishing different content under an existing name
raises :class:`PublishConflictError` (data identifiers are immutable: publish changed data under a
new identifier), unless ``overwrite=True``.
"""
from __future__ import annotations

import ast
import hashlib
import keyword
import re
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable
from urllib.parse import quote

from brainscore.caching import file_sha256
from brainscore.data import remote
from brainscore.data.packaging import ASSEMBLY_CLASSES, Packaged, PackagedAssembly, PackagedFile, PackagedStimulusSet
from brainscore.data.store import Source
from brainscore.data.validation import validate_identifier
from brainscore.errors import (BrainScoreError, DataNotFoundError, HashMismatchError, NetworkError,
                              PermissionDeniedError, ValidationError)

DEFAULT_STORE_FOLDER = "packaged"
"""Folder of published files in the store and in mirrors: ``<mirror>/packaged/<file name>``."""


class PublishConflictError(BrainScoreError, FileExistsError):
    """A file of the same name but different content is already published at the destination."""


@dataclass(frozen=True)
class PublishedFile:
    """One published file.

    Attributes
    ----------
    name : str
        File name, e.g. ``"assy_Cowley2026_210325.nc"``.
    location : str
        Where it was written (``s3://bucket/folder/name``, a local path...).
    url : str
        Where users download it from (declared in the data plugin).
    store_path : str
        Its path in the local store and in mirrors (``Source.path``).
    sha256, sha1 : str
        Hex digests of its bytes.
    size : int
        Bytes.
    uploaded : bool
        False when an identical file was already there.
    """

    name: str
    location: str
    url: str
    store_path: str
    sha256: str
    sha1: str
    size: int
    uploaded: bool = True

    @property
    def source(self) -> Source:
        """The :class:`~brainscore.data.store.Source` a data plugin declares for this file."""
        return Source(self.store_path, self.sha256, self.url)


@dataclass(frozen=True)
class Publication:
    """What :func:`publish` did: the packaged items and where each of their files now lives.

    Attributes
    ----------
    items : tuple
        The :class:`PackagedStimulusSet` and :class:`PackagedAssembly` objects published.
    files : dict
        File name -> :class:`PublishedFile`.
    public : bool
        Whether the files are meant to be read anonymously.
    """

    items: tuple
    files: dict = field(default_factory=dict)
    public: bool = True

    def source(self, packaged_file: PackagedFile) -> Source:
        """The :class:`Source` of one packaged file."""
        return self.files[packaged_file.name].source

    @property
    def snippet(self) -> str:
        """Python code of a data plugin registering the published data (see :func:`registration_snippet`)."""
        return registration_snippet(self)


def publish(packaged: Packaged | Iterable[Packaged], destination: str, *, public_url: str | None = None,
            public: bool = True, endpoint_url: str | None = None, store_folder: str = DEFAULT_STORE_FOLDER,
            storage_options: dict | None = None, overwrite: bool = False, check: bool = True,
            print_snippet: bool = False) -> Publication:
    """Upload packaged files to an object store or folder, check they can be fetched, return the plugin code.

    Parameters
    ----------
    packaged : PackagedStimulusSet or PackagedAssembly, or an iterable of them
        From :func:`~brainscore.data.packaging.package_stimulus_set` and
        :func:`~brainscore.data.packaging.package_data_assembly`.
    destination : str
        Folder to upload into: ``s3://bucket/folder``, a local path or ``file://`` URL, or any
        fsspec URL.
    public_url : str, optional
        URL under which ``destination`` is served (file URL = ``public_url/<name>``). Default for
        ``s3://``: ``https://<bucket>.s3.amazonaws.com/<key>`` (the reference's form), or
        ``<endpoint_url>/<bucket>/<key>`` for another S3-compatible store; for a local folder its
        ``file://`` URL; ``"s3"`` gives ``s3://bucket/key`` URLs (fetched with s3fs).
    public : bool
        Make the files readable by anyone (S3: ``public-read`` ACL) and check anonymous access.
    endpoint_url : str, optional
        S3-compatible endpoint (default ``$BRAINSCORE_S3_ENDPOINT_URL``, else Amazon S3).
    store_folder : str
        Folder of the files in the local store and in mirrors (``Source.path`` = ``store_folder/name``).
    storage_options : dict, optional
        Passed to the fsspec filesystem (e.g. ``{"profile": "lab"}`` or ``{"key": ..., "secret": ...}``).
    overwrite : bool
        Replace a published file whose content differs (breaks everyone who declared the old hash).
    check : bool
        Download every file back from its URL (anonymously when ``public``) and compare its sha256.
    print_snippet : bool
        Print the data-plugin code.

    Returns
    -------
    Publication
        Its ``snippet`` is the data plugin's code.

    Raises
    ------
    PermissionDeniedError
        Credentials missing or refused, or (``check``) a public file cannot be read anonymously.
    DataNotFoundError
        The bucket does not exist.
    NetworkError
        The destination cannot be reached.
    PublishConflictError
        A different file of the same name is already published and ``overwrite`` is False.
    HashMismatchError
        (``check``) the file downloaded back differs from the packaged one.
    """
    items = (packaged,) if isinstance(packaged, (PackagedStimulusSet, PackagedAssembly)) else tuple(packaged)
    if not items:
        raise ValueError("nothing to publish: give packaged stimulus sets or assemblies")
    _check_identifiers(items)  # before anything is uploaded: the plugin code is written from them
    target = _Target(destination, public_url=public_url, public=public, endpoint_url=endpoint_url,
                     storage_options=storage_options or {})
    store_folder = store_folder.strip("/")
    files: dict[str, PublishedFile] = {}
    for item in items:
        for packaged_file in item.files:
            if packaged_file.name in files:
                continue
            _check_local(packaged_file, "before upload")  # never publish a hash that does not match the bytes
            uploaded = target.put(packaged_file, overwrite=overwrite)
            if uploaded:
                _check_local(packaged_file, "during upload")
            files[packaged_file.name] = PublishedFile(
                packaged_file.name, target.location(packaged_file.name), target.url(packaged_file.name),
                f"{store_folder}/{packaged_file.name}" if store_folder else packaged_file.name,
                packaged_file.sha256, packaged_file.sha1, packaged_file.size, uploaded)
    if check:
        for published in files.values():
            target.check(published)
    publication = Publication(items, files, public)
    if print_snippet:
        print(publication.snippet)
    return publication


def _check_local(packaged_file: PackagedFile, when: str) -> None:
    """The packaged file's bytes still have the sha256 and size of its manifest (checked even with ``check=False``).

    Raises
    ------
    HashMismatchError
        If the file changed after packaging (or is missing), naming it and both hashes.
    """
    path = Path(packaged_file.path)
    try:
        actual, size = file_sha256(path), path.stat().st_size
    except OSError as error:
        raise HashMismatchError(f"packaged file {path} cannot be read ({error}); package the data again") from error
    if actual != packaged_file.sha256 or size != packaged_file.size:
        raise HashMismatchError(f"packaged file {path} changed {when}: its sha256 is {actual} ({size} bytes), the "
                                f"manifest says {packaged_file.sha256} ({packaged_file.size} bytes). Nothing with a "
                                f"wrong hash is published: package the data again (brainscore data package) and "
                                f"publish the new manifest")


class _Target:
    """An upload destination: an fsspec filesystem, a root folder in it and a public URL scheme."""

    def __init__(self, destination: str, *, public_url: str | None, public: bool, endpoint_url: str | None,
                 storage_options: dict):
        self.destination = destination.rstrip("/")
        self.public = public
        self.endpoint_url = endpoint_url or remote.s3_endpoint_url()
        self.s3 = self.destination.lower().startswith(("s3://", "s3a://"))
        if self.s3:
            self.fs = remote.s3_filesystem(False, self.endpoint_url, **storage_options)
            self.root = self.destination.split("://", 1)[1]
            if not self.root:
                raise ValueError(f"destination {destination!r} names no bucket; use s3://<bucket>/<folder>")
        else:
            import fsspec

            self.fs, self.root = fsspec.core.url_to_fs(self.destination, **storage_options)
            self.root = self.root.rstrip("/")
        self.local = not self.s3 and "file" in _protocols(self.fs)
        self.public_url = public_url.rstrip("/") if public_url and public_url != "s3" else public_url

    # ---- names -----------------------------------------------------------------------------
    def location(self, name: str) -> str:
        return f"s3://{self.root}/{name}" if self.s3 else (f"{self.root}/{name}" if self.local
                                                           else self.fs.unstrip_protocol(f"{self.root}/{name}"))

    def url(self, name: str) -> str:
        if self.public_url == "s3" and self.s3:
            return f"s3://{self.root}/{name}"
        if self.public_url:
            return f"{self.public_url}/{quote(name)}"
        if self.s3:
            bucket, _, folder = self.root.partition("/")
            key = f"{folder}/{name}" if folder else name
            if self.endpoint_url:
                return f"{self.endpoint_url.rstrip('/')}/{bucket}/{quote(key)}"
            return f"https://{bucket}.s3.amazonaws.com/{quote(key)}"
        if self.local:
            return Path(f"{self.root}/{name}").resolve().as_uri()
        return self.fs.unstrip_protocol(f"{self.root}/{name}")

    # ---- transfer ----------------------------------------------------------------------------
    def put(self, packaged_file: PackagedFile, *, overwrite: bool) -> bool:
        path = f"{self.root}/{packaged_file.name}"
        with self._errors(f"publish {packaged_file.name} to {self.location(packaged_file.name)}"):
            if not self.s3:
                self.fs.makedirs(self.root, exist_ok=True)
            if self._exists(path):
                existing = self._remote_sha256(path)
                if existing == packaged_file.sha256:
                    return False
                if not overwrite:
                    raise PublishConflictError(
                        f"{self.location(packaged_file.name)} already exists with other content (sha256 {existing}, "
                        f"new {packaged_file.sha256}). Published data are immutable: package the changed data under "
                        f"a new identifier (e.g. add a version suffix), or pass overwrite=True (--overwrite) if no "
                        f"one uses the old file yet.")
            if self.s3:
                self._put_s3(packaged_file, path)
            else:
                self.fs.put_file(str(packaged_file.path), path)
        return True

    def _exists(self, path: str) -> bool:
        if not self.s3:
            return self.fs.exists(path)
        bucket, _, key = path.partition("/")
        try:  # one HEAD of the object (fs.exists would also list the prefix as a "directory")
            self.fs.call_s3("head_object", Bucket=bucket, Key=key)
        except FileNotFoundError:
            return False
        return True

    def _put_s3(self, packaged_file: PackagedFile, path: str) -> None:
        extra = {"Metadata": {"sha256": packaged_file.sha256, "sha1": packaged_file.sha1}}
        if self.public:
            try:
                self.fs.put_file(str(packaged_file.path), path, ACL="public-read", **extra)
                return
            except OSError as error:
                if "AccessControlListNotSupported" not in str(error) and "ACL" not in str(error):
                    raise
                warnings.warn(f"the bucket of {self.destination} does not accept object ACLs; uploaded "
                              f"{packaged_file.name} without one: it is public only if the bucket policy allows "
                              f"s3:GetObject to everyone", stacklevel=4)
        self.fs.put_file(str(packaged_file.path), path, **extra)

    def _remote_sha256(self, path: str) -> str:
        if self.s3:
            try:
                metadata = self.fs.metadata(path)
                if metadata.get("sha256"):
                    return metadata["sha256"]
            except (OSError, AttributeError):
                pass
        digest = hashlib.sha256()
        with self.fs.open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest()

    def check(self, published: PublishedFile) -> None:
        """Download ``published`` from its URL (anonymously if public) and compare its sha256."""
        with tempfile.TemporaryDirectory(prefix="brainscore-check-") as tmp:
            target = Path(tmp) / published.name
            if published.url.startswith(("s3://", "s3a://")):
                fs = remote.s3_filesystem(self.public, self.endpoint_url)
                with self._errors(f"read back {published.url}"):
                    fs.get_file(published.url.split("://", 1)[1], str(target))
                remote_hash = file_sha256(target)
                if remote_hash != published.sha256:
                    raise HashMismatchError(f"{published.url} was uploaded but reads back with sha256 {remote_hash}, "
                                            f"expected {published.sha256}: publish it again")
                return
            try:
                remote.download(published.url, target, published.sha256, what=published.name, retries=1)
            except PermissionDeniedError as error:
                if self.public:
                    raise PermissionDeniedError(
                        f"{published.name} was uploaded but cannot be read anonymously from {published.url}: {error} "
                        f"Make it public (S3: allow s3:GetObject to everyone in the bucket policy, or let the bucket "
                        f"accept the public-read ACL), or publish with public=False for private data.") from None
                raise

    def _errors(self, doing: str):
        return _TranslateErrors(doing, self)


class _TranslateErrors:
    """Turns filesystem and S3 errors during an upload into brainscore's errors, each with its fix."""

    def __init__(self, doing: str, target: _Target):
        self.doing, self.target = doing, target

    def __enter__(self):
        return self

    def __exit__(self, exc_type, error, tb):
        if error is None or isinstance(error, BrainScoreError):
            return False
        where = self.target.destination
        if isinstance(error, PermissionError) or remote._is_credentials_error(error):
            fix = ("Configure AWS credentials with write access (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, "
                   "AWS_PROFILE or ~/.aws/credentials) and check the bucket policy." if self.target.s3
                   else "Check that you may write there.")
            raise PermissionDeniedError(f"could not {self.doing}: access refused ({error}). {fix}") from None
        if isinstance(error, FileNotFoundError):
            fix = ("Create the bucket first (or fix its name)." if self.target.s3
                   else "Create the folder first (or fix the destination).")
            raise DataNotFoundError(f"could not {self.doing}: {where} does not exist ({error}). {fix}") from None
        if remote._is_connection_error(error):
            endpoint = (self.target.endpoint_url or "Amazon S3") if self.target.s3 else where
            raise NetworkError(f"could not {self.doing}: {endpoint} cannot be reached ({type(error).__name__}: "
                               f"{error}). Check the network and the endpoint URL.") from None
        return False


def _protocols(fs) -> tuple:
    protocol = fs.protocol
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)


# ---- the data plugin's code ----------------------------------------------------------------------
def _python_name(identifier: str, taken: set[str]) -> str:
    name = re.sub(r"[^A-Za-z0-9]+", "_", identifier).strip("_").upper() or "DATA"  # ASCII: always a Python name
    if name[0].isdigit() or keyword.iskeyword(name.lower()):
        name = f"D_{name}"
    base, k = name, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def _literal(value: str) -> str:
    """A Python string literal for ``value`` that reads back as exactly ``value`` (double-quoted when possible).

    Code is generated from data only through this (and :func:`_comment`): no value can end the
    literal and run as code, whatever characters it holds.
    """
    if not isinstance(value, str):
        raise ValidationError(f"expected a string to write into plugin code, got {type(value).__name__} {value!r}")
    text = repr(value)
    if text.startswith("'") and '"' not in value and "'" not in value:
        text = f'"{text[1:-1]}"'
    if ast.literal_eval(text) != value:  # pragma: no cover - repr() round-trips; a guard, not a path
        raise ValidationError(f"cannot write {value!r} as a Python literal")
    return text


def _comment(text: str) -> str:
    """``text`` made safe to follow ``#``: every non-printable character (a newline among them) escaped."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in str(text))


def _check_identifiers(items) -> None:
    """Every identifier that goes into plugin code is a valid data identifier (see ``validate_identifier``).

    Raises
    ------
    ValidationError
        Naming the identifier and the characters not allowed.
    """
    for item in items:
        kind = "stimulus set" if isinstance(item, PackagedStimulusSet) else "assembly"
        validate_identifier(item.identifier, f"{kind} identifier").raise_if_failed()
        if isinstance(item, PackagedAssembly):
            if item.stimulus_set_identifier is not None:
                validate_identifier(item.stimulus_set_identifier, "stimulus set identifier").raise_if_failed()
            if item.assembly_class not in ASSEMBLY_CLASSES:
                raise ValidationError(f"assembly {item.identifier!r}: class {item.assembly_class!r} is not one of "
                                      f"{sorted(ASSEMBLY_CLASSES)}")


def _source_line(variable: str, published: PublishedFile) -> str:
    return (f"# {_comment(published.name)}: {published.size:,} bytes, sha1 {_comment(published.sha1)}\n"
            f"{variable} = Source(\n"
            f"    {_literal(published.store_path)},\n"
            f"    sha256={_literal(published.sha256)},\n"
            f"    url={_literal(published.url)},\n"
            f")")


def registration_snippet(publication: Publication) -> str:
    """Python code of a data plugin that declares and registers the published files.

    The code declares one :class:`~brainscore.data.store.Source` per file (store path, sha256,
    URL), passes them to :func:`~brainscore.data.store.declare` so ``brainscore data list|fetch|verify``
    see them, and registers each stimulus set and assembly under its identifier with literal
    strings (which the registry finds without importing the plugin). Assemblies get their stimulus
    set merged on loading.

    Parameters
    ----------
    publication : Publication

    Returns
    -------
    str
        Code to paste into ``src/brainscore/plugins/data/<name>/__init__.py``.
    """
    _check_identifiers(publication.items)
    stimulus_sets = [i for i in publication.items if isinstance(i, PackagedStimulusSet)]
    assemblies = [i for i in publication.items if isinstance(i, PackagedAssembly)]
    names = ", ".join(dict.fromkeys(i.identifier for i in publication.items))
    lines = [f'"""Data plugin for {_comment(names)}.',
             "",
             "Generated by brainscore.data.publish. Add the paper (authors, year, title, doi) and the data's",
             "licence here, and a description of what each identifier holds.",
             '"""',
             "from brainscore.data.store import Source, declare"]
    registers = ["register_dataset"] * bool(assemblies) + ["register_stimulus_set"] * bool(stimulus_sets)
    lines.append(f"from brainscore.registry import {', '.join(sorted(registers))}")
    if any(a.stimulus_set_identifier and a.stimulus_set_identifier not in {s.identifier for s in stimulus_sets}
           for a in assemblies):
        lines.append("from brainscore.registry import stimulus_sets")
    lines.append("")
    functions: dict[str, str] = {}
    code: list[str] = []
    taken_stimuli: set[str] = set()
    taken_assemblies: set[str] = set()
    for item in stimulus_sets:
        var = "STIMULI" if len(stimulus_sets) == 1 else f"{_python_name(item.identifier, taken_stimuli)}_STIMULI"
        csv_var, zip_var = f"{var}_CSV", f"{var}_ZIP"
        lines.append(f"# stimulus set {_comment(item.identifier)}: {int(item.n_stimuli)} stimuli")
        lines.append(_source_line(csv_var, publication.files[item.csv.name]))
        lines.append(_source_line(zip_var, publication.files[item.zip.name]))
        lines.append(f"declare({_literal(item.identifier)}, {csv_var}, {zip_var})")
        lines.append("")
        function = f"_{var.lower()}"
        functions[item.identifier] = function
        code += ["", "",
                 f"@register_stimulus_set({_literal(item.identifier)})",
                 f"def {function}():",
                 "    from brainscore.data.packaging import fetch_stimulus_set",
                 f"    return fetch_stimulus_set({_literal(item.identifier)}, csv={csv_var}, zip={zip_var})"]
    for item in assemblies:
        var = "ASSEMBLY" if len(assemblies) == 1 else f"{_python_name(item.identifier, taken_assemblies)}_ASSEMBLY"
        shape = _comment(" x ".join(f"{d} {n}" for d, n in item.shape.items()))
        lines.append(f"# assembly {_comment(item.identifier)}: {_comment(item.assembly_class)}, {shape}")
        lines.append(_source_line(var, publication.files[item.netcdf.name]))
        lines.append(f"declare({_literal(item.identifier)}, {var})")
        lines.append("")
        if item.stimulus_set_identifier in functions:
            stimuli = f"{functions[item.stimulus_set_identifier]}()"
        elif item.stimulus_set_identifier:
            stimuli = f"stimulus_sets.load({_literal(item.stimulus_set_identifier)})"
        else:
            stimuli = "None"
        code += ["", "",
                 f"@register_dataset({_literal(item.identifier)})",
                 f"def _{var.lower()}():",
                 "    from brainscore.data.packaging import fetch_assembly",
                 f"    return fetch_assembly({var}, cls={_literal(item.assembly_class)},",
                 f"                          stimulus_set={stimuli})"]
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines + code) + "\n"
