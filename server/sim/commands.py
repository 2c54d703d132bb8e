"""Commands a player's character can be told to carry out.

Commands are small frozen values; the world validates them when the actor is
next ready to act and answers an impossible one with a ``Rejected`` event.
"""

from __future__ import annotations

from dataclasses import dataclass

DIRECTIONS: tuple[tuple[int, int], ...] = (
    (0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1),
)
"""The eight directions as ``(dx, dy)``, clockwise from north."""


def check_direction(dx: int, dy: int) -> None:
    """Raise ValueError unless ``(dx, dy)`` is one of the eight directions."""
    if (dx, dy) not in DIRECTIONS:
        raise ValueError(f"not a direction: ({dx}, {dy})")


@dataclass(frozen=True, slots=True)
class Move:
    """Step one cell; into a monster attacks it, into a closed door opens it."""

    dx: int
    dy: int

    def __post_init__(self) -> None:
        check_direction(self.dx, self.dy)


@dataclass(frozen=True, slots=True)
class OpenDoor:
    """Open the closed door in direction ``(dx, dy)``."""

    dx: int
    dy: int

    def __post_init__(self) -> None:
        check_direction(self.dx, self.dy)


@dataclass(frozen=True, slots=True)
class CloseDoor:
    """Close the open door in direction ``(dx, dy)``."""

    dx: int
    dy: int

    def __post_init__(self) -> None:
        check_direction(self.dx, self.dy)


@dataclass(frozen=True, slots=True)
class Wait:
    """Spend one action doing nothing."""


@dataclass(frozen=True, slots=True)
class Rest:
    """Spend one action resting; refused while a monster is in view."""


@dataclass(frozen=True, slots=True)
class PickUp:
    """Pick up the top item on the actor's cell."""


@dataclass(frozen=True, slots=True)
class Descend:
    """Take the down staircase the actor stands on."""


@dataclass(frozen=True, slots=True)
class Ascend:
    """Take the up staircase the actor stands on."""


Command = Move | OpenDoor | CloseDoor | Wait | Rest | PickUp | Descend | Ascend
