"""The narrow channel between the trusted scorer and a sandboxed model server: JSON messages and checked arrays.

One Unix stream socket (``socket.socketpair``, handed to the model server by the launcher,
:attr:`brainscore.boundary.launcher.Spec.keep_fds`) carries messages, strictly one request then its reply:

- a request ``{"call": NAME, "args": {...}}``, a reply ``{"reply": VALUE}`` or an error
  ``{"error": {"type": ..., "message": ...}}``, as strict JSON (no NaN, no Infinity, no Python objects: nothing is
  ever unpickled or evaluated);
- numpy arrays anywhere in a message, as ``{"$array": i}`` in the JSON and the bytes apart: small ones inline after
  the JSON, large ones (activations) as *sealed memfds* passed with the message (``SCM_RIGHTS``): the sender writes
  the array once into an anonymous shared-memory file and seals it (no grow, shrink or write, ever), the receiver
  checks the seals and the size and maps it copy-on-write, so megabytes of activations cross without being copied
  through the socket, and the sender can neither change them after the check nor crash the receiver by truncating
  the file (a ``SIGBUS``).

Every receive is checked before anything is allocated or mapped (:meth:`Channel.receive`): the framing, the JSON's
size, the array descriptors (an allowed dtype in native byte order, a shape, a size matching the bytes sent, every
descriptor used once), the passed descriptors (regular sealed memfds of exactly the declared size), and the total
against :attr:`Channel.max_bytes`, the memory budget. A violation is a :class:`ChannelError` naming it; the side that
sees one ends the conversation.

Frame: ``b"BSB1"``, the JSON's length (u32), the inline bytes' length (u64), the JSON, the inline bytes; the memfds
ride on the frame's first bytes.
"""
from __future__ import annotations

import array as _array
import fcntl
import json
import math
import mmap
import os
import resource
import socket
import stat
import struct
from typing import Any

import numpy as np

from brainscore.errors import BrainScoreError

__all__ = ["Channel", "ChannelError", "ChannelClosed", "ALLOWED_DTYPES", "MAX_HEADER_BYTES", "INLINE_BYTES"]

MAGIC = b"BSB1"
_PREFIX = struct.Struct("!4sIQ")
MAX_HEADER_BYTES = 64 * 1024**2
"""Largest JSON part of a message (a layer's neuroid coordinates as strings fit many times over)."""
INLINE_BYTES = 1024**2
"""Arrays up to this size travel inline after the JSON; larger ones in sealed memfds."""
CHUNK_BYTES = 1024**3
"""Largest memfd of one array (a larger array travels in several, joined by the receiver, one copy); at most half
the sender's ``RLIMIT_FSIZE``, which bounds a memfd too."""
MAX_FDS = 64
"""Memfds one message may carry."""
MAX_STRING_CHARS = 4096
"""Longest string an array of strings may hold (a label, a neuroid id)."""
ALLOWED_DTYPES = frozenset(np.dtype(t).str for t in (
    np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64, np.bool_))
"""Numeric dtypes that may cross (native byte order); besides them, fixed-width strings ``<U{n}``."""
_SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE


class ChannelError(BrainScoreError):
    """The other side of the channel broke its protocol (a malformed frame, a disallowed array, a size beyond the
    budget, an unsealed memfd); the message says which."""


class ChannelClosed(ChannelError):
    """The other side closed the channel (its process ended)."""


def _allowed(dtype: np.dtype) -> bool:
    if dtype.str in ALLOWED_DTYPES:
        return True
    return dtype.kind == "U" and dtype.byteorder in ("<", "=", "|") and 0 < dtype.itemsize // 4 <= MAX_STRING_CHARS \
        and dtype.str.startswith("<" if np.little_endian else ">")


def _sendable(value: np.ndarray) -> np.ndarray:
    """``value`` as an array that may cross: object arrays of strings become fixed-width strings.

    Raises
    ------
    ChannelError
        For an object array holding anything but strings, or a dtype that may not cross.
    """
    value = np.asarray(value)
    if value.dtype.kind == "O":
        if not all(isinstance(v, str) for v in value.ravel()):
            kinds = sorted({type(v).__name__ for v in value.ravel() if not isinstance(v, str)})
            raise ChannelError(f"an array of Python objects ({', '.join(kinds)}) cannot cross the boundary; send numbers "
                               f"or strings")
        value = value.astype(str) if value.size else value.astype("<U1")
    if value.dtype.kind == "U" and value.dtype.itemsize == 0:
        value = value.astype("<U1")
    value = np.ascontiguousarray(value)
    if value.dtype.byteorder == ">":
        value = value.astype(value.dtype.newbyteorder("<"))
    if not _allowed(value.dtype):
        raise ChannelError(f"arrays of dtype {value.dtype} cannot cross the boundary; allowed: float, int, uint, bool "
                           f"and strings of at most {MAX_STRING_CHARS} characters")
    return value


def _memfd(data: memoryview) -> int:
    """A sealed memfd holding ``data`` (no grow, shrink or write from now on); its descriptor."""
    descriptor = os.memfd_create("brainscore-boundary", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(descriptor, len(data))
        written = 0
        while written < len(data):
            written += os.pwrite(descriptor, data[written:written + (256 << 20)], written)
        fcntl.fcntl(descriptor, fcntl.F_ADD_SEALS, _SEALS | fcntl.F_SEAL_SEAL)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _chunk_bytes() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return CHUNK_BYTES if soft == resource.RLIM_INFINITY else max(1 << 20, min(CHUNK_BYTES, soft // 2))


class Channel:
    """One end of the boundary's socket.

    Parameters
    ----------
    sock : socket.socket
        A connected ``AF_UNIX`` stream socket (one end of ``socket.socketpair()``, or ``socket.socket(fileno=fd)``).
    max_bytes : int
        The memory budget: the most bytes of arrays one received message may hold (a larger one is refused before
        anything is mapped).
    """

    def __init__(self, sock: socket.socket, max_bytes: int):
        self.sock = sock
        self.max_bytes = int(max_bytes)

    @classmethod
    def from_fd(cls, descriptor: int, max_bytes: int) -> "Channel":
        """The channel on inherited file descriptor ``descriptor``.

        Raises
        ------
        ChannelError
            If it is not a Unix stream socket.
        """
        try:
            sock = socket.socket(fileno=descriptor)
        except OSError as error:
            raise ChannelError(f"file descriptor {descriptor} is not the boundary's socket ({error})") from None
        if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM:
            raise ChannelError(f"file descriptor {descriptor} is not a Unix stream socket")
        return cls(sock, max_bytes)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    # ------------------------------------------------------------------------------ sending
    def send(self, message: dict[str, Any]) -> None:
        """Send ``message`` (JSON values and numpy arrays, nested in dicts and lists).

        Raises
        ------
        ChannelError
            For a value that may not cross (a non-finite float outside an array, an object, an array of objects).
        ChannelClosed
            If the other side is gone.
        """
        arrays: list[np.ndarray] = []

        def encode(value):
            if isinstance(value, np.ndarray):
                arrays.append(_sendable(value))
                return {"$array": len(arrays) - 1}
            if isinstance(value, dict):
                if "$array" in value:
                    raise ChannelError("'$array' is reserved in a message's keys")
                return {str(k): encode(v) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [encode(v) for v in value]
            if isinstance(value, (np.generic,)):
                return encode(value.item())
            if isinstance(value, float) and not math.isfinite(value):
                raise ChannelError(f"a non-finite number ({value}) cannot cross the boundary outside an array")
            if value is None or isinstance(value, (str, int, float, bool)):
                return value
            raise ChannelError(f"a {type(value).__name__} cannot cross the boundary; send JSON values and numpy arrays")

        body = encode(message)
        inline, descriptors, fds = [], [], []
        offset, chunk = 0, _chunk_bytes()
        try:
            for value in arrays:
                view = memoryview(value.reshape(-1).view(np.uint8)) if value.size else memoryview(b"")
                described = {"dtype": value.dtype.str, "shape": list(value.shape)}
                if value.nbytes <= INLINE_BYTES:
                    inline.append(view)
                    described["inline"] = [offset, value.nbytes]
                    offset += value.nbytes
                else:
                    step = max(1, chunk)
                    parts = [view[start:start + step] for start in range(0, value.nbytes, step)]
                    if len(fds) + len(parts) > MAX_FDS:
                        raise ChannelError(f"a message may carry {MAX_FDS} shared-memory parts; this one needs more "
                                           f"({len(fds) + len(parts)}): send fewer or smaller arrays at once")
                    described["fds"] = list(range(len(fds), len(fds) + len(parts)))
                    fds.extend(_memfd(part) for part in parts)
                described["nbytes"] = value.nbytes
                descriptors.append(described)
            header = json.dumps({"message": body, "arrays": descriptors}, allow_nan=False,
                                separators=(",", ":")).encode()
            if len(header) > MAX_HEADER_BYTES:
                raise ChannelError(f"a message's JSON is {len(header)} bytes; the limit is {MAX_HEADER_BYTES}: put "
                                   f"large values in numpy arrays")
            prefix = _PREFIX.pack(MAGIC, len(header), offset)
            ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, _array.array("i", fds))] if fds else []
            try:
                sent = self.sock.sendmsg([prefix], ancillary)
                if sent < len(prefix):
                    self.sock.sendall(prefix[sent:])
                self.sock.sendall(header)
                for part in inline:
                    self.sock.sendall(part)
            except (BrokenPipeError, ConnectionResetError) as error:
                raise ChannelClosed(f"the other side of the boundary is gone ({error.strerror})") from None
        finally:
            for descriptor in fds:
                os.close(descriptor)

    # ------------------------------------------------------------------------------ receiving
    def _recv_exactly(self, count: int, into: memoryview | None = None) -> bytes | None:
        buffer = into if into is not None else memoryview(bytearray(count))
        got = 0
        while got < count:
            n = self.sock.recv_into(buffer[got:], count - got)
            if n == 0:
                raise ChannelClosed("the other side of the boundary closed it in the middle of a message")
            got += n
        return None if into is not None else bytes(buffer)

    def receive(self) -> dict[str, Any]:
        """The next message, its arrays checked and in place.

        Raises
        ------
        ChannelClosed
            If the other side closed the channel (between messages or inside one).
        ChannelError
            For anything that is not a well-formed message within the budget (see the module).
        """
        received: list[int] = []
        try:
            try:
                data, ancillary, flags, _ = self.sock.recvmsg(_PREFIX.size, socket.CMSG_SPACE(MAX_FDS * 4))
            except ConnectionResetError:
                raise ChannelClosed("the other side of the boundary is gone") from None
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    usable = len(payload) - len(payload) % 4
                    received.extend(_array.array("i", payload[:usable]))
            if not data:
                raise ChannelClosed("the other side of the boundary closed it")
            if flags & socket.MSG_CTRUNC:
                raise ChannelError(f"a message carried more than {MAX_FDS} file descriptors")
            if len(data) < _PREFIX.size:
                data += self._recv_exactly(_PREFIX.size - len(data))
            magic, header_bytes, inline_bytes = _PREFIX.unpack(data)
            if magic != MAGIC:
                raise ChannelError("a message did not start with the boundary's frame (not a brainscore boundary "
                                   "message)")
            if header_bytes > MAX_HEADER_BYTES:
                raise ChannelError(f"a message's JSON is {header_bytes} bytes; the limit is {MAX_HEADER_BYTES}")
            if inline_bytes > self.max_bytes:
                raise ChannelError(f"a message's inline arrays are {inline_bytes} bytes, beyond the memory budget of "
                                   f"{self.max_bytes} bytes")
            header = self._recv_exactly(header_bytes)
            inline = memoryview(bytearray(inline_bytes))
            self._recv_exactly(inline_bytes, inline)
            try:
                parsed = json.loads(header, parse_constant=_no_constant)
            except (ValueError, RecursionError) as error:
                raise ChannelError(f"a message's JSON is malformed ({type(error).__name__}: {error})"[:500]) from None
            if not isinstance(parsed, dict) or set(parsed) != {"message", "arrays"} \
                    or not isinstance(parsed["arrays"], list):
                raise ChannelError("a message must be {'message': ..., 'arrays': [...]}")
            arrays = self._arrays(parsed["arrays"], inline, received)
            used: set[int] = set()
            message = _decode(parsed["message"], arrays, used)
            if len(used) != len(arrays):
                raise ChannelError(f"a message sent {len(arrays)} arrays but used {len(used)}")
            if not isinstance(message, dict):
                raise ChannelError("a message must be a JSON object")
            return message
        finally:
            for descriptor in received:
                try:
                    os.close(descriptor)
                except OSError:
                    pass

    def _arrays(self, descriptors: list, inline: memoryview, fds: list[int]) -> list[np.ndarray]:
        """The arrays ``descriptors`` declare, checked against the bytes and memfds sent and the budget."""
        total, taken, arrays = 0, set(), []
        spans: list[tuple[int, int]] = []
        for index, described in enumerate(descriptors):
            if not isinstance(described, dict):
                raise ChannelError(f"array {index}: its descriptor is not an object")
            try:
                dtype = np.dtype(str(described["dtype"]))
                shape = tuple(int(n) for n in described["shape"])
                nbytes = int(described["nbytes"])
            except (KeyError, TypeError, ValueError) as error:
                raise ChannelError(f"array {index}: malformed descriptor ({error})") from None
            if not _allowed(dtype):
                raise ChannelError(f"array {index} has dtype {dtype}, which may not cross the boundary (allowed: float, "
                                   f"int, uint, bool in native byte order and strings of at most {MAX_STRING_CHARS} "
                                   f"characters)")
            if len(shape) > 8 or any(n < 0 for n in shape):
                raise ChannelError(f"array {index} has shape {shape}: at most 8 dimensions, none negative")
            count = math.prod(shape)
            if count * dtype.itemsize != nbytes:
                raise ChannelError(f"array {index} declares shape {shape} of {dtype} ({count * dtype.itemsize} bytes) "
                                   f"but {nbytes} bytes")
            total += nbytes
            if total > self.max_bytes:
                raise ChannelError(f"the arrays of one message exceed the memory budget of {self.max_bytes} bytes")
            if "inline" in described:
                start, length = (int(v) for v in described["inline"])
                if length != nbytes or start < 0 or start + length > len(inline):
                    raise ChannelError(f"array {index}: its inline bytes lie outside the message")
                if any(start < end and other < start + length for other, end in spans):
                    raise ChannelError(f"array {index}: its inline bytes overlap another array's")
                spans.append((start, start + length))
                values = np.frombuffer(inline, dtype=dtype, count=count, offset=start).reshape(shape) if count \
                    else np.empty(shape, dtype=dtype)
            elif "fds" in described:
                parts = [int(i) for i in described["fds"]]
                if not parts or any(i < 0 or i >= len(fds) or i in taken for i in parts):
                    raise ChannelError(f"array {index}: its shared-memory parts are not ones this message carries")
                taken.update(parts)
                values = self._mapped([fds[i] for i in parts], nbytes, dtype, shape, index)
            else:
                raise ChannelError(f"array {index}: neither inline nor in shared memory")
            arrays.append(values)
        if len(taken) != len(fds):
            raise ChannelError(f"a message passed {len(fds)} file descriptors but its arrays use {len(taken)}")
        return arrays

    @staticmethod
    def _mapped(descriptors: list[int], nbytes: int, dtype: np.dtype, shape: tuple, index: int) -> np.ndarray:
        """The array in the sealed memfds ``descriptors`` (one: mapped copy-on-write, no copy; several: joined)."""
        sizes = []
        for descriptor in descriptors:
            info = os.fstat(descriptor)
            if not stat.S_ISREG(info.st_mode):
                raise ChannelError(f"array {index}: a passed file descriptor is not a memory file")
            try:
                seals = fcntl.fcntl(descriptor, fcntl.F_GET_SEALS)
            except OSError:
                seals = 0
            if seals & _SEALS != _SEALS:
                raise ChannelError(f"array {index}: its shared memory is not sealed against writing, growing and "
                                   f"shrinking (a sealed memfd is required)")
            sizes.append(info.st_size)
        if sum(sizes) != nbytes or any(size == 0 for size in sizes):
            raise ChannelError(f"array {index}: its shared memory holds {sum(sizes)} bytes, not the {nbytes} declared")
        if len(descriptors) == 1:
            region = mmap.mmap(descriptors[0], nbytes, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
            return np.frombuffer(region, dtype=dtype, count=math.prod(shape)).reshape(shape)
        joined = np.empty(nbytes, dtype=np.uint8)
        at = 0
        for descriptor, size in zip(descriptors, sizes):
            with mmap.mmap(descriptor, size, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ) as region:
                joined[at:at + size] = np.frombuffer(region, dtype=np.uint8)
            at += size
        return joined.view(dtype).reshape(shape)


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _decode(value: Any, arrays: list[np.ndarray], used: set[int], depth: int = 0):
    """``value`` with each ``{"$array": i}`` replaced by ``arrays[i]`` (each used once)."""
    if depth > 64:
        raise ChannelError("a message nests deeper than 64 levels")
    if isinstance(value, dict):
        if "$array" in value:
            index = value["$array"]
            if len(value) != 1 or not isinstance(index, int) or isinstance(index, bool) \
                    or not 0 <= index < len(arrays) or index in used:
                raise ChannelError(f"a message refers to array {index!r}, which it does not carry (or uses twice)")
            used.add(index)
            return arrays[index]
        return {key: _decode(item, arrays, used, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_decode(item, arrays, used, depth + 1) for item in value]
    return value
