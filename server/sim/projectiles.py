"""Projectiles in flight: thrown items and bolts, moving a few cells per tick.

A projectile is a simulation object (RULES.md: thrown items and bolts follow
seed 002's Cell(i) path, :func:`server.sim.ballistics.bolt_path`). It is
launched during its owner's action and then advances :attr:`Projectile.speed`
cells at the end of every tick (step 4 of :meth:`World.step`), so players see
it fly and anyone who steps into its path is hit mid-flight.

In each cell it enters, a creature standing there (other than its owner on
the first cell) faces the projectile's hit: a thrown item uses seed 001's
miss chance (:func:`server.sim.throwing.resolve_throw`), a bolt the seed-002
magic hit test. A hit ends the flight; a miss flies on and may hit the next
creature behind "with the same chances" (seed 001). At the end of its path a
thrown item lands in the last cell (a fragile one shatters there, seed 001);
a bolt fades.

Draw order per creature met: as :func:`resolve_throw` documents (thrown) or
:func:`server.sim.combat.roll_hit` (bolt, 2 floats) then the bolt's damage
and effect draws (:mod:`server.sim.casting`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from server.sim import upkeep
from server.sim.actors import Actor
from server.sim.ballistics import bolt_path
from server.sim.combat import AttackOutcome
from server.sim.events import Event, Flew, Harmed, Landed, RejectReason, Thrown
from server.sim.inventory import unequip_lost
from server.sim.items import Item, find, take_from_pack
from server.sim.throwing import resolve_throw, throw_energy_cost, throw_range

if TYPE_CHECKING:
    from server.sim.world import World

THROW_SPEED: Final = 2
"""Cells a thrown item flies per tick (a 4-cell throw is in the air for 2 ticks)."""
BOLT_SPEED: Final = 4
"""Cells a bolt flies per tick."""

BoltStrike = Callable[["World", "Projectile", Actor, list[Event]], bool]
"""What a bolt does to a creature in its cell; returns True if the bolt stops."""


@dataclass(slots=True, eq=False)
class Projectile:
    """One thing in flight.

    Attributes:
        id: Unique id (never reused while the world runs).
        depth: Level it flies on.
        owner: Id of the actor that threw or cast it.
        x, y: Cell it is in now (its origin before the first move).
        path: Cells still to enter, in order (seed 002 path, already cut at
            the first obstacle and at the range).
        speed: Cells per tick.
        label: Content key of the thrown item, or ``"bolt:<damage type>"``.
        item: The thrown object (lands or shatters at the end), or None for a bolt.
        melee_miss, level, energy, max_energy, marksman: The thrower's numbers
            when it threw (seed 001's miss chance and damage roll use them).
        strike: For a bolt, what it does to a creature it meets.
        x_from, y_from: Where it was launched (a reflected bolt heads back there).
        reflected: It has already been reflected once (it is not reflected again).
    """

    id: int
    depth: int
    owner: int
    x: int
    y: int
    path: list[tuple[int, int]]
    speed: int
    label: str
    item: Item | None = None
    melee_miss: float = 0.1
    level: int = 1
    energy: int = 0
    max_energy: int = 0
    marksman: bool = False
    strike: BoltStrike | None = None
    x_from: int = 0
    y_from: int = 0
    reflected: bool = False


def advance(world: World, events: list[Event]) -> None:
    """Move every projectile in flight by its speed, in id order, resolving hits."""
    for pid in sorted(world.projectiles):
        proj = world.projectiles[pid]
        entered: list[tuple[int, int]] = []
        done = False
        for _ in range(proj.speed):
            if not proj.path:
                done = True
                break
            x, y = proj.path.pop(0)
            proj.x, proj.y = x, y
            entered.append((x, y))
            target = world.actor_at(proj.depth, x, y)
            if target is not None and target.alive and _meet(world, proj, target, events):
                done = True
                break
        if entered:
            events.append(Flew(proj.depth, proj.x, proj.y, proj.id, proj.label, tuple(entered)))
        if done or not proj.path:
            _finish(world, proj, events)


BANE_FACTOR: Final = 0.5
"""Each equipped bane item pertaining to the target multiplies the thrower's
melee miss chance M by this (seed 001 says only "potentially less";
Underhall's number)."""


def bane_miss(world: World, owner: Actor | None, target: Actor, melee_miss: float) -> float:
    """Seed 001's M against ``target``: lowered by each item ``owner`` has
    equipped whose ``bane`` flag the target carries."""
    if owner is None:
        return melee_miss
    banes = sum(
        1
        for item in owner.equipment.values()
        if (flag := world.content.items[item.key].bane) is not None and flag in target.flags
    )
    return melee_miss * BANE_FACTOR**banes


def _meet(world: World, proj: Projectile, target: Actor, events: list[Event]) -> bool:
    """Resolve the projectile against ``target``; True if it stops here."""
    if proj.strike is not None:
        return proj.strike(world, proj, target, events)
    assert proj.item is not None
    idef = world.content.items[proj.item.key]
    owner = world.actors.get(proj.owner)
    enchant_type = idef.enchant

    def adjust(amount: int) -> int:
        assert enchant_type is not None
        return world.resist_adjusted(target, amount, enchant_type)

    surprise = owner is not None and world.is_surprise(owner, target)
    result = resolve_throw(
        world.rng,
        melee_miss=bane_miss(world, owner, target, proj.melee_miss),
        thrower_level=proj.level,
        item_power=idef.power,
        item_range=idef.throw_range,
        cursed=proj.item.cursed,
        energy=proj.energy,
        max_energy=proj.max_energy,
        victim_defence=target.eff_defence,
        marksman=proj.marksman,
        enchanted=enchant_type is not None,
        adjust=adjust if enchant_type is not None else None,
        blessed_vs_undead=proj.item.blessed and "undead" in target.flags,
        victim_level=target.level,
        surprise=surprise,
    )
    total = sneak_damage(world, owner, result.damage, result.outcome, surprise)
    total += result.enchant_damage
    dealt = max(0, min(total, target.hp))
    healed = max(0, min(-total, target.max_hp - target.hp))
    target.hp += healed - dealt
    events.append(
        Harmed(
            target.depth,
            target.x,
            target.y,
            target.id,
            proj.owner,
            enchant_type or "physical",
            dealt,
            "throw",
            result.outcome,
        )
    )
    if result.outcome.name == "MISS":
        return False
    if owner is not None:
        owner.last_attack_tick = world.tick
    if idef.fragile and target.alive:
        world.potion_splash(target, proj.item, owner, events)
    world.after_harm(target, owner, events)
    return True


def sneak_damage(
    world: World, owner: Actor | None, damage: int, outcome: AttackOutcome, surprise: bool
) -> int:
    """A thrown item's damage roll with the thrower's surprise bonus: seed 002's
    Assassin deals 50% more on every surprise attack, thrown ones too (the
    class's ``sneak_attack``, rounded down as in melee); a miss or a lucky hit
    is left as it is (seed 001: a lucky hit takes no further adjustment)."""
    if owner is None or owner.cls is None or not surprise:
        return damage
    if damage <= 0 or outcome in (AttackOutcome.MISS, AttackOutcome.LUCKY):
        return damage
    return int(damage * (1 + world.content.classes[owner.cls].sneak_attack))


def _finish(world: World, proj: Projectile, events: list[Event]) -> None:
    """End the flight: a thrown item lands (or shatters); a bolt fades."""
    del world.projectiles[proj.id]
    shattered = False
    if proj.item is not None:
        idef = world.content.items[proj.item.key]
        shattered = idef.fragile
        if not shattered:
            world.drop_item(proj.depth, proj.x, proj.y, proj.item)
    events.append(Landed(proj.depth, proj.x, proj.y, proj.id, proj.label, shattered))


def launch(world: World, proj: Projectile) -> None:
    """Put ``proj`` in flight; it first moves at the end of this tick."""
    world.projectiles[proj.id] = proj


def throw(
    world: World, actor: Actor, letter: str, target: tuple[int, int], events: list[Event]
) -> RejectReason | None:
    """Throw one object of the stack ``letter`` towards ``target`` (seed 001).

    The object flies along seed 002's path through the target and beyond
    (a miss may hit a creature behind) up to its throwing range (4 unless the
    item says otherwise), stopping before a wall, rock or closed door. The
    thrower spends ``range - 2`` energy (8 for a cursed item), clipped at 0.
    A cursed item that is wielded or worn cannot be thrown.
    """
    item = find(actor.inventory, letter)
    if item is None:
        return RejectReason.NO_ITEM
    level = world.levels[actor.depth]
    if not level.in_bounds(*target) or target == (actor.x, actor.y):
        return RejectReason.NO_TARGET
    equipped = any(held is item for held in actor.equipment.values())
    if equipped and item.cursed:
        item.known = True
        return RejectReason.CURSED
    idef = world.content.items[item.key]
    reach = throw_range(idef.throw_range)
    path = bolt_path(
        (actor.x, actor.y), target, world.flight_blocked(actor.depth), past_target=True
    )[:reach]
    thrown = take_from_pack(actor.inventory, item, 1)
    if equipped:
        unequip_lost(actor, item, world.content)
    energy_before = actor.en
    upkeep.exert(world, actor, throw_energy_cost(reach, cursed=thrown.cursed), events)
    events.append(Thrown(actor.depth, actor.x, actor.y, actor.id, thrown.key, target))
    cls = world.content.classes.get(actor.cls or "")
    launch(
        world,
        Projectile(
            id=world.new_projectile_id(),
            depth=actor.depth,
            owner=actor.id,
            x=actor.x,
            y=actor.y,
            path=path,
            speed=THROW_SPEED,
            label=thrown.key,
            item=thrown,
            melee_miss=cls.miss_chance if cls is not None else 0.1,
            level=actor.level,
            energy=energy_before,
            max_energy=actor.max_en,
            marksman="marksman" in actor.abilities,
        ),
    )
    return None
