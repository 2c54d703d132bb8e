"""What can happen in a game, walked from the rules data and the generators (issue 46).

A rule can be written, tested and still never happen in play: a spell no item
teaches and no monster casts, a status nothing gives, a terrain no creature
can stand on. :func:`walk` follows what play can reach, using the game's own
generators and tables rather than names:

- items: what :func:`server.sim.levelgen.item_pool` drops at each depth
  ``1..MAX_DEPTH``, and every class's starting kit;
- monsters: what :func:`server.sim.monsters.spawn_pool` and
  :func:`~server.sim.monsters.unique_pool` place at each depth;
- spells: those taught by an item in play (a ``learn_spell`` scroll or
  potion, a spellbook recording a spell) and those a placed monster casts;
- damage types: carried by an item in play (its effect or enchantment), a
  placed monster's breath or melee, a reachable spell, or a reachable
  status that deals damage or retaliates;
- statuses: given by a reachable spell (not a cure), a reachable damage
  type's side effects (:data:`server.sim.harm.STATUS_OF_SIDE_EFFECT`), a
  potion in play (:data:`server.sim.use.POTION_STATUSES`), a touch ability
  of a placed monster (:data:`server.sim.fighting.TOUCHES`), the holy light
  ability, a forgotten spell's backfire, or a meal a monk should not eat;
- abilities: class kits, fifth-level rewards, placed monsters;
- terrain: what :func:`server.sim.levelgen.generate_level` lays at each
  depth (a few levels per depth), and what some placed creature may enter
  (:func:`server.sim.terrain.walkable_for`).

:func:`culprits` lists every record of the data that no such path reaches.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Final

import numpy as np

from server.content import Content, ItemDef, Terrain, default_content
from server.content.damage import DamageTypes, default_damage_types
from server.content.loader import MAX_DEPTH
from server.content.schema import ABILITIES, DAMAGE_TYPES, EFFECT_RULES
from server.content.spells import SpellData, default_spells
from server.content.statuses import StatusKind, StatusRules, default_statuses
from server.sim.fighting import TOUCHES
from server.sim.harm import STATUS_OF_SIDE_EFFECT
from server.sim.levelgen import generate_level, item_pool
from server.sim.monsters import spawn_pool, unique_pool
from server.sim.terrain import walkable_for
from server.sim.upkeep import EXERTION_STATUS
from server.sim.use import POTION_STATUSES

LEVELS_PER_DEPTH: Final = 3
"""Levels generated per depth to see which terrain the generator lays."""
LEVEL_SIZE: Final = (80, 21)
"""Size of those levels: the generator scales its counts by area, not its odds."""
BACKFIRE: Final = (StatusKind.CONFUSED, StatusKind.STUNNED)
"""What casting a forgotten spell may do (seed 004; :mod:`server.sim.spellcasting`)."""
ABILITY_STATUSES: Final = {
    **{ability: kind for ability, kind, _ in TOUCHES if kind is not None},
    "holy_light": StatusKind.AFRAID,  # server.sim.harm._holy_light (seed 003 M, N)
}
"""Ability key -> the status its bearer gives others."""
ITEM_PROPERTIES: Final = tuple(
    f.name for f in dataclasses.fields(ItemDef) if f.type in ("bool", bool)
)
"""Every boolean property an item record may carry (seed 001's item attributes)."""


@dataclass(frozen=True, slots=True)
class Reach:
    """What a game can hold (:func:`walk`); keys as in the data files."""

    items: frozenset[str]
    monsters: frozenset[str]
    learnable: frozenset[str]
    monster_spells: frozenset[str]
    damage_types: frozenset[str]
    statuses: frozenset[StatusKind]
    abilities: frozenset[str]
    terrain: frozenset[Terrain]
    entered: frozenset[Terrain]

    @property
    def spells(self) -> frozenset[str]:
        """Spells that can be cast in a game, by a player or a monster."""
        return self.learnable | self.monster_spells


def walk(
    content: Content | None = None,
    spells: SpellData | None = None,
    damage: DamageTypes | None = None,
    statuses: StatusRules | None = None,
    levels_per_depth: int = LEVELS_PER_DEPTH,
) -> Reach:
    """Walk what play can reach from the data and the generators (module doc).

    Args:
        content: Items, monsters, classes; the shipped data when None.
        spells: The spells; the shipped ``spells.toml`` when None.
        damage: The damage types; the shipped ``damage_types.toml`` when None.
        statuses: The statuses; the shipped ``statuses.toml`` when None.
        levels_per_depth: Levels generated per depth for the terrain walk
            (seeded ``(depth, n)``, so the walk is deterministic).
    """
    content = content or default_content()
    spell_defs = (spells or default_spells()).spells
    damage = damage or default_damage_types()
    status_defs = (statuses or default_statuses()).statuses
    items = {k for c in content.classes.values() for k in c.start_items}
    placed: set[str] = set()
    terrain: set[Terrain] = set()
    for depth in range(1, MAX_DEPTH + 1):
        items.update(d.key for d in item_pool(content, depth))
        placed.update(m.key for m in spawn_pool(content, depth) + unique_pool(content, depth))
        for n in range(levels_per_depth):
            rng = np.random.default_rng(np.random.SeedSequence([46, depth, n]))
            level = generate_level(rng, depth, *LEVEL_SIZE, content=content)
            terrain.update(Terrain(int(t)) for t in np.unique(level.terrain))
    in_play = [content.items[k] for k in sorted(items) if k in content.items]
    monsters = [content.monsters[k] for k in sorted(placed)]
    learnable = {
        d.spell
        for d in in_play
        if d.spell is not None and (d.effect == "learn_spell" or d.category == "spellbook")
    }
    cast = {s for m in monsters for s in m.spells}
    reachable = [spell_defs[k] for k in sorted(learnable | cast) if k in spell_defs]
    given: set[StatusKind] = set()
    for spell in reachable:
        if spell.status != "none" and spell.effect != "cure":
            given.add(StatusKind[spell.status.upper()])
    given.update(POTION_STATUSES[d.effect] for d in in_play if d.effect in POTION_STATUSES)
    if learnable:
        given.update(BACKFIRE)
    if content.classes:
        given.add(EXERTION_STATUS)  # every character's melee and throws spend energy
    if "monk" in content.classes and any(
        d.category == "food" and not d.vegetarian for d in in_play
    ):
        given.add(StatusKind.DISEASED)  # server.sim.hunger.eat: a monk eating meat
    abilities = {a for c in content.classes.values() for a in c.abilities + c.special_choices}
    abilities.update(a for m in monsters for a in m.abilities)
    given.update(ABILITY_STATUSES[a] for a in abilities if a in ABILITY_STATUSES)
    carried = {t for d in in_play for t in (d.damage_type, d.enchant) if t is not None}
    carried.update(t for m in monsters for t in (m.breath, m.melee_type) if t is not None)
    carried.update(s.damage_type for s in reachable if s.damage_type != "none")
    carried.update(status_defs[k].damage_type for k in given if status_defs[k].damage_type)
    for key in sorted(carried & set(DAMAGE_TYPES)):
        for fx in damage.types[damage.index[key]].side_effects:
            if fx.effect in STATUS_OF_SIDE_EFFECT:
                given.add(STATUS_OF_SIDE_EFFECT[fx.effect])
    carried.update(status_defs[k].damage_type for k in given if status_defs[k].damage_type)
    entered = set(np.flatnonzero(walkable_for(frozenset())).tolist())
    for m in monsters:
        if "immobile" not in m.flags:
            entered.update(np.flatnonzero(walkable_for(frozenset(m.flags))).tolist())
    return Reach(
        items=frozenset(items),
        monsters=frozenset(placed),
        learnable=frozenset(learnable),
        monster_spells=frozenset(cast),
        damage_types=frozenset(carried),
        statuses=frozenset(given),
        abilities=frozenset(abilities),
        terrain=frozenset(terrain),
        entered=frozenset(Terrain(int(t)) for t in entered),
    )


def culprits(
    reach: Reach, content: Content | None = None, spells: SpellData | None = None
) -> list[str]:
    """Every record of the data that :func:`walk` found no way to reach, one
    line each, in data order (empty when everything can happen in a game)."""
    content = content or default_content()
    spell_defs = (spells or default_spells()).spells
    out = [
        f"item {k!r}: no level drops it and no class starts with it"
        for k in content.items
        if k not in reach.items
    ]
    out += [f"monster {k!r}: never placed" for k in content.monsters if k not in reach.monsters]
    out += [
        f"spell {k!r}: no item in play teaches it and no placed monster casts it"
        for k in spell_defs
        if k not in reach.spells
    ]
    out += [
        f"status {s.name.lower()!r}: nothing gives it"
        for s in StatusKind
        if s not in reach.statuses
    ]
    out += [
        f"damage type {t!r}: nothing in play carries it"
        for t in DAMAGE_TYPES
        if t not in reach.damage_types
    ]
    out += [f"ability {a!r}: nothing gives it" for a in ABILITIES if a not in reach.abilities]
    in_play = [content.items[k] for k in content.items if k in reach.items]
    out += [
        f"item effect {e!r}: no item in play has it"
        for e in EFFECT_RULES
        if not any(d.effect == e for d in in_play)
    ]
    out += [
        f"item property {p!r}: no item in play has it"
        for p in ITEM_PROPERTIES
        if not any(getattr(d, p) for d in in_play)
    ]
    for t in Terrain:
        if t not in reach.terrain:
            out.append(f"terrain {t.name.lower()!r}: no generated level holds it")
        elif t not in reach.entered:
            out.append(f"terrain {t.name.lower()!r}: no creature in play can enter it")
    return out
