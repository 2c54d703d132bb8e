"""Translation from simulation values to the wire forms of docs/protocol.md."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from typing import Any

from protocol.messages import Welcome
from protocol.version import PROTOCOL_VERSION
from server.content import DAMAGE_TYPES, Content, ItemDef
from server.content.spells import default_spells
from server.content.statuses import StatusKind
from server.sim.actors import PLAYER_KIND, Actor, Mind
from server.sim.casting import AIMS, choice_options, spell_menu
from server.sim.combat import CRITICAL_CHANCE, AttackOutcome, hit_chance
from server.sim.commands import (
    DIRECTIONS,
    Ascend,
    Cast,
    Choose,
    CloseDoor,
    Command,
    Descend,
    Drop,
    Eat,
    Move,
    OpenDoor,
    PickUp,
    Quaff,
    Read,
    Rest,
    TakeOff,
    Throw,
    Upgrade,
    Wait,
    Wear,
    Wield,
    Zap,
)
from server.sim.events import (
    Attacked,
    Died,
    DoorChanged,
    Dropped,
    Equipped,
    Event,
    Exploded,
    Fled,
    Flew,
    GainedXp,
    Harmed,
    ItemDestroyed,
    Joined,
    Landed,
    Learned,
    Left,
    LevelledUp,
    Notice,
    Noticed,
    PickedUp,
    Polymorphed,
    RayFired,
    RejectReason,
    Respawned,
    StatusChanged,
    TerrainChanged,
    Thrown,
    TookStairs,
    Used,
)
from server.sim.events import Cast as CastSpell

FLAG_ASLEEP, FLAG_FLEEING, FLAG_HUNTING, FLAG_YOU, FLAG_PLAYER = 1, 2, 4, 8, 16
INV_CURSED, INV_BLESSED, INV_KNOWN = 1, 2, 4
OUTCOME_NAMES = {
    AttackOutcome.MISS: "miss",
    AttackOutcome.HIT: "hit",
    AttackOutcome.CRITICAL: "crit",
    AttackOutcome.LUCKY: "lucky",
}


def to_command(
    name: str,
    d: tuple[int, int] | None = None,
    *,
    item: str | None = None,
    at: tuple[int, int] | None = None,
    spell: str | None = None,
    opt: str | None = None,
) -> Command:
    """Turn a wire command (``c`` and its keys) into a simulation command.

    The codec has already checked which keys each command carries
    (docs/protocol.md); this only builds the command. Commands are frozen
    values: those without keys, and the steps in the eight directions, are
    made once and shared.

    Raises:
        ValueError: Unknown name, or a missing or bad key.
    """
    simple = _SIMPLE.get(name)
    if simple is not None:
        return simple
    if type(d) is tuple:
        step = _STEPS.get((name, d))
        if step is not None:
            return step
    if name in _ITEM_COMMANDS:
        if item is None:
            raise ValueError(f"command {name!r} needs an item")
        if name == "throw":
            if at is None:
                raise ValueError("throw needs a target cell")
            return Throw(item, *at)
        if name == "zap":
            if d is None:
                raise ValueError("zap needs a direction")
            return Zap(item, *d)
        command: Command = _ITEM_COMMANDS[name](item)
        return command
    if name == "cast":
        if spell is None:
            raise ValueError("cast needs a spell")
        return Cast(spell, d, at)
    if name == "choose":
        if opt is None:
            raise ValueError("choose needs an option")
        return Choose(opt)
    if name == "upgrade":
        if spell is None:
            raise ValueError("upgrade needs a spell")
        return Upgrade(spell)
    if d is None:
        raise ValueError(f"command {name!r} needs a direction")
    if name == "move":
        return Move(*d)
    if name == "open":
        return OpenDoor(*d)
    if name == "close":
        return CloseDoor(*d)
    raise ValueError(f"unknown command {name!r}")


_SIMPLE: dict[str, Command] = {
    "wait": Wait(),
    "rest": Rest(),
    "pickup": PickUp(),
    "down": Descend(),
    "up": Ascend(),
}
"""The commands that take no key, one shared value each."""
_STEPS: dict[tuple[str, tuple[int, int]], Command] = {
    (name, d): step(*d)
    for name, step in (("move", Move), ("open", OpenDoor), ("close", CloseDoor))
    for d in DIRECTIONS
}
"""``move``, ``open`` and ``close`` in each of the eight directions, by name and ``d``."""

_ITEM_COMMANDS: dict[str, Any] = {
    "drop": Drop,
    "wield": Wield,
    "wear": Wear,
    "remove": TakeOff,
    "eat": Eat,
    "quaff": Quaff,
    "read": Read,
    "throw": Throw,
    "zap": Zap,
}


MIND_FLAGS: dict[int, int] = {
    Mind.ASLEEP: FLAG_ASLEEP,
    Mind.FLEEING: FLAG_FLEEING,
    Mind.HUNTING: FLAG_HUNTING,
}
"""The flag bit of each state of mind that has one (awake and wandering have none)."""


def actor_flags(actor: Actor, viewer: int) -> int:
    """The wire flag bits of ``actor`` as seen by player ``viewer``."""
    flags = MIND_FLAGS.get(actor.mind, 0)
    if actor.id == viewer:
        flags |= FLAG_YOU
    if actor.kind == PLAYER_KIND:
        flags |= FLAG_PLAYER
    return flags


def wire_states(
    actors: Iterable[Actor], depths: Container[int]
) -> dict[int, tuple[int, int, int, int, int, int]]:
    """``(x, y, hp, max_hp, flags, sts)`` of every living actor on one of
    ``depths``, by id: the ``upd`` fields (flags without the viewer's "you"
    bit), as :func:`actor_flags` and :func:`status_bits` give them.

    Called once a tick for every actor of the levels with players, so it is
    written as one loop with those two functions inlined (issue 10: a third
    of the cost of building the tick's index with 4,000 players).
    """
    out: dict[int, tuple[int, int, int, int, int, int]] = {}
    mind_flags = MIND_FLAGS.get
    for a in actors:
        if a.hp > 0 and a.depth in depths:
            flags = mind_flags(a.mind, 0)
            if a.kind == PLAYER_KIND:
                flags |= FLAG_PLAYER
            out[a.id] = (a.x, a.y, a.hp, a.max_hp, flags, status_bits(a) if a.statuses.kinds else 0)
    return out


def wire_kind(actor: Actor, content: Content) -> str:
    """The ``kind`` of an actor record: a monster's key, or ``player.<class>``
    for a player, so clients colour each class's ``@`` (seed 001: the ``@`` is
    blue, red, green or purple depending on the class). A hidden class is sent
    as plain ``player``: the table of kinds must not give the secret away."""
    if not actor.is_player:
        return actor.kind
    cls = content.classes.get(actor.cls or "")
    return "player" if cls is None or cls.hidden else f"player.{cls.key}"


def kind_table(content: Content) -> list[list[str]]:
    """``welcome.kinds``: ``[key, name, glyph, colour]`` by kind code, the
    index an actor record names its kind by (protocol 5): ``player`` (a
    player of no class, or of a hidden one), then ``player.<class>`` for
    every class that is not hidden, then every monster kind, in file order."""
    return (
        [["player", "player", "@", "white"]]
        + [
            [f"player.{c.key}", c.name, "@", c.colour]
            for c in content.classes.values()
            if not c.hidden
        ]
        + [[m.key, m.name, m.glyph, m.colour] for m in content.monsters.values()]
    )


def kind_keys(content: Content) -> list[str]:
    """The kind keys of :func:`kind_table`, by kind code."""
    return [entry[0] for entry in kind_table(content)]


_KIND_CODES: dict[int, tuple[Content, dict[str, int]]] = {}
"""By ``id(content)``: the content (kept, so the id is not reused) and its
kind key -> code table, built once."""


def kind_codes(content: Content) -> dict[str, int]:
    """Kind key -> kind code (:func:`kind_keys`' order), built once per content."""
    cached = _KIND_CODES.get(id(content))
    if cached is None or cached[0] is not content:
        cached = _KIND_CODES[id(content)] = (
            content,
            {k: i for i, k in enumerate(kind_keys(content))},
        )
    return cached[1]


def status_bits(actor: Actor) -> int:
    """The ``sts`` bit mask of an actor record: bit k set iff status k is active."""
    bits = 0
    for kind in actor.statuses.active():
        bits |= 1 << int(kind)
    return bits


def actor_record(actor: Actor, viewer: int, content: Content) -> list[Any]:
    """``[id, kind, name, x, y, hp, max_hp, flags, sts]``, ``kind`` the
    actor's kind code (:func:`kind_codes`; protocol 5).

    Raises:
        KeyError: The actor's kind is not one of ``content``'s (every
            monster is made from a kind of the world's content).
    """
    return [
        actor.id,
        kind_codes(content)[wire_kind(actor, content)],
        actor.name,
        actor.x,
        actor.y,
        actor.hp,
        actor.max_hp,
        actor_flags(actor, viewer),
        status_bits(actor),
    ]


def inventory_record(actor: Actor) -> list[list[Any]]:
    """``me.inv``: ``[letter, key, count, slot, charges, flags]`` per stack."""
    slots = {id(item): slot for slot, item in actor.equipment.items()}
    out = []
    for item in actor.inventory:
        flags = (
            (INV_CURSED if item.cursed and item.known else 0)
            | (INV_BLESSED if item.blessed and item.known else 0)
            | (INV_KNOWN if item.known else 0)
        )
        charges = item.charges if item.charges is not None and item.known else -1
        out.append([item.letter, item.key, item.count, slots.get(id(item), ""), charges, flags])
    return out


def me_fields(actor: Actor, next_xp: int, content: Content, tick: int) -> dict[str, Any]:
    """The complete ``me`` map for the owner of ``actor``."""
    return {
        "name": actor.name,
        "class": actor.cls or "",
        "level": actor.level,
        "xp": actor.xp,
        "next_xp": next_xp,
        "hp": actor.hp,
        "max_hp": actor.max_hp,
        "en": actor.en,
        "max_en": actor.max_en,
        "power": actor.eff_power,
        "defence": actor.eff_defence,
        "accuracy": float(actor.eff_accuracy),
        "dodge": float(actor.dodge),
        "speed": actor.speed,
        "depth": actor.depth,
        "x": actor.x,
        "y": actor.y,
        "dead": not actor.alive,
        "respawn": actor.respawn_tick,
        "inv": inventory_record(actor),
        "sts": [[int(k), r] for k, r, _ in actor.statuses.snapshot()],
        "food": [actor.food.nourishment, actor.food.hunger],
        "spells": [list(row) for row in spell_menu(actor, content, tick)],
        "resist": actor.resistances(),
        "strength": actor.strength,
        "choice": actor.choices_owed,
        "options": list(choice_options(actor, content)) if actor.choices_owed else [],
    }


def event_to_wire(event: Event) -> list[Any] | None:
    """The ``ev`` list form of an event, or None for events not sent as ``ev``.

    Rays and projectile flights are cut to each viewer's sight by the index
    (:meth:`server.game.index.TickIndex.witnessed`), which calls
    :func:`span_to_wire` instead.
    """
    if isinstance(event, Attacked):
        return [
            "atk",
            event.attacker,
            event.target,
            OUTCOME_NAMES[event.outcome],
            event.damage,
            event.surprise,
        ]
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
    if isinstance(event, Dropped):
        return ["drop", event.actor, event.item]
    if isinstance(event, Used):
        return ["use", event.actor, event.verb, event.item]
    if isinstance(event, Thrown):
        return ["throw", event.actor, event.item, list(event.target)]
    if isinstance(event, Landed):
        return ["land", event.projectile, event.item, event.x, event.y, event.shattered]
    if isinstance(event, Harmed):
        return [
            "harm",
            event.target,
            event.source,
            event.damage_type,
            event.damage,
            event.cause,
            OUTCOME_NAMES[event.outcome],
        ]
    if isinstance(event, Exploded):
        return ["boom", event.source, event.kind, event.x, event.y, event.radius]
    if isinstance(event, StatusChanged):
        return ["status", event.actor, event.status, event.on]
    if isinstance(event, TerrainChanged):
        return ["terrain", event.x, event.y, event.terrain]
    if isinstance(event, ItemDestroyed):
        return ["burn", event.x, event.y, event.item, event.damage_type]
    if isinstance(event, Polymorphed):
        return ["poly", event.actor, event.new_actor, event.kind]
    if isinstance(event, CastSpell):
        return ["cast", event.actor, event.spell, event.success]
    if isinstance(event, Equipped):
        return ["equip", event.letter, event.item, event.slot, event.on]
    if isinstance(event, Learned):
        return ["learn", event.spell]
    if isinstance(event, Notice):
        return ["note", event.code, *event.args]
    if isinstance(event, (RayFired, Flew)):
        return span_to_wire(event, None)
    return None


def span_to_wire(
    event: RayFired | Flew, seen: Callable[[int, int], bool] | None, viewer: int | None = None
) -> list[Any]:
    """The wire form of a ray or a projectile's flight, cut to what a viewer
    sees: only the cells ``seen(x, y)`` accepts, the hits that landed on such
    cells, and the firer's id only if it stood on one (or is the viewer).
    With ``seen`` None nothing is cut."""

    def visible(x: int, y: int) -> bool:
        return seen is None or seen(x, y)

    def keep(cells: tuple[tuple[int, int], ...]) -> list[list[int]]:
        return [[x, y] for x, y in cells if visible(x, y)]

    if isinstance(event, Flew):
        return ["fly", event.projectile, event.item, keep(event.cells)]
    source = event.source if (event.source == viewer or visible(event.x, event.y)) else None
    hits = [
        [aid, reflected] for aid, reflected, x, y in event.hits if aid == viewer or visible(x, y)
    ]
    return ["ray", source, event.kind, keep(event.cells), keep(event.bounces), hits, event.beam]


def item_about(idef: ItemDef) -> dict[str, Any]:
    """The ``about`` map of a ``welcome.items`` entry: only the keys that apply."""
    about: dict[str, Any] = {}
    if idef.power is not None:
        about["power"] = idef.power
    if idef.defence:
        about["defence"] = idef.defence
    if idef.resist:
        about["resist"] = dict(idef.resist)
    if idef.enchant is not None:
        about["enchant"] = idef.enchant
    if idef.nutrition:
        about["nutrition"] = idef.nutrition
    if idef.throw_range is not None:
        about["range"] = idef.throw_range
    for flag in ("fragile", "vegetarian", "rustproof", "acidproof", "metallic", "hunger_drain"):
        if getattr(idef, flag):
            about[flag] = True
    if idef.bane is not None:
        about["bane"] = idef.bane
    about["weight"] = idef.weight
    if idef.slot is not None:
        about["slot"] = idef.slot
    if idef.description:
        about["description"] = idef.description
    return about


REASONS: list[str] = [r.name.lower() for r in RejectReason]
"""``welcome.reasons``: the refusal reasons by code, the index a ``rej`` pair
names its reason by (protocol 6), in :class:`RejectReason`'s order."""
REASON_CODES: dict[RejectReason, int] = {r: i for i, r in enumerate(RejectReason)}
"""Refusal reason -> its code in :data:`REASONS`."""


def rejections(refused: Iterable[Any], ack: int) -> list[int]:
    """The ``rej`` of a frame, ``[ack − seq, code, ...]``, from the tick's
    :class:`~server.sim.events.Rejected` records of one player.

    Each refused command's ``seq`` is given back from ``ack``, the frame's
    acknowledged ``seq`` once applied (the player's ``last_tag``):
    protocol 10, 0 (one byte) for the command just acknowledged, as nearly
    every refusal is, where a ``seq`` takes three bytes after the 127th
    command. Protocol 6 made the pairs flat with reason codes."""
    out: list[int] = []
    for e in refused:
        out += (ack - e.tag, REASON_CODES[e.reason])
    return out


def welcome_tables(content: Content) -> dict[str, Any]:
    """The code tables of ``welcome``: terrain, kinds, items, classes, spells,
    statuses, damage types and refusal reasons."""
    spells = default_spells().spells
    return {
        "terrain": [
            [t.key, t.name, t.glyph, t.colour, t.passable, t.transparent] for t in content.terrain
        ],
        "kinds": kind_table(content),
        "items": {
            i.key: [i.name, i.glyph, i.colour, i.category, item_about(i)]
            for i in content.items.values()
        },
        "classes": [[c.key, c.name] for c in content.classes.values() if not c.hidden],
        "spells": {s.key: [s.name, s.level, s.school, AIMS[s.targeting]] for s in spells.values()},
        "statuses": [[k.name.lower(), k.name.lower().replace("_", " ")] for k in StatusKind],
        "damage_types": list(DAMAGE_TYPES),
        "reasons": list(REASONS),
    }


def welcome_message(
    tables: dict[str, Any],
    *,
    actor_id: int,
    name: str,
    token: str,
    resumed: bool,
    tick: int,
    tick_rate: int,
    motd: str,
) -> Welcome:
    """The ``welcome`` of a seated player, with the code tables of
    :func:`welcome_tables` (built once per world) and the server's
    ``motd`` (docs/protocol.md, ``welcome``)."""
    return Welcome(
        v=PROTOCOL_VERSION,
        id=actor_id,
        name=name,
        token=token,
        resumed=resumed,
        tick=tick,
        tick_rate=tick_rate,
        terrain=tables["terrain"],
        kinds=tables["kinds"],
        items=tables["items"],
        classes=tables["classes"],
        motd=motd,
        spells=tables["spells"],
        statuses=tables["statuses"],
        damage_types=tables["damage_types"],
        reasons=tables["reasons"],
    )


def describe_actor(target: Actor, viewer: Actor, content: Content) -> dict[str, Any]:
    """The ``about`` map of an ``info`` answer (seed 001's look: level, health,
    energy, power, defence, courage unless immobile, resistances, abilities,
    statuses, and the miss and critical chances each way)."""
    about: dict[str, Any] = {
        "name": target.name
        or (content.monsters[target.kind].name if target.kind in content.monsters else target.kind),
        "kind": wire_kind(target, content),
        "level": target.level,
        "hp": target.hp,
        "max_hp": target.max_hp,
        "en": target.en,
        "max_en": target.max_en,
        "power": target.eff_power,
        "defence": target.eff_defence,
        "resist": target.resistances(),
        "abilities": sorted(target.abilities),
        "sts": [[int(k), r] for k, r, _ in target.statuses.snapshot()],
        "you_miss": 1.0 - hit_chance(viewer.eff_accuracy, target.dodge),
        "you_crit": CRITICAL_CHANCE,
        "it_miss": 1.0 - hit_chance(target.eff_accuracy, viewer.dodge),
        "it_crit": CRITICAL_CHANCE,
    }
    if not target.immobile:
        about["courage"] = float(target.courage)
    mdef = content.monsters.get(target.kind)
    if mdef is not None:
        if mdef.spells:
            about["spells"] = list(mdef.spells)
        if mdef.breath is not None:
            about["breath"] = mdef.breath
    return about
