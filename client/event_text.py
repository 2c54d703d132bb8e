"""Message-log lines from game events: the event table and its dispatcher.

:func:`describe_event` looks an event's name up in one table of describers
(``docs/protocol.md``, "Events"). The everyday deeds (doors, stairs, items,
spells, experience) are described here; fights and their effects come from
:mod:`client.combat_text`, the ``note`` notices from :mod:`client.notices`.
An event this module does not know, or one whose fields are malformed,
yields ``None`` so a newer server never crashes an older client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from client.combat_text import (
    atk_line,
    boom_line,
    burn_line,
    die_line,
    harm_line,
    land_line,
    poly_line,
    ray_line,
    status_line,
    terrain_line,
    throw_line,
)
from client.naming import item_phrase, spell_phrase, who, with_article
from client.notices import note_line

if TYPE_CHECKING:
    from client.model import GameModel

__all__ = ["describe_event"]


def _door(ev: Sequence[Any], model: GameModel) -> str | None:
    a = who(model, ev[1])
    opened = bool(ev[4])
    return f"{a.subject()} {a.verb('open' if opened else 'close')} a door."


def _pick(ev: Sequence[Any], model: GameModel) -> str | None:
    a = who(model, ev[1])
    if not isinstance(ev[2], str):
        return None
    return f"{a.subject()} {a.verb('pick')} up {item_phrase(model, ev[2])}."


def _wake(ev: Sequence[Any], model: GameModel) -> str | None:
    a = who(model, ev[1])
    others = any(v.is_player and not v.is_self for v in model.actors.values())
    if others:
        return f"{a.subject()} {a.verb('notice')} an intruder."
    return f"{a.subject()} {a.verb('notice')} you."


def _flee(ev: Sequence[Any], model: GameModel) -> str | None:
    a = who(model, ev[1])
    return f"{a.subject()} {a.verb('turn')} to flee."


def _lvl(ev: Sequence[Any], model: GameModel) -> str | None:
    a = who(model, ev[1])
    level = ev[2]
    if a.you:
        return f"You feel more experienced (level {level})."
    return f"{a.subject()} {a.verb('reach')} level {level}."


def _stairs(ev: Sequence[Any], model: GameModel) -> str | None:
    a = who(model, ev[1])
    depth = ev[2]
    if not isinstance(depth, int):
        return None
    way = "down" if depth > model.depth else "up"
    return f"{a.subject()} {a.verb('go')} {way} the stairs."


def _respawn(ev: Sequence[Any], model: GameModel) -> str | None:
    a = who(model, ev[1])
    if a.you:
        return "You return to life."
    return f"{a.subject()} {a.verb('return')} to life."


def _xp(ev: Sequence[Any], model: GameModel) -> str | None:
    a = who(model, ev[1])
    amount = ev[2]
    if not isinstance(amount, int) or amount <= 0:
        return None
    return f"{a.subject()} {a.verb('gain')} {amount} experience."


def _join(ev: Sequence[Any], model: GameModel) -> str | None:
    return f"{ev[1]} joined." if isinstance(ev[1], str) else None


def _leave(ev: Sequence[Any], model: GameModel) -> str | None:
    return f"{ev[1]} left." if isinstance(ev[1], str) else None


def _drop(ev: Sequence[Any], model: GameModel) -> str | None:
    a = who(model, ev[1])
    if not isinstance(ev[2], str):
        return None
    return f"{a.subject()} {a.verb('drop')} {item_phrase(model, ev[2])}."


_USE_VERBS: Mapping[str, tuple[str, str]] = {
    "eat": ("eat", "eats"), "quaff": ("drink", "drinks"), "read": ("read", "reads"),
    "zap": ("zap", "zaps"), "blow": ("blow", "blows"),
}  # fmt: skip


def _use(ev: Sequence[Any], model: GameModel) -> str | None:
    a = who(model, ev[1])
    verbs = _USE_VERBS.get(ev[2]) if isinstance(ev[2], str) else None
    if verbs is None or not isinstance(ev[3], str):
        return None
    verb = verbs[0] if a.you else verbs[1]
    return f"{a.subject()} {verb} {item_phrase(model, ev[3])}."


def _cast(ev: Sequence[Any], model: GameModel) -> str | None:
    a = who(model, ev[1])
    spell = spell_phrase(model, ev[2])
    if ev[3] is True:
        return f"{a.subject()} {a.verb('cast')} {spell}."
    return f"{a.subject()} {a.verb('fail')} to cast {spell}."


_SLOT_ON: Mapping[str, str] = {"weapon": "You are now wielding", "book": "You now hold"}


def _equip(ev: Sequence[Any], model: GameModel) -> str | None:
    _, letter, item, slot, on = ev[:5]
    if not (isinstance(letter, str) and isinstance(item, str) and isinstance(slot, str)):
        return None
    thing = f"{with_article(model.item_name(item))} ({letter})"
    if on is True:
        return f"{_SLOT_ON.get(slot, 'You are now wearing')} {thing}."
    if slot == "weapon":
        return f"You are no longer wielding {thing}."
    return f"You take off {thing}." if slot != "book" else f"You put away {thing}."


def _learn(ev: Sequence[Any], model: GameModel) -> str | None:
    return f"You learn the spell {spell_phrase(model, ev[1])}."


_Describer = Callable[[Sequence[Any], "GameModel"], "str | None"]

# event name -> (describer, minimum list length including the name)
_EVENTS: Mapping[str, tuple[_Describer, int]] = {
    "atk": (atk_line, 6),
    "die": (die_line, 2),
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
    "drop": (_drop, 3),
    "use": (_use, 4),
    "throw": (throw_line, 4),
    "land": (land_line, 6),
    "harm": (harm_line, 7),
    "ray": (ray_line, 7),
    "boom": (boom_line, 6),
    "status": (status_line, 4),
    "terrain": (terrain_line, 4),
    "burn": (burn_line, 5),
    "poly": (poly_line, 4),
    "cast": (_cast, 4),
    "equip": (_equip, 5),
    "learn": (_learn, 2),
    "note": (note_line, 2),
}
"""Event name -> describer. ``fly`` has none: the client animates it instead."""


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
