"""Status effects (seed 001): the per-actor container, its rounds, and the rules that read it.

Source: ``seeds/001_e9db5684e265e055.txt`` (status effects; "The frozen and on
fire status effects also prevent regeneration"; elemental shields; the freeze
and spark spells; enlightened casting), ``seeds/004_…`` for the casting bans
(stunned cannot cast, confused casting fails). Every number is in
``server/content/data/statuses.toml``; this module holds the behaviour.

Time (Underhall's decision, RULES.md "one time model"): a status *round* is
seed 001's "round" / "turn", one action at normal speed. The world calls
:meth:`Statuses.tick` for every living actor once every
``rules.round_ticks`` world ticks, on the actor's own tick
(``(tick + id) % round_ticks == 0``: :class:`~server.sim.world.PhaseBuckets`),
whatever the actor's speed: haste and slowness change how often an actor acts
(:func:`action_delay`), not how long its statuses last, and a frozen or
sleeping actor's statuses still run out.

Interactions:

* ``opposite`` pairs (frozen/on fire, hasted/slowed): applying one while the
  other is active removes the other and is itself spent — freezing douses
  fire, fire thaws frozen (Underhall's decision: the two cancel).
* ``replaces``: applying the status removes those listed, then applies
  (one elemental shield replaces the other; rage cures fear).
* Elemental shields: a melee attacker takes :func:`shield_retaliation`
  (2d4, to be adjusted by the attacker's resistance to
  :func:`shield_damage_type`), and :func:`shield_touch` thaws a frozen
  attacker of a fire shield and douses a burning attacker of an ice shield.

Draw order of :meth:`Statuses.tick` (determinism contract): for each active
status in ascending ``StatusKind`` value, one :func:`~server.sim.combat.roll_dice`
call (one ``rng.integers(1, sides + 1, size=count)``) if its record has
``damage_dice``; no other draws. Nothing else on :class:`Statuses` draws.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, KeysView
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from server.content.statuses import StatusDef, StatusKind, StatusRules, default_statuses
from server.sim.combat import roll_dice
from server.sim.commands import DIRECTIONS

__all__ = [
    "StatusChange",
    "StatusEffect",
    "StatusKind",
    "Statuses",
    "accuracy_factor",
    "action_delay",
    "can_act",
    "can_cast",
    "can_melee",
    "casts_any_known",
    "confused_direction",
    "defence_bonus",
    "doubles_hunger",
    "elemental_shield",
    "freeze_inflicts",
    "frozen_rounds",
    "hunger_paused",
    "is_unseen",
    "power_bonus",
    "regenerates",
    "shield_damage_type",
    "shield_retaliation",
    "shield_touch",
    "spark_burn_rounds",
    "spells_fail",
]


class StatusChange(IntEnum):
    """What happened to a status; the values go on the wire and never change."""

    APPLIED = 0
    """Newly active; ``amount`` is its rounds."""
    EXTENDED = 1
    """Already active and re-applied with an effect; ``amount`` is its new rounds."""
    DAMAGE = 2
    """Damage this round; ``amount`` in hit points before resistance, of ``damage_type``."""
    ENERGY_DRAIN = 3
    """Energy lost this round; ``amount`` in energy points."""
    EXPIRED = 4
    """Ran out of rounds."""
    REMOVED = 5
    """Ended early: cured, thawed, doused, woken, cancelled or replaced."""


@dataclass(frozen=True, slots=True)
class StatusEffect:
    """One thing a status did (see :class:`StatusChange` for ``amount``'s meaning).

    ``damage_type`` is a ``DAMAGE_TYPES`` name for typed damage, ``""`` for
    untyped damage (nothing resists it) and for every other change.
    """

    kind: StatusKind
    change: StatusChange
    amount: int = 0
    damage_type: str = ""


class Statuses:
    """The statuses on one actor: kind -> remaining rounds, plus a magnitude where the record has one.

    Mutable and owned by its actor; ``rules`` is the shared, read-only data.
    Rounds are >= 1 for every active status (a status at 0 rounds is gone).
    """

    __slots__ = ("_magnitude", "_rounds", "kinds", "rules")

    def __init__(self, rules: StatusRules | None = None) -> None:
        """Start with no statuses; ``rules`` defaults to the shipped ``statuses.toml``."""
        self.rules: StatusRules = default_statuses() if rules is None else rules
        self._rounds: dict[StatusKind, int] = {}
        self._magnitude: dict[StatusKind, int] = {}
        self.kinds: KeysView[StatusKind] = self._rounds.keys()
        """The active statuses' kinds, in no order: a live, read-only view.
        Its truth (any status at all?) is tested without a Python call, which
        ``len()`` of this object needs; the loops over every actor of every
        tick ask that (issue 10)."""

    def __len__(self) -> int:
        return len(self._rounds)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k.name}={r}" for k, r, _ in self.snapshot())
        return f"Statuses({inner})"

    def has(self, kind: StatusKind) -> bool:
        """True while ``kind`` is active."""
        return kind in self._rounds

    def rounds(self, kind: StatusKind) -> int:
        """Remaining rounds of ``kind``; 0 when inactive."""
        return self._rounds.get(kind, 0)

    def magnitude(self, kind: StatusKind) -> int:
        """Magnitude of ``kind`` (poison damage per round, fatigue level); 0 when inactive."""
        return self._magnitude.get(kind, 0)

    def active(self) -> tuple[StatusKind, ...]:
        """The active statuses in ascending ``StatusKind`` order."""
        if not self._rounds:
            return ()
        return tuple(sorted(self._rounds))

    def snapshot(self) -> tuple[tuple[StatusKind, int, int], ...]:
        """``(kind, rounds, magnitude)`` of every active status, in kind order (for views, saves)."""
        if not self._rounds:
            return ()
        return tuple((k, self._rounds[k], self._magnitude.get(k, 0)) for k in self.active())

    def has_flag(self, flag: str) -> bool:
        """True if any active status carries ``flag`` (a ``STATUS_FLAGS`` name)."""
        if not self._rounds:
            return False
        return any(flag in self.rules.statuses[k].flags for k in self._rounds)

    def defs(self) -> Iterable[StatusDef]:
        """The records of the active statuses, in kind order."""
        return (self.rules.statuses[k] for k in self.active())

    def add(
        self, kind: StatusKind, rounds: int, magnitude: int | None = None
    ) -> list[StatusEffect]:
        """Apply ``kind`` for ``rounds`` rounds, following its record's stacking rule.

        Order: an active ``opposite`` is removed and the new status is spent
        (nothing else happens); otherwise active statuses it ``replaces`` are
        removed, then it is applied: a new status gets ``min(rounds,
        max_rounds)``; an active one combines by ``stacking`` ("max": the
        longer, "add": the sum, "keep": unchanged) and its magnitude by
        ``magnitude_stacking`` ("max" or "add"), capped by the record.
        Underhall's decisions (statuses.toml). No random draws.

        Args:
            kind: The status.
            rounds: Rounds to apply; 0 does nothing (e.g. a 0-round disease).
            magnitude: For a status with a magnitude, >= 1 (the record's
                ``default_magnitude`` when None); must be None or 0 otherwise.

        Returns:
            The changes, in order: REMOVED for an opposite or replaced status,
            then APPLIED or EXTENDED (none when re-applying changed nothing).

        Raises:
            ValueError: If rounds is negative or magnitude is out of range.
        """
        sdef = self.rules.statuses[kind]
        if rounds < 0:
            raise ValueError(f"rounds must be >= 0, got {rounds}")
        if sdef.max_magnitude == 0:
            if magnitude not in (None, 0):
                raise ValueError(f"{sdef.key} has no magnitude, got {magnitude}")
            mag = 0
        else:
            mag = sdef.default_magnitude if magnitude is None else magnitude
            if mag < 1:
                raise ValueError(f"magnitude must be >= 1, got {mag}")
        if rounds == 0:
            return []
        events: list[StatusEffect] = []
        if sdef.opposite:
            opposite = StatusKind[sdef.opposite.upper()]
            if self.remove(opposite):
                return [StatusEffect(opposite, StatusChange.REMOVED)]
        for key in sdef.replaces:
            replaced = StatusKind[key.upper()]
            if self.remove(replaced):
                events.append(StatusEffect(replaced, StatusChange.REMOVED))
        old = self._rounds.get(kind, 0)
        if old == 0:
            self._rounds[kind] = min(rounds, sdef.max_rounds)
            if mag:
                self._magnitude[kind] = min(mag, sdef.max_magnitude)
            events.append(StatusEffect(kind, StatusChange.APPLIED, self._rounds[kind]))
            return events
        if sdef.stacking == "keep":
            return events
        new = max(old, rounds) if sdef.stacking == "max" else old + rounds
        new = min(new, sdef.max_rounds)
        old_mag = self._magnitude.get(kind, 0)
        new_mag = old_mag
        if mag:
            new_mag = max(old_mag, mag) if sdef.magnitude_stacking == "max" else old_mag + mag
            new_mag = min(new_mag, sdef.max_magnitude)
            self._magnitude[kind] = new_mag
        self._rounds[kind] = new
        if new != old or new_mag != old_mag:
            events.append(StatusEffect(kind, StatusChange.EXTENDED, new))
        return events

    def impose(self, kind: StatusKind, rounds: int) -> list[StatusEffect]:
        """Set ``kind``'s counter to exactly ``rounds``, past the record's ``max_rounds``.

        For amounts a seed sizes itself (seed 003: a failed sleep save gives a
        sleep value of 350, stuns run to 32 turns and stack to 200); the caller
        has already applied that seed's stacking and caps
        (:func:`server.sim.damage.stack_status`). An active ``opposite`` is
        removed and the new status spent, and statuses it ``replaces`` end,
        as in :meth:`add`. A status with a magnitude gets its default. No draws.

        Returns:
            REMOVED for an opposite or replaced status, then APPLIED or
            EXTENDED (none when the counter is unchanged).

        Raises:
            ValueError: If rounds is negative.
        """
        if rounds < 0:
            raise ValueError(f"rounds must be >= 0, got {rounds}")
        sdef = self.rules.statuses[kind]
        if rounds == 0:
            return []
        if sdef.opposite:
            opposite = StatusKind[sdef.opposite.upper()]
            if self.remove(opposite):
                return [StatusEffect(opposite, StatusChange.REMOVED)]
        events: list[StatusEffect] = []
        for key in sdef.replaces:
            replaced = StatusKind[key.upper()]
            if self.remove(replaced):
                events.append(StatusEffect(replaced, StatusChange.REMOVED))
        old = self._rounds.get(kind, 0)
        self._rounds[kind] = rounds
        if sdef.max_magnitude and kind not in self._magnitude:
            self._magnitude[kind] = sdef.default_magnitude
        if old == 0:
            events.append(StatusEffect(kind, StatusChange.APPLIED, rounds))
        elif rounds != old:
            events.append(StatusEffect(kind, StatusChange.EXTENDED, rounds))
        return events

    def remove(self, kind: StatusKind) -> bool:
        """End ``kind`` at once; True if it was active."""
        self._magnitude.pop(kind, None)
        return self._rounds.pop(kind, None) is not None

    def reduce(self, kind: StatusKind, rounds: int) -> list[StatusEffect]:
        """Take ``rounds`` rounds off ``kind`` (a cure spell removing points, seed 001).

        Returns:
            ``[REMOVED]`` if this ended the status, else ``[]``.

        Raises:
            ValueError: If rounds is negative.
        """
        if rounds < 0:
            raise ValueError(f"rounds must be >= 0, got {rounds}")
        if kind not in self._rounds:
            return []
        left = self._rounds[kind] - rounds
        if left > 0:
            self._rounds[kind] = left
            return []
        self.remove(kind)
        return [StatusEffect(kind, StatusChange.REMOVED)]

    def on_damaged(self) -> list[StatusEffect]:
        """The carrier took damage: end every status flagged ``ends_on_damage`` (asleep).

        Returns:
            REMOVED for each status ended, in kind order.
        """
        ended = [k for k in self.active() if "ends_on_damage" in self.rules.statuses[k].flags]
        for kind in ended:
            self.remove(kind)
        return [StatusEffect(k, StatusChange.REMOVED) for k in ended]

    def tick(self, rng: np.random.Generator) -> list[StatusEffect]:
        """Advance every status by one round.

        For each active status in ascending kind order: its per-round damage
        (``damage_base`` + ``damage_dice`` roll + the magnitude when flagged
        ``magnitude_is_damage``) and energy drain are reported, then its rounds
        drop by one and it expires at 0. A status with ``r`` rounds therefore
        does its damage ``r`` times. The caller applies damage (after
        resistance to ``damage_type``) and drain to the actor.

        Draw order: see the module docstring.

        Args:
            rng: The world's random stream.

        Returns:
            DAMAGE, ENERGY_DRAIN and EXPIRED changes, grouped by kind in
            ascending order (DAMAGE, then ENERGY_DRAIN, then EXPIRED).
        """
        events: list[StatusEffect] = []
        for kind in self.active():
            sdef = self.rules.statuses[kind]
            damage = sdef.damage_base + roll_dice(rng, *sdef.damage_dice)
            if "magnitude_is_damage" in sdef.flags:
                damage += self._magnitude.get(kind, 0)
            if damage > 0:
                events.append(StatusEffect(kind, StatusChange.DAMAGE, damage, sdef.damage_type))
            if sdef.energy_drain > 0:
                events.append(StatusEffect(kind, StatusChange.ENERGY_DRAIN, sdef.energy_drain))
            left = self._rounds[kind] - 1
            if left > 0:
                self._rounds[kind] = left
            else:
                self.remove(kind)
                events.append(StatusEffect(kind, StatusChange.EXPIRED))
        return events


# --- what the statuses allow ----------------------------------------------------------


def can_act(statuses: Statuses) -> bool:
    """False while asleep, paralysed, frozen or webbed (flag ``prevents_action``; seed 001)."""
    return not statuses.kinds or not statuses.has_flag("prevents_action")


def can_melee(statuses: Statuses) -> bool:
    """False when the actor cannot act or is afraid (flag ``prevents_melee``)."""
    return not statuses.kinds or (can_act(statuses) and not statuses.has_flag("prevents_melee"))


def can_cast(statuses: Statuses) -> bool:
    """False when the actor cannot act or is stunned (seed 004: no casting while stunned)."""
    return can_act(statuses) and not statuses.has_flag("prevents_casting")


def spells_fail(statuses: Statuses) -> bool:
    """True while confused (seed 004: confused casting always fails)."""
    return statuses.has_flag("spells_fail")


def casts_any_known(statuses: Statuses) -> bool:
    """True while enlightened (seed 001: cast any known spell, not only the spellbook's)."""
    return statuses.has_flag("casts_any_known")


def is_unseen(statuses: Statuses) -> bool:
    """True while invisible: others cannot see the actor (Underhall wires this to sight)."""
    return statuses.has_flag("unseen")


def hunger_paused(statuses: Statuses) -> bool:
    """True while frozen (seed 001: "Unless you are frozen, your hunger rating will decrease")."""
    return statuses.has_flag("prevents_hunger")


def doubles_hunger(statuses: Statuses) -> bool:
    """True with any of disease, poison, rage, enervation or acid burn (seed 001 hunger)."""
    return statuses.has_flag("doubles_hunger")


def power_bonus(statuses: Statuses) -> int:
    """Power added by active statuses (enraged; Underhall's numbers in statuses.toml)."""
    if not statuses.kinds:  # most actors most of the time: no generator to build
        return 0
    return sum(d.power_bonus for d in statuses.defs())


def defence_bonus(statuses: Statuses) -> int:
    """Defence added by active statuses (stoneskin; Underhall's numbers in statuses.toml)."""
    if not statuses.kinds:
        return 0
    return sum(d.defence_bonus for d in statuses.defs())


def accuracy_factor(statuses: Statuses) -> float:
    """Product of the active statuses' accuracy factors (stunned: 0.75, Underhall's decision)."""
    if not statuses.kinds:
        return 1  # math.prod's empty product, as before
    return math.prod(d.accuracy_factor for d in statuses.defs())


def action_delay(statuses: Statuses, speed: int) -> int:
    """Ticks the next action takes: hasted halves the delay, slowed doubles it.

    ``ceil(speed × product of delay factors)``, at least 1; rounding up is
    Underhall's decision (a speed-3 hasted actor acts every 2 ticks).

    Args:
        statuses: The actor's statuses.
        speed: The actor's normal delay, in ticks per action (>= 1).

    Raises:
        ValueError: If speed < 1.
    """
    if speed < 1:
        raise ValueError(f"speed must be >= 1, got {speed}")
    if not statuses.kinds:
        return speed
    factor = math.prod(d.delay_factor for d in statuses.defs())
    return max(1, math.ceil(speed * factor))


def confused_direction(
    rng: np.random.Generator, intended: tuple[int, int], statuses: Statuses
) -> tuple[int, int]:
    """The direction a move actually takes: confusion may send it anywhere.

    With probability ``p`` (the largest ``random_move_chance`` among the
    active statuses; 0.5 when confused, Underhall's decision) the move goes
    in one of the eight directions chosen uniformly (which may be the
    intended one), so it goes astray with probability ``7p/8``.

    Draw order: nothing when ``p == 0``; else one ``rng.random()``, then, if
    it is below ``p``, one ``rng.integers(0, 8)`` indexing ``DIRECTIONS``.

    Args:
        rng: The world's random stream.
        intended: ``(dx, dy)``, one of ``DIRECTIONS``.
        statuses: The mover's statuses.

    Raises:
        ValueError: If ``intended`` is not one of the eight directions.
    """
    if intended not in DIRECTIONS:
        raise ValueError(f"not a direction: {intended}")
    if not statuses.kinds:  # no status, no chance to stray, no draw
        return intended
    chance = max((d.random_move_chance for d in statuses.defs()), default=0.0)
    if chance <= 0.0 or rng.random() >= chance:
        return intended
    return DIRECTIONS[int(rng.integers(0, len(DIRECTIONS)))]


def regenerates(
    statuses: Statuses, *, attacked_this_turn: bool, missed: bool, nourishment: int
) -> bool:
    """Whether health and energy may regenerate this turn (seed 001).

    Attacking prevents it unless the attack missed; frozen and on fire
    prevent it (flag ``prevents_regeneration``); so does nourishment below
    ``[regeneration] min_nourishment`` (25). Being attacked does not. The
    rates (``health_ticks`` > ``energy_ticks``: energy regenerates faster)
    are in ``statuses.rules.regeneration``.
    """
    if attacked_this_turn and not missed:
        return False
    if statuses.has_flag("prevents_regeneration"):
        return False
    return nourishment >= statuses.rules.regeneration.min_nourishment


# --- elemental shields ----------------------------------------------------------------


def _shield(kind: StatusKind, rules: StatusRules | None) -> StatusDef:
    sdef = (default_statuses() if rules is None else rules).statuses[kind]
    if not sdef.is_shield:
        raise ValueError(f"{sdef.key} is not an elemental shield")
    return sdef


def elemental_shield(statuses: Statuses) -> StatusKind | None:
    """The victim's active elemental shield (the lowest kind if, oddly, several), or None."""
    return next((d.kind for d in statuses.defs() if d.is_shield), None)


def shield_retaliation(
    rng: np.random.Generator, kind: StatusKind, rules: StatusRules | None = None
) -> int:
    """Raw damage an elemental shield deals to a melee attacker (seed 001: 2d4).

    The caller adjusts it for the attacker's resistance to
    :func:`shield_damage_type`. Draw order: one ``roll_dice`` call.

    Raises:
        ValueError: If ``kind`` is not an elemental shield.
    """
    return roll_dice(rng, *_shield(kind, rules).retaliation_dice)


def shield_damage_type(kind: StatusKind, rules: StatusRules | None = None) -> str:
    """Damage type of a shield's retaliation: fire shield "fire", ice shield "cold".

    Raises:
        ValueError: If ``kind`` is not an elemental shield.
    """
    return _shield(kind, rules).damage_type


def shield_touch(attacker: Statuses, shield: StatusKind) -> list[StatusEffect]:
    """A melee attacker touches ``shield``: a fire shield thaws a frozen attacker, an ice
    shield douses a burning one (seed 001).

    Returns:
        ``[REMOVED]`` for the status ended on the attacker, else ``[]``.

    Raises:
        ValueError: If ``shield`` is not an elemental shield.
    """
    removes = StatusKind[_shield(shield, attacker.rules).shield_removes.upper()]
    return [StatusEffect(removes, StatusChange.REMOVED)] if attacker.remove(removes) else []


# --- the freeze and spark spells ------------------------------------------------------


def freeze_inflicts(rng: np.random.Generator, rules: StatusRules | None = None) -> bool:
    """Whether a freeze spell hit freezes its victim (seed 001: a flat 40%).

    Draw order: one ``rng.random()``.
    """
    chance = (default_statuses() if rules is None else rules).freeze.chance
    return bool(rng.random() < chance)


def frozen_rounds(rng: np.random.Generator, rules: StatusRules | None = None) -> int:
    """Rounds a freeze lasts: "up to 6 rounds, ... following a quartic curve" (seed 001).

    Underhall's curve: ``1 + floor(6 × u⁴)`` with ``u`` uniform on [0, 1), so
    the result is 1..6 with ``P(rounds <= k) = (k / 6) ** (1 / 4)``: about
    64% one round, 4.5% the full six. (6 and 4 are ``[freeze] max_rounds``
    and ``exponent``.)

    Draw order: one ``rng.random()``.
    """
    freeze = (default_statuses() if rules is None else rules).freeze
    u = float(rng.random())
    return min(freeze.max_rounds, 1 + math.floor(freeze.max_rounds * u**freeze.exponent))


def spark_burn_rounds(damage: int, rules: StatusRules | None = None) -> int:
    """Rounds on fire after a spark hit dealing ``damage`` (after resistance).

    Seed 001: on fire "whenever the damage dealt exceeds 20 ... lasting for a
    number of rounds equal to 1/6 the damage" (rounded down). No draws.

    Returns:
        ``damage // 6`` when ``damage > 20``, else 0.
    """
    spark = (default_statuses() if rules is None else rules).spark
    return damage // spark.rounds_divisor if damage > spark.threshold else 0
