"""Events the simulation emits: ids, enums and numbers, never text.

Every event that happens somewhere carries ``depth, x, y`` so the game layer
can cut it to what each player sees. Events are frozen slotted dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from server.sim.combat import AttackOutcome


class RejectReason(IntEnum):
    """Why a command could not be carried out (wire names in docs/protocol.md)."""

    BLOCKED = 1
    OCCUPIED = 2
    NO_DOOR = 3
    DOOR_BLOCKED = 4
    NO_STAIRS = 5
    SEALED = 6
    NOTHING_HERE = 7
    DEAD = 8
    MONSTER_IN_VIEW = 9
    LAVA = 10
    QUEUE_FULL = 11
    NO_ITEM = 12
    PACK_FULL = 13
    WRONG_ITEM = 14
    CURSED = 15
    FULL = 16
    NO_ENERGY = 17
    CANNOT_CAST = 18
    UNKNOWN_SPELL = 19
    NO_TARGET = 20
    NO_CHOICE = 21
    CONFUSED = 22
    AFRAID = 23
    NO_ALTAR = 24


@dataclass(frozen=True, slots=True)
class Attacked:
    """A melee attack; ``damage`` is what the target lost (0 on a miss)."""

    depth: int
    x: int
    y: int
    attacker: int
    target: int
    outcome: AttackOutcome
    damage: int
    surprise: bool


@dataclass(frozen=True, slots=True)
class Died:
    """An actor died at ``(x, y)``; ``killer`` is an actor id or None."""

    depth: int
    x: int
    y: int
    actor: int
    killer: int | None


@dataclass(frozen=True, slots=True)
class DoorChanged:
    """An actor opened (``opened``) or closed the door at ``(x, y)``."""

    depth: int
    x: int
    y: int
    actor: int
    opened: bool


@dataclass(frozen=True, slots=True)
class PickedUp:
    """An actor picked up an item (by content key)."""

    depth: int
    x: int
    y: int
    actor: int
    item: str


@dataclass(frozen=True, slots=True)
class Noticed:
    """A monster noticed ``target`` and started hunting."""

    depth: int
    x: int
    y: int
    actor: int
    target: int


@dataclass(frozen=True, slots=True)
class Fled:
    """A monster fell below its courage and turned to flee."""

    depth: int
    x: int
    y: int
    actor: int


@dataclass(frozen=True, slots=True)
class TookStairs:
    """An actor left ``depth`` at ``(x, y)`` for ``to_depth``."""

    depth: int
    x: int
    y: int
    actor: int
    to_depth: int


@dataclass(frozen=True, slots=True)
class Respawned:
    """A dead player came back at ``(x, y)`` of ``depth``."""

    depth: int
    x: int
    y: int
    actor: int


@dataclass(frozen=True, slots=True)
class LevelledUp:
    """An actor reached experience level ``level``."""

    depth: int
    x: int
    y: int
    actor: int
    level: int


@dataclass(frozen=True, slots=True)
class GainedXp:
    """A player gained ``amount`` experience (private to that player)."""

    actor: int
    amount: int


@dataclass(frozen=True, slots=True)
class Rejected:
    """A command of ``actor`` could not be carried out (private to that player).

    ``tag`` is the caller's tag given to :meth:`World.submit` (the wire ``seq``).
    """

    actor: int
    tag: int
    reason: RejectReason


@dataclass(frozen=True, slots=True)
class Joined:
    """A player entered the world (everyone is told)."""

    actor: int
    name: str


@dataclass(frozen=True, slots=True)
class Left:
    """A player left the world (everyone is told)."""

    actor: int
    name: str


@dataclass(frozen=True, slots=True)
class Dropped:
    """An actor dropped an item (by content key) on its cell."""

    depth: int
    x: int
    y: int
    actor: int
    item: str


@dataclass(frozen=True, slots=True)
class Used:
    """An actor ate, quaffed, read, zapped or blew an item (``verb`` says which)."""

    depth: int
    x: int
    y: int
    actor: int
    verb: str
    item: str


@dataclass(frozen=True, slots=True)
class Thrown:
    """An actor threw ``item`` (content key) from ``(x, y)`` towards ``target``."""

    depth: int
    x: int
    y: int
    actor: int
    item: str
    target: tuple[int, int]


@dataclass(frozen=True, slots=True)
class Flew:
    """A projectile moved through ``cells`` this tick (``(x, y)`` is where it is now).

    ``item`` is the content key of a thrown object, or ``"bolt:<damage type>"``
    for a bolt.
    """

    depth: int
    x: int
    y: int
    projectile: int
    item: str
    cells: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class Landed:
    """A projectile stopped at ``(x, y)``; ``shattered`` if it broke (seed 001 fragile)."""

    depth: int
    x: int
    y: int
    projectile: int
    item: str
    shattered: bool


@dataclass(frozen=True, slots=True)
class Harmed:
    """``target`` took ``damage`` of ``damage_type`` from something other than melee.

    ``source`` is the actor responsible (None for terrain, hunger, statuses);
    ``cause`` names the carrier: ``"throw"``, ``"ray"``, ``"beam"``, ``"bolt"``,
    ``"ball"``, ``"spell"``, ``"breath"``, ``"status"``, ``"hunger"``,
    ``"shield"``, ``"potion"``. ``outcome`` is the hit outcome for things that
    roll to hit (a miss has damage 0).
    """

    depth: int
    x: int
    y: int
    target: int
    source: int | None
    damage_type: str
    damage: int
    cause: str
    outcome: AttackOutcome = AttackOutcome.HIT


@dataclass(frozen=True, slots=True)
class RayFired:
    """A ray or beam travelled from ``(x, y)``: the cells it entered in order,
    the wall cells where it bounced, and whom it hit (seed 000).

    ``kind`` is the damage type (``"dig"`` for digging); ``hits`` holds
    ``(actor id, reflected, x, y)`` in order, ``(x, y)`` where the hit landed.
    """

    depth: int
    x: int
    y: int
    source: int | None
    kind: str
    cells: tuple[tuple[int, int], ...]
    bounces: tuple[tuple[int, int], ...]
    hits: tuple[tuple[int, bool, int, int], ...]
    beam: bool = False


@dataclass(frozen=True, slots=True)
class Exploded:
    """A ball (fireball, shockwave) burst at ``(x, y)`` over ``radius`` cells."""

    depth: int
    x: int
    y: int
    source: int | None
    kind: str
    radius: int


@dataclass(frozen=True, slots=True)
class StatusChanged:
    """A status began (``on``) or ended on an actor; ``status`` is a StatusKind value."""

    depth: int
    x: int
    y: int
    actor: int
    status: int
    on: bool


@dataclass(frozen=True, slots=True)
class TerrainChanged:
    """The terrain at ``(x, y)`` changed (a door burnt, water boiled, a wall dug)."""

    depth: int
    x: int
    y: int
    terrain: int


@dataclass(frozen=True, slots=True)
class ItemDestroyed:
    """A floor item at ``(x, y)`` was destroyed by ``damage_type`` (seed 003)."""

    depth: int
    x: int
    y: int
    item: str
    damage_type: str


@dataclass(frozen=True, slots=True)
class Polymorphed:
    """The monster ``actor`` at ``(x, y)`` became ``new_actor``, of kind ``kind`` (seed 003)."""

    depth: int
    x: int
    y: int
    actor: int
    new_actor: int
    kind: str


@dataclass(frozen=True, slots=True)
class Cast:
    """An actor cast ``spell`` (a key); ``success`` False for a failed casting."""

    depth: int
    x: int
    y: int
    actor: int
    spell: str
    success: bool


@dataclass(frozen=True, slots=True)
class Equipped:
    """A player put on (``on``) or took off an item (private to that player)."""

    actor: int
    letter: str
    item: str
    slot: str
    on: bool


@dataclass(frozen=True, slots=True)
class Learned:
    """A player learned (or refreshed) the spell ``spell`` (private)."""

    actor: int
    spell: str


@dataclass(frozen=True, slots=True)
class Notice:
    """A private message to a player, as a code and numbers (the client words it).

    Codes: ``"hungry"``, ``"weak"``, ``"starving"``, ``"identified"``,
    ``"nothing_happens"``, ``"forgot"``, ``"choice"``, ``"curse_removed"``,
    ``"curse_stays"``, ``"enchanted"``, ``"spell_failed"``, ``"upgraded"``, ``"rusted"``.
    """

    actor: int
    code: str
    args: tuple[int | str, ...] = ()


PlacedEvent = (
    Attacked
    | Died
    | DoorChanged
    | PickedUp
    | Noticed
    | Fled
    | TookStairs
    | Respawned
    | LevelledUp
    | Dropped
    | Used
    | Thrown
    | Flew
    | Landed
    | Harmed
    | RayFired
    | Exploded
    | StatusChanged
    | TerrainChanged
    | ItemDestroyed
    | Cast
    | Polymorphed
)
Event = PlacedEvent | GainedXp | Rejected | Joined | Left | Equipped | Learned | Notice
