"""Using things up: eating, quaffing, reading, potions shattering on someone,
and the reward chosen every fifth level.

Sources: seed 001 (nourishment and hunger rating when eating; spells learned
from scrolls and potions; the fifth-level choice of a boost or a special
ability), seed 003 (a harmful potion's damage type), NetHack for the classic
potion and scroll effects seed 001 names without numbers (healing, energy,
cures, confusion, enlightenment, remove curse, enchantment, teleportation,
magic mapping); the numbers are in ``items.toml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from server.content import ItemDef
from server.content.spells import default_spells
from server.content.statuses import StatusKind
from server.sim import casting, hunger
from server.sim.actors import Actor
from server.sim.combat import roll_dice
from server.sim.events import Event, Notice, RejectReason, Used
from server.sim.inventory import unequip_lost
from server.sim.items import Item, find, take_from_pack
from server.sim.status import StatusEffect

if TYPE_CHECKING:
    from server.sim.world import World

CONFUSE_ROUNDS: Final = (2, 6)
"""Dice of the rounds a potion of confusion confuses for (Underhall's decision)."""
ENLIGHTEN_ROUNDS: Final = 100
"""Rounds of enlightenment from its potion (seed 001: cast any known spell while it lasts)."""
AVATAR_ROUNDS: Final = 500
"""Rounds of the avatar status from its potion (Underhall's number; seed 001 names the
status only in its death rule)."""
POTION_STATUSES: Final = {
    "confuse": StatusKind.CONFUSED,
    "enlighten": StatusKind.ENLIGHTENED,
    "avatar": StatusKind.AVATAR,
}
"""The status each potion effect gives its drinker (:func:`potion_effect`)."""
MAP_RADIUS: Final = 30
"""Cells around the reader that a scroll of magic mapping reveals."""
BOOSTS: Final = {"health": 5, "energy": 5, "power": 1, "defence": 1}
"""What each plain fifth-level boost adds (Underhall's decision; seed 001 gives none)."""


def _take(
    world: World, actor: Actor, letter: str, categories: tuple[str, ...]
) -> tuple[Item, ItemDef] | RejectReason:
    item = find(actor.inventory, letter)
    if item is None:
        return RejectReason.NO_ITEM
    idef = world.content.items[item.key]
    if idef.category not in categories:
        return RejectReason.WRONG_ITEM
    return item, idef


def _use_up(world: World, actor: Actor, item: Item) -> None:
    take_from_pack(actor.inventory, item, 1)
    unequip_lost(actor, item, world.content)


def eat(world: World, actor: Actor, letter: str, events: list[Event]) -> RejectReason | None:
    """Eat food ``letter`` (seed 001): nourishment up, hunger rating set; a
    full bar (500) refuses. Draw order: :func:`server.sim.hunger.eat`."""
    found = _take(world, actor, letter, ("food",))
    if isinstance(found, RejectReason):
        return found
    item, idef = found
    if not hunger.can_eat(actor.food, world.status_rules.hunger):
        return RejectReason.FULL
    _use_up(world, actor, item)
    events.append(Used(actor.depth, actor.x, actor.y, actor.id, "eat", item.key))
    result = hunger.eat(
        world.rng,
        actor.food,
        nutrition=idef.nutrition,
        vegetarian=idef.vegetarian,
        is_monk=actor.cls == "monk",
        rules=world.status_rules.hunger,
    )
    if result.disease_rounds:
        world.add_status(actor, StatusKind.DISEASED, result.disease_rounds, events)
    return None


def quaff(world: World, actor: Actor, letter: str, events: list[Event]) -> RejectReason | None:
    """Drink potion ``letter``: its effect on the drinker."""
    found = _take(world, actor, letter, ("potion",))
    if isinstance(found, RejectReason):
        return found
    item, idef = found
    _use_up(world, actor, item)
    events.append(Used(actor.depth, actor.x, actor.y, actor.id, "quaff", item.key))
    potion_effect(world, actor, idef, actor, events)
    return None


def potion_effect(
    world: World, target: Actor, idef: ItemDef, source: Actor | None, events: list[Event]
) -> None:
    """What a potion does to ``target``, drunk or shattered on it (seed 001:
    a fragile potion's effect on whoever it hits). Draws: the potion's dice."""
    effect = idef.effect
    dice = idef.dice or (0, 0)
    if effect == "heal":
        target.hp = min(target.max_hp, target.hp + roll_dice(world.rng, *dice))
    elif effect == "energy":
        target.en = min(target.max_en, target.en + roll_dice(world.rng, *dice))
    elif effect == "cure_poison":
        world.report_status(target, _remove(target, StatusKind.POISONED), events)
    elif effect == "cure_disease":
        world.report_status(target, _remove(target, StatusKind.DISEASED), events)
    elif effect == "harm":
        world.harm_typed(
            target, roll_dice(world.rng, *dice), idef.damage_type, source, "potion", events
        )
    elif effect in POTION_STATUSES:
        rounds = {"avatar": AVATAR_ROUNDS, "enlighten": ENLIGHTEN_ROUNDS}.get(effect)
        if rounds is None:
            rounds = roll_dice(world.rng, *CONFUSE_ROUNDS)
        world.add_status(target, POTION_STATUSES[effect], rounds, events)
    elif effect == "learn_spell" and idef.spell is not None:
        if target.is_player:
            casting.learn(world, target, idef.spell, events)
        spell = default_spells().spells.get(idef.spell)
        if spell is not None and spell.targeting == "self":
            casting.apply_spell(world, target, spell, None, None, events)
    elif effect == "splash" and idef.damage_type is not None:
        world.harm_typed(
            target, roll_dice(world.rng, *dice), idef.damage_type, source, "potion", events
        )


def _remove(actor: Actor, kind: StatusKind) -> list[StatusEffect]:
    rounds = actor.statuses.rounds(kind)
    return actor.statuses.reduce(kind, rounds) if rounds else []


def read(world: World, actor: Actor, letter: str, events: list[Event]) -> RejectReason | None:
    """Read scroll ``letter`` (used up), or a spellbook (kept: it teaches its spell)."""
    found = _take(world, actor, letter, ("scroll", "spellbook"))
    if isinstance(found, RejectReason):
        return found
    item, idef = found
    if idef.category == "spellbook":
        if idef.spell is None or not casting.learn(world, actor, idef.spell, events):
            events.append(Notice(actor.id, "nothing_happens", (item.key,)))
        events.append(Used(actor.depth, actor.x, actor.y, actor.id, "read", item.key))
        return None
    _use_up(world, actor, item)
    events.append(Used(actor.depth, actor.x, actor.y, actor.id, "read", item.key))
    effect = idef.effect
    if effect == "learn_spell" and idef.spell is not None:
        casting.learn(world, actor, idef.spell, events)
        spell = default_spells().spells.get(idef.spell)
        if spell is not None and spell.targeting in ("self", "item"):
            casting.apply_spell(world, actor, spell, None, None, events)
    elif effect == "remove_curse":
        spell = default_spells().spells["remove_curse"]
        casting.apply_spell(world, actor, spell, None, None, events)
    elif effect in ("enchant", "enchant_armour"):
        slots = (
            ("weapon",)
            if effect == "enchant"
            else ("body", "cloak", "shield", "head", "hands", "feet")
        )
        target = next((actor.equipment[s] for s in slots if s in actor.equipment), None)
        if target is None:
            events.append(Notice(actor.id, "nothing_happens", (item.key,)))
        else:
            target.plus += 1
            target.cursed = False
            world.refresh_bonus(actor)
            events.append(Notice(actor.id, "enchanted", (target.letter,)))
    elif effect == "teleport":
        world.teleport_random(actor)
    elif effect == "map":
        world.reveal_map(actor, MAP_RADIUS)
    elif effect == "burst" and idef.damage_type is not None and idef.dice is not None:
        burst(world, actor, idef.damage_type, idef.dice, events)
    return None


def burst(
    world: World, actor: Actor, damage_type: str, dice: tuple[int, int], events: list[Event]
) -> None:
    """Every other creature ``actor`` sees takes ``dice`` of ``damage_type``
    (Angband's line-of-sight effects: banishment, dispels, turning). No hit
    roll: the effect reaches whatever is in view. Draws: per creature in id
    order, the dice, then the damage-type draws."""
    seen = sorted(world.sees.get(actor.id, ()))
    for aid in seen:
        victim = world.actors.get(aid)
        if victim is None or victim is actor or not victim.alive or victim.depth != actor.depth:
            continue
        world.harm_typed(victim, roll_dice(world.rng, *dice), damage_type, actor, "spell", events)


def choose(world: World, actor: Actor, option: str, events: list[Event]) -> RejectReason | None:
    """Take a fifth-level reward (seed 001): a boost, a resistance, or an ability."""
    if actor.choices_owed <= 0 or option not in casting.choice_options(actor, world.content):
        return RejectReason.NO_CHOICE
    actor.choices_owed -= 1
    if option in BOOSTS:
        amount = BOOSTS[option]
        if option == "health":
            actor.max_hp += amount
            actor.hp += amount
        elif option == "energy":
            actor.max_en += amount
            actor.en += amount
        elif option == "power":
            actor.power += amount
        else:
            actor.defence += amount
    elif option.startswith("resist_"):
        dtype = option.removeprefix("resist_")
        actor.resist[dtype] = min(3, actor.resist.get(dtype, 0) + 1)
    else:
        actor.abilities.add(option)
    events.append(Notice(actor.id, "choice", (option,)))
    return None
