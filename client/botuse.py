"""What a bot does with its pack and its spells: pure choices, no I/O.

:func:`item_use` picks the next pack item to eat, read, quaff or wear;
:func:`self_spell` and :func:`spell_shot` pick a spell to cast on oneself or
at a monster. They read a model's typed readers (:class:`UseModel`, in play a
:class:`client.model.GameModel`) and never decide what the server decides:
an item or spell the server refuses is only tried again once the pack or the
situation changed (the caller keeps the ``tried`` set and the ``reach`` map).
:mod:`client.botpolicy` calls them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from client.aim import bolt_path
from client.records import InvItem, KnownSpell

HUNGRY_BELOW = 150
"""Nourishment below which a bot eats (the server's ``hungry`` mark, docs/rules.md)."""

HEAL_BELOW = 0.5
"""Share of max hp below which a bot casts a healing spell on itself."""

MAX_FAIL_PCT = 80
"""A bot does not cast a spell whose failure chance (percent) is above this."""

SPELL_REACH = 8
"""Chebyshev distance (cells) at which a bot first tries a spell aimed at a
monster; a ``no_target`` refusal shortens it for that spell (the caller's
``reach`` map)."""

NOT_AT_MONSTERS = frozenset({"dig"})
"""Spell keys aimed at a cell or direction that a bot never casts at a monster."""

SELF_SCHOOLS_IN_FIGHT = frozenset({"clerical", "escape", "enchantment"})
"""Schools of self-aimed spells (buffs) a bot casts when a monster is in view."""

UsedMark = tuple[str, str, str, int]
"""``(verb, letter, item key, count)``: one use tried; the same use of the same
stack is not tried again until the stack changes."""

Cell = tuple[int, int]


class Placed(Protocol):
    """An actor record's id and cell, as the spell choice reads it."""

    @property
    def id(self) -> int: ...
    @property
    def x(self) -> int: ...
    @property
    def y(self) -> int: ...


class UseModel(Protocol):
    """What these choices read of a :class:`client.model.GameModel`."""

    @property
    def me(self) -> Mapping[str, Any]: ...
    def inventory(self) -> list[InvItem]: ...
    def item_entry(self, key: str) -> tuple[str, str, str, str, dict[str, Any]]: ...
    def known_spells(self) -> list[KnownSpell]: ...
    def food(self) -> tuple[int, int] | None: ...


@dataclass(frozen=True, slots=True)
class Use:
    """An item use: the command ``c`` (``eat``, ``read``, ``quaff``, ``wear``)
    on pack letter ``item``, and the mark that keeps it from being retried."""

    c: str
    item: str
    mark: UsedMark


@dataclass(frozen=True, slots=True)
class Cast:
    """A spell to cast: its key, a direction ``d`` or cell ``at`` (at most one)
    and the Chebyshev distance of its target (0 for oneself)."""

    spell: str
    d: Cell | None = None
    at: Cell | None = None
    dist: int = 0


def book_worn(inventory: Iterable[InvItem]) -> bool:
    """Whether a spellbook is equipped (casting needs one, docs/rules.md)."""
    return any(item.slot == "book" for item in inventory)


def is_healing(key: str) -> bool:
    """Whether an item key names a healing potion (its label says so)."""
    return "heal" in key


def healing_potion(model: UseModel, tried: set[UsedMark]) -> Use | None:
    """The first healing potion in the pack whose quaff is not in ``tried``."""
    for item in model.inventory():
        if model.item_entry(item.key)[3] == "potion" and is_healing(item.key):
            mark = ("quaff", item.letter, item.key, item.count)
            if mark not in tried:
                return Use("quaff", item.letter, mark)
    return None


def item_use(model: UseModel, tried: set[UsedMark]) -> Use | None:
    """The next item to use, in pack order, skipping uses already in ``tried``.

    Eats food while nourishment is below :data:`HUNGRY_BELOW`; wears a
    spellbook when none is worn; reads scrolls and spellbooks (a book is
    kept after reading, so the mark stops a second reading); quaffs potions,
    healing ones (:func:`is_healing`, kept for a fight) only below
    :data:`HEAL_BELOW` of max hp.
    """
    hp, max_hp = model.me.get("hp", 0), model.me.get("max_hp", 0)
    hurt = isinstance(hp, int) and isinstance(max_hp, int) and hp < HEAL_BELOW * max_hp
    inventory = model.inventory()
    food = model.food()
    hungry = food is not None and food[0] < HUNGRY_BELOW
    has_book = book_worn(inventory)
    for item in inventory:
        category = model.item_entry(item.key)[3]
        verbs: list[str] = []
        if category == "food" and hungry:
            verbs.append("eat")
        elif category == "spellbook":
            if not has_book and item.slot == "":
                verbs.append("wear")
            verbs.append("read")
        elif category == "scroll":
            verbs.append("read")
        elif category == "potion" and (hurt or not is_healing(item.key)):
            verbs.append("quaff")
        for verb in verbs:
            mark = (verb, item.letter, item.key, item.count)
            if mark not in tried:
                return Use(verb, item.letter, mark)
    return None


def castable(model: UseModel) -> list[KnownSpell]:
    """Known spells the bot may try now: a book worn, not forgotten, enough
    energy, failure chance at most :data:`MAX_FAIL_PCT`; in ``me.spells`` order."""
    if not book_worn(model.inventory()):
        return []
    en = model.me.get("en", 0)
    energy = en if isinstance(en, int) else 0
    return [
        s
        for s in model.known_spells()
        if not s.forgotten and s.energy_cost <= energy and s.fail_pct <= MAX_FAIL_PCT
    ]


def self_spell(model: UseModel, spells: list[KnownSpell], in_fight: bool) -> Cast | None:
    """A self-aimed spell worth casting: a healing one below :data:`HEAL_BELOW`
    of max hp, else (with a monster in view) a buff of
    :data:`SELF_SCHOOLS_IN_FIGHT`; the first such spell known."""
    hp, max_hp = model.me.get("hp", 0), model.me.get("max_hp", 0)
    hurt = isinstance(hp, int) and isinstance(max_hp, int) and hp < HEAL_BELOW * max_hp
    for s in spells:
        if s.aim != "self":
            continue
        if (s.school == "healing" and hurt) or (in_fight and s.school in SELF_SCHOOLS_IN_FIGHT):
            return Cast(s.key)
    return None


def spell_shots(
    pos: Cell,
    spells: list[KnownSpell],
    monsters: Iterable[Placed],
    blocked: NDArray[np.bool_],
    reach: Mapping[str, int],
) -> list[Cast]:
    """Every spell cast at a monster that the bot may try from ``pos``.

    A ``"dir"`` spell needs the monster on one of the eight lines with no
    blocked cell (``bool[H, W]``, ``[y, x]``) and no other monster before it;
    a ``"cell"`` spell needs the monster in view (it is, being listed). Both
    need it within the spell's reach (``reach``, default
    :data:`SPELL_REACH`); a cell spell is not aimed at an adjacent monster
    unless its reach is 1 or 2 (a ball would catch the caster). Spells in
    ``me.spells`` order, then targets nearest first, then lowest id.
    """
    ordered = sorted(monsters, key=lambda a: (max(abs(a.x - pos[0]), abs(a.y - pos[1])), a.id))
    cells = {(a.x, a.y) for a in ordered}
    out: list[Cast] = []
    for s in spells:
        if s.aim == "self" or s.key in NOT_AT_MONSTERS:
            continue
        far = reach.get(s.key, SPELL_REACH)
        for a in ordered:
            dist = max(abs(a.x - pos[0]), abs(a.y - pos[1]))
            if dist > far:
                break
            if s.aim == "cell":
                if dist >= 2 or far <= 2:
                    out.append(Cast(s.key, at=(a.x, a.y), dist=dist))
                    break
                continue
            d = straight_direction(pos, (a.x, a.y))
            if d is None:
                continue
            path = bolt_path(pos, (a.x, a.y), blocked)
            if path and path[-1] == (a.x, a.y) and not any(c in cells for c in path[:-1]):
                out.append(Cast(s.key, d=d, dist=dist))
                break
    return out


def straight_direction(pos: Cell, cell: Cell) -> Cell | None:
    """The direction from ``pos`` to ``cell`` if it lies on one of the eight lines."""
    dx, dy = cell[0] - pos[0], cell[1] - pos[1]
    if (dx, dy) == (0, 0) or not (dx == 0 or dy == 0 or abs(dx) == abs(dy)):
        return None
    return ((dx > 0) - (dx < 0), (dy > 0) - (dy < 0))
