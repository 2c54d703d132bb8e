"""Message-log lines from events, rejections, chat and errors.

Pure functions: they read a :class:`~client.model.GameModel` for names and
never change it. Every sentence is built here, so the server sends only ids,
keys and numbers (see ``docs/protocol.md``, "Events"). An event this module
does not know, or one whose fields are malformed, yields ``None`` so a newer
server never crashes an older client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from client.model import GameModel

__all__ = [
    "describe_chat",
    "describe_error",
    "describe_event",
    "describe_reject",
]

_REJECTS: Mapping[str, str] = {
    "blocked": "Something solid blocks your way.",
    "occupied": "Someone is standing there.",
    "no_door": "There is no door there.",
    "door_blocked": "Something is in the doorway.",
    "no_stairs": "There are no stairs here.",
    "sealed": "The way up is sealed.",
    "nothing_here": "There is nothing here to pick up.",
    "dead": "You are dead.",
    "monster_in_view": "You cannot rest with a monster in view.",
    "lava": "You will not step into lava.",
    "queue_full": "Too many actions queued; wait a moment.",
}

_ERRORS: Mapping[str, str] = {
    "rate_limited": "Slow down: the server dropped some of your input.",
    "version": "This client speaks another protocol version than the server.",
    "name_taken": "That name is taken (and this client has no token for it).",
    "bad_class": "The server does not know that class.",
    "server_full": "The server is full.",
    "flood": "Disconnected for flooding the server.",
    "timeout": "The server timed out waiting for us.",
    "shutdown": "The server is shutting down.",
    "too_large": "A message was too large for the server.",
}


def describe_reject(reason: str) -> str:
    """Say why the server refused a command.

    Args:
        reason: A ``reject.reason`` string; unknown reasons are shown as is.

    Returns:
        One log line.
    """
    return _REJECTS.get(reason, f"You cannot do that ({reason}).")


def describe_error(code: str, msg: str = "") -> str:
    """Turn a server ``error`` message into one log line.

    Args:
        code: The error code (``docs/protocol.md``, "error codes").
        msg: The server's human-readable detail, shown when the code is
            unknown or has no fixed wording.

    Returns:
        One log line.
    """
    known = _ERRORS.get(code)
    if known is not None:
        return known
    return f"Server error ({code}): {msg}" if msg else f"Server error ({code})."


def describe_chat(sender: str, text: str) -> str:
    """Format a chat line; an empty ``sender`` is a server notice."""
    return f"<{sender}> {text}" if sender else f"* {text}"


# --- naming actors -------------------------------------------------------


class _Who:
    """How to name one actor in a sentence (second or third person).

    ``proper`` names (players') keep their spelling at the start of a
    sentence; noun phrases ("the rat", "something") are capitalised.
    """

    __slots__ = ("name", "proper", "you")

    def __init__(self, name: str, *, you: bool = False, proper: bool = False) -> None:
        self.name = name
        self.you = you
        self.proper = proper

    def subject(self) -> str:
        """The actor as the start of a sentence."""
        if self.you:
            return "You"
        if self.proper:
            return self.name
        return self.name[:1].upper() + self.name[1:]

    def object(self) -> str:
        return "you" if self.you else self.name

    def verb(self, base: str) -> str:
        """Conjugate a regular verb for this actor ("hit" -> "hits", "go" -> "goes")."""
        if self.you:
            return base
        if base.endswith(("s", "sh", "ch", "x", "o")):
            return base + "es"
        return base + "s"


def _kind_name(model: GameModel, kind: str) -> str:
    entry = model.kinds.get(kind)
    if entry:
        return str(entry[0])
    return kind or "something"


def _who(model: GameModel, actor_id: object) -> _Who:
    """Name an actor id: "you", a player's name, or "the <kind>"."""
    if not isinstance(actor_id, int) or isinstance(actor_id, bool):
        return _Who("something")
    if actor_id == model.player_id:
        return _Who("you", you=True)
    view = model.actors.get(actor_id)
    if view is not None:
        if view.is_player:
            return _Who(view.name, proper=True) if view.name else _Who("someone")
        return _Who("the " + _kind_name(model, view.kind))
    # out of view (e.g. removed by this delta's "rm" before its "die" event):
    # the model remembers a player's name or a monster's kind name
    remembered = model.names.get(actor_id)
    if remembered:
        kind_names = {str(entry[0]) for entry in model.kinds.values() if entry}
        if remembered in kind_names or remembered in model.kinds:
            return _Who("the " + remembered)
        return _Who(remembered, proper=True)
    return _Who("something")


def _item_phrase(model: GameModel, key: str) -> str:
    entry = model.items.get(key)
    name = str(entry[0]) if entry else key.replace("_", " ")
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return f"{article} {name}"


# --- one function per event ----------------------------------------------


def _atk(ev: Sequence[Any], model: GameModel) -> str | None:
    _, attacker, target, outcome, damage, surprise = ev[:6]
    if not isinstance(damage, int) or outcome not in ("miss", "hit", "crit", "lucky"):
        return None
    a = _who(model, attacker)
    t = _who(model, target)
    if outcome == "miss":
        return f"{a.subject()} {a.verb('miss')} {t.object()}."
    prefix = {"crit": "A critical hit! ", "lucky": "A lucky hit! "}.get(outcome, "")
    if surprise:
        pronoun = "you" if t.you else "it"
        clause = f"{a.subject()} {a.verb('surprise')} {t.object()} and {a.verb('hit')} {pronoun}"
    else:
        clause = f"{a.subject()} {a.verb('hit')} {t.object()}"
    if damage > 0:
        return f"{prefix}{clause} for {damage}."
    does = "do" if a.you else "does"
    return f"{prefix}{clause} but {does} no damage."


def _die(ev: Sequence[Any], model: GameModel) -> str | None:
    victim = _who(model, ev[1])
    killer = _who(model, ev[2]) if len(ev) > 2 and ev[2] is not None else None
    if victim.you:
        if killer is not None and not killer.you:
            return f"You are killed by {killer.object()}. You die..."
        return "You die..."
    if killer is None:
        return f"{victim.subject()} dies."
    return f"{killer.subject()} {killer.verb('kill')} {victim.object()}!"


def _door(ev: Sequence[Any], model: GameModel) -> str | None:
    a = _who(model, ev[1])
    opened = bool(ev[4])
    return f"{a.subject()} {a.verb('open' if opened else 'close')} a door."


def _pick(ev: Sequence[Any], model: GameModel) -> str | None:
    a = _who(model, ev[1])
    if not isinstance(ev[2], str):
        return None
    return f"{a.subject()} {a.verb('pick')} up {_item_phrase(model, ev[2])}."


def _wake(ev: Sequence[Any], model: GameModel) -> str | None:
    a = _who(model, ev[1])
    others = any(v.is_player and not v.is_self for v in model.actors.values())
    if others:
        return f"{a.subject()} {a.verb('notice')} an intruder."
    return f"{a.subject()} {a.verb('notice')} you."


def _flee(ev: Sequence[Any], model: GameModel) -> str | None:
    a = _who(model, ev[1])
    return f"{a.subject()} {a.verb('turn')} to flee."


def _lvl(ev: Sequence[Any], model: GameModel) -> str | None:
    a = _who(model, ev[1])
    level = ev[2]
    if a.you:
        return f"You feel more experienced (level {level})."
    return f"{a.subject()} {a.verb('reach')} level {level}."


def _stairs(ev: Sequence[Any], model: GameModel) -> str | None:
    a = _who(model, ev[1])
    depth = ev[2]
    if not isinstance(depth, int):
        return None
    way = "down" if depth > model.depth else "up"
    return f"{a.subject()} {a.verb('go')} {way} the stairs."


def _respawn(ev: Sequence[Any], model: GameModel) -> str | None:
    a = _who(model, ev[1])
    if a.you:
        return "You return to life."
    return f"{a.subject()} {a.verb('return')} to life."


def _xp(ev: Sequence[Any], model: GameModel) -> str | None:
    a = _who(model, ev[1])
    amount = ev[2]
    if not isinstance(amount, int) or amount <= 0:
        return None
    return f"{a.subject()} {a.verb('gain')} {amount} experience."


def _join(ev: Sequence[Any], model: GameModel) -> str | None:
    return f"{ev[1]} joined." if isinstance(ev[1], str) else None


def _leave(ev: Sequence[Any], model: GameModel) -> str | None:
    return f"{ev[1]} left." if isinstance(ev[1], str) else None


_Describer = Callable[[Sequence[Any], "GameModel"], "str | None"]

# event name -> (describer, minimum list length including the name)
_EVENTS: Mapping[str, tuple[_Describer, int]] = {
    "atk": (_atk, 6),
    "die": (_die, 2),
    "door": (_door, 5),
    "pick": (_pick, 3),
    "wake": (_wake, 2),
    "flee": (_flee, 2),
    "lvl": (_lvl, 3),
    "stairs": (_stairs, 3),
    "respawn": (_respawn, 2),
    "xp": (_xp, 3),
    "join": (_join, 2),
    "leave": (_leave, 2),
}


def describe_event(ev: Sequence[Any], model: GameModel) -> str | None:
    """Describe one ``delta.ev`` event as a sentence for the message log.

    Args:
        ev: The event list, its first element the event name
            (``docs/protocol.md``, "Events").
        model: The client's model, read for names (actor ids, kinds, items).
            The player's own id is described as "you".

    Returns:
        One line, or ``None`` for an unknown or malformed event (never raises
        for bad input).
    """
    if not isinstance(ev, (list, tuple)) or not ev or not isinstance(ev[0], str):
        return None
    entry = _EVENTS.get(ev[0])
    if entry is None:
        return None
    describer, min_len = entry
    if len(ev) < min_len:
        return None
    try:
        return describer(ev, model)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        return None
