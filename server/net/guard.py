"""Limits that protect the server from one connection or one address.

- :class:`GuardedConnection`: a websockets ``ServerConnection`` whose control
  frames (ping, pong) spend a per-connection budget, and whose buffered output
  is capped. websockets answers every ping with a pong inside its protocol, so
  a client that floods pings without reading would otherwise grow the
  server's write buffer without bound.
- :class:`AddressBook`: per-address caps on concurrent connections, new
  characters per hour and failed token attempts, plus a cap on all
  connections kept below the open-file limit. The address is the client's:
  behind a trusted reverse proxy it is read from the proxy's
  ``X-Forwarded-For`` or ``Forwarded`` header (:func:`client_address`).
  Loopback addresses are the operator's own (bots, tools on the host): no
  cap on connections or new characters applies to them, only the
  failed-token throttle.
- :func:`raise_open_file_limit`: the soft ``RLIMIT_NOFILE`` raised to the hard one.

Holds no game rule. Times are ``time.monotonic()`` seconds.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import struct
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, ClassVar

from websockets.asyncio.server import ServerConnection, broadcast
from websockets.exceptions import ProtocolError as WsProtocolError
from websockets.frames import CloseCode, Frame, Opcode
from websockets.protocol import State

try:
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover -- websockets built without its C extension
    from websockets.utils import apply_mask

from server.net.ratelimit import TokenBucket

log = logging.getLogger("underhall.net")

HOUR_S = 3600.0


@dataclass(frozen=True, slots=True)
class NetLimits:
    """The network layer's limits (``underhall serve`` options of the same names).

    Attributes:
        max_conns_per_addr: Concurrent connections one address may hold (0: no cap).
        new_chars_per_hour: New characters one address may create in any hour (0: no cap).
        token_failures_per_name: Failed token attempts for one name per
            ``token_window_s`` beyond which the addresses that made them are
            refused (``limited``) when they try that name again, until the
            window has passed. Other addresses are still checked, so the
            owner with the right token always gets in.
        token_failures_per_addr: Failed token attempts from one address per
            ``token_window_s`` (for any names) beyond which that address is
            refused (``limited``) any join, until the window has passed.
        token_window_s: Seconds over which failed token attempts are counted.
        keepalive_interval_s: Seconds between the server's websocket pings.
        keepalive_timeout_s: Seconds a pong may take; a connection that does
            not answer is closed and its character leaves the world, so a
            silent character stays at most ``keepalive_interval_s +
            keepalive_timeout_s`` seconds.
        control_per_s: Control frames (ping, pong) a client may send per second on average.
        control_burst: Control frames a client may send at once.
        output_cap_bytes: Output buffered for one connection above which it is
            closed at once (before and after ``hello``).
        fd_margin: Open files kept free below the open-file limit: new
            connections are refused (HTTP 503) within this margin.
        trusted_proxies: Addresses or networks (``"10.0.0.0/8"``, ``"::1"``)
            of reverse proxies whose ``X-Forwarded-For``/``Forwarded``
            header names the client (:func:`client_address`).
        allowed_origins: Origins (``https://example.org``) besides the game
            port's own whose pages may open a game connection from a browser
            (:func:`server.net.web.origin_refused`).
        allowed_hosts: Host names (``dungeon.example.org``; ``*``: any) a
            browser's request may name in its ``Host`` header besides IP
            addresses, ``localhost``, this machine's name, the bind address
            and the hosts of ``allowed_origins``
            (:class:`server.net.web.HostRule`).
    """

    max_conns_per_addr: int = 32
    new_chars_per_hour: int = 30
    token_failures_per_name: int = 10
    token_failures_per_addr: int = 30
    token_window_s: float = 60.0
    keepalive_interval_s: float = 5.0
    keepalive_timeout_s: float = 10.0
    control_per_s: float = 5.0
    control_burst: int = 20
    output_cap_bytes: int = 1024 * 1024
    fd_margin: int = 64
    trusted_proxies: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(entries: Iterable[str]) -> tuple[Network, ...]:
    """The networks of ``entries``, each an address (``"127.0.0.1"``, one
    host) or a network in CIDR form (``"10.0.0.0/8"``).

    Raises:
        ValueError: An entry is neither, with the entry in the message.
    """
    out: list[Network] = []
    for entry in entries:
        text = entry.strip()
        try:
            out.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError(f"{text!r} is not an IP address or network") from None
    return tuple(out)


def is_loopback(addr: str) -> bool:
    """Whether ``addr`` (an IP address as text) is a loopback address; False
    for anything that does not parse."""
    try:
        return ipaddress.ip_address(addr).is_loopback
    except ValueError:
        return False


def _forwarded_for(value: str) -> list[str]:
    """The ``for=`` addresses of a ``Forwarded`` header (RFC 7239), in order;
    ports and the brackets of IPv6 addresses taken off, unknown or
    obfuscated nodes as they are (they parse as no address)."""
    out: list[str] = []
    for element in value.split(","):
        for pair in element.split(";"):
            key, _, node = pair.strip().partition("=")
            if key.strip().lower() != "for":
                continue
            node = node.strip().strip('"')
            if node.startswith("["):  # "[2001:db8::1]:4711"
                node = node[1 : node.find("]")] if "]" in node else node[1:]
            elif node.count(":") == 1:  # "192.0.2.43:47011"
                node = node.split(":", 1)[0]
            out.append(node)
    return out


def client_address(peer: str, headers: Any, trusted: Callable[[str], bool]) -> str:
    """The client's address of a connection from ``peer``, a trusted proxy.

    The proxy chain is the ``Forwarded`` header's ``for=`` list (RFC 7239),
    else ``X-Forwarded-For``'s, with ``peer`` after them (each proxy appends
    the address it heard from). It is read from the right: the first
    address that is not a trusted proxy is the client's, since anything to
    its left was written by the client itself. With no such header, or an
    entry that is not an IP address before an untrusted one is reached, the
    last address read stands (at worst ``peer``).

    Args:
        peer: The TCP peer's IP address.
        headers: The request's headers (``websockets.datastructures.Headers``
            or any mapping with ``get_all``).
        trusted: Whether an address is a trusted proxy.
    """
    chain: list[str] = []
    forwarded = headers.get_all("Forwarded")
    if forwarded:
        chain = _forwarded_for(",".join(forwarded))
    else:
        for value in headers.get_all("X-Forwarded-For"):
            chain.extend(part.strip() for part in value.split(","))
    found = peer
    for entry in reversed(chain):
        try:
            addr = str(ipaddress.ip_address(entry))
        except ValueError:
            break
        found = addr
        if not trusted(addr):
            break
    return found


def raise_open_file_limit() -> int:
    """Raise the soft ``RLIMIT_NOFILE`` to the hard one; return the soft limit now in force.

    Returns a large number where the ``resource`` module does not exist, and
    the unchanged soft limit if raising it fails.
    """
    try:
        import resource
    except ImportError:  # not on this platform
        return 1 << 20
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    return int(soft) if soft != resource.RLIM_INFINITY else 1 << 20


def _open_files() -> int:
    """Files this process has open now (Linux), else a guess."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 16


def _prune(stamps: deque[float], since: float) -> None:
    while stamps and stamps[0] <= since:
        stamps.popleft()


def _prune_tries(tries: deque[tuple[float, str]], since: float) -> None:
    while tries and tries[0][0] <= since:
        tries.popleft()


class AddressBook:
    """Connections and recent events by remote address, and the caps on them.

    Args:
        limits: The caps.
        fd_limit: The soft open-file limit in force
            (:func:`raise_open_file_limit`); connections beyond it minus
            ``limits.fd_margin`` and the files open now are refused.
    """

    def __init__(self, limits: NetLimits, fd_limit: int) -> None:
        self.limits = limits
        self.max_total = max(1, fd_limit - limits.fd_margin - _open_files())
        self.total = 0
        self.accepted = 0
        """Connections counted by :meth:`opened` since start (never decreases)."""
        self.lost = 0
        """Connections counted by :meth:`closed` since start (never decreases)."""
        self.conns: dict[str, int] = {}
        self.created: dict[str, deque[float]] = {}
        self.failed_name: dict[str, deque[tuple[float, str]]] = {}
        """Lower-cased name -> its failed token attempts, ``(time, address)``."""
        self.failed_addr: dict[str, deque[float]] = {}
        self.proxies = parse_networks(limits.trusted_proxies)
        self._logged: dict[tuple[str, str], float] = {}

    def trusts(self, addr: str) -> bool:
        """Whether ``addr`` is one of the trusted proxies."""
        if not self.proxies:
            return False
        try:
            ip = ipaddress.ip_address(addr)
        except ValueError:
            return False
        return any(ip in net for net in self.proxies)

    # ------------------------------------------------------- connections

    def opened(self, addr: str | None) -> tuple[HTTPStatus, str] | None:
        """Count a new connection; return why it must be refused (HTTP status,
        text), or None. A refused connection is counted too (it holds a file
        until it closes): call :meth:`closed` for it as well, with the same
        address.

        Args:
            addr: The client's address, or None while it is not known yet
                (a trusted proxy's connection before its request is read:
                :meth:`claim` it then).
        """
        self.total += 1
        self.accepted += 1
        refusal = None if addr is None else self.claim(addr)
        if self.total > self.max_total:
            self.refused(
                addr or "?",
                "open files",
                f"{self.total - 1} connections open, "
                f"cap {self.max_total} below the open-file limit",
            )
            return (
                HTTPStatus.SERVICE_UNAVAILABLE,
                "the server is at its connection limit; try again later\n",
            )
        return refusal

    def claim(self, addr: str) -> tuple[HTTPStatus, str] | None:
        """Count one connection of ``addr`` against its cap (a connection
        :meth:`opened` with no address, once its client's address is known);
        return why it must be refused, or None. Loopback addresses have no cap."""
        held = self.conns.get(addr, 0)
        self.conns[addr] = held + 1
        cap = self.limits.max_conns_per_addr
        if cap and held >= cap and not is_loopback(addr):
            self.refused(addr, "connections", f"already {held} connections (cap {cap})")
            return (
                HTTPStatus.TOO_MANY_REQUESTS,
                f"too many connections from your address (at most {cap}); close one\n",
            )
        return None

    def closed(self, addr: str | None) -> None:
        """Forget one connection (of ``addr``, as it was :meth:`claim` ed)."""
        if addr is not None:
            held = self.conns.get(addr, 0) - 1
            if held > 0:
                self.conns[addr] = held
            else:
                self.conns.pop(addr, None)
        self.total = max(0, self.total - 1)
        self.lost += 1

    def critical(self) -> bool:
        """Whether open connections ate half the margin kept below the open-file
        limit: a new one is then closed at once, without an HTTP answer."""
        return self.total > self.max_total + self.limits.fd_margin // 2

    # ------------------------------------------------------- new characters

    def may_create(self, addr: str, now: float) -> bool:
        """Whether ``addr`` may create one more character now (always, from loopback)."""
        cap = self.limits.new_chars_per_hour
        stamps = self.created.get(addr)
        if not cap or stamps is None or is_loopback(addr):
            return True
        _prune(stamps, now - HOUR_S)
        return len(stamps) < cap

    def record_created(self, addr: str, now: float) -> None:
        """Count a character created from ``addr``."""
        self.created.setdefault(addr, deque()).append(now)

    # ------------------------------------------------------- tokens

    def token_blocked(self, addr: str, name: str, now: float) -> str | None:
        """Why a join of ``name`` from ``addr`` is refused unchecked for failed
        token attempts, or None to check its token.

        Returns:
            ``"address"``: ``addr`` failed ``token_failures_per_addr`` times
            within the window; ``"name"``: ``name`` failed
            ``token_failures_per_name`` times within the window and ``addr``
            is one of the addresses that failed on it. An address that did not
            guess is never refused here, so the owner's right token gets in.
        """
        since = now - self.limits.token_window_s
        cap = self.limits.token_failures_per_addr
        stamps = self.failed_addr.get(addr)
        if stamps is not None:
            _prune(stamps, since)
            if cap and len(stamps) >= cap:
                return "address"
        cap = self.limits.token_failures_per_name
        tries = self.failed_name.get(name.lower())
        if tries is not None:
            _prune_tries(tries, since)
            if cap and len(tries) >= cap and any(a == addr for _, a in tries):
                return "name"
        return None

    def token_failed(self, addr: str, name: str, now: float) -> None:
        """Count a join refused for a missing or wrong token."""
        self.failed_name.setdefault(name.lower(), deque()).append((now, addr))
        self.failed_addr.setdefault(addr, deque()).append(now)

    # ------------------------------------------------------- upkeep

    def prune(self, now: float) -> None:
        """Drop expired entries, so the tables hold only recent addresses and names."""
        for table, since in (
            (self.created, now - HOUR_S),
            (self.failed_addr, now - self.limits.token_window_s),
        ):
            for key in list(table):
                _prune(table[key], since)
                if not table[key]:
                    del table[key]
        since = now - self.limits.token_window_s
        for key in list(self.failed_name):
            tries = self.failed_name[key]
            _prune_tries(tries, since)
            if not tries:
                del self.failed_name[key]
        self._logged = {k: t for k, t in self._logged.items() if now - t < 60.0}

    def refused(self, addr: str, what: str, detail: str) -> None:
        """Log that a cap refused ``addr`` (at most once a minute per address and cap)."""
        now = time.monotonic()
        key = (addr, what)
        if now - self._logged.get(key, -1e9) >= 60.0:
            self._logged[key] = now
            log.warning("refused %s: %s cap: %s (logged once a minute)", addr, what, detail)


class GuardedConnection(ServerConnection):
    """A websockets server connection with a control-frame budget and an output cap.

    Use :func:`guarded_connection_class` to bind it to an :class:`AddressBook`
    and pass the result as ``serve(create_connection=...)``.

    - Every ping or pong from the client spends one token of a bucket
      (``control_per_s``, ``control_burst``); when none is left the connection
      is failed with close code 1008 and aborted ``close_grace_s`` later if
      the client has not finished closing.
    - After each chunk of input, and whenever the server checks
      :meth:`over_cap`, output buffered above ``output_cap_bytes`` aborts the
      transport at once (the client is not reading; the buffer is dropped).

    Attributes:
        address: The client's IP address: the TCP peer's, or, from a trusted
            proxy, the one its headers name once :meth:`forwarded` read them.
        refusal: ``(HTTP status, text)`` when the address book refused this
            connection; the handshake answers it with that response.
    """

    book: ClassVar[AddressBook]
    close_grace_s: ClassVar[float] = 2.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.address = ""
        self.refusal: tuple[HTTPStatus, str] | None = None
        self.cut_reason: str | None = None
        self._counted = False
        self._via_proxy = False
        self.forwarded_from: str | None = None
        """The trusted proxy's address, once :meth:`forwarded` read the client's."""
        self._claimed: str | None = None
        """The address counted in the book for this connection (None: none yet)."""
        limits = self.book.limits
        self.control = TokenBucket(
            limits.control_per_s, limits.control_burst, 1.0, time.monotonic()
        )
        self._recv_frame: Callable[[Frame], None] = self.protocol.recv_frame
        self.protocol.recv_frame = self._count_frame  # type: ignore[method-assign]
        self.on_message: Callable[[bytes | str], object] | None = None
        """When set, each message that arrives whole in one frame is passed to
        it as soon as its frame is parsed, instead of going through the
        assembler to a task iterating the connection; a fragmented message
        turns this off for good (so that messages keep their order)."""

    def process_event(self, event: Any) -> None:
        handler = self.on_message
        if handler is not None and isinstance(event, Frame):
            opcode = event.opcode
            if opcode is Opcode.BINARY or opcode is Opcode.TEXT:
                if event.fin:
                    data = bytes(event.data)
                    try:
                        handler(data if opcode is Opcode.BINARY else data.decode(errors="replace"))
                    except Exception:  # a bug must not break the connection's reading
                        log.exception("handling a message from %s failed", self.address)
                    return
                self.on_message = None
            elif opcode is Opcode.CONT:
                self.on_message = None
        super().process_event(event)

    def _count_frame(self, frame: Frame) -> None:
        if (frame.opcode is Opcode.PING or frame.opcode is Opcode.PONG) and not self.control.allow(
            time.monotonic()
        ):
            self.cut("too many control frames")
            # Stops the parser: the rest of this chunk is discarded unread.
            raise WsProtocolError("too many control frames")
        self._recv_frame(frame)

    def cut(self, reason: str) -> None:
        """Fail the connection (close code 1008, ``reason``) and abort it
        ``close_grace_s`` later if the close has not completed by then."""
        if self.cut_reason is not None:
            return
        self.cut_reason = reason
        self.book.refused(self.address, "budget", reason)
        try:
            self.protocol.fail(CloseCode.POLICY_VIOLATION, reason)
            self.send_data()
        except Exception:  # noqa: BLE001 -- whatever state it is in, abort below
            self.abort(reason)
            return
        self.loop.call_later(self.close_grace_s, self.abort, reason)

    def abort(self, reason: str) -> None:
        """Close the transport now, dropping anything buffered."""
        if self.cut_reason is None:
            self.cut_reason = reason
            self.book.refused(self.address, "budget", reason)
        transport = getattr(self, "transport", None)
        if transport is not None:
            transport.abort()  # also when closing gracefully, which would still flush

    def over_cap(self) -> bool:
        """Abort the connection if its buffered output exceeds the cap; return
        True if it is (or was already) cut off."""
        return buffered_output(self) is None

    # asyncio.Protocol callbacks

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        self.address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        self._counted = True
        self._via_proxy = self.book.trusts(self.address)
        self._claimed = None if self._via_proxy else self.address
        self.refusal = self.book.opened(self._claimed)
        if self.book.critical():
            transport.abort()

    def forwarded(self, headers: Any) -> None:
        """Take the client's address from the opening request's ``headers``
        when the peer is a trusted proxy (:func:`client_address`), and count
        it against its cap; else nothing. Call once, before answering the
        handshake (:attr:`refusal` may be set here)."""
        if not self._via_proxy or self._claimed is not None or not self._counted:
            return
        self.forwarded_from = self.address
        self.address = client_address(self.address, headers, self.book.trusts)
        self._claimed = self.address
        refusal = self.book.claim(self.address)
        if self.refusal is None:
            self.refusal = refusal

    def connection_lost(self, exc: Exception | None) -> None:
        if self._counted:
            self._counted = False
            self.book.closed(self._claimed)
        keepalive = self.keepalive_task
        super().connection_lost(exc)
        if keepalive is not None:  # cancelled just now: its error is set when it runs
            keepalive.add_done_callback(drop_task_error)
        # Three reference cycles end here, so that reference counting frees
        # a closed connection at once: the protocol holds this connection's
        # frame counter (a bound method); the message handler is a closure
        # over the server's record of the client, which holds this
        # connection; and when the client went without a close frame, the
        # protocol keeps the parser's EOFError, whose traceback holds the
        # parser's frame, which holds the protocol (the error itself stays,
        # as the cause of the ConnectionClosed websockets raises). Left to
        # the collector, each closed connection's 66 objects (and its
        # buffers) waited for the next collection and were walked by it
        # (tests/net/test_collector.py).
        self.on_message = None
        self.protocol.__dict__.pop("recv_frame", None)
        if self.protocol.parser_exc is not None:
            self.protocol.parser_exc.__traceback__ = None
        # Two more (issue 48). The protocol's parser is a generator that
        # stays suspended at its last yield once the stream ends, its frame
        # holding the protocol: closed here, it lets go. And the keepalive
        # task, cancelled above, keeps the error it ends with, whose
        # traceback holds its frames (the connection, the pong it awaited,
        # the asyncio.timeout around it, which holds the task):
        # drop_task_error takes the error out of the task once it has run.
        # Both live as long as the connection, so the server's collector
        # has frozen them by then (server.net.collector) and their cycles
        # stayed until no client was connected: every closed connection's
        # protocol, parser, buffers and logger, about 120 objects.
        self.protocol.parser.close()

    def data_received(self, data: bytes) -> None:
        if self.cut_reason is not None:
            return
        taken = self._take_messages(data)
        if taken == len(data):
            self.over_cap()
            return
        if taken:
            data = data[taken:]
        super().data_received(data)
        self.over_cap()

    def _take_messages(self, data: bytes) -> int:
        """Hand :attr:`on_message` the whole unfragmented data frames at the
        start of ``data`` without websockets' parser; return how many bytes
        they took, 0 when no handler is set (issue 10: a command costs a few
        microseconds less).

        Only the common case is taken: the connection open, the parser
        between two frames (nothing buffered, no fragmented message under
        way, no extension), and a frame that is whole in ``data``, masked,
        ``FIN`` set, opcode text or binary, no reserved bit, within the size
        limit and under 64 KiB. At the first frame that is not, the rest of
        ``data`` goes to websockets from that frame boundary, which then
        parses, checks and answers it as it always does (control frames,
        protocol errors, close codes).
        """
        protocol = self.protocol
        handler = self.on_message
        if (
            handler is None
            or protocol.state is not State.OPEN
            or protocol.reader.buffer
            or protocol.current_size is not None
            or protocol.extensions
        ):
            return 0
        limit = protocol.max_message_size
        if protocol.max_fragment_size is not None:
            limit = (
                protocol.max_fragment_size
                if limit is None
                else min(limit, protocol.max_fragment_size)
            )
        end = len(data)
        at = 0
        while end - at >= 6:
            head = data[at]
            if head != 0x82 and head != 0x81:  # FIN, no RSV bit, binary or text
                break
            size = data[at + 1]
            if not size & 0x80:  # unmasked: websockets fails the connection
                break
            size &= 0x7F
            if size < 126:
                start = at + 6
            elif size == 126 and end - at >= 8:
                size = (data[at + 2] << 8) | data[at + 3]
                start = at + 8
            else:
                break
            if (limit is not None and size > limit) or start + size > end:
                break
            payload = apply_mask(data[start : start + size], data[start - 4 : start])
            at = start + size
            try:
                handler(payload if head == 0x82 else payload.decode(errors="replace"))
            except Exception:  # a bug must not break the connection's reading
                log.exception("handling a message from %s failed", self.address)
            if (
                self.on_message is not handler
                or self.cut_reason is not None
                or protocol.state is not State.OPEN
            ):
                break
        return at


def buffered_output(ws: ServerConnection) -> int | None:
    """Bytes of output buffered for ``ws`` (one read of its transport), or
    None if it is cut off: a :class:`GuardedConnection` already cut, or over
    its ``output_cap_bytes``, which aborts it here. What a tick checks before
    writing a client's frame."""
    transport = getattr(ws, "transport", None)
    buffered = transport.get_write_buffer_size() if transport is not None else 0
    if isinstance(ws, GuardedConnection):
        cap = ws.book.limits.output_cap_bytes
        if buffered > cap:
            ws.abort(f"over {cap} bytes of output buffered")
            return None
        if ws.cut_reason is not None:
            return None
    return buffered


def send_binary(ws: ServerConnection, data: bytes) -> None:
    """Write ``data`` to ``ws`` as one binary message, now, without waiting.

    What ``websockets.broadcast([ws], data)`` does for a connection that
    negotiated no extension (the server turns compression off), in half the
    CPU (bench on loopback: 3.3 -> 1.8 µs a frame): the frame's header (RFC
    6455 section 5.2: FIN, binary opcode, unmasked, 7-, 16- or 64-bit
    length) is written in front of the payload straight to the transport.
    A connection that is not open is skipped, as ``broadcast`` skips it; one
    with an extension goes through ``broadcast``. Nothing is raised.
    """
    protocol = ws.protocol
    if protocol.state is not State.OPEN:
        return
    transport = ws.transport
    if protocol.extensions or transport is None:
        broadcast([ws], data)
        return
    n = len(data)
    transport.write((BINARY_HEADS[n] if n < 126 else binary_head(n)) + data)


def binary_head(n: int) -> bytes:
    """The header of a final, unmasked binary frame of ``n`` bytes (RFC 6455
    section 5.2: FIN, binary opcode, 7-, 16- or 64-bit length); for ``n`` <
    126, :data:`BINARY_HEADS` has it built."""
    if n < 126:
        return bytes((0x82, n))
    if n < 65536:
        return _HEAD16.pack(0x82, 126, n)
    return _HEAD64.pack(0x82, 127, n)


_HEAD16 = struct.Struct("!BBH")
_HEAD64 = struct.Struct("!BBQ")
BINARY_HEADS = tuple(binary_head(n) for n in range(126))
"""``BINARY_HEADS[n]`` is :func:`binary_head` (``n``) for ``n`` < 126."""


def drop_task_error(task: asyncio.Task[Any]) -> None:
    """Take a finished task's error out of it and clear the frames its
    traceback holds, so that neither keeps the other (nor what the frames
    held) alive: a done callback for tasks cancelled as their connection
    closes. Does nothing for a task that ended without an error."""
    try:
        error = task.exception()  # a cancelled task's error is handed over, not kept
    except asyncio.CancelledError as cancelled:
        error = cancelled
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if error.__traceback__ is not None:
            traceback.clear_frames(error.__traceback__)  # skips a frame still running
            error.__traceback__ = None
        error = error.__context__


def guarded_connection_class(book: AddressBook) -> type[GuardedConnection]:
    """A :class:`GuardedConnection` subclass that reports to ``book``."""

    class Guarded(GuardedConnection):
        pass

    Guarded.book = book
    return Guarded
