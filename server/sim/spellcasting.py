"""Casting a spell: success chance, costs, refusals, forgetting, skill, to-hit and damage bonus.

Every rule is a small pure function citing its source. Randomness comes from a
caller-supplied ``numpy.random.Generator``; each function that draws lists
its draws (the determinism contract).

Sources:

* ``seeds/004_e3510b876b951af2.txt`` (NetHack spellcasting): success rate,
  energy and nutrition costs, casting restrictions, forgetting after 20,000
  turns, the 40/30/20/10 backfire table, training by successful casts, the
  to-hit bonus, the spell damage bonus, beam and ray ranges.
* ``reference/spell_success.md``: the exact integer arithmetic of NetHack
  3.6's ``percent_success`` and the role table (numbers in ``roles.toml``).
* ``reference/nethack_ray.md`` section 6: the hero's spell hit bonus.
* ``RULES.md``: casting uses seed 004's chance and costs; what the spell does
  comes from seed 001 (``server.sim.spells``).

The seed's backfire table lost its cells; the durations follow NetHack 3.6's
``spell_backfire`` (the source the seed cites): ``D = 3 (level + 1)`` turns.
"""

from __future__ import annotations

import math
from enum import IntEnum
from typing import Final

import numpy as np

from server.content.spells import MAX_SPELL_LEVEL, RoleDef, default_spells

__all__ = [
    "BASIC",
    "EXPERT",
    "REFRESH_TURNS",
    "SHIELDS",
    "SKILLED",
    "SKILL_ADVANCE_PRACTICE",
    "SPELL_MEMORY_TURNS",
    "UNSKILLED",
    "CastRefusal",
    "apply_spell_damage_bonus",
    "base_casting_chance",
    "beam_spell_range",
    "can_cast",
    "can_refresh",
    "casting_penalty",
    "dig_spell_range",
    "encumbrance",
    "failed_cast_cost",
    "forgotten_cast_effect",
    "is_forgotten",
    "ray_spell_damage_dice",
    "ray_spell_range",
    "roll_cast",
    "skill_for_practice",
    "spell_damage_bonus",
    "spell_difficulty",
    "spell_energy_cost",
    "spell_hit_bonus",
    "spell_level_adjustment",
    "spell_nutrition_cost",
    "spell_retention",
    "spell_success_percent",
    "train_skill",
    "weight_capacity",
]

UNSKILLED: Final = 0
"""Skill level Unskilled (also used for NetHack's Restricted)."""
BASIC: Final = 1
"""Skill level Basic."""
SKILLED: Final = 2
"""Skill level Skilled."""
EXPERT: Final = 3
"""Skill level Expert."""

SHIELDS: Final[tuple[str, ...]] = ("none", "small", "large")
"""Shield argument values: no shield, a small shield, anything heavier."""

PENALTY_CAP: Final = 20
"""Highest total spellcasting penalty (seed 004: "limited to a maximum of 20")."""
CHANCE_CAP: Final = 120
"""Highest intermediate chance before armour (seed 004: "0% to 120%")."""
EASY_BONUS_CAP: Final = 20
"""Largest bonus an easy spell gives (seed 004: "capped at 20")."""
METAL_HELM_PENALTY: Final = 4
"""Penalty of a metallic helmet other than the helm of brilliance (seed 004)."""
METAL_GLOVES_PENALTY: Final = 6
"""Penalty of metallic gloves (seed 004)."""
METAL_BOOTS_PENALTY: Final = 2
"""Penalty of metallic boots (seed 004)."""
MIN_CAST_STRENGTH: Final = 4
"""Strength needed to cast (seed 004: "at least 4")."""

SPELL_MEMORY_TURNS: Final = 20_000
"""Turns a learned spell is remembered (seed 004: "lasts for 20,000 turns")."""
REFRESH_TURNS: Final = 1_000
"""Re-reading refreshes a spell with at most this many turns left (seed 004)."""

SKILL_ADVANCE_PRACTICE: Final[tuple[int, ...]] = (20, 80, 180)
"""Total practice to reach Basic, Skilled and Expert (NetHack's 20 x n squared)."""

STAT_MIN: Final = 3
"""Lowest casting stat (NetHack attributes run 3..25)."""
STAT_MAX: Final = 25
"""Highest casting stat."""


class CastRefusal(IntEnum):
    """Why a cast is refused before any roll (seed 004 restrictions; wire values)."""

    STUNNED = 1
    NO_FREE_HAND = 2
    TOO_WEAK = 3
    NOT_ENOUGH_ENERGY = 4
    TOO_HUNGRY = 5
    OVERTAXED = 6


# --- checks -------------------------------------------------------------------------


def _check_level(spell_level: int) -> None:
    if type(spell_level) is not int or not 1 <= spell_level <= MAX_SPELL_LEVEL:
        raise ValueError(f"spell_level must be an int in 1..{MAX_SPELL_LEVEL}, got {spell_level!r}")


def _check_skill(skill: int) -> None:
    if type(skill) is not int or not UNSKILLED <= skill <= EXPERT:
        raise ValueError(f"skill must be an int in {UNSKILLED}..{EXPERT}, got {skill!r}")


def _check_xl(xl: int) -> None:
    if type(xl) is not int or xl < 1:
        raise ValueError(f"xl must be an int >= 1, got {xl!r}")


def _role(role: str) -> RoleDef:
    try:
        return default_spells().role(role)
    except KeyError:
        names = ", ".join(r.name for r in default_spells().roles.values())
        raise ValueError(f"unknown role {role!r} (known: {names})") from None


# --- success chance -------------------------------------------------------------------


def casting_penalty(
    role: str,
    *,
    emergency: bool = False,
    special: bool = False,
    shield: str = "none",
    metal_suit: bool = False,
    robe: bool = False,
    metal_helm: bool = False,
    metal_gloves: bool = False,
    metal_boots: bool = False,
) -> int:
    """The total spellcasting penalty P of a role wearing the given armour.

    Source: seed 004 ("Calculating spell success rate") and
    ``reference/spell_success.md`` step 1: role base; metallic suit + suit
    value (half, rounded down, under a robe); a robe without a metallic suit
    subtracts the suit value; any shield + shield value; metallic helmet +4,
    gloves +6, boots +2; special spell + special bonus (-4); emergency spell
    + emergency value; capped at 20 with no lower cap.

    Args:
        role: Role key or the seed's name, e.g. ``"Wizard"``.
        emergency: The spell is an emergency spell (healing, cures, remove curse).
        special: The spell is the role's special spell.
        shield: ``"none"``, ``"small"`` or ``"large"``.
        metal_suit: Metallic body armour is worn.
        robe: A robe is worn (as a cloak).
        metal_helm: A metallic helmet other than a helm of brilliance is worn.
        metal_gloves: Metallic gloves are worn.
        metal_boots: Metallic boots are worn.

    Returns:
        The penalty, at most 20 (may be negative).

    Raises:
        ValueError: Unknown role or shield.
    """
    if shield not in SHIELDS:
        raise ValueError(f"shield must be one of {', '.join(SHIELDS)}, got {shield!r}")
    info = _role(role)
    penalty = info.base
    if metal_suit:
        penalty += info.suit // 2 if robe else info.suit
    elif robe:
        penalty -= info.suit
    if shield != "none":
        penalty += info.shield
    penalty += METAL_HELM_PENALTY * metal_helm + METAL_GLOVES_PENALTY * metal_gloves
    penalty += METAL_BOOTS_PENALTY * metal_boots
    if special:
        penalty += info.special_bonus
    if emergency:
        penalty += info.emergency
    return min(penalty, PENALTY_CAP)


def base_casting_chance(stat: int) -> int:
    """The base chance ``floor(11 x stat / 2)`` (seed 004: "5.5 times" Int or Wis).

    Args:
        stat: The casting stat, 3..25.

    Returns:
        The chance in percent before the level adjustment (18 gives 99).

    Raises:
        ValueError: ``stat`` outside 3..25.
    """
    if type(stat) is not int or not STAT_MIN <= stat <= STAT_MAX:
        raise ValueError(f"stat must be an int in {STAT_MIN}..{STAT_MAX}, got {stat!r}")
    return 11 * stat // 2


def spell_difficulty(spell_level: int, skill: int, xl: int) -> int:
    """Seed 004's spell difficulty ``(LVL-1) x 4 - (SKILL x 6 + XL // 3 + 1)``.

    This is the seed's ``LVL x 4 - SKILL x 6 - XL/3 - 5`` with NetHack's integer
    division of XL (``reference/spell_success.md`` step 2). A spell is "easy"
    when the difficulty is at most 0.

    Args:
        spell_level: 1..7.
        skill: 0 unskilled, 1 basic, 2 skilled, 3 expert.
        xl: Experience level, >= 1.

    Returns:
        The difficulty (positive: difficult).

    Raises:
        ValueError: An argument is out of range.
    """
    _check_level(spell_level)
    _check_skill(skill)
    _check_xl(xl)
    return (spell_level - 1) * 4 - (skill * 6 + xl // 3 + 1)


def spell_level_adjustment(difficulty: int, spell_level: int) -> int:
    """The change to the chance caused by a spell's difficulty.

    Source: seed 004: a difficult spell loses ``isqrt(900 d + 2000)`` (53 at
    d = 1, 100 at d = 9); an easy one gains ``15 |d| // LVL``, at most 20.

    Args:
        difficulty: From :func:`spell_difficulty`.
        spell_level: 1..7.

    Returns:
        A negative penalty or a bonus of 0..20, in percentage points.

    Raises:
        ValueError: ``spell_level`` out of range.
    """
    _check_level(spell_level)
    if difficulty > 0:
        return -math.isqrt(900 * difficulty + 2000)
    return min(EASY_BONUS_CAP, 15 * -difficulty // spell_level)


def spell_success_percent(
    *,
    role: str,
    stat: int,
    xl: int,
    skill: int,
    spell_level: int,
    emergency: bool = False,
    special: bool = False,
    shield: str = "none",
    metal_suit: bool = False,
    robe: bool = False,
    metal_helm: bool = False,
    metal_gloves: bool = False,
    metal_boots: bool = False,
) -> int:
    """The chance, in percent, that casting a spell succeeds.

    Source: seed 004 ("Calculating spell success rate"), with the integer
    arithmetic of ``reference/spell_success.md``: penalty P
    (:func:`casting_penalty`); chance = base chance + level adjustment,
    clamped to 0..120; a large shield quarters it (halves it for the special
    spell); then ``chance x (20 - P) // 15 - P`` clamped to 0..100.

    Args:
        role: One of the 13 roles of the seed's table, by name
            (``"Archeologist"`` ... ``"Wizard"``) or key (``"wizard"``).
        stat: The role's casting stat (Int or Wis), 3..25.
        xl: Experience level, >= 1.
        skill: Skill in the spell's school, 0 unskilled .. 3 expert.
        spell_level: 1..7.
        emergency, special, shield, metal_suit, robe, metal_helm,
        metal_gloves, metal_boots: As for :func:`casting_penalty`.

    Returns:
        The success chance, 0..100.

    Raises:
        ValueError: Unknown role or shield, or a number out of range.
    """
    penalty = casting_penalty(
        role, emergency=emergency, special=special, shield=shield, metal_suit=metal_suit,
        robe=robe, metal_helm=metal_helm, metal_gloves=metal_gloves, metal_boots=metal_boots,
    )  # fmt: skip
    chance = base_casting_chance(stat)
    chance += spell_level_adjustment(spell_difficulty(spell_level, skill, xl), spell_level)
    chance = max(0, min(CHANCE_CAP, chance))
    if shield == "large":
        chance = chance // 2 if special else chance // 4
    final = chance * (20 - penalty) // 15 - penalty
    return max(0, min(100, final))


def roll_cast(rng: np.random.Generator, success_percent: int, *, confused: bool = False) -> bool:
    """Roll whether a cast succeeds.

    Source: seed 004: a confused caster always fails ("with the same effects
    as random spell failure"); otherwise the cast succeeds when ``1d100`` is at
    most the success chance.

    Draw order: none when confused; else one ``rng.integers(1, 101)``.

    Args:
        rng: The world's random stream.
        success_percent: From :func:`spell_success_percent`, 0..100.
        confused: The caster is confused.

    Returns:
        True if the spell takes effect.

    Raises:
        ValueError: ``success_percent`` outside 0..100.
    """
    if not 0 <= success_percent <= 100:
        raise ValueError(f"success_percent must be in 0..100, got {success_percent}")
    if confused:
        return False
    return int(rng.integers(1, 101)) <= success_percent


# --- costs and refusals -------------------------------------------------------------------


def spell_energy_cost(spell_level: int) -> int:
    """Energy to cast a spell: 5 x its level (seed 004, "Spellcasting costs").

    Raises:
        ValueError: ``spell_level`` outside 1..7.
    """
    _check_level(spell_level)
    return 5 * spell_level


def failed_cast_cost(spell_level: int) -> int:
    """Energy spent by a failed cast: half the cost, rounded down (seed 004; 7 at level 3).

    Raises:
        ValueError: ``spell_level`` outside 1..7.
    """
    return spell_energy_cost(spell_level) // 2


def spell_nutrition_cost(
    spell_level: int,
    *,
    detect_food: bool = False,
    wizard_intelligence: int | None = None,
    nourishment: int | None = None,
) -> int:
    """Nutrition a cast uses, success or failure: 2 x the energy cost (seed 004).

    Seed 004's reduced-hunger casting, as NetHack 3.6 computes it: a Wizard
    with Int 17 or more pays nothing, 16 a quarter, 15 a half (rounded
    down). The cost never takes a caster below 3 nourishment ("don't put
    the player into fainting from casting"; 0 when it has 3 or less).

    Args:
        spell_level: 1..7.
        detect_food: The spell is detect food, which costs no nutrition.
        wizard_intelligence: The caster's casting stat when its role is
            Wizard, else None.
        nourishment: The caster's nourishment, or None for no cap.

    Raises:
        ValueError: ``spell_level`` outside 1..7.
    """
    cost = 0 if detect_food else 2 * spell_energy_cost(spell_level)
    if wizard_intelligence is not None:
        if wizard_intelligence >= 17:
            cost = 0
        elif wizard_intelligence == 16:
            cost //= 4
        elif wizard_intelligence == 15:
            cost //= 2
    if nourishment is not None:
        cost = max(0, min(cost, nourishment - 3))
    return cost


FAINT_NOURISHMENT: Final = 10
"""Seed 004 / NetHack 3.6: at this nutrition or less nobody can cast ("too hungry")."""
OVERTAXED: Final = 4
"""NetHack's EXT_ENCUMBER: from this encumbrance on, concentration falters (seed 004)."""
MAX_CARRY: Final = 1000
"""NetHack's MAX_CARR_CAP: the most a weight capacity can be."""


def weight_capacity(strength: int) -> int:
    """NetHack's ``weight_cap``: 25 x (Str + Con) + 50, at most 1000.

    Underhall has no constitution; Underhall's decision: it counts as equal
    to strength.
    """
    return min(MAX_CARRY, 25 * (2 * strength) + 50)


def encumbrance(carried: int, strength: int) -> int:
    """NetHack's ``near_capacity``: 0 unencumbered, 1 burdened, 2 stressed,
    3 strained, 4 overtaxed, 5 overloaded, from the weight ``carried``
    beyond :func:`weight_capacity`: ``excess x 2 // capacity + 1``, at most 5."""
    capacity = weight_capacity(strength)
    excess = carried - capacity
    if excess <= 0:
        return 0
    if capacity <= 1:
        return 5
    return min(5, excess * 2 // capacity + 1)


def can_cast(
    *,
    energy: int,
    cost: int,
    stunned: bool,
    strength: int,
    free_hand: bool,
    forgotten: bool = False,
    nourishment: int | None = None,
    encumbrance: int = 0,
) -> CastRefusal | None:
    """Whether a cast may be attempted, in NetHack's order of checks.

    Source: seed 004's restrictions: not while stunned, not without a free
    hand, not when fainting from hunger (NetHack 3.6: nutrition 10 or less),
    not with strength below 4, not overtaxed or overloaded (encumbrance 4 or
    more), not without the energy. NetHack checks stunning and hands before a
    spell is chosen, then the spell's memory, then hunger, strength, load and
    energy; so a forgotten spell backfires (:func:`forgotten_cast_effect`)
    even for a weak or drained caster.

    Args:
        energy: The caster's current energy.
        cost: The spell's energy cost.
        stunned: The caster is stunned.
        strength: The caster's strength.
        free_hand: The caster has a hand free (no cursed two-handed grip).
        forgotten: The spell is forgotten (skips the later checks).
        nourishment: A player's nourishment (None: a monster, never hungry).
        encumbrance: :func:`encumbrance` of what the caster carries (0..5).

    Returns:
        The first refusal, or None when the cast (or backfire) goes ahead.
    """
    if stunned:
        return CastRefusal.STUNNED
    if not free_hand:
        return CastRefusal.NO_FREE_HAND
    if forgotten:
        return None
    if nourishment is not None and nourishment <= FAINT_NOURISHMENT:
        return CastRefusal.TOO_HUNGRY
    if strength < MIN_CAST_STRENGTH:
        return CastRefusal.TOO_WEAK
    if encumbrance >= OVERTAXED:
        return CastRefusal.OVERTAXED
    if energy < cost:
        return CastRefusal.NOT_ENOUGH_ENERGY
    return None


# --- forgetting -------------------------------------------------------------------------


def spell_retention(learned_turn: int, now: int) -> int:
    """Turns left before a spell is forgotten (seed 004: 20,000 turns after learning).

    Args:
        learned_turn: Turn the spell was learned or last refreshed.
        now: Current turn (same clock; the world's round counter).

    Returns:
        ``max(0, 20000 - (now - learned_turn))``.

    Raises:
        ValueError: ``now`` is before ``learned_turn``.
    """
    if now < learned_turn:
        raise ValueError(f"now ({now}) is before learned_turn ({learned_turn})")
    return max(0, SPELL_MEMORY_TURNS - (now - learned_turn))


def is_forgotten(turns_left: int) -> bool:
    """A spell with no turns left is forgotten (marked ``*`` in the menu; seed 004)."""
    return turns_left <= 0


def can_refresh(turns_left: int) -> bool:
    """Re-reading refreshes a spell only at or below 1,000 turns left (seed 004)."""
    return turns_left <= REFRESH_TURNS


def forgotten_cast_effect(rng: np.random.Generator, spell_level: int) -> tuple[int, int]:
    """Confusion and stun from casting a forgotten spell.

    Source: seed 004's table (40% / 30% / 20% / 10%) with NetHack 3.6's
    durations, ``D = 3 x (level + 1)`` turns: 40% confused D; 30% confused
    2D // 3 and stunned D // 3; 20% stunned 2D // 3 and confused D // 3; 10%
    stunned D. The cast uses no energy and no nutrition.

    Draw order: one ``rng.integers(0, 10)``.

    Args:
        rng: The world's random stream.
        spell_level: The forgotten spell's level, 1..7.

    Returns:
        ``(confused_turns, stunned_turns)`` to add to the caster's statuses.

    Raises:
        ValueError: ``spell_level`` outside 1..7.
    """
    _check_level(spell_level)
    duration = 3 * (spell_level + 1)
    roll = int(rng.integers(0, 10))
    if roll < 4:
        return duration, 0
    if roll < 7:
        return 2 * duration // 3, duration // 3
    if roll < 9:
        return duration // 3, 2 * duration // 3
    return 0, duration


# --- skill --------------------------------------------------------------------------


def train_skill(practice: int, spell_level: int) -> int:
    """Practice in a school after one successful cast: + the spell's level (seed 004).

    Raises:
        ValueError: Negative practice or ``spell_level`` outside 1..7.
    """
    _check_level(spell_level)
    if practice < 0:
        raise ValueError(f"practice must be >= 0, got {practice}")
    return practice + spell_level


def skill_for_practice(practice: int, max_skill: int = EXPERT) -> int:
    """The skill level a school's total practice earns.

    Source: NetHack's ``practice_needed_to_advance`` (20 x n squared for the
    n-th step: 20, 80, 180 in total), which seed 004's training rule feeds.
    Underhall's decision: skills advance on their own when the practice is
    reached (NetHack asks the player to #enhance and spend skill slots); a
    role's ceiling in a school is ``max_skill``.

    Args:
        practice: Total practice, >= 0.
        max_skill: Highest level reachable, 0..3.

    Returns:
        0 unskilled .. 3 expert.

    Raises:
        ValueError: Negative practice or ``max_skill`` out of range.
    """
    _check_skill(max_skill)
    if practice < 0:
        raise ValueError(f"practice must be >= 0, got {practice}")
    reached = sum(1 for need in SKILL_ADVANCE_PRACTICE if practice >= need)
    return min(reached, max_skill)


# --- to-hit, damage and range of attack spells -----------------------------------------------


def spell_hit_bonus(skill: int, dexterity: int) -> int:
    """The hero's to-hit bonus for an attack spell.

    Source: seed 004 ("To-hit") and ``reference/nethack_ray.md`` section 6:
    skill unskilled -4, basic 0, skilled +2, expert +3; dexterity below 4: -3,
    4-5: -2, 6-7: -1, 8-13: 0, 14 and up: dexterity - 14.

    Raises:
        ValueError: ``skill`` outside 0..3.
    """
    _check_skill(skill)
    bonus = (-4, 0, 2, 3)[skill]
    if dexterity < 4:
        return bonus - 3
    if dexterity < 6:
        return bonus - 2
    if dexterity < 8:
        return bonus - 1
    if dexterity < 14:
        return bonus
    return bonus + dexterity - 14


def spell_damage_bonus(intelligence: int, xl: int) -> int:
    """Seed 004's spell damage bonus from intelligence and experience level.

    Int <= 9: -3; Int <= 13 or XL < 5: 0; Int <= 18: +1; Int <= 24 or
    XL < 14: +2; Int 25: +3 (rows tried in order).

    Raises:
        ValueError: ``xl`` < 1.
    """
    _check_xl(xl)
    if intelligence <= 9:
        return -3
    if intelligence <= 13 or xl < 5:
        return 0
    if intelligence <= 18:
        return 1
    if intelligence <= 24 or xl < 14:
        return 2
    return 3


def apply_spell_damage_bonus(damage: int, intelligence: int, xl: int) -> int:
    """Add the spell damage bonus to a damage roll.

    Source: seed 004's bonus, as NetHack 3.6's ``spell_damage_bonus`` applies
    it: the -3 never takes a roll below 1 and leaves a roll of 1 or less
    (0, or a negative roll) as it is; a positive bonus is always added.

    Raises:
        ValueError: ``xl`` < 1.
    """
    bonus = spell_damage_bonus(intelligence, xl)
    if bonus < 0:
        return damage if damage <= 1 else max(1, damage + bonus)
    return damage + bonus


def ray_spell_damage_dice(xl: int) -> int:
    """Dice (of 6 sides) of magic missile and cone of cold: ``XL // 2 + 1`` (seed 004).

    Raises:
        ValueError: ``xl`` < 1.
    """
    _check_xl(xl)
    return xl // 2 + 1


def beam_spell_range(rng: np.random.Generator) -> int:
    """Range of a beam spell, uniform on 6..13 cells (seed 004).

    Draw order: one ``rng.integers(6, 14)``.
    """
    return int(rng.integers(6, 14))


def dig_spell_range(rng: np.random.Generator) -> int:
    """Range of the dig spell, uniform on 8..25 cells (seed 004).

    Draw order: one ``rng.integers(8, 26)``.
    """
    return int(rng.integers(8, 26))


def ray_spell_range(rng: np.random.Generator) -> int:
    """Range of any other ray spell, uniform on 7..13 cells (seed 004, nethack_ray.md §2).

    Draw order: one ``rng.integers(7, 14)``.
    """
    return int(rng.integers(7, 14))
