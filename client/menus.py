"""Menus of the terminal client: which items fit a command, and the menu texts.

Pure functions of a :class:`~client.model.GameModel`: :func:`context` gives
:func:`client.keys.translate` what a menu or the targeting cursor may offer;
the ``*_rows`` functions give :mod:`client.render` the lines of the inventory,
equipment, item, spell, reward and look screens. Nothing here decides a game
rule: a menu lists the items that look as if they fit (the server has the last
word and answers ``wrong_item`` otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from client.keys import Context, SpellChoice, Target
from client.model import GameModel, InfoAbout, InvItem
from client.records import EQUIPMENT_SLOTS, is_int
from client.text import option_label, with_article

__all__ = [
    "cell_description",
    "context",
    "equipment_rows",
    "fits",
    "info_rows",
    "item_label",
    "item_slot",
    "menu_items",
    "option_label",
    "plural",
    "spell_rows",
    "stairs",
    "targets",
]

_CATEGORY_SLOT: Mapping[str, str] = {
    "weapon": "weapon", "armour": "body", "robe": "cloak", "shield": "shield",
    "helmet": "head", "gloves": "hands", "boots": "feet", "spellbook": "book",
}  # fmt: skip
"""The slot of each equippable category, when ``about.slot`` does not say."""

SLOT_LABELS: Mapping[str, str] = {
    "weapon": "Weapon", "shield": "Shield", "head": "Helmet", "body": "Body armour",
    "cloak": "Cloak", "hands": "Gloves", "feet": "Boots", "book": "Spellbook",
}  # fmt: skip
"""The equipment screen's label for each wire slot name."""

WORN_SLOTS = frozenset({"shield", "head", "body", "cloak", "hands", "feet", "book"})
"""Slots filled by wearing (``W``), not wielding (``w``)."""

GROUPS: tuple[tuple[str, frozenset[str]], ...] = (
    ("Weapons", frozenset({"weapon"})),
    ("Thrown weapons", frozenset({"thrown"})),
    ("Armour", frozenset({"armour", "shield", "robe", "helmet", "gloves", "boots"})),
    ("Wands and horns", frozenset({"wand", "horn"})),
    ("Potions", frozenset({"potion"})),
    ("Scrolls", frozenset({"scroll"})),
    ("Spellbooks", frozenset({"spellbook"})),
    ("Food", frozenset({"food"})),
)
"""Inventory headings, in display order; other categories go under "Other"."""


def item_slot(category: str, about: Mapping[str, Any]) -> str:
    """The slot an item kind is equipped in (``welcome.items`` about.slot, else
    by category), ``""`` for none."""
    slot = about.get("slot")
    if isinstance(slot, str):
        return slot
    return _CATEGORY_SLOT.get(category, "")


def fits(verb: str, item: InvItem, model: GameModel) -> bool:
    """Whether ``item`` belongs in the menu of command ``verb``.

    drop: anything; wield: weapons and thrown weapons not already in hand;
    wear: armour, shields, robes, helmets, gloves, boots and spellbooks not
    already worn; remove: whatever is equipped; eat: food; quaff: potions;
    read: scrolls and spellbooks; throw: anything not worn (the weapon in hand
    too, as in NetHack); zap: wands and horns.
    """
    _, _, _, category, about = model.item_entry(item.key)
    slot = item_slot(category, about)
    nutrition = about.get("nutrition")
    rules = {
        "drop": True,
        "wield": (slot == "weapon" or category in ("weapon", "thrown")) and item.slot != "weapon",
        "wear": slot in WORN_SLOTS and item.slot == "",
        "remove": item.slot != "",
        "eat": category == "food" or (isinstance(nutrition, int) and nutrition > 0),
        "quaff": category == "potion",
        "read": category in ("scroll", "spellbook"),
        "throw": item.slot not in WORN_SLOTS,
        "zap": category in ("wand", "horn"),
    }
    return rules.get(verb, False)


def menu_items(model: GameModel, verb: str) -> list[InvItem]:
    """The pack entries the menu of ``verb`` lists, in pack order."""
    return [item for item in model.inventory() if fits(verb, item, model)]


def plural(name: str) -> str:
    """English plural of an item name: ``"scroll of spark"`` -> ``"scrolls of spark"``."""
    head, sep, tail = name.partition(" of ")
    if head.endswith(("s", "sh", "ch", "x")):
        head += "es"
    elif head.endswith("y") and head[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        head = head[:-1] + "ies"
    else:
        head += "s"
    return head + sep + tail


_WHERE: Mapping[str, str] = {"weapon": "weapon in hand", "book": "spellbook in use"}


def item_label(model: GameModel, item: InvItem, *, where: bool = True) -> str:
    """``"a - 2 cursed scrolls of spark"``, ``"b - a dagger (weapon in hand)"`` ...

    Shows the count, what is known of curses (cursed / blessed / uncursed once
    identified), charges when known, and (if ``where``) where it is equipped.
    """
    name = model.item_name(item.key)
    buc = ""
    if item.cursed:
        buc = "cursed "
    elif item.blessed:
        buc = "blessed "
    elif item.identified:
        buc = "uncursed "
    if item.count > 1:
        phrase = f"{item.count} {buc}{plural(name)}"
    else:
        phrase = with_article(buc + name)
    notes = []
    if item.charges >= 0:
        notes.append(f"{item.charges} charge{'' if item.charges == 1 else 's'}")
    if where and item.slot:
        notes.append(_WHERE.get(item.slot, "being worn"))
    extra = "".join(f" ({note})" for note in notes)
    return f"{item.letter} - {phrase}{extra}"


def inventory_rows(model: GameModel, verb: str | None = None) -> list[str]:
    """The inventory grouped under headings; only the items fitting ``verb`` if given."""
    items = model.inventory() if verb is None else menu_items(model, verb)
    if not items:
        return ["Your pack is empty."] if verb is None else ["Nothing fits."]
    rows: list[str] = []
    placed: set[str] = set()
    for heading, categories in (*GROUPS, ("Other", frozenset())):
        group = [
            it
            for it in items
            if it.letter not in placed
            and (not categories or model.item_entry(it.key)[3] in categories)
        ]
        if not group:
            continue
        rows.append(heading)
        for it in group:
            rows.append("  " + item_label(model, it))
            placed.add(it.letter)
    return rows


def equipment_rows(model: GameModel) -> list[str]:
    """The equipment screen: one line per slot (weapon first, spellbook last),
    the item in it or "(nothing)", then what one's power, defence and
    resistances come to with it (``me``)."""
    worn: dict[str, InvItem] = {}
    for it in model.inventory():
        if it.slot:
            worn.setdefault(it.slot, it)  # the first if a server sends two
    slots = [*EQUIPMENT_SLOTS, *(s for s in worn if s not in EQUIPMENT_SLOTS)]
    rows = []
    for slot in slots:
        label = SLOT_LABELS.get(slot, slot.replace("_", " ").capitalize())
        item = worn.get(slot)
        what = item_label(model, item, where=False) if item else "(nothing)"
        rows.append(f"  {label:<12} {what}")
    power, defence = (model.me.get(k) for k in ("power", "defence"))
    resist = ", ".join(
        f"{k.replace('_', ' ')} {v:+d}" for k, v in sorted(model.resistances().items())
    )
    rows.append("")
    rows.append(
        f"  With this equipment: power {power if is_int(power) else '?'}, "
        f"defence {defence if is_int(defence) else '?'}; "
        f"resistances: {resist or 'none'}"
    )
    return rows


def spell_rows(model: GameModel) -> list[str]:
    """The spell menu: letter, name, level, school, failure %, energy cost, forgotten."""
    rows = [f"    {'Name':<20} {'Level':>5}  {'School':<14} {'Fail':>4}  {'Cost':>4}"]
    for s in model.known_spells():
        mark = "  (forgotten)" if s.forgotten else ""
        rows.append(
            f"{s.letter} - {s.name:<20} {s.level:>5}  {s.school:<14} "
            f"{s.fail_pct:>3}%  {s.energy_cost:>4}{mark}"
        )
    return rows


def choice_rows(model: GameModel) -> list[str]:
    """The reward menu, one letter per option."""
    options = model.choice_options()
    rows = [f"Choose a reward ({model.me.get('choice', 0)} owed):"]
    rows.extend(f"  {chr(ord('a') + i)} - {option_label(o)}" for i, o in enumerate(options[:26]))
    return rows


def _percent(p: float | None) -> str:
    return "?" if p is None else f"{round(p * 100)}%"


def info_rows(
    model: GameModel, about: InfoAbout | None, *, found: bool = True, yourself: bool = False
) -> list[str]:
    """The look panel for one ``info`` answer (None: still waiting for it).

    Looking at ``yourself`` leaves out courage and the chances of hitting
    (they describe a fight with yourself)."""
    if about is None:
        return ["Looking..."]
    if not found:
        return ["You cannot see that any more."]
    title = about.name or about.kind_name
    if about.kind_name and title.lower() != about.kind_name.lower():
        title += f" ({about.kind_name})"
    rows = [title, ""]
    rows.append(
        f"  Level {about.level}   Health {about.hp}/{about.max_hp}   "
        f"Energy {about.en}/{about.max_en}"
    )
    rows.append(f"  Power {about.power}   Defence {about.defence}")
    if about.courage is not None and not yourself:
        rows.append(f"  Courage {_percent(about.courage)} (flees below that share of health)")
    resist = ", ".join(f"{k.replace('_', ' ')} {v:+d}" for k, v in sorted(about.resist.items()))
    rows.append(f"  Resistances: {resist or 'none'}")
    rows.append(f"  Abilities: {', '.join(a.replace('_', ' ') for a in about.abilities) or 'none'}")
    if about.spells:
        rows.append(f"  Casts: {', '.join(model.spell_name(k) for k in about.spells)}")
    if about.breath:
        rows.append(f"  Breathes {about.breath.replace('_', ' ')}")
    statuses = ", ".join(f"{model.status_name(c)} ({r})" for c, r in about.statuses)
    rows.append(f"  Statuses: {statuses or 'none'}")
    if yourself:
        return rows
    rows.append("")
    rows.append(
        f"  You miss it {_percent(about.you_miss)}, score a critical {_percent(about.you_crit)}"
    )
    rows.append(
        f"  It misses you {_percent(about.it_miss)}, scores a critical {_percent(about.it_crit)}"
    )
    return rows


def targets(model: GameModel) -> tuple[Target, ...]:
    """Monsters in view, nearest first (Chebyshev distance, then straight-line
    distance, then id), for Tab."""
    pos = model.position
    if pos is None:
        return ()
    px, py = pos
    monsters = [a for a in model.actors.values() if not a.is_player and not a.is_self]
    monsters.sort(
        key=lambda a: (max(abs(a.x - px), abs(a.y - py)), (a.x - px) ** 2 + (a.y - py) ** 2, a.id)
    )
    return tuple(Target(a.id, a.x, a.y) for a in monsters)


def context(model: GameModel) -> Context:
    """What the menus and the cursor may offer now (see :class:`client.keys.Context`)."""
    inventory = model.inventory()
    verbs = ("drop", "wield", "wear", "remove", "eat", "quaff", "read", "throw", "zap")
    menus = {verb: tuple(it.letter for it in inventory if fits(verb, it, model)) for verb in verbs}
    return Context(
        position=model.position,
        size=(model.width, model.height),
        letters=frozenset(it.letter for it in inventory),
        menus=menus,
        spells=tuple(SpellChoice(s.letter, s.key, s.aim) for s in model.known_spells()),
        targets=targets(model),
        actors_at={
            (a.x, a.y): a.id for a in sorted(model.actors.values(), key=lambda a: (a.is_self, a.id))
        },
        options=tuple(model.choice_options()),
        history=len(model.log),
        stairs={"<": stairs(model, "stairs_up"), ">": stairs(model, "stairs_down")},
    )


def stairs(model: GameModel, key: str) -> tuple[tuple[int, int], ...]:
    """Remembered cells of terrain ``key`` (a staircase), nearest to us first."""
    codes = [
        code
        for code, entry in enumerate(model.terrain_table[:255])
        if isinstance(entry, list) and entry and entry[0] == key
    ]
    if not codes or model.known.size == 0:
        return ()
    ys, xs = np.nonzero(np.isin(model.known, codes))
    px, py = model.position or (0, 0)
    cells = sorted(
        zip(xs.tolist(), ys.tolist(), strict=True),
        key=lambda c: (max(abs(c[0] - px), abs(c[1] - py)), c[1], c[0]),
    )
    return tuple(cells)


def cell_description(model: GameModel, x: int, y: int) -> str:
    """A log line for looking at a cell with nobody on it."""
    if not (0 <= x < model.width and 0 <= y < model.height):
        return "You see nothing there."
    code = int(model.known[y, x])
    table = model.terrain_table
    if code >= len(table) or not isinstance(table[code], list) or len(table[code]) < 2:
        return "You cannot see there."
    where = "You see" if model.visible[y, x] else "You remember"
    line = f"{where} {table[code][1]}"
    item = model.objs.get((x, y))
    if item:
        line += f" with {with_article(model.item_name(item))} on it"
    return line + "."
