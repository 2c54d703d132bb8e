"""Commands a player's character can be told to carry out.

Commands are small frozen values; the world validates them when the actor is
next ready to act and answers an impossible one with a ``Rejected`` event.
"""

from __future__ import annotations

from dataclasses import dataclass

DIRECTIONS: tuple[tuple[int, int], ...] = (
    (0, -1),
    (1, -1),
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
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


def check_letter(letter: str) -> None:
    """Raise ValueError unless ``letter`` is one pack letter (``a``-``z``, ``A``-``Z``)."""
    if len(letter) != 1 or not letter.isascii() or not letter.isalpha():
        raise ValueError(f"not a pack letter: {letter!r}")


@dataclass(frozen=True, slots=True)
class Drop:
    """Drop the whole stack with pack letter ``letter`` on the actor's cell."""

    letter: str

    def __post_init__(self) -> None:
        check_letter(self.letter)


@dataclass(frozen=True, slots=True)
class Wield:
    """Wield the weapon ``letter`` (any wielded weapon goes back to the pack)."""

    letter: str

    def __post_init__(self) -> None:
        check_letter(self.letter)


@dataclass(frozen=True, slots=True)
class Wear:
    """Put on the armour, shield, robe, helmet, gloves, boots or spellbook ``letter``."""

    letter: str

    def __post_init__(self) -> None:
        check_letter(self.letter)


@dataclass(frozen=True, slots=True)
class TakeOff:
    """Take off (or unwield) the equipped item ``letter``; cursed items stay on."""

    letter: str

    def __post_init__(self) -> None:
        check_letter(self.letter)


@dataclass(frozen=True, slots=True)
class Eat:
    """Eat the food ``letter`` (seed 001 nourishment)."""

    letter: str

    def __post_init__(self) -> None:
        check_letter(self.letter)


@dataclass(frozen=True, slots=True)
class Quaff:
    """Drink the potion ``letter``."""

    letter: str

    def __post_init__(self) -> None:
        check_letter(self.letter)


@dataclass(frozen=True, slots=True)
class Read:
    """Read the scroll or spellbook ``letter``."""

    letter: str

    def __post_init__(self) -> None:
        check_letter(self.letter)


@dataclass(frozen=True, slots=True)
class Throw:
    """Throw one object of stack ``letter`` at the cell ``(x, y)`` (seed 001 throwing)."""

    letter: str
    x: int
    y: int

    def __post_init__(self) -> None:
        check_letter(self.letter)


@dataclass(frozen=True, slots=True)
class Zap:
    """Zap the wand or blow the horn ``letter`` in direction ``(dx, dy)`` (seed 000 rays)."""

    letter: str
    dx: int
    dy: int

    def __post_init__(self) -> None:
        check_letter(self.letter)
        check_direction(self.dx, self.dy)


@dataclass(frozen=True, slots=True)
class Cast:
    """Cast the known spell ``spell`` (a spell key).

    Spells that need a direction take ``(dx, dy)``; those that need a target
    cell take ``target``; others take neither.
    """

    spell: str
    direction: tuple[int, int] | None = None
    target: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if self.direction is not None:
            check_direction(*self.direction)


@dataclass(frozen=True, slots=True)
class Choose:
    """Take the reward owed at every fifth level (seed 001): a boost or an ability key."""

    option: str


@dataclass(frozen=True, slots=True)
class Upgrade:
    """Upgrade the known spell ``spell`` while standing on an altar (seed 001)."""

    spell: str


Command = (
    Move
    | OpenDoor
    | CloseDoor
    | Wait
    | Rest
    | PickUp
    | Descend
    | Ascend
    | Drop
    | Wield
    | Wear
    | TakeOff
    | Eat
    | Quaff
    | Read
    | Throw
    | Zap
    | Cast
    | Choose
    | Upgrade
)
