"""How many items a level's floor holds: a cap, and what goes when it is passed (issue 48).

Items enter the dungeon only when a level is generated (a few dozen stacks)
and when a new character brings its starting kit; nothing else makes them
and there are no corpses (docs/rules.md, "Levels"). On a server that runs
for months, new characters who drop their kits and leave would still pile
items up on the floors without end. Angband bounds its floors the same way
(its object list has a fixed size, and ``compact_objects()`` deletes objects
when it fills, the ones farthest from the player first, never artifacts):
a level holds at most :data:`FLOOR_STACKS` stacks, and an item landing on a
full floor makes the bottom stack of the farthest pile go.

Pure and deterministic: no chance is drawn, so a sweep changes no RNG stream.
"""

from __future__ import annotations

from server.content import Content
from server.sim.level import Level

FLOOR_STACKS = 512
"""Most item stacks one level's floor holds: about ten times what a level
is generated with (docs/operating.md, "Memory")."""


def floor_stacks(level: Level) -> int:
    """Item stacks on ``level``'s floor, all piles together."""
    return sum(len(pile) for pile in level.items.values())


def sweep(
    level: Level, content: Content, x: int, y: int, cap: int = FLOOR_STACKS
) -> list[tuple[int, int, str]]:
    """Bring ``level``'s floor back to at most ``cap`` stacks after an item
    landed at ``(x, y)``: take the bottom stack of the pile farthest from
    ``(x, y)`` (Chebyshev distance; among equals, the lowest ``(y, x)``),
    again and again, never an artifact and never from ``(x, y)`` itself.

    Returns:
        ``(x, y, item key)`` of each stack taken, in order (empty when the
        floor holds ``cap`` stacks or fewer, or only artifacts and the new
        pile are left to take).
    """
    over = floor_stacks(level) - cap
    if over <= 0:
        return []
    items = content.items
    order = sorted(
        (pos for pos in level.items if pos != (x, y)),
        key=lambda pos: (-max(abs(pos[0] - x), abs(pos[1] - y)), pos[1], pos[0]),
    )
    taken: list[tuple[int, int, str]] = []
    for pos in order:
        pile = level.items[pos]
        kept = []
        for item in pile:
            if over > 0 and not items[item.key].artifact:
                taken.append((pos[0], pos[1], item.key))
                over -= 1
            else:
                kept.append(item)
        if kept:
            level.items[pos] = kept
        else:
            del level.items[pos]
        if over <= 0:
            break
    return taken
