"""Translation from simulation values to the wire forms of docs/protocol.md."""

from __future__ import annotations

from typing import Any

from server.content import Content
from server.sim.actors import Actor, Mind
from server.sim.combat import AttackOutcome
from server.sim.commands import (
    Ascend,
    CloseDoor,
    Command,
    Descend,
    Move,
    OpenDoor,
    PickUp,
    Rest,
    Wait,
)
from server.sim.events import (
    Attacked,
    Died,
    DoorChanged,
    Event,
    Fled,
    GainedXp,
    Joined,
    Left,
    LevelledUp,
    Noticed,
    PickedUp,
    Respawned,
    TookStairs,
)

FLAG_ASLEEP, FLAG_FLEEING, FLAG_HUNTING, FLAG_YOU, FLAG_PLAYER = 1, 2, 4, 8, 16
OUTCOME_NAMES = {
    AttackOutcome.MISS: "miss", AttackOutcome.HIT: "hit",
    AttackOutcome.CRITICAL: "crit", AttackOutcome.LUCKY: "lucky",
}


def to_command(name: str, d: tuple[int, int] | None) -> Command:
    """Turn a wire command (``c``, ``d``) into a simulation command.

    Raises:
        ValueError: Unknown name, or a missing or bad direction.
    """
    simple: dict[str, Command] = {
        "wait": Wait(), "rest": Rest(), "pickup": PickUp(), "down": Descend(), "up": Ascend(),
    }
    if name in simple:
        return simple[name]
    if d is None:
        raise ValueError(f"command {name!r} needs a direction")
    if name == "move":
        return Move(*d)
    if name == "open":
        return OpenDoor(*d)
    if name == "close":
        return CloseDoor(*d)
    raise ValueError(f"unknown command {name!r}")


def actor_flags(actor: Actor, viewer: int) -> int:
    """The wire flag bits of ``actor`` as seen by player ``viewer``."""
    flags = 0
    if actor.mind == Mind.ASLEEP:
        flags |= FLAG_ASLEEP
    elif actor.mind == Mind.FLEEING:
        flags |= FLAG_FLEEING
    elif actor.mind == Mind.HUNTING:
        flags |= FLAG_HUNTING
    if actor.id == viewer:
        flags |= FLAG_YOU
    if actor.is_player:
        flags |= FLAG_PLAYER
    return flags


def wire_kind(actor: Actor, content: Content) -> str:
    """The ``kind`` of an actor record: a monster's key, or ``player.<class>``
    for a player, so clients colour each class's ``@`` (seed 001: the ``@`` is
    blue, red, green or purple depending on the class). A hidden class is sent
    as plain ``player``: the table of kinds must not give the secret away."""
    if not actor.is_player:
        return actor.kind
    cls = content.classes.get(actor.cls or "")
    return "player" if cls is None or cls.hidden else f"player.{cls.key}"


def actor_record(actor: Actor, viewer: int, content: Content) -> list[Any]:
    """``[id, kind, name, x, y, hp, max_hp, flags]``."""
    return [actor.id, wire_kind(actor, content), actor.name, actor.x, actor.y, actor.hp,
            actor.max_hp, actor_flags(actor, viewer)]


def me_fields(actor: Actor, next_xp: int) -> dict[str, Any]:
    """The complete ``me`` map for the owner of ``actor``."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    counts: dict[str, int] = {}
    for key in actor.inventory:
        counts[key] = counts.get(key, 0) + 1
    inv = [[letters[i % len(letters)], key, n] for i, (key, n) in enumerate(counts.items())]
    return {
        "name": actor.name, "class": actor.cls or "", "level": actor.level, "xp": actor.xp,
        "next_xp": next_xp, "hp": actor.hp, "max_hp": actor.max_hp, "en": actor.en,
        "max_en": actor.max_en, "power": actor.power, "defence": actor.defence,
        "accuracy": float(actor.accuracy), "dodge": float(actor.dodge), "speed": actor.speed,
        "depth": actor.depth, "x": actor.x, "y": actor.y, "dead": not actor.alive,
        "respawn": actor.respawn_tick, "inv": inv,
    }


def event_to_wire(event: Event) -> list[Any] | None:
    """The ``ev`` list form of an event, or None for events not sent as ``ev``."""
    if isinstance(event, Attacked):
        return ["atk", event.attacker, event.target, OUTCOME_NAMES[event.outcome],
                event.damage, event.surprise]
    if isinstance(event, Died):
        return ["die", event.actor, event.killer]
    if isinstance(event, DoorChanged):
        return ["door", event.actor, event.x, event.y, event.opened]
    if isinstance(event, PickedUp):
        return ["pick", event.actor, event.item]
    if isinstance(event, Noticed):
        return ["wake", event.actor]
    if isinstance(event, Fled):
        return ["flee", event.actor]
    if isinstance(event, LevelledUp):
        return ["lvl", event.actor, event.level]
    if isinstance(event, TookStairs):
        return ["stairs", event.actor, event.to_depth]
    if isinstance(event, Respawned):
        return ["respawn", event.actor]
    if isinstance(event, GainedXp):
        return ["xp", event.actor, event.amount]
    if isinstance(event, Joined):
        return ["join", event.name]
    if isinstance(event, Left):
        return ["leave", event.name]
    return None


def welcome_tables(content: Content) -> dict[str, Any]:
    """The ``terrain``, ``kinds``, ``items`` and ``classes`` tables of ``welcome``."""
    return {
        "terrain": [[t.key, t.name, t.glyph, t.colour, t.passable, t.transparent]
                    for t in content.terrain],
        "kinds": {"player": ["player", "@", "white"]}
        | {f"player.{c.key}": [c.name, "@", c.colour]
           for c in content.classes.values() if not c.hidden}
        | {m.key: [m.name, m.glyph, m.colour] for m in content.monsters.values()},
        "items": {i.key: [i.name, i.glyph, i.colour] for i in content.items.values()},
        "classes": [[c.key, c.name] for c in content.classes.values() if not c.hidden],
    }
