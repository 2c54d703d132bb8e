"""A raw websocket client over a plain blocking socket, for hostile tests.

It speaks just enough RFC 6455 to do what a well-behaved library will not:
flood pings without reading, send text frames, oversized or truncated
frames, and stop reading at will. Frames from the client are masked, as the
RFC requires (the server would close the connection otherwise).
"""

from __future__ import annotations

import base64
import os
import socket
import struct

OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0, 1, 2, 8, 9, 10


def frame(
    opcode: int, payload: bytes = b"", *, fin: bool = True, key: bytes | None = b"\0\0\0\0"
) -> bytes:
    """One client frame masked with the 4-byte ``key`` (by default zero: the
    payload is sent as it is), or unmasked when ``key`` is None (which RFC
    6455 forbids a client)."""
    head = bytes([(0x80 if fin else 0) | opcode])
    n = len(payload)
    bit = 0 if key is None else 0x80
    if n < 126:
        head += bytes([bit | n])
    elif n < 1 << 16:
        head += bytes([bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([bit | 127]) + struct.pack("!Q", n)
    if key is None:
        return head + payload
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


class HandshakeRefused(Exception):
    """The server answered the handshake with an HTTP error; ``status`` and ``body``."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body


class RawClient:
    """A blocking websocket client connection to ``127.0.0.1:port``.

    Args:
        port: The server's port.
        rcvbuf: ``SO_RCVBUF`` in bytes, set before connecting (small = the
            server's output backs up sooner when this client does not read).
        timeout: Socket timeout in seconds.
        headers: More request headers (``{"X-Forwarded-For": "203.0.113.7"}``).
        source: The local address to connect from (another loopback address,
            ``"127.0.0.2"``, is another client address on one machine).

    Raises:
        HandshakeRefused: The server refused the handshake (e.g. HTTP 429).
        OSError: The connection failed.
    """

    def __init__(
        self,
        port: int,
        *,
        rcvbuf: int | None = None,
        timeout: float = 5.0,
        headers: dict[str, str] | None = None,
        source: str | None = None,
    ) -> None:
        self.sock = socket.socket()
        if rcvbuf is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        if source is not None:
            self.sock.bind((source, 0))
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        more = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self.sock.sendall(
            (
                f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                f"Sec-WebSocket-Version: 13\r\n{more}\r\n"
            ).encode()
        )
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise HandshakeRefused(0, "connection closed during the handshake")
            self.buf += chunk
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        if status != 101:
            body = self.buf
            try:
                while True:
                    chunk = self.sock.recv(4096)
                    if not chunk:
                        break
                    body += chunk
            except OSError:
                pass
            self.sock.close()
            raise HandshakeRefused(status, body.decode(errors="replace"))

    def send(self, data: bytes) -> None:
        """Send raw bytes (one or many frames)."""
        self.sock.sendall(data)

    def recv_frame(self) -> tuple[int, bytes]:
        """Read one frame from the server: ``(opcode, payload)``.

        Raises:
            ConnectionError: The server closed the TCP connection.
            TimeoutError: Nothing arrived within the socket timeout.
        """

        def need(n: int) -> bytes:
            while len(self.buf) < n:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise ConnectionError("closed by the server")
                self.buf += chunk
            out, self.buf = self.buf[:n], self.buf[n:]
            return out

        b0, b1 = need(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", need(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", need(8))[0]
        return b0 & 0x0F, need(n)

    def close(self) -> None:
        """Drop the TCP connection without a closing handshake."""
        try:
            self.sock.close()
        except OSError:
            pass
