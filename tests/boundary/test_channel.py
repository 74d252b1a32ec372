"""The boundary's channel (issue 32): what crosses is JSON and checked arrays; activations travel in sealed memfds that
the receiver maps without a copy; anything malformed, unsealed or beyond the memory budget is refused before it is
mapped, with a message that says what was wrong."""
from __future__ import annotations

import array
import fcntl
import json
import os
import socket
import struct

import numpy as np
import pytest

from brainscore.boundary.channel import INLINE_BYTES, MAGIC, Channel, ChannelClosed, ChannelError


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    yield Channel(a, max_bytes=64 * 1024**2), Channel(b, max_bytes=64 * 1024**2)
    a.close()
    b.close()


def test_json_and_arrays_cross_unchanged(pair):
    send, receive = pair
    small = np.arange(12, dtype=np.int64).reshape(3, 4)
    large = np.random.default_rng(0).standard_normal((300, 1000)).astype(np.float32)  # 1.2 MB: a memfd
    labels = np.array(["dog", "cat", "truck"], dtype=object)
    send.send({"reply": {"values": large, "coords": [["n", ["neuroid"], small]], "labels": labels, "x": 1.5}})
    message = receive.receive()
    got = message["reply"]
    assert got["values"].dtype == np.float32 and np.array_equal(got["values"], large)  # bit for bit
    assert np.array_equal(got["coords"][0][2], small) and got["x"] == 1.5
    assert got["labels"].tolist() == ["dog", "cat", "truck"] and got["labels"].dtype.kind == "U"
    assert large.nbytes > INLINE_BYTES
    got["values"][0, 0] = 42  # a private (copy-on-write) mapping: writable, the sender's memory untouched
    assert got["values"][0, 0] == 42


def test_an_array_larger_than_one_memfd_is_joined(pair, monkeypatch):
    import brainscore.boundary.channel as channel

    monkeypatch.setattr(channel, "CHUNK_BYTES", 1 << 20)
    send, receive = pair
    values = np.arange(3 * (1 << 20) // 8 + 5, dtype=np.float64)
    send.send({"reply": values})
    assert np.array_equal(receive.receive()["reply"], values)


def test_non_finite_numbers_and_objects_do_not_cross_outside_arrays(pair):
    send, _ = pair
    with pytest.raises(ChannelError, match="non-finite number"):
        send.send({"reply": float("nan")})
    with pytest.raises(ChannelError, match="a object cannot cross|cannot cross the boundary"):
        send.send({"reply": object()})
    with pytest.raises(ChannelError, match=r"Python objects \(dict\)"):
        send.send({"reply": np.array([{"a": 1}], dtype=object)})


def raw_frame(header: dict, inline: bytes = b"", fds: tuple = ()) -> tuple[bytes, list]:
    body = json.dumps(header).encode()
    prefix = struct.pack("!4sIQ", MAGIC, len(body), len(inline))
    ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
    return prefix + body + inline, ancillary


def send_raw(sock: socket.socket, header: dict, inline: bytes = b"", fds: tuple = ()) -> None:
    data, ancillary = raw_frame(header, inline, fds)
    sock.sendmsg([data], ancillary)


@pytest.mark.parametrize("descriptor, inline, message", [
    ({"dtype": "|O", "shape": [1], "nbytes": 8, "inline": [0, 8]}, b"\0" * 8, "may not cross the boundary"),
    ({"dtype": ">f4", "shape": [2], "nbytes": 8, "inline": [0, 8]}, b"\0" * 8, "may not cross the boundary"),
    ({"dtype": "<f4", "shape": [3], "nbytes": 8, "inline": [0, 8]}, b"\0" * 8, "declares shape (3,)"),
    ({"dtype": "<f4", "shape": [4], "nbytes": 16, "inline": [0, 16]}, b"\0" * 8, "outside the message"),
    ({"dtype": "<f4", "shape": [2], "nbytes": 8, "fds": [0]}, b"", "not ones this message carries"),
])
def test_malformed_arrays_are_refused(pair, descriptor, inline, message):
    send, receive = pair
    send_raw(send.sock, {"message": {"reply": {"$array": 0}}, "arrays": [descriptor]}, inline)
    with pytest.raises(ChannelError, match=message.replace("(", r"\(").replace(")", r"\)")):
        receive.receive()


def test_an_unsealed_memfd_is_refused(pair):
    """A sender that could still shrink the file would crash the receiver with SIGBUS, or change the values after the
    check: only a memfd sealed against writing, growing and shrinking is mapped."""
    send, receive = pair
    descriptor = os.memfd_create("x", os.MFD_ALLOW_SEALING)
    os.ftruncate(descriptor, 16)
    fcntl.fcntl(descriptor, fcntl.F_ADD_SEALS, fcntl.F_SEAL_GROW)  # not shrink, not write
    send_raw(send.sock, {"message": {"reply": {"$array": 0}},
                         "arrays": [{"dtype": "<f4", "shape": [4], "nbytes": 16, "fds": [0]}]}, fds=(descriptor,))
    os.close(descriptor)
    with pytest.raises(ChannelError, match="not sealed against writing, growing and shrinking"):
        receive.receive()


def test_a_pipe_passed_as_an_array_is_refused(pair):
    send, receive = pair
    read, write = os.pipe()
    send_raw(send.sock, {"message": {"reply": {"$array": 0}},
                         "arrays": [{"dtype": "<f4", "shape": [4], "nbytes": 16, "fds": [0]}]}, fds=(read,))
    os.close(read)
    os.close(write)
    with pytest.raises(ChannelError, match="not a memory file"):
        receive.receive()


def test_more_than_the_memory_budget_is_refused_before_anything_is_mapped(pair):
    send, receive = pair
    receive.max_bytes = 1000
    send.send({"reply": np.zeros(2000, dtype=np.uint8)})
    with pytest.raises(ChannelError, match="beyond the memory budget of 1000 bytes|exceed the memory budget of 1000"):
        receive.receive()


def test_no_frame_no_message(pair):
    send, receive = pair
    send.sock.sendall(b'{"event": "done", "outcome": {"score": 1e6}}\n' + b" " * 64)
    with pytest.raises(ChannelError, match="did not start with the boundary's frame"):
        receive.receive()


def test_nan_in_the_json_is_refused(pair):
    send, receive = pair
    body = b'{"message": {"reply": NaN}, "arrays": []}'
    send.sock.sendall(struct.pack("!4sIQ", MAGIC, len(body), 0) + body)
    with pytest.raises(ChannelError, match="NaN is not a JSON number"):
        receive.receive()


def test_a_closed_channel_is_said_so(pair):
    send, receive = pair
    send.close()
    with pytest.raises(ChannelClosed, match="closed it"):
        receive.receive()
