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
    "option_label",
    "with_article",
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
    "no_item": "You do not have that item.",
    "pack_full": "Your pack is full.",
    "wrong_item": "You cannot use that item that way.",
    "cursed": "You cannot; it is cursed!",
    "full": "You are too full to eat.",
    "no_energy": "You do not have enough energy.",
    "cannot_cast": "You cannot cast a spell right now.",
    "unknown_spell": "You do not know that spell.",
    "no_target": "That spell needs another kind of target.",
    "no_choice": "You have no reward to choose.",
    "confused": "You are too confused to do that.",
    "afraid": "You are too afraid to attack.",
    "no_altar": "You must stand on an altar to upgrade a spell.",
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
    return with_article(name)


def with_article(name: str) -> str:
    """``"a dagger"``, ``"an apple"``."""
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return f"{article} {name}"


def _the(text: str) -> str:
    """Capitalise the first letter of a sentence."""
    return text[:1].upper() + text[1:]


def _spell(model: GameModel, key: object) -> str:
    return model.spell_name(key) if isinstance(key, str) else "a spell"


def _words(key: object) -> str:
    """A wire key as words (``"magic_missile"`` -> ``"magic missile"``)."""
    return key.replace("_", " ") if isinstance(key, str) else "something"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_OPTION_LABELS: Mapping[str, str] = {
    "health": "more health", "energy": "more energy", "power": "more power",
    "defence": "more defence",
}  # fmt: skip


def option_label(option: str) -> str:
    """A level-up reward key in words (``"resist_fire"`` -> ``"resistance to fire"``)."""
    if option in _OPTION_LABELS:
        return _OPTION_LABELS[option]
    if option.startswith("resist_"):
        return "resistance to " + option[len("resist_"):].replace("_", " ")
    return "the ability: " + option.replace("_", " ")


def _pack_item(model: GameModel, letter: object) -> str:
    """The name of the pack item under ``letter`` ("your equipment" if unknown)."""
    for item in model.inventory():
        if item.letter == letter:
            return model.item_name(item.key)
    return "equipment"


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


def _drop(ev: Sequence[Any], model: GameModel) -> str | None:
    a = _who(model, ev[1])
    if not isinstance(ev[2], str):
        return None
    return f"{a.subject()} {a.verb('drop')} {_item_phrase(model, ev[2])}."


_USE_VERBS: Mapping[str, tuple[str, str]] = {
    "eat": ("eat", "eats"), "quaff": ("drink", "drinks"), "read": ("read", "reads"),
    "zap": ("zap", "zaps"), "blow": ("blow", "blows"),
}  # fmt: skip


def _use(ev: Sequence[Any], model: GameModel) -> str | None:
    a = _who(model, ev[1])
    verbs = _USE_VERBS.get(ev[2]) if isinstance(ev[2], str) else None
    if verbs is None or not isinstance(ev[3], str):
        return None
    verb = verbs[0] if a.you else verbs[1]
    return f"{a.subject()} {verb} {_item_phrase(model, ev[3])}."


def _throw(ev: Sequence[Any], model: GameModel) -> str | None:
    a = _who(model, ev[1])
    at = ev[3]
    if not isinstance(ev[2], str):
        return None
    line = f"{a.subject()} {a.verb('throw')} {_item_phrase(model, ev[2])}"
    if isinstance(at, list) and len(at) == 2:
        for view in model.actors.values():
            if (view.x, view.y) == (at[0], at[1]) and view.id != ev[1]:
                return f"{line} at {_who(model, view.id).object()}."
    return line + "."


def _land(ev: Sequence[Any], model: GameModel) -> str | None:
    item, shattered = ev[2], ev[5]
    if not isinstance(item, str) or item.startswith("bolt:"):
        return None  # a bolt's end needs no line: its harm events tell the outcome
    name = _the(f"the {model.item_name(item)}")
    return f"{name} shatters!" if shattered is True else f"{name} lands."


_CAUSES: Mapping[str, str] = {
    "throw": "missile", "ray": "ray", "beam": "beam", "bolt": "bolt", "ball": "explosion",
    "spell": "spell", "breath": "breath", "shield": "shield", "potion": "potion",
}  # fmt: skip


def _harm(ev: Sequence[Any], model: GameModel) -> str | None:
    _, target, source, dtype, damage, cause, outcome = ev[:7]
    if not _is_int(damage) or outcome not in ("miss", "hit", "crit", "lucky"):
        return None
    t = _who(model, target)
    typed = isinstance(dtype, str) and dtype in model.damage_types
    kind = f" {_words(dtype)}" if typed else ""  # "physical" and the like go unnamed
    if cause in ("status", "hunger"):
        why = " from hunger" if cause == "hunger" else ""
        if damage <= 0:
            return None
        return f"{t.subject()} {t.verb('suffer')} {damage}{kind} damage{why}."
    noun = _CAUSES.get(cause) if isinstance(cause, str) else None
    if noun is None:
        return None
    if source is None:
        thing = f"The {noun}"
    else:
        s = _who(model, source)
        if s.you:
            thing = f"Your own {noun}" if t.you else f"Your {noun}"
        else:
            thing = f"{s.subject()}'s {noun}"  # a player's name keeps its spelling
    if outcome == "miss":
        return f"{thing} misses {t.object()}."
    prefix = {"crit": "A critical hit! ", "lucky": "A lucky hit! "}.get(outcome, "")
    if damage > 0:
        return f"{prefix}{thing} hits {t.object()} for {damage}{kind} damage."
    return f"{prefix}{thing} hits {t.object()} but does no damage."


def _ray(ev: Sequence[Any], model: GameModel) -> str | None:
    _, source, kind, cells, bounces, hits, beam = ev[:7]
    if not (isinstance(cells, list) and isinstance(bounces, list) and isinstance(hits, list)):
        return None
    noun = "beam" if beam is True else "ray"
    what = f"{_words(kind)} {noun}"
    if source is None:
        line = f"{_the(with_article(what))} flashes past."
    else:
        s = _who(model, source)
        line = f"{s.subject()} {s.verb('fire')} {with_article(what)}."
    if bounces:
        line += " It bounces!" if len(bounces) == 1 else f" It bounces {len(bounces)} times!"
    for hit in hits:
        if isinstance(hit, list) and len(hit) >= 2 and hit[1] is True:
            line += f" It reflects off {_who(model, hit[0]).object()}!"
    return line


def _boom(ev: Sequence[Any], model: GameModel) -> str | None:
    if not _is_int(ev[5]):
        return None
    return f"{_the(with_article(_words(ev[2])))} explosion bursts!"


def _status(ev: Sequence[Any], model: GameModel) -> str | None:
    a = _who(model, ev[1])
    if not _is_int(ev[2]):
        return None
    name = model.status_name(ev[2])
    be = "are" if a.you else "is"
    if ev[3] is True:
        return f"{a.subject()} {be} {name}."
    return f"{a.subject()} {be} no longer {name}."


def _terrain_name(model: GameModel, code: int) -> str | None:
    table = model.terrain_table
    if 0 <= code < len(table) and isinstance(table[code], list) and len(table[code]) > 1:
        return str(table[code][1])
    return None


_DOORS = (3, 4)


def _terrain(ev: Sequence[Any], model: GameModel) -> str | None:
    _, x, y, code = ev[:4]
    if not (_is_int(x) and _is_int(y) and _is_int(code)):
        return None
    new = _terrain_name(model, code)
    old_code = model.replaced_tiles.get((x, y))
    old = _terrain_name(model, old_code) if old_code is not None else None
    if new is None or old is None or old == new:
        return None
    if old_code in _DOORS and code not in _DOORS:
        return f"The {old} is destroyed!"
    return f"The {old} turns into {new}."


_BURNS: Mapping[str, str] = {
    "fire": "burns up", "cold": "freezes and shatters", "acid": "dissolves",
    "electricity": "is destroyed by electricity",
}  # fmt: skip


def _burn(ev: Sequence[Any], model: GameModel) -> str | None:
    item, dtype = ev[3], ev[4]
    if not isinstance(item, str):
        return None
    how = _BURNS.get(dtype, "is destroyed") if isinstance(dtype, str) else "is destroyed"
    return f"{_the(with_article(model.item_name(item)))} {how}!"


def _poly(ev: Sequence[Any], model: GameModel) -> str | None:
    kind = ev[3]
    if not isinstance(kind, str):
        return None
    who = _who(model, ev[1])
    return f"{who.name[:1].upper()}{who.name[1:]} changes into {with_article(_kind_name(model, kind))}!"


def _cast(ev: Sequence[Any], model: GameModel) -> str | None:
    a = _who(model, ev[1])
    spell = _spell(model, ev[2])
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
    return f"You learn the spell {_spell(model, ev[1])}."


def _note(ev: Sequence[Any], model: GameModel) -> str | None:
    code, args = ev[1], list(ev[2:])
    arg = args[0] if args else None
    if code == "identified":
        return f"You now know {_item_phrase(model, arg)}." if isinstance(arg, str) else None
    if code == "forgot":
        return f"You have forgotten the spell {_spell(model, arg)}."
    if code == "enchanted":
        return f"Your {_pack_item(model, arg)} glows blue for a moment."
    if code == "curse_removed":
        return f"The curse on your {_pack_item(model, arg)} is lifted."
    if code == "curse_stays":
        return f"The curse on your {_pack_item(model, arg)} holds fast."
    if code == "choice" and isinstance(arg, str):
        return f"You gain {option_label(arg)}."
    if code == "upgraded":
        return f"The altar glows: your {_spell(model, arg)} spell grows stronger."
    return _NOTES.get(code) if isinstance(code, str) else None


_NOTES: Mapping[str, str] = {
    "hungry": "You are getting hungry.",
    "weak": "You feel weak from hunger.",
    "starving": "You are starving!",
    "nothing_happens": "Nothing seems to happen.",
    "choice": "You may choose a reward for your level: press C.",
    "spell_failed": "Your spell fails.",
}


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
    "drop": (_drop, 3),
    "use": (_use, 4),
    "throw": (_throw, 4),
    "land": (_land, 6),
    "harm": (_harm, 7),
    "ray": (_ray, 7),
    "boom": (_boom, 6),
    "status": (_status, 4),
    "terrain": (_terrain, 4),
    "burn": (_burn, 5),
    "poly": (_poly, 4),
    "cast": (_cast, 4),
    "equip": (_equip, 5),
    "learn": (_learn, 2),
    "note": (_note, 2),
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
