"""Downloading a declared file from where it was published, with one clear error per failure.

Supported locations (the ``url`` of a :class:`~brainscore.data.store.Source`):

- ``http://``, ``https://``, ``ftp://``, ``doi:`` — through :mod:`pooch`'s downloaders;
- ``s3://bucket/key`` — through :mod:`s3fs`, **anonymously** by default (public data needs no
  account); set ``BRAINSCORE_S3_ANONYMOUS=0`` to sign requests with the standard AWS credential
  chain (environment, ``~/.aws``, instance role) for a private bucket;
- any other :mod:`fsspec` URL (``file://``, ``gs://``, ``memory://`` ...) or a plain local path.

Every download goes to a temporary file next to the target, is checked against the declared
sha256 and only then renamed into place, so an interrupted or truncated transfer never leaves a
file that looks complete. A truncated transfer (connection closed early, or content that fails
the hash check) is retried ``RETRIES`` times, waiting ``RETRY_WAIT_S * attempt`` seconds between
attempts, and so is an HTTP server that cannot be reached (S3 clients retry connections
themselves); "not found" and "no permission" answers are not retried.

Failures raise, each with the fix in its message:

=============================  ===============================================================
:class:`DataNotFoundError`     the server answered but has no such file (HTTP 404, NoSuchKey)
:class:`NetworkError`          the server could not be reached (refused, DNS, timeout)
:class:`PermissionDeniedError` the server refused access (HTTP 401/403, AccessDenied, bad keys)
:class:`HashMismatchError`     the file arrived but its content differs from the declared hash
=============================  ===============================================================

Environment variables
---------------------
BRAINSCORE_S3_ENDPOINT_URL
    Endpoint of an S3-compatible store (MinIO, Ceph, a local test server); falls back to
    ``AWS_ENDPOINT_URL_S3`` and ``AWS_ENDPOINT_URL``; default: Amazon S3.
BRAINSCORE_S3_ANONYMOUS
    ``1`` (default): unsigned requests for ``s3://`` downloads; ``0``: use AWS credentials.
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

from brainscore.caching import file_sha256
from brainscore.errors import DataNotFoundError, HashMismatchError, NetworkError, PermissionDeniedError

RETRIES = 2
"""Extra attempts after a truncated or corrupted transfer (so up to ``1 + RETRIES`` in all)."""
RETRY_WAIT_S = 1.0
"""Seconds to wait before retry ``i`` (1-based) is ``RETRY_WAIT_S * i``."""
TIMEOUT_S = 60
"""Seconds without an answer after which an HTTP connection counts as failed."""
_POOCH_SCHEMES = ("http", "https", "ftp", "sftp", "doi")


class _Truncated(Exception):
    """A transfer that ended early or whose content failed the hash check (worth retrying)."""


def s3_endpoint_url() -> str | None:
    """Endpoint URL of the S3-compatible store: ``$BRAINSCORE_S3_ENDPOINT_URL``, else the AWS variables.

    Returns ``None`` for Amazon S3 itself.
    """
    for name in ("BRAINSCORE_S3_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def s3_anonymous() -> bool:
    """Whether ``s3://`` downloads are unsigned (``$BRAINSCORE_S3_ANONYMOUS``, default ``1``)."""
    return os.environ.get("BRAINSCORE_S3_ANONYMOUS", "1").strip().lower() not in ("0", "false", "no")


def s3_filesystem(anonymous: bool, endpoint_url: str | None = None, **options):
    """A fresh :class:`s3fs.S3FileSystem` (no instance cache, so no stale listings).

    Parameters
    ----------
    anonymous : bool
        Unsigned requests (public objects) instead of the AWS credential chain.
    endpoint_url : str, optional
        S3-compatible endpoint; default :func:`s3_endpoint_url`.
    **options
        Passed to :class:`s3fs.S3FileSystem` (e.g. ``key``, ``secret``, ``profile``).
    """
    import s3fs

    endpoint_url = endpoint_url or s3_endpoint_url()
    client_kwargs = dict(options.pop("client_kwargs", {}) or {})
    if endpoint_url:
        client_kwargs.setdefault("endpoint_url", endpoint_url)
    config_kwargs = dict(options.pop("config_kwargs", {}) or {})
    config_kwargs.setdefault("connect_timeout", 10)
    config_kwargs.setdefault("retries", {"max_attempts": 2, "mode": "standard"})
    fs = s3fs.S3FileSystem(anon=anonymous, client_kwargs=client_kwargs, config_kwargs=config_kwargs,
                           skip_instance_cache=True, **options)
    fs.retries = 2  # s3fs's own retries of transient errors (default 5, with back-off); download() retries too
    return fs


def download(url: str, target: str | Path, sha256: str | None, *, what: str | None = None, hint: str = "",
             retries: int | None = None, progressbar: bool = False) -> Path:
    """Download ``url`` to ``target`` atomically and check its sha256, retrying truncated transfers.

    Parameters
    ----------
    url : str
        Where the file is published (see the module docstring for the schemes).
    target : path
        Where to put it; its folder is created. Replaced only by a complete, verified file.
    sha256 : str or None
        Expected hex digest; ``None`` skips the check (for files whose hash is not known yet).
    what : str, optional
        How to name the file in error messages (default: its file name).
    hint : str
        Extra advice appended to error messages (e.g. how to use a local mirror instead).
    retries : int, optional
        Extra attempts after a truncated or corrupted transfer (default :data:`RETRIES`).
    progressbar : bool
        Show a tqdm progress bar for HTTP downloads.

    Returns
    -------
    Path
        ``target``.

    Raises
    ------
    DataNotFoundError
        The server has no such file.
    NetworkError
        The server could not be reached.
    PermissionDeniedError
        The server refused access.
    HashMismatchError
        Every attempt delivered content whose sha256 differs from ``sha256``.
    """
    target = Path(target)
    what = what or target.name
    retries = RETRIES if retries is None else retries
    hint = f" {hint.strip()}" if hint.strip() else ""
    target.parent.mkdir(parents=True, exist_ok=True)
    last: Exception | None = None
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(RETRY_WAIT_S * attempt)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".download")
        os.fchmod(fd, 0o644)  # a data file, readable by all like any other (mkstemp makes 0600)
        os.close(fd)
        try:
            _transfer(url, Path(tmp), what=what, hint=hint, progressbar=progressbar)
            if sha256 is not None:
                actual = file_sha256(tmp)
                if actual != sha256:
                    raise _Truncated(f"sha256 {actual}, {Path(tmp).stat().st_size} bytes")
            os.replace(tmp, target)
            return target
        except _Truncated as error:
            last = error
        except NetworkError as error:
            if urlparse(url).scheme.lower() not in _POOCH_SCHEMES:
                raise  # s3fs and botocore have retried connection errors already
            last = error
        finally:
            Path(tmp).unlink(missing_ok=True)
    if isinstance(last, NetworkError):
        raise last
    raise HashMismatchError(
        f"downloaded {what} from {url} {retries + 1} times but its content never matched the declared "
        f"sha256 {sha256} (last attempt: {last}). The file on the server was changed or is corrupt, or the "
        f"declared hash is wrong: ask the dataset's maintainers to re-publish it (new identifier) or fix the "
        f"hash in the data plugin.{hint}")


def _transfer(url: str, tmp: Path, *, what: str, hint: str, progressbar: bool) -> None:
    scheme = urlparse(url).scheme.lower()
    if scheme in _POOCH_SCHEMES:
        _transfer_pooch(url, tmp, what=what, hint=hint, progressbar=progressbar)
    elif scheme in ("s3", "s3a"):
        _transfer_s3(url, tmp, what=what, hint=hint)
    else:
        _transfer_fsspec(url, tmp, what=what, hint=hint)


def _transfer_pooch(url: str, tmp: Path, *, what: str, hint: str, progressbar: bool) -> None:
    import pooch
    import requests

    if urlparse(url).scheme.lower() in ("http", "https"):
        downloader = pooch.HTTPDownloader(progressbar=progressbar, chunk_size=1 << 20, timeout=TIMEOUT_S)
    else:
        downloader = pooch.choose_downloader(url, progressbar=progressbar)
    try:
        downloader(url, str(tmp), None)
    except requests.exceptions.HTTPError as error:
        status = error.response.status_code if error.response is not None else None
        if status in (401, 403):
            raise PermissionDeniedError(
                f"{url} refused access to {what} (HTTP {status}). If the data are public, ask the maintainers to "
                f"make the file publicly readable; if you were given credentials, check them.{hint}") from None
        if status in (404, 410):
            raise DataNotFoundError(
                f"{url} has no file {what} (HTTP {status}). The URL in the data plugin is wrong or the file was "
                f"not published there: check the plugin's Source, or ask its maintainers.{hint}") from None
        if status is not None and status >= 500:
            raise NetworkError(f"the server of {url} failed (HTTP {status}) while sending {what}. "
                               f"Try again later.{hint}") from None
        raise DataNotFoundError(f"{url} answered HTTP {status} for {what}.{hint}") from None
    except (requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError) as error:
        raise _Truncated(f"transfer broken off ({type(error).__name__})") from None
    except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as error:
        raise NetworkError(f"could not reach {url} to download {what} ({type(error).__name__}). Check your "
                           f"network connection and that the server is up.{hint}") from None
    except OSError as error:  # ftp/sftp
        raise NetworkError(f"could not download {what} from {url} ({error}).{hint}") from None


def _transfer_s3(url: str, tmp: Path, *, what: str, hint: str) -> None:
    anonymous = s3_anonymous()
    fs = s3_filesystem(anonymous)
    path = url.split("://", 1)[1]
    _get_with_errors(fs, path, tmp, url=url, what=what, hint=hint, s3=True, anonymous=anonymous)


def _transfer_fsspec(url: str, tmp: Path, *, what: str, hint: str) -> None:
    import fsspec

    fs, path = fsspec.core.url_to_fs(url)
    _get_with_errors(fs, path, tmp, url=url, what=what, hint=hint, s3=False, anonymous=False)


def _get_with_errors(fs, path: str, tmp: Path, *, url: str, what: str, hint: str, s3: bool,
                     anonymous: bool) -> None:
    try:
        fs.get_file(path, str(tmp))
    except FileNotFoundError:
        raise DataNotFoundError(f"{url} does not exist ({what}). The URL in the data plugin is wrong or the file "
                                f"was not published there: check the plugin's Source.{hint}") from None
    except PermissionError as error:
        if s3 and anonymous:
            fix = ("The object is not public: ask its maintainers to make it publicly readable, or, if you have "
                   "access, set BRAINSCORE_S3_ANONYMOUS=0 to sign requests with your AWS credentials.")
        elif s3:
            fix = ("Your AWS credentials were refused: check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or "
                   "AWS_PROFILE, or set BRAINSCORE_S3_ANONYMOUS=1 for public data.")
        else:
            fix = "Check that you may read it."
        raise PermissionDeniedError(f"{url} refused access to {what} ({error}). {fix}{hint}") from None
    except Exception as error:  # noqa: BLE001 - classify transport errors of any backend
        if _is_credentials_error(error):
            raise PermissionDeniedError(
                f"no AWS credentials to read {url} ({what}): configure them (AWS_ACCESS_KEY_ID / "
                f"AWS_SECRET_ACCESS_KEY or AWS_PROFILE), or set BRAINSCORE_S3_ANONYMOUS=1 for public data.{hint}"
            ) from None
        if _is_connection_error(error):
            endpoint = (s3_endpoint_url() or "Amazon S3") if s3 else url
            raise NetworkError(f"could not reach {endpoint} to download {what} ({type(error).__name__}: {error}). "
                               f"Check your network connection"
                               f"{' and BRAINSCORE_S3_ENDPOINT_URL' if s3 else ''}.{hint}") from None
        if isinstance(error, OSError) and "incomplete" in str(error).lower():
            raise _Truncated(str(error)) from None
        raise


def _is_connection_error(error: BaseException) -> bool:
    names = {cls.__name__ for cls in type(error).__mro__}
    if names & {"EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError", "ClientConnectorError",
                "ServerDisconnectedError", "ConnectionError", "TimeoutError", "ClientOSError"}:
        return True
    return isinstance(error, OSError) and error.errno in (111, 113, 101, 110, -2, -3)


def _is_credentials_error(error: BaseException) -> bool:
    return any(cls.__name__ in ("NoCredentialsError", "PartialCredentialsError") for cls in type(error).__mro__)


# ------------------------------------------------------------------------------------- S3 objects by bucket/key
CREDENTIALS_HINT = ("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (a profile of ~/.aws/credentials "
                    "or ~/.aws/config)")
"""How to give the standard AWS credential chain credentials (in error messages)."""


def s3_client(signed: bool):
    """A boto3 S3 client: unsigned (anonymous, public objects) or signed with the standard AWS credential chain.

    The endpoint is :func:`s3_endpoint_url` when set; otherwise botocore's own resolution, which reads
    ``AWS_ENDPOINT_URL_S3``, ``AWS_ENDPOINT_URL`` and the profile's ``endpoint_url`` (so a MinIO or Ceph
    mirror serves). The profile is ``AWS_PROFILE``'s.
    """
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config

    options = dict(connect_timeout=10, read_timeout=TIMEOUT_S, retries={"max_attempts": 2, "mode": "standard"})
    if not signed:
        options["signature_version"] = UNSIGNED
    session = boto3.session.Session()
    return session.client("s3", endpoint_url=s3_endpoint_url(), config=Config(**options))


def s3_credentials_source() -> str | None:
    """Where the standard AWS credential chain finds credentials (``'env'``, ``'shared-credentials-file'``, ...),
    or None when it finds none."""
    import boto3

    credentials = boto3.session.Session().get_credentials()
    return None if credentials is None else getattr(credentials, "method", "configured")


def _client_error_code(error: BaseException) -> str:
    response = getattr(error, "response", None) or {}
    return str(response.get("Error", {}).get("Code", "")) or str(
        response.get("ResponseMetadata", {}).get("HTTPStatusCode", ""))


def _s3_call(call, *, where: str, hint: str):
    """``call()`` with S3 failures turned into this module's errors (AccessDenied raised as PermissionError)."""
    try:
        return call()
    except Exception as error:  # noqa: BLE001 - classify botocore's errors by name and code
        code = _client_error_code(error)
        if code in ("NoSuchKey", "NoSuchVersion", "NoSuchBucket", "404", "NotFound", "InvalidArgument"):
            raise DataNotFoundError(f"{where} does not exist on the S3 server ({code}). The bucket/key or version id "
                                    f"in the plugin is wrong, or the file was not published there.{hint}") from None
        if code in ("AccessDenied", "403", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled"):
            raise PermissionError(code) from None
        if _is_credentials_error(error):
            raise PermissionError("NoCredentials") from None
        if _is_connection_error(error):
            raise NetworkError(f"could not reach the S3 server {s3_endpoint_url() or 'Amazon S3'} to download {where} "
                               f"({type(error).__name__}). Check your network connection and AWS_ENDPOINT_URL_S3."
                               f"{hint}") from None
        raise


def _open_s3(bucket: str, key: str, version_id: str | None, *, where: str, hint: str):
    """``(client, size)``: anonymous first, then the AWS credential chain when anonymous access is refused."""
    extra = {"VersionId": version_id} if version_id else {}
    tried_signed = not s3_anonymous()
    for signed in ((True,) if tried_signed else (False, True)):
        credentials = s3_credentials_source() if signed else "anonymous"
        if signed and credentials is None:
            raise PermissionDeniedError(
                f"{where} is not public and no AWS credentials were found to read it: {CREDENTIALS_HINT}.{hint}")
        client = s3_client(signed)
        try:
            head = _s3_call(lambda: client.head_object(Bucket=bucket, Key=key, **extra), where=where, hint=hint)
            return client, int(head["ContentLength"])
        except PermissionError as error:
            if signed:
                raise PermissionDeniedError(
                    f"{where} refused the AWS credentials found ({credentials}; {error}): they give no read access to "
                    f"this object. Use credentials that may read bucket {bucket}: {CREDENTIALS_HINT}.{hint}") from None
    raise AssertionError("unreachable")  # pragma: no cover


def s3_access(bucket: str, key: str, version_id: str | None, *, where: str) -> str:
    """Who may read ``s3://bucket/key`` (at ``version_id``), asked with HEAD requests only (nothing is read).

    Returns
    -------
    str
        ``'public'`` (anonymous requests may read it), ``'granted'`` (the AWS credential chain's
        credentials may), ``'credentials'`` (it is not public, and no credentials were found or those
        found were refused) or ``'unchecked'`` (the server could not be reached).

    Raises
    ------
    DataNotFoundError
        If the object (or that version) does not exist.
    """
    try:
        client, _ = _open_s3(bucket, key, version_id, where=where, hint="")
    except PermissionDeniedError:
        return "credentials"
    except NetworkError:
        return "unchecked"
    from botocore import UNSIGNED

    return "public" if client.meta.config.signature_version is UNSIGNED else "granted"


def download_s3_object(bucket: str, key: str, target: str | Path, *, version_id: str | None = None,
                       sha1: str | None = None, what: str | None = None, hint: str = "",
                       retries: int | None = None) -> tuple[Path, dict[str, str]]:
    """Download ``s3://<bucket>/<key>`` (at ``version_id``) to ``target``: resumable, verified, atomic.

    The bytes go to ``.<target name>.partial`` beside ``target`` (under an inter-process lock): a
    partial file left by an interrupted download is continued with a ``Range`` request, and a broken
    transfer is continued up to ``retries`` times. Once complete, its sha1 is checked against ``sha1``
    (when given): a file whose sha1 differs is deleted and never renamed into place; else it is renamed
    to ``target``. Anonymous requests are tried first; when refused, the standard AWS credential chain.

    Returns
    -------
    (Path, dict)
        ``target`` and its ``{'sha1': ..., 'sha256': ...}``.

    Raises
    ------
    DataNotFoundError
        No such bucket, key or version.
    PermissionDeniedError
        The object is not public and no credentials were found, or the credentials found were refused;
        the message names the object and the variables to set.
    NetworkError
        The S3 server could not be reached.
    HashMismatchError
        The downloaded file's sha1 is not ``sha1`` (both named); nothing is kept.
    """
    from brainscore.caching import entry_lock, file_hashes
    from brainscore.progress import stage

    target = Path(target)
    where = f"s3://{bucket}/{key}" + (f" (version {version_id})" if version_id else "")
    what = what or where
    hint = f" {hint.strip()}" if hint.strip() else ""
    retries = RETRIES if retries is None else retries
    partial = target.with_name(f".{target.name}.partial")
    extra = {"VersionId": version_id} if version_id else {}
    with entry_lock(target.with_name(f".{target.name}")):  # a hidden .<name>.lock beside it
        if target.is_file():  # another process fetched it meanwhile
            return target, file_hashes(target, ("sha1", "sha256"))
        client, size = _open_s3(bucket, key, version_id, where=where, hint=hint)
        for attempt in range(retries + 1):
            done = partial.stat().st_size if partial.is_file() else 0
            if done > size:
                partial.unlink()
                done = 0
            if done == size:
                break
            try:
                with stage(f"downloading {what}", total=size, unit="B") as step, open(partial, "ab") as out:
                    step.update(done)
                    answer = _s3_call(lambda: client.get_object(Bucket=bucket, Key=key, Range=f"bytes={done}-",
                                                                **extra), where=where, hint=hint)
                    for chunk in answer["Body"].iter_chunks(1 << 20):
                        if out.tell() + len(chunk) > size:  # more than HEAD announced: never fill the disk
                            raise _Truncated(f"the server sent more than the {size} bytes it announced")
                        out.write(chunk)
                        step.update(len(chunk))
            except PermissionError as error:
                raise PermissionDeniedError(f"{where} refused access while downloading ({error}).{hint}") from None
            except _Truncated as error:
                partial.unlink(missing_ok=True)
                raise NetworkError(f"the download of {where} failed: {error}; nothing was kept.{hint}") from None
            except (NetworkError, DataNotFoundError):
                raise
            except Exception as error:  # noqa: BLE001 - a broken stream: continue from where it stopped
                if attempt == retries:
                    raise NetworkError(f"the download of {where} broke off {retries + 1} times ({type(error).__name__}); "
                                       f"{partial} keeps what arrived and the next try continues it.{hint}") from None
                time.sleep(RETRY_WAIT_S * (attempt + 1))
        if partial.stat().st_size != size:
            raise NetworkError(f"the download of {where} ended at {partial.stat().st_size} of {size} bytes; the next "
                               f"try continues it.{hint}")
        hashes = file_hashes(partial, ("sha1", "sha256"))
        if sha1 and hashes["sha1"] != sha1:
            partial.unlink(missing_ok=True)
            raise HashMismatchError(
                f"{what}: the file at {where} has sha1 {hashes['sha1']}, but the plugin registers sha1 {sha1}; it was "
                f"not used and not kept. The object on the server was changed or the registered hash is wrong: ask "
                f"the plugin's maintainers, or give the version id of the registered file.{hint}")
        os.chmod(partial, 0o644)
        os.replace(partial, target)
    return target, file_hashes(target, ("sha1", "sha256"))
