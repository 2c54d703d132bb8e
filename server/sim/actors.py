"""Actors: players and monsters, with seed 001's stats plus accuracy and dodge.

Stats (seed 001): level, health (``hp``), energy (``en``, the resource combat
and magic spend — not the action clock), power, defence, courage (monsters
flee below this fraction of max health), resistances. Seed 002 adds accuracy
and dodge for the hit test. Time is separate (RULES.md "one time model"):
``speed`` is the number of ticks one action takes, ``next_act`` the tick at
which the actor may act again.
"""

from __future__ import annotations

import zlib
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np
from numpy.typing import NDArray

from server.content import ClassDef, MonsterDef
from server.content.statuses import StatusKind
from server.sim.commands import Command
from server.sim.fov import FieldOfView
from server.sim.hunger import Nourishment, new_nourishment
from server.sim.items import Bonus, Item, clamp_resist
from server.sim.status import Statuses

MEMORY_COMPRESSION = 1
"""zlib level for saved map memory: the fastest, already about twentyfold."""
PLAYER_KIND = "player"


class Mind(IntEnum):
    """What a monster is doing (players are always AWAKE)."""

    AWAKE = 0
    ASLEEP = 1
    WANDERING = 2
    HUNTING = 3
    FLEEING = 4


class MapMemory:
    """A player's map memory: for each depth it has seen, a ``uint8[H, W]``
    grid of terrain codes, row by row (255 where never seen).

    Only one depth's grid is held as an array, the *live* one: the depth
    last asked for (:meth:`get`, ``[]``) or written (``[]=``), which is the
    depth the player is on, since only the world's view update and the
    views ask, and they ask for that depth. Every other depth is *put
    away*: held as its bytes compressed with zlib at
    :data:`MEMORY_COMPRESSION` (about 0.6 kB for a 12.8 kB grid), exactly
    what :meth:`Actor.memory_record` saves, so a record reuses them. Asking
    for a put-away depth decompresses it and puts the live one away (about
    0.1 ms each way), which happens when the player takes the stairs.
    Memory held per player is therefore one grid plus the compressed rest,
    rather than a grid per depth seen (issue 48).

    Reading a depth that is put away with :meth:`items` or :meth:`values`
    gives a decompressed copy and leaves the live depth as it is (writing
    to that copy changes nothing). Depths are never forgotten.
    """

    __slots__ = ("_live", "_live_depth", "_packed", "_shapes")

    def __init__(self) -> None:
        self._live_depth = -1
        """Depth of ``_live`` (-1: none)."""
        self._live: NDArray[np.uint8] | None = None
        self._packed: dict[int, bytes] = {}
        """Put-away depths' grids, zlib-compressed."""
        self._shapes: dict[int, tuple[int, int]] = {}
        """Put-away depths' grid shapes ``(H, W)``."""

    def __len__(self) -> int:
        return len(self._packed) + (self._live is not None)

    def __contains__(self, depth: object) -> bool:
        return (self._live is not None and depth == self._live_depth) or depth in self._packed

    def __iter__(self) -> Iterator[int]:
        return iter(self.depths())

    def __getitem__(self, depth: int) -> NDArray[np.uint8]:
        grid = self.get(depth)
        if grid is None:
            raise KeyError(depth)
        return grid

    def __setitem__(self, depth: int, grid: NDArray[np.uint8]) -> None:
        """Make ``grid`` (``uint8[H, W]``, held, not copied) the live depth's."""
        if depth != self._live_depth:
            self._put_away()
            self._packed.pop(depth, None)
            self._shapes.pop(depth, None)
            self._live_depth = depth
        self._live = grid

    def depths(self) -> list[int]:
        """Every depth remembered, ascending."""
        depths = list(self._packed)
        if self._live is not None:
            depths.append(self._live_depth)
        return sorted(depths)

    def keys(self) -> set[int]:
        """Every depth remembered."""
        return set(self.depths())

    def get(self, depth: int) -> NDArray[np.uint8] | None:
        """The grid of ``depth``, made the live one (the array the world
        writes into); None if that depth was never seen."""
        if depth == self._live_depth:
            return self._live
        packed = self._packed.get(depth)
        if packed is None:
            return None
        grid = _unpack(packed, self._shapes[depth])
        self[depth] = grid
        return grid

    def setdefault(self, depth: int, grid: NDArray[np.uint8]) -> NDArray[np.uint8]:
        """:meth:`get`, or ``grid`` made that depth's (live) if it has none."""
        known = self.get(depth)
        if known is None:
            self[depth] = grid
            return grid
        return known

    def items(self) -> list[tuple[int, NDArray[np.uint8]]]:
        """``(depth, grid)`` for every depth, ascending; a put-away depth's
        grid is a decompressed copy (the live depth does not change)."""
        return [(d, self.peek(d)) for d in self.depths()]

    def values(self) -> list[NDArray[np.uint8]]:
        """The grids of :meth:`items`."""
        return [grid for _, grid in self.items()]

    def peek(self, depth: int) -> NDArray[np.uint8]:
        """The live grid of ``depth``, or a decompressed copy of a put-away
        one (the live depth does not change).

        Raises:
            KeyError: That depth was never seen.
        """
        if depth == self._live_depth and self._live is not None:
            return self._live
        return _unpack(self._packed[depth], self._shapes[depth])

    def entry(self, depth: int) -> list[Any]:
        """``depth``'s entry in :meth:`Actor.memory_record`, ``[[H, W],
        zlib bytes, "zlib"]``: a put-away depth's bytes as held, the live
        one compressed now.

        Raises:
            KeyError: That depth was never seen.
        """
        if depth == self._live_depth and self._live is not None:
            return memory_entry(self._live.shape, self._live.tobytes())
        return [list(self._shapes[depth]), self._packed[depth], "zlib"]

    def packed(self, depth: int) -> tuple[tuple[int, int], bytes] | None:
        """A put-away depth's grid shape ``(H, W)`` and compressed bytes (as
        :meth:`entry` gives them); None for the live depth or one never seen."""
        packed = self._packed.get(depth)
        return None if packed is None else (self._shapes[depth], packed)

    @property
    def live_depth(self) -> int | None:
        """The depth whose grid is held as an array (None if none is)."""
        return None if self._live is None else self._live_depth

    def put_away(self, depth: int, shape: tuple[int, int], packed: bytes) -> None:
        """Hold ``depth``'s grid as ``packed``, its ``uint8[H, W]`` bytes
        compressed with zlib (a saved record's), replacing what was held.

        Raises:
            ValueError: ``packed`` is not zlib data of ``H * W`` bytes.
        """
        try:
            size = len(zlib.decompress(packed))
        except zlib.error as exc:
            raise ValueError(f"map memory of depth {depth}: {exc}") from exc
        height, width = shape
        if size != height * width:
            raise ValueError(f"map memory of depth {depth}: {size} bytes for {height}x{width}")
        if depth == self._live_depth:
            self._live_depth = -1
            self._live = None
        self._packed[depth] = packed
        self._shapes[depth] = (height, width)

    @property
    def live_bytes(self) -> int:
        """Bytes of the live grid (0 if none)."""
        return 0 if self._live is None else int(self._live.nbytes)

    @property
    def packed_bytes(self) -> int:
        """Bytes of the put-away depths' compressed grids."""
        return sum(len(b) for b in self._packed.values())

    def _put_away(self) -> None:
        """Compress the live grid into the put-away depths; none is live after."""
        live = self._live
        if live is not None:
            self._packed[self._live_depth] = zlib.compress(live.tobytes(), MEMORY_COMPRESSION)
            self._shapes[self._live_depth] = (int(live.shape[0]), int(live.shape[1]))
        self._live_depth = -1
        self._live = None


def _unpack(packed: bytes, shape: tuple[int, int]) -> NDArray[np.uint8]:
    """A writable ``uint8`` grid of ``shape`` from its zlib-compressed bytes."""
    raw = bytearray(zlib.decompress(packed))
    return np.frombuffer(raw, dtype=np.uint8).reshape(shape)


def xp_for_level(level: int) -> int:
    """Total experience needed to reach ``level`` (10 × (level − 1)²).

    Seed 001 gives no table; this quadratic curve is Underhall's own choice
    (docs/rules.md).
    """
    return 10 * (level - 1) ** 2


@dataclass(slots=True, eq=False)
class Actor:
    """A creature in the world. Mutable; owned by :class:`World`."""

    id: int
    kind: str
    name: str
    depth: int
    x: int
    y: int
    level: int
    hp: int
    max_hp: int
    en: int
    max_en: int
    power: int
    defence: int
    accuracy: float
    dodge: float
    speed: int
    courage: float = 0.0
    sight: int = 8
    strength: int = 10
    xp: int = 0
    xp_value: int = 0
    cls: str | None = None
    flags: frozenset[str] = frozenset()
    resist: dict[str, int] = field(default_factory=dict)
    inventory: list[Item] = field(default_factory=list)
    equipment: dict[str, Item] = field(default_factory=dict)
    bonus: Bonus = field(default_factory=Bonus)
    abilities: set[str] = field(default_factory=set)
    statuses: Statuses = field(default_factory=Statuses)
    food: Nourishment = field(default_factory=new_nourishment)
    known_spells: dict[str, int] = field(default_factory=dict)
    """Spell key -> tick it was learned (or last refreshed), in learning order."""
    upgraded: set[str] = field(default_factory=set)
    """Spells upgraded at an altar (seed 001)."""
    skills: dict[str, int] = field(default_factory=dict)
    """Spell school -> training points (seed 004: successful casts train a school)."""
    choices_owed: int = 0
    reveal: int = 0
    """Radius of map to reveal at the next view update (scrying, magic mapping)."""
    """Rewards owed for every fifth level (seed 001), not yet chosen."""
    mind: Mind = Mind.AWAKE
    target: int | None = None
    target_seen: tuple[int, int] | None = None
    route: list[tuple[int, int]] | None = None
    """A monster's path to the goal it walks to (a room's centre, or where
    it last saw its target): the ``(x, y)`` cells still to walk, next first,
    the goal last (:func:`server.sim.monsters._walk`); None when it has
    none. Not saved: found again after a load."""
    lost_for: int = 0
    next_act: int = 0
    last_attack_tick: int = -1
    rest_run: int = 0
    """Rest actions in a row so far (:func:`server.sim.upkeep.rest`)."""
    rest_tick: int = -1_000_000
    """Tick of the last rest action."""
    respawn_tick: int = 0
    queue: deque[tuple[int, Command]] = field(default_factory=deque)
    last_tag: int = -1
    fov: FieldOfView | None = None
    fov_key: tuple[int, int, int, int] | None = None
    memory: MapMemory = field(default_factory=MapMemory)
    seen_tiles: list[int] = field(default_factory=list)

    @property
    def is_player(self) -> bool:
        """True for a player's character."""
        return self.kind == PLAYER_KIND

    @property
    def alive(self) -> bool:
        """True unless the actor is dead (a dead player awaits respawn)."""
        return self.hp > 0

    @property
    def eff_power(self) -> int:
        """Power including equipment (seed 001: the die size of the damage roll)."""
        return self.power + self.bonus.power

    @property
    def eff_defence(self) -> int:
        """Defence including equipment (seed 001)."""
        return self.defence + self.bonus.defence

    @property
    def eff_accuracy(self) -> float:
        """Accuracy times the wielded weapon's factor (seed 002)."""
        return self.accuracy * self.bonus.accuracy

    def resistance(self, damage_type: str) -> int:
        """Resistance level against ``damage_type``, equipment included, in -3..3."""
        return clamp_resist(self.resist.get(damage_type, 0) + self.bonus.resist.get(damage_type, 0))

    def resistances(self) -> dict[str, int]:
        """Every non-zero resistance level, equipment included, by damage type (sorted)."""
        types = self.resist.keys() | self.bonus.resist.keys()
        return {t: level for t in sorted(types) if (level := self.resistance(t)) != 0}

    @property
    def unseen(self) -> bool:
        """Invisible: by nature (the ``invisible`` ability) or by the status."""
        return "invisible" in self.abilities or self.statuses.has_flag("unseen")

    def sees_invisible(self) -> bool:
        """Whether it can see invisible creatures (the ``see_invisible`` ability)."""
        return "see_invisible" in self.abilities

    @property
    def immobile(self) -> bool:
        """True for monsters that cannot move (they have no courage)."""
        return "immobile" in self.flags

    def to_record(self) -> dict[str, Any]:
        """Return a player's persistent state as plain data (for the store):
        :meth:`steady_record`, :meth:`moving_record` and, under ``"memory"``,
        :meth:`memory_record`."""
        record = self.steady_record()
        record.update(self.moving_record())
        record["memory"] = self.memory_record()
        return record

    def steady_record(self) -> dict[str, Any]:
        """The part of :meth:`to_record` that changes only when the player
        acts, takes part in an event, or is given a status: class, level,
        abilities and scores, pack and equipment, spells, skills, upgrades."""
        return {
            "name": self.name,
            "cls": self.cls,
            "level": self.level,
            "max_hp": self.max_hp,
            "max_en": self.max_en,
            "power": self.power,
            "defence": self.defence,
            "accuracy": self.accuracy,
            "dodge": self.dodge,
            "speed": self.speed,
            "strength": self.strength,
            "inventory": [i.to_record() for i in self.inventory],
            "equipment": {slot: i.letter for slot, i in sorted(self.equipment.items())},
            "abilities": sorted(self.abilities),
            "resist": dict(sorted(self.resist.items())),
            "spells": dict(self.known_spells),
            "skills": dict(self.skills),
            "choices": self.choices_owed,
            "upgraded": sorted(self.upgraded),
        }

    def moving_record(self) -> dict[str, Any]:
        """The part of :meth:`to_record` that ordinary ticks change: place
        (depth and cell), health, energy, experience, food (nourishment,
        hunger rating, countdown) and statuses (``[kind, rounds, magnitude]``)."""
        return moving_record_of(self.moving_state())

    def moving_state(self) -> MovingState:
        """The values of :meth:`moving_record` as one immutable tuple, which
        is cheaper to take than the record (a checkpoint takes it at its
        tick and builds the record later: :func:`moving_record_of`)."""
        food = self.food
        return (
            self.depth,
            self.x,
            self.y,
            self.hp,
            self.en,
            self.xp,
            food.nourishment,
            food.hunger,
            food.countdown,
            self.statuses.snapshot(),
        )

    def memory_record(self) -> dict[str, list[Any]]:
        """Map memory as plain data: ``{str(depth): [[H, W], zlib bytes,
        "zlib"]}``, depths ascending; decompressed, the bytes are a
        ``uint8[H, W]`` grid of terrain codes row by row (255 where never
        seen). A grid is mostly unseen or repeated codes, so it compresses
        about twentyfold. (Records saved before compression hold
        ``[[H, W], bytes]``; :func:`player_from_record` reads both.) It changes
        only when a tick's field of view or a scrying writes cells into it
        (they are then in ``seen_tiles``)."""
        memory = self.memory
        return {str(d): memory.entry(d) for d in memory.depths()}


MovingState = tuple[int, int, int, int, int, int, int, int, int, tuple[tuple[int, int, int], ...]]
"""What :meth:`Actor.moving_state` returns: depth, x, y, hp, en, xp,
nourishment, hunger, countdown and the status snapshot."""


def moving_record_of(state: MovingState) -> dict[str, Any]:
    """:meth:`Actor.moving_record` from a :meth:`Actor.moving_state`."""
    depth, x, y, hp, en, xp, nourishment, hunger, countdown, statuses = state
    return {
        "depth": depth,
        "x": x,
        "y": y,
        "hp": hp,
        "en": en,
        "xp": xp,
        "food": [nourishment, hunger, countdown],
        "statuses": [[int(k), r, m] for k, r, m in statuses],
    }


def memory_entry(shape: tuple[int, ...], raw: bytes) -> list[Any]:
    """One depth's entry in :meth:`Actor.memory_record`, ``[[H, W], zlib
    bytes, "zlib"]``, from the grid's ``shape`` and its bytes row by row
    (the game compresses a copy taken at a checkpoint's tick over the ticks
    after it)."""
    return [list(shape), zlib.compress(raw, MEMORY_COMPRESSION), "zlib"]


def new_player(actor_id: int, name: str, cls: ClassDef, depth: int, x: int, y: int) -> Actor:
    """Create a level-1 player of class ``cls`` at ``(x, y)`` of ``depth``."""
    return Actor(
        id=actor_id,
        kind=PLAYER_KIND,
        name=name,
        depth=depth,
        x=x,
        y=y,
        level=1,
        hp=cls.health,
        max_hp=cls.health,
        en=cls.energy,
        max_en=cls.energy,
        power=cls.power,
        defence=cls.defence,
        accuracy=cls.accuracy,
        dodge=cls.dodge,
        speed=cls.speed,
        strength=cls.strength,
        cls=cls.key,
        abilities=set(cls.abilities),
    )


def player_from_record(actor_id: int, record: dict[str, Any]) -> Actor:
    """Rebuild a player saved by :meth:`Actor.to_record`.

    Raises:
        KeyError, TypeError, ValueError: If the record is malformed.
    """
    actor = Actor(
        id=actor_id,
        kind=PLAYER_KIND,
        name=str(record["name"]),
        depth=int(record["depth"]),
        x=int(record["x"]),
        y=int(record["y"]),
        level=int(record["level"]),
        hp=int(record["hp"]),
        max_hp=int(record["max_hp"]),
        en=int(record["en"]),
        max_en=int(record["max_en"]),
        power=int(record["power"]),
        defence=int(record["defence"]),
        accuracy=float(record["accuracy"]),
        dodge=float(record["dodge"]),
        speed=int(record["speed"]),
        strength=int(record["strength"]),
        xp=int(record["xp"]),
        cls=None if record["cls"] is None else str(record["cls"]),
        inventory=[Item.from_record(i) for i in record["inventory"]],
    )
    actor.abilities = {str(a) for a in record.get("abilities", ())}
    actor.resist = {str(k): int(v) for k, v in record.get("resist", {}).items()}
    actor.known_spells = {str(k): int(v) for k, v in record.get("spells", {}).items()}
    actor.skills = {str(k): int(v) for k, v in record.get("skills", {}).items()}
    actor.upgraded = {str(k) for k in record.get("upgraded", ())}
    actor.choices_owed = int(record.get("choices", 0))
    for kind, rounds, magnitude in record.get("statuses", ()):
        actor.statuses.add(StatusKind(int(kind)), int(rounds), int(magnitude) or None)
    if "food" in record:
        nourishment, rating, countdown = record["food"]
        actor.food = Nourishment(int(nourishment), int(rating), int(countdown))
    for slot, letter in record.get("equipment", {}).items():
        item = next((i for i in actor.inventory if i.letter == letter), None)
        if item is not None:
            actor.equipment[str(slot)] = item
    for key, (shape, raw, *coding) in record["memory"].items():
        depth = int(key)
        height, width = (int(n) for n in shape)
        if coding == ["zlib"]:
            actor.memory.put_away(depth, (height, width), bytes(raw))
        elif coding:
            raise ValueError(f"map memory coded as {coding!r}")
        else:  # saved before compression: the grid's bytes
            grid = np.frombuffer(bytearray(raw), dtype=np.uint8).reshape(height, width)
            actor.memory[depth] = grid
    return actor


def new_monster(actor_id: int, mdef: MonsterDef, depth: int, x: int, y: int, mind: Mind) -> Actor:
    """Create a monster of kind ``mdef`` at ``(x, y)`` of ``depth``."""
    return Actor(
        id=actor_id,
        kind=mdef.key,
        name="",
        depth=depth,
        x=x,
        y=y,
        level=mdef.level,
        hp=mdef.health,
        max_hp=mdef.health,
        en=mdef.energy,
        max_en=mdef.energy,
        power=mdef.power,
        defence=mdef.defence,
        accuracy=mdef.accuracy,
        dodge=mdef.dodge,
        speed=mdef.speed,
        courage=0.0 if "immobile" in mdef.flags else mdef.courage,
        sight=mdef.sight,
        xp_value=mdef.xp,
        flags=frozenset(mdef.flags),
        resist=dict(mdef.resist),
        mind=mind,
        abilities=set(mdef.abilities),
    )
