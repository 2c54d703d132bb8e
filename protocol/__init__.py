"""Underhall's wire protocol, sans I/O: messages, codec, limits, version, session.

Nothing in this package reads a socket, a clock or an event loop; it turns
bytes into messages and back and says what is allowed when. The contract is
docs/protocol.md.
"""

from protocol.codec import decode_client, decode_server, encode_client, encode_server
from protocol.errors import FATAL_CODES, ErrorCode, LocalProtocolError, ProtocolError
from protocol.fov import check_fov, pack_fov, pack_level_fov, unpack_fov
from protocol.limits import (
    COMMAND_QUEUE_LIMIT,
    FLOOD_FACTOR,
    HELLO_TIMEOUT_S,
    MAX_CHAT,
    MAX_FRAME_BYTES,
    MAX_NAME,
    MAX_SEQ,
    NAME_RE,
    RATE_BURST,
    RATE_PER_S,
)
from protocol.messages import (
    DIRECTED_COMMANDS,
    Chat,
    ChatOut,
    ClientMessage,
    Command,
    CommandName,
    Delta,
    Error,
    Hello,
    Ping,
    Pong,
    Reject,
    ServerMessage,
    Snapshot,
    Welcome,
)
from protocol.session import CLIENT_TRANSITIONS, ServerSession, SessionState
from protocol.version import PROTOCOL_VERSION, check_version

__all__ = [
    "CLIENT_TRANSITIONS",
    "COMMAND_QUEUE_LIMIT",
    "DIRECTED_COMMANDS",
    "FATAL_CODES",
    "FLOOD_FACTOR",
    "HELLO_TIMEOUT_S",
    "MAX_CHAT",
    "MAX_FRAME_BYTES",
    "MAX_NAME",
    "MAX_SEQ",
    "NAME_RE",
    "PROTOCOL_VERSION",
    "RATE_BURST",
    "RATE_PER_S",
    "Chat",
    "ChatOut",
    "ClientMessage",
    "Command",
    "CommandName",
    "Delta",
    "Error",
    "ErrorCode",
    "Hello",
    "LocalProtocolError",
    "Ping",
    "Pong",
    "ProtocolError",
    "Reject",
    "ServerMessage",
    "ServerSession",
    "SessionState",
    "Snapshot",
    "Welcome",
    "check_fov",
    "check_version",
    "decode_client",
    "decode_server",
    "encode_client",
    "encode_server",
    "pack_fov",
    "pack_level_fov",
    "unpack_fov",
]
