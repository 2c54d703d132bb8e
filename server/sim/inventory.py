"""Pack and equipment commands: pick up, drop, wield, wear, take off.

Each handler checks the command against the actor's pack and returns a
:class:`RejectReason` when it cannot be carried out (nothing changes then), or
None after changing the world and appending its events. Equipment stays in
the pack under its letter (as in NetHack: "being worn", "weapon in hand");
``actor.equipment`` maps a slot to the item filling it, and ``actor.bonus``
(seed 001: equipped power, defence and resistances apply to the wearer) is
recomputed whenever it changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from server.content import Content
from server.sim import floors
from server.sim.actors import Actor
from server.sim.events import Dropped, Equipped, Event, PickedUp, RejectReason
from server.sim.items import (
    STACKING,
    Item,
    add_to_pack,
    equipment_bonus,
    find,
    new_item,
    take_from_pack,
)

if TYPE_CHECKING:
    from server.sim.world import World

WEARABLE_SLOTS = frozenset({"body", "cloak", "shield", "head", "hands", "feet", "book"})
"""Slots filled by ``Wear`` (the weapon slot is filled by ``Wield``)."""


def refresh_bonus(actor: Actor, content: Content) -> None:
    """Recompute ``actor.bonus`` from its equipment."""
    actor.bonus = equipment_bonus(actor.equipment, content)


def outfit(actor: Actor, keys: tuple[str, ...], content: Content, rng: np.random.Generator) -> None:
    """Give a new character its class's starting items and put on what it can.

    Draw order: :func:`server.sim.items.new_item` for each key, in order. The
    first weapon is wielded and one item per other slot is worn. Starting
    items are never cursed, whatever their kind says.
    """
    for key in keys:
        item = new_item(content.items[key], rng)
        item.cursed = False
        item.known = True
        held = add_to_pack(actor.inventory, item, content)
        if held is None:
            continue
        slot = content.items[key].slot
        if slot is not None and slot not in actor.equipment:
            actor.equipment[slot] = held
    refresh_bonus(actor, content)


def settle_letters(actor: Actor, content: Content) -> None:
    """Give letters to pack items that have none (records saved before letters)."""
    loose = [i for i in actor.inventory if not i.letter]
    if not loose:
        return
    actor.inventory = [i for i in actor.inventory if i.letter]
    for item in loose:
        add_to_pack(actor.inventory, item, content)
    refresh_bonus(actor, content)


def pick_up(world: World, actor: Actor, events: list[Event]) -> RejectReason | None:
    """Pick up the top item (the whole stack) of the actor's cell."""
    level = world.levels[actor.depth]
    pile = level.items.get((actor.x, actor.y))
    if not pile:
        return RejectReason.NOTHING_HERE
    item = pile[-1]
    if add_to_pack(actor.inventory, item, world.content) is None:
        return RejectReason.PACK_FULL
    pile.pop()
    if not pile:
        del level.items[(actor.x, actor.y)]
    events.append(PickedUp(actor.depth, actor.x, actor.y, actor.id, item.key))
    return None


def drop(world: World, actor: Actor, letter: str, events: list[Event]) -> RejectReason | None:
    """Drop the stack ``letter``; equipped items are taken off first unless cursed."""
    item = find(actor.inventory, letter)
    if item is None:
        return RejectReason.NO_ITEM
    slot = _slot_of(actor, item)
    if slot is not None:
        if item.cursed:
            return RejectReason.CURSED
        del actor.equipment[slot]
        refresh_bonus(actor, world.content)
    dropped = take_from_pack(actor.inventory, item, item.count)
    place_item(world, actor.depth, actor.x, actor.y, dropped)
    events.append(Dropped(actor.depth, actor.x, actor.y, actor.id, dropped.key))
    return None


def place_item(world: World, depth: int, x: int, y: int, item: Item) -> None:
    """Put ``item`` on top of the pile at ``(x, y)``, merging a like top stack;
    a floor past :data:`~server.sim.floors.FLOOR_STACKS` stacks is swept
    (:func:`~server.sim.floors.sweep`)."""
    item.letter = ""
    level = world.levels[depth]
    pile = level.items.setdefault((x, y), [])
    if pile and pile[-1].alike(item) and world.content.items[item.key].category in STACKING:
        pile[-1].count += item.count
        return
    pile.append(item)
    floors.sweep(level, world.content, x, y)


def wield(world: World, actor: Actor, letter: str, events: list[Event]) -> RejectReason | None:
    """Wield weapon ``letter`` in place of the current one (a cursed one stays)."""
    item = find(actor.inventory, letter)
    if item is None:
        return RejectReason.NO_ITEM
    if world.content.items[item.key].slot != "weapon":
        return RejectReason.WRONG_ITEM
    return _put_on(world, actor, item, "weapon", events)


def wear(world: World, actor: Actor, letter: str, events: list[Event]) -> RejectReason | None:
    """Wear armour, robe, shield, helmet, gloves, boots, or equip a spellbook."""
    item = find(actor.inventory, letter)
    if item is None:
        return RejectReason.NO_ITEM
    slot = world.content.items[item.key].slot
    if slot not in WEARABLE_SLOTS:
        return RejectReason.WRONG_ITEM
    assert slot is not None
    return _put_on(world, actor, item, slot, events)


def take_off(world: World, actor: Actor, letter: str, events: list[Event]) -> RejectReason | None:
    """Take off or unwield the equipped item ``letter``; a cursed one sticks."""
    item = find(actor.inventory, letter)
    if item is None:
        return RejectReason.NO_ITEM
    slot = _slot_of(actor, item)
    if slot is None:
        return RejectReason.WRONG_ITEM
    if item.cursed:
        item.known = True
        return RejectReason.CURSED
    del actor.equipment[slot]
    refresh_bonus(actor, world.content)
    events.append(Equipped(actor.id, item.letter, item.key, slot, False))
    return None


def _put_on(
    world: World, actor: Actor, item: Item, slot: str, events: list[Event]
) -> RejectReason | None:
    current = actor.equipment.get(slot)
    if current is item:
        return None
    if current is not None and current.cursed:
        current.known = True
        return RejectReason.CURSED
    if item.count > 1:
        # Wield one of a stack (daggers): it gets its own letter.
        single = item.split(1)
        held = add_to_pack(actor.inventory, single, world.content)
        if held is None or held is item:
            item.count += 1
            return RejectReason.PACK_FULL
        item = held
    actor.equipment[slot] = item
    refresh_bonus(actor, world.content)
    if current is not None:
        events.append(Equipped(actor.id, current.letter, current.key, slot, False))
    events.append(Equipped(actor.id, item.letter, item.key, slot, True))
    return None


def _slot_of(actor: Actor, item: Item) -> str | None:
    for slot, held in actor.equipment.items():
        if held is item:
            return slot
    return None


def unequip_lost(actor: Actor, item: Item, content: Content) -> None:
    """Forget ``item`` as equipment once it left the pack (thrown, used up)."""
    slot = _slot_of(actor, item)
    if slot is not None and (item.count <= 0 or item not in actor.inventory):
        del actor.equipment[slot]
        refresh_bonus(actor, content)
