"""What spells do: seed 001's spell families as numbers and shapes.

Pure functions; the world applies them (finds the monsters on the cells,
adjusts for resistance and defence, adds statuses). Randomness comes from a
caller-supplied ``numpy.random.Generator`` and each drawing function lists
its draws. Spell numbers come from ``spells.toml``
(:mod:`server.content.spells`).

Sources: ``seeds/001_e9db5684e265e055.txt`` (the spell descriptions and
"Upgrading a spell at an altar doubles all its numerical attributes");
``seeds/004_e3510b876b951af2.txt`` for the energy cost (5 x spell level);
``RULES.md`` ("spell effects and families").

Coordinates are ``(x, y)``; a direction is ``(dx, dy)`` with each component
in {-1, 0, 1}, not both 0.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from fractions import Fraction
from typing import Final

import numpy as np

from server.content.spells import EFFECTS, SpellDef
from server.sim.combat import roll_dice
from server.sim.spellcasting import spell_energy_cost

__all__ = [
    "BASIC_THROW_RANGE",
    "ELEMENTAL_DICE",
    "IMPLEMENTED_EFFECTS",
    "WEB_BASE_DICE",
    "area_damage_by_ring",
    "ball_cells",
    "cast_energy_cost",
    "cloud_rounds",
    "elemental_damage",
    "failed_energy_cost",
    "heal_amount",
    "item_curse_difficulty",
    "lightning_chain_dice",
    "line_cells",
    "remove_curse",
    "spell_amount",
    "status_rounds",
    "tongue_cells",
    "upgrade",
    "web_hit_points",
]

Cell = tuple[int, int]

IMPLEMENTED_EFFECTS: Final = frozenset(EFFECTS)
"""Effect keys this module gives numbers or shapes for (all of ``EFFECTS``)."""

WEB_BASE_DICE: Final = (5, 6)
"""The fixed part of a web's hit points, 5d6 (seed 001)."""

BASIC_THROW_RANGE: Final = 4
"""Throwing range that counts 0 towards curse difficulty (seed 001)."""

ELEMENTAL_DICE: Final = 2
"""Dice of the basic elemental, area and tongue damage rolls (seed 001: "two dice")."""


def _check_direction(direction: Cell) -> None:
    dx, dy = direction
    if dx not in (-1, 0, 1) or dy not in (-1, 0, 1) or (dx, dy) == (0, 0):
        raise ValueError(f"direction must be a unit step (dx, dy), got {direction!r}")


# --- damage rolls ---------------------------------------------------------------------


def elemental_damage(rng: np.random.Generator, power: int) -> int:
    """The damage roll of spark, freeze, shock, ice shards, fireball, shockwave and tongues.

    Source: seed 001: "a damage roll with two dice whose number of sides is
    equal to the spell's power" (spark 8, freeze and shock 10, ice shards 12;
    fireball 10 and shockwave 16 roll once for all victims; curse 12).

    Draw order: one ``rng.integers(1, power + 1, size=2)`` (none if power <= 0).

    Args:
        rng: The world's random stream.
        power: The spell power (die size).

    Returns:
        2d(power) before resistance, 2..2 x power (0 when power <= 0).
    """
    return roll_dice(rng, ELEMENTAL_DICE, power)


def area_damage_by_ring(damage: int, attenuation: float, radius: int) -> list[int]:
    """Damage at each distance from the centre of a fireball or shockwave.

    Source: seed 001: the central victim takes the roll ``d``; "the damage is
    then multiplied by an attenuation factor and rounded down" for the monsters
    one cell out, and "this continues" while ``r < radius``. Underhall reads
    the procedure literally: each ring is ``floor(previous ring x a)``, which
    equals the seed's summary ``d x a^r`` rounded down for r <= 1 and may be
    one lower further out (d = 11, a = 0.8: 11, 8, 6 where 11 x 0.64 = 7.04).
    The factor is taken as the exact decimal written in the data (0.8 = 4/5),
    so no float error moves a result across an integer.

    Args:
        damage: The single damage roll d, >= 0.
        attenuation: Factor a per ring, > 0 (fireball 0.8, shockwave 0.4,
            upgraded fireball 1.6).
        radius: Rings affected, >= 1; ring r exists for r = 0..radius - 1.

    Returns:
        ``radius`` damages, index r for ring r, before resistance or defence.

    Raises:
        ValueError: Negative damage, attenuation <= 0 or radius < 1.
    """
    if damage < 0 or attenuation <= 0 or radius < 1:
        raise ValueError(
            f"need damage >= 0, attenuation > 0, radius >= 1; got {damage}, {attenuation}, {radius}"
        )
    factor = Fraction(repr(float(attenuation)))
    rings = [damage]
    for _ in range(1, radius):
        rings.append(math.floor(rings[-1] * factor))
    return rings


def ball_cells(center: Cell, radius: int) -> list[list[Cell]]:
    """The cells of each ring of a fireball or shockwave.

    Source: seed 001 ("all monsters 1 space from the centre receive this
    amount ... r is always less than the spell's radius"). Underhall's
    decision: distance is Chebyshev (king moves), as a roguelike player counts
    "spaces", so ring r is the square outline at distance r. Walls are the
    world's business (it keeps the cells the blast reaches).

    Args:
        center: ``(x, y)`` of the centre.
        radius: Rings, >= 1.

    Returns:
        ``radius`` lists; list r holds the ``8 r`` cells (1 for r = 0) at
        Chebyshev distance r, sorted by ``(y, x)``.

    Raises:
        ValueError: ``radius`` < 1.
    """
    if radius < 1:
        raise ValueError(f"radius must be >= 1, got {radius}")
    cx, cy = center
    rings: list[list[Cell]] = [[] for _ in range(radius)]
    for y in range(cy - radius + 1, cy + radius):
        for x in range(cx - radius + 1, cx + radius):
            rings[max(abs(x - cx), abs(y - cy))].append((x, y))
    return rings


def line_cells(origin: Cell, direction: Cell, range_: int) -> list[Cell]:
    """The cells ice shards sweeps: ``range`` cells from the caster in one direction.

    Source: seed 001: "Ice shards has a range of 6 tiles, and damages every
    monster in range in the specified direction". The world stops the line at
    the first wall.

    Returns:
        ``origin + k x direction`` for k = 1..range, nearest first.

    Raises:
        ValueError: Bad direction or range < 1.
    """
    _check_direction(direction)
    if range_ < 1:
        raise ValueError(f"range must be >= 1, got {range_}")
    (x, y), (dx, dy) = origin, direction
    return [(x + k * dx, y + k * dy) for k in range(1, range_ + 1)]


def tongue_cells(origin: Cell, direction: Cell, range_: int, spread: int) -> list[Cell]:
    """The T shape of curse and enervate.

    Source: seed 001: tongue spells have "power, range, and spread ... The
    spread parameter is the length of the bars of the T shape" (player: range
    2, spread 1). Underhall's geometry: the stem is the ``range`` cells
    ``origin + k d`` (k = 1..range); the bar crosses the stem's last cell E,
    ``spread`` cells each side along the perpendicular ``p = (-dy, dx)``:
    ``E - j p`` and ``E + j p`` for j = 1..spread. For a diagonal direction
    the bar is the other diagonal, so the shape is the orthogonal T turned
    45 degrees. The world drops cells the stem cannot reach past a wall.

    Args:
        origin: The caster's cell.
        direction: Unit step ``(dx, dy)``.
        range_: Stem length, >= 1.
        spread: Bar length on each side, >= 0.

    Returns:
        The stem cells nearest first, then the bar cells, side ``-p`` then
        ``+p``, nearest the stem first (``range + 2 spread`` cells).

    Raises:
        ValueError: Bad direction, range < 1 or spread < 0.
    """
    stem = line_cells(origin, direction, range_)
    if spread < 0:
        raise ValueError(f"spread must be >= 0, got {spread}")
    (ex, ey), (dx, dy) = stem[-1], direction
    px, py = -dy, dx
    minus = [(ex - j * px, ey - j * py) for j in range(1, spread + 1)]
    plus = [(ex + j * px, ey + j * py) for j in range(1, spread + 1)]
    return stem + minus + plus


# --- statuses, heals and buffs ----------------------------------------------------------


def status_rounds(rng: np.random.Generator, dice: int, power: int) -> int:
    """Rounds of a targeted status: ``dice d power`` (seed 001).

    Confusion 1d10 (power 10), plague 2d7 (power 7), acid glob 1d10.

    Draw order: one ``rng.integers(1, power + 1, size=dice)``.

    Raises:
        ValueError: ``dice`` or ``power`` < 1.
    """
    if dice < 1 or power < 1:
        raise ValueError(f"dice and power must be >= 1, got {dice}, {power}")
    return roll_dice(rng, dice, power)


def cloud_rounds(rng: np.random.Generator, power: int) -> int:
    """Rounds of poison cloud: uniform on ``power // 2 .. power`` (seed 001: 4-8 at power 8).

    Draw order: one ``rng.integers(power // 2, power + 1)``.

    Raises:
        ValueError: ``power`` < 1.
    """
    if power < 1:
        raise ValueError(f"power must be >= 1, got {power}")
    return int(rng.integers(power // 2, power + 1))


def heal_amount(power: int, level: int, *, scrying: bool = False) -> int:
    """Points a heal, cure, buff or elemental shield adds or removes.

    Source: seed 001: ``p + (L / ceil(p / 2))`` for spell power p and caster
    level L (heal wounds 26, purge poison and cure disease 13, soothe acid burn
    and elemental shields 10, haste 7, the rest 12); scrying (power 15) omits
    the half: ``p + L / p``. Underhall's decision: the division is integer
    division rounded down, so the level adds a whole point every ceil(p/2)
    levels (heal wounds: 26 at level 1..12, 27 at 13..25).

    Args:
        power: Spell power p, >= 1.
        level: Caster level L, >= 0.
        scrying: Use the scrying form.

    Returns:
        The amount (health points, or rounds of the status).

    Raises:
        ValueError: ``power`` < 1 or ``level`` < 0.
    """
    if power < 1 or level < 0:
        raise ValueError(f"need power >= 1 and level >= 0, got {power}, {level}")
    divisor = power if scrying else (power + 1) // 2
    return power + level // divisor


def spell_amount(spell: SpellDef, level: int) -> int:
    """:func:`heal_amount` for a heal, cure, buff or scry spell record.

    Raises:
        ValueError: The spell's effect is not one of those, or bad numbers.
    """
    if spell.effect not in ("heal", "cure", "buff", "scry"):
        raise ValueError(f"spell {spell.key!r} (effect {spell.effect!r}) has no heal amount")
    return heal_amount(spell.power, level, scrying=spell.effect == "scry")


# --- lightning, webs, curses ------------------------------------------------------------


def lightning_chain_dice(chain: int) -> list[int]:
    """Dice of each strike of a lightning bolt: chain, chain - 1, ..., 1 (seed 001).

    The player's bolt (power 10, chain 3) strikes for 3d10, 2d10, 1d10; the
    world rolls ``roll_dice(rng, n, power)`` per strike, in order.

    Raises:
        ValueError: ``chain`` < 1.
    """
    if chain < 1:
        raise ValueError(f"chain must be >= 1, got {chain}")
    return list(range(chain, 0, -1))


def web_hit_points(rng: np.random.Generator, power: int) -> int:
    """Hit points of a web from the webbing spell: ``5d6 + 1d(power)`` (seed 001).

    Draw order: ``rng.integers(1, 7, size=5)``, then ``rng.integers(1, power + 1,
    size=1)``.

    Raises:
        ValueError: ``power`` < 1.
    """
    if power < 1:
        raise ValueError(f"power must be >= 1, got {power}")
    count, sides = WEB_BASE_DICE
    return roll_dice(rng, count, sides) + roll_dice(rng, 1, power)


def item_curse_difficulty(
    power: int, defence: int, throw_range: int, resist_bonuses: Iterable[int]
) -> int:
    """How hard an item's curse is to remove (seed 001, remove curse).

    The total of the item's attributes: power + defence + (throw range - 4)
    + every elemental resist bonus; "the basic 4 tile range counts as 0 ...
    smaller ranges count negative" (and longer ranges positive). Negative
    ratings of cursed items count as they are.

    Args:
        power: The item's power rating (0 if none).
        defence: Its defence rating (0 if none).
        throw_range: Its throwing range in cells (4 if unspecified).
        resist_bonuses: Its elemental resistance bonuses.

    Returns:
        The difficulty (may be negative).
    """
    return power + defence + (throw_range - BASIC_THROW_RANGE) + sum(resist_bonuses)


def remove_curse(
    rng: np.random.Generator, level: int, difficulty: int, *, upgraded: bool
) -> tuple[bool, int]:
    """Try to lift an item's curse with the remove curse spell.

    Source: seed 001: roll ``L d6`` with L = player level + 1, doubled if the
    spell is upgraded; success if the result exceeds the difficulty or equals
    L. On failure the backlash is ``floor(2dk / 3)`` where k is the difference
    between difficulty and result, read in the seed's dice notation (as in
    "Ld6", "5d6+1dp"): two k-sided dice, so 0 when k = 0 and also 0 when
    k = 1 (2d1 = 2) -- the seed's "chance of backlash". Underhall follows the
    text literally: "equals L" compares the doubled result, so an upgraded
    spell succeeds only by exceeding the difficulty (its smallest result 2L
    already beats every difficulty below 2L).

    Draw order: ``rng.integers(1, 7, size=L)``; on failure with k >= 1,
    ``rng.integers(1, k + 1, size=2)``.

    Args:
        rng: The world's random stream.
        level: The caster's level, >= 0.
        difficulty: From :func:`item_curse_difficulty`.
        upgraded: The spell has been upgraded at an altar.

    Returns:
        ``(success, backlash damage to the caster)``; backlash is 0 on success.

    Raises:
        ValueError: ``level`` < 0.
    """
    if level < 0:
        raise ValueError(f"level must be >= 0, got {level}")
    dice = level + 1
    result = roll_dice(rng, dice, 6) * (2 if upgraded else 1)
    if result > difficulty or result == dice:
        return True, 0
    gap = difficulty - result
    if gap < 1:
        return False, 0
    return False, roll_dice(rng, 2, gap) // 3


# --- costs and upgrades ------------------------------------------------------------------


def cast_energy_cost(spell: SpellDef) -> int:
    """Energy to cast ``spell``: 5 x its level (seed 004).

    Once a ``"halve_cost"`` spell is upgraded the cost is halved, rounded down
    (seed 001: "A few instead halve the energy cost when upgraded").
    """
    cost = spell_energy_cost(spell.level)
    if spell.upgraded and spell.upgrade == "halve_cost":
        return cost // 2
    return cost


def failed_energy_cost(spell: SpellDef) -> int:
    """Energy a failed cast of ``spell`` uses: half its cost, rounded down (seed 004)."""
    return cast_energy_cost(spell) // 2


def upgrade(spell: SpellDef) -> SpellDef:
    """The spell after an altar upgrade (seed 001).

    "For most spells, this simply doubles all attributes, including power,
    range, radius of effect, attenuation of effect, and so forth": power,
    range (unlimited stays unlimited), range_min, radius, attenuation, spread
    and chain double. The dice count and the spell level do not (they are not
    the spell's attributes in seed 001: the elemental rolls are always "two
    dice"). A ``"halve_cost"`` spell keeps its numbers; :func:`cast_energy_cost`
    halves its cost. Remove curse doubles its roll (:func:`remove_curse`).

    Returns:
        A new record with ``upgraded=True``.

    Raises:
        ValueError: The spell is already upgraded.
    """
    if spell.upgraded:
        raise ValueError(f"spell {spell.key!r} is already upgraded")
    if spell.upgrade == "halve_cost":
        return dataclasses.replace(spell, upgraded=True)
    return dataclasses.replace(
        spell,
        upgraded=True,
        power=2 * spell.power,
        range=None if spell.range is None else 2 * spell.range,
        range_min=None if spell.range_min is None else 2 * spell.range_min,
        radius=2 * spell.radius,
        attenuation=2 * spell.attenuation,
        spread=2 * spell.spread,
        chain=2 * spell.chain,
    )
