"""Items in play: instances on the floor and in packs, stacks, letters and equipment.

An :class:`Item` is one object (or one stack of identical objects) of a kind
from ``items.toml`` (:class:`server.content.ItemDef`). Kinds carry the seed-001
attributes (power, defence, resistances, enchantment, nutrition, throwing
range, fragile, vegetarian, rust-/acid-proof, cursed/blessed, metallic,
weight); an instance adds what varies between two objects of one kind: the
charges of a wand or horn, whether the kind is known (a wand identifies itself
when zapped by someone who can see, seed 000), and its pack letter.

Letters follow the classic roguelike rule: an item keeps the letter it got when
it entered the pack (``a``–``z`` then ``A``–``Z``, the first free one), so a
player's fingers learn them. Items that are alike stack under one letter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from server.content import Content, ItemDef
from server.content.schema import RESIST_MAX, RESIST_MIN

LETTERS: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
"""Pack letters in the order they are handed out."""
PACK_LIMIT: Final = len(LETTERS)
"""Distinct stacks a pack holds (one per letter)."""
STACKING: Final = frozenset({"food", "potion", "scroll", "thrown"})
"""Categories whose identical objects share one letter (NetHack's merging)."""


@dataclass(slots=True, eq=False)
class Item:
    """One object, or a stack of ``count`` identical ones.

    Attributes:
        key: The kind (an ``items.toml`` key).
        count: Objects in this stack (>= 1).
        charges: Charges left for a wand or horn, else None.
        cursed: Cursed (seed 001: cursed throws cost 8 energy and use the
            negative rating; cursed equipment cannot be taken off).
        blessed: Blessed (a blessed enchantment hurts undead more, seed 001).
        known: The kind has been identified by its owner (wands on zapping).
        letter: Pack letter while in a pack, ``""`` on the floor.
        plus: Enchantment from scrolls: added to a weapon's power or an
            armour's defence while equipped.
    """

    key: str
    count: int = 1
    charges: int | None = None
    cursed: bool = False
    blessed: bool = False
    known: bool = False
    letter: str = ""
    plus: int = 0

    def alike(self, other: Item) -> bool:
        """Whether ``other`` may merge into this stack (same kind and state)."""
        return (
            self.key == other.key
            and self.charges is None
            and other.charges is None
            and self.cursed == other.cursed
            and self.blessed == other.blessed
            and self.plus == other.plus
        )

    def split(self, count: int = 1) -> Item:
        """Take ``count`` objects off this stack as a new floor item.

        Raises:
            ValueError: If ``count`` is not in ``1..self.count``.
        """
        if not 1 <= count <= self.count:
            raise ValueError(f"cannot split {count} from a stack of {self.count}")
        self.count -= count
        return Item(
            self.key, count, self.charges, self.cursed, self.blessed, self.known, "", self.plus
        )

    def to_record(self) -> list[Any]:
        """Plain data for the store: ``[key, count, charges, cursed, blessed, known, letter, plus]``."""
        return [
            self.key,
            self.count,
            self.charges,
            self.cursed,
            self.blessed,
            self.known,
            self.letter,
            self.plus,
        ]

    @classmethod
    def from_record(cls, record: Any) -> Item:
        """Rebuild an item saved by :meth:`to_record`; a bare key string (the
        form saved before items had state) gives a plain item of that kind.

        Raises:
            TypeError, ValueError: If the record is malformed.
        """
        if isinstance(record, str):
            return cls(record)
        key, count, charges, cursed, blessed, known, letter, *rest = record
        return cls(
            str(key),
            int(count),
            None if charges is None else int(charges),
            bool(cursed),
            bool(blessed),
            bool(known),
            str(letter),
            int(rest[0]) if rest else 0,
        )


def new_item(idef: ItemDef, rng: np.random.Generator | None = None, count: int = 1) -> Item:
    """Make a fresh item of kind ``idef``.

    Draw order: one ``rng.integers(lo, hi + 1)`` for the charges of a wand or
    horn (the top of the range when ``rng`` is None); nothing otherwise.
    """
    charges = None
    if idef.charges is not None:
        lo, hi = idef.charges
        charges = hi if rng is None else int(rng.integers(lo, hi + 1))
    return Item(idef.key, count, charges, idef.cursed, idef.blessed)


def find(pack: list[Item], letter: str) -> Item | None:
    """The stack with ``letter`` in ``pack``, or None."""
    for item in pack:
        if item.letter == letter:
            return item
    return None


def add_to_pack(pack: list[Item], item: Item, content: Content) -> Item | None:
    """Put ``item`` into ``pack``, merging it into a like stack when its kind stacks.

    Returns:
        The stack now holding it, or None if the pack has no free letter
        (nothing changes then).
    """
    if content.items[item.key].category in STACKING:
        for held in pack:
            if held.alike(item):
                held.count += item.count
                held.known = held.known or item.known
                return held
    used = {held.letter for held in pack}
    free = next((c for c in LETTERS if c not in used), None)
    if free is None:
        return None
    item.letter = free
    pack.append(item)
    pack.sort(key=lambda i: LETTERS.index(i.letter))
    return item


def take_from_pack(pack: list[Item], item: Item, count: int = 1) -> Item:
    """Remove ``count`` objects of the stack ``item`` from ``pack``; return them.

    Raises:
        ValueError: If the stack holds fewer than ``count``.
    """
    if count >= item.count:
        if count > item.count:
            raise ValueError(f"stack holds {item.count}, asked for {count}")
        pack.remove(item)
        item.letter = ""
        return item
    return item.split(count)


@dataclass(frozen=True, slots=True)
class Bonus:
    """What a set of worn and wielded items adds to their wearer (seed 001:
    "an item's power, defence, and resistance bonuses (and penalties) are
    automatically applied to you").

    Attributes:
        power: Added to the wearer's power (die size of its damage roll).
        defence: Added to the wearer's defence.
        resist: Resistance levels added by damage type.
        accuracy: Factor on the wearer's accuracy (the wielded weapon's, seed 002).
        required_strength: Strength the wielded weapon needs (0 = none, seed 002).
        enchant: Damage type of the wielded weapon's enchantment, or None.
        enchant_power: The wielded weapon's own power (its enchantment roll is
            1..ceil(power / 2), seed 001).
        blessed_weapon: The wielded weapon is blessed.
        metal_suit, metal_helm, metal_gloves, metal_boots, robe: Worn armour,
            for the spell-success penalty (seed 004).
        shield: ``"none"``, ``"small"`` or ``"large"``.
        book: Key of the equipped spellbook, or None.
        two_hands_busy: A cursed weapon and a cursed shield are both held, so
            no hand is free to cast (seed 004: "you cannot cast if there are
            cursed weapons or shields in both hands").
        hunger_drain: The wielded weapon drains hunger (seed 001: it triples
            the hunger rate).
    """

    power: int = 0
    defence: int = 0
    resist: dict[str, int] = field(default_factory=dict)
    accuracy: float = 1.0
    required_strength: int = 0
    enchant: str | None = None
    enchant_power: int = 0
    blessed_weapon: bool = False
    metal_suit: bool = False
    metal_helm: bool = False
    metal_gloves: bool = False
    metal_boots: bool = False
    robe: bool = False
    shield: str = "none"
    book: str | None = None
    two_hands_busy: bool = False
    hunger_drain: bool = False


def equipment_bonus(equipment: dict[str, Item], content: Content) -> Bonus:
    """Sum up what the items in ``equipment`` (slot -> item) give their wearer."""
    power = defence = required = 0
    resist: dict[str, int] = {}
    accuracy = 1.0
    enchant: str | None = None
    enchant_power = 0
    blessed_weapon = False
    hunger_drain = False
    flags = {
        "metal_suit": False,
        "metal_helm": False,
        "metal_gloves": False,
        "metal_boots": False,
        "robe": False,
    }
    shield = "none"
    book = None
    for slot, item in sorted(equipment.items()):
        idef = content.items[item.key]
        if slot != "book":
            power += (idef.power or 0) + (item.plus if slot == "weapon" else 0)
            defence += idef.defence + (item.plus if slot != "weapon" else 0)
            for dtype, level in idef.resist.items():
                resist[dtype] = resist.get(dtype, 0) + level
        if slot == "weapon":
            accuracy = idef.accuracy
            required = idef.required_strength
            enchant = idef.enchant
            enchant_power = max(idef.power or 0, 0)
            blessed_weapon = item.blessed
            hunger_drain = idef.hunger_drain
        elif slot == "body":
            flags["metal_suit"] = idef.metallic
        elif slot == "head":
            flags["metal_helm"] = idef.metallic
        elif slot == "hands":
            flags["metal_gloves"] = idef.metallic
        elif slot == "feet":
            flags["metal_boots"] = idef.metallic
        elif slot == "cloak":
            flags["robe"] = idef.category == "robe"
        elif slot == "shield":
            shield = idef.shield_size or "small"
        elif slot == "book":
            book = idef.key
    return Bonus(
        power=power,
        defence=defence,
        resist=resist,
        accuracy=accuracy,
        required_strength=required,
        enchant=enchant,
        enchant_power=enchant_power,
        blessed_weapon=blessed_weapon,
        shield=shield,
        book=book,
        hunger_drain=hunger_drain,
        two_hands_busy=all(
            slot in equipment and equipment[slot].cursed for slot in ("weapon", "shield")
        ),
        **flags,
    )


def clamp_resist(level: int) -> int:
    """Clamp a summed resistance level into ``RESIST_MIN..RESIST_MAX``."""
    return max(RESIST_MIN, min(RESIST_MAX, level))
