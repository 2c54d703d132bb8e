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


PlacedEvent = (
    Attacked | Died | DoorChanged | PickedUp | Noticed | Fled | TookStairs | Respawned
    | LevelledUp
)
Event = PlacedEvent | GainedXp | Rejected | Joined | Left
