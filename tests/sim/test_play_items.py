"""Items in play on tiny ASCII levels: starting kits, pick up, drop, wield,
wear, take off, curses, a full pack, and saving a pack (issue 4)."""

from __future__ import annotations

from server.content import default_content
from server.sim.actors import Actor
from server.sim.commands import Drop, PickUp, TakeOff, Wear, Wield
from server.sim.events import Dropped, Equipped, PickedUp, Rejected, RejectReason
from server.sim.items import LETTERS, PACK_LIMIT, Item, add_to_pack, find
from tests.sim.conftest import ROOM, make_world
from tests.sim.conftest import submit_and_step as act

CONTENT = default_content()


def pack(actor: Actor) -> list[tuple[str, str, int]]:
    return [(i.letter, i.key, i.count) for i in actor.inventory]


def equipped(actor: Actor) -> dict[str, str]:
    return {slot: item.letter for slot, item in actor.equipment.items()}


def expected_kit(class_key: str) -> list[tuple[str, str, int]]:
    """The class's start items with letters a.. in order, repeats stacked
    where the category stacks (food, potions, scrolls, thrown)."""
    out: list[tuple[str, str, int]] = []
    for key in CONTENT.classes[class_key].start_items:
        stacks = CONTENT.items[key].category in ("food", "potion", "scroll", "thrown")
        if stacks and out and any(k == key for _, k, _ in out):
            i = next(j for j, (_, k, _) in enumerate(out) if k == key)
            letter, k, n = out[i]
            out[i] = (letter, k, n + 1)
        else:
            out.append((LETTERS[len(out)], key, 1))
    return out


# --- starting kits ---------------------------------------------------------------------


def test_warrior_starts_with_sword_wielded_and_armour_worn() -> None:
    world = make_world(ROOM)
    p = world.join("ann", "warrior")
    assert pack(p) == expected_kit("warrior")
    assert [k for _, k, _ in pack(p)][:2] == ["long_sword", "leather_armour"]
    assert equipped(p) == {"weapon": "a", "body": "b"}
    sword, armour = CONTENT.items["long_sword"], CONTENT.items["leather_armour"]
    assert p.bonus.power == sword.power
    assert p.bonus.defence == sword.defence + armour.defence
    assert p.eff_power == CONTENT.classes["warrior"].power + sword.power
    assert p.eff_defence == CONTENT.classes["warrior"].defence + armour.defence + sword.defence
    assert all(not i.cursed for i in p.inventory)


def test_mage_starts_with_dagger_robe_and_spellbook_equipped() -> None:
    world = make_world(ROOM)
    p = world.join("mia", "mage")
    assert pack(p) == expected_kit("mage")
    slots = {slot: item.key for slot, item in p.equipment.items()}
    assert slots == {"weapon": "dagger", "cloak": "robe", "book": "blank_spellbook"}
    assert p.bonus.robe and p.bonus.book == "blank_spellbook"
    assert p.bonus.power == CONTENT.items["dagger"].power
    wand = next(i for i in p.inventory if i.key == "wand_of_magic_missile")
    lo, hi = CONTENT.items["wand_of_magic_missile"].charges or (0, 0)
    assert wand.charges is not None and lo <= wand.charges <= hi


def test_monk_starts_with_stacked_food_and_potions_and_nothing_equipped() -> None:
    world = make_world(ROOM)
    p = world.join("mo", "monk")
    assert pack(p) == expected_kit("monk")
    assert ("a", "apple", 3) in pack(p)
    assert p.equipment == {}
    assert (p.bonus.power, p.bonus.defence) == (0, 0)


# --- pick up and drop ------------------------------------------------------------------


def test_two_darts_picked_up_one_by_one_share_one_letter() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    world.drop_item(1, p.x, p.y, Item("dart"))
    events = act(world, p.id, PickUp(), tag=1)
    assert PickedUp(1, p.x, p.y, p.id, "dart") in events
    dart = next(i for i in p.inventory if i.key == "dart")
    letter = dart.letter
    world.drop_item(1, p.x, p.y, Item("dart"))
    act(world, p.id, PickUp(), tag=2)
    assert [(i.letter, i.count) for i in p.inventory if i.key == "dart"] == [(letter, 2)]
    assert (p.x, p.y) not in world.levels[1].items
    events = act(world, p.id, PickUp(), tag=3)
    assert Rejected(p.id, 3, RejectReason.NOTHING_HERE) in events


def test_drop_puts_the_stack_on_the_floor_and_frees_its_letter() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    events = act(world, p.id, Drop("c"), tag=1)
    assert Dropped(1, p.x, p.y, p.id, "food_ration") in events
    pile = world.levels[1].items[(p.x, p.y)]
    assert [(i.key, i.count, i.letter) for i in pile] == [("food_ration", 2, "")]
    assert find(p.inventory, "c") is None
    events = act(world, p.id, Drop("c"), tag=2)
    assert Rejected(p.id, 2, RejectReason.NO_ITEM) in events
    # Picked up again it takes the first free letter, which is "c" again.
    act(world, p.id, PickUp(), tag=3)
    assert ("c", "food_ration", 2) in pack(p)


def test_dropping_the_wielded_weapon_unwields_it() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    act(world, p.id, Drop("a"), tag=1)
    assert "weapon" not in p.equipment
    assert p.bonus.power == 0
    assert world.levels[1].items[(p.x, p.y)][-1].key == "long_sword"


def test_pack_full_refuses_a_new_stack_but_merges_a_like_one() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    add_to_pack(p.inventory, Item("dart"), CONTENT)
    while len(p.inventory) < PACK_LIMIT:
        assert add_to_pack(p.inventory, Item("dagger"), CONTENT) is not None
    world.drop_item(1, p.x, p.y, Item("rock"))
    events = act(world, p.id, PickUp(), tag=1)
    assert Rejected(p.id, 1, RejectReason.PACK_FULL) in events
    assert [i.key for i in world.levels[1].items[(p.x, p.y)]] == ["rock"]
    # A dart joins the dart stack even in a full pack.
    world.levels[1].items.clear()
    world.drop_item(1, p.x, p.y, Item("dart"))
    events = act(world, p.id, PickUp(), tag=2)
    assert PickedUp(1, p.x, p.y, p.id, "dart") in events
    assert sum(i.count for i in p.inventory if i.key == "dart") == 2
    assert len(p.inventory) == PACK_LIMIT


# --- wield, wear, take off --------------------------------------------------------------


def test_wield_swaps_weapons_and_the_bonus_follows() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    dagger = add_to_pack(p.inventory, Item("dagger"), CONTENT)
    assert dagger is not None
    events = act(world, p.id, Wield(dagger.letter), tag=1)
    assert Equipped(p.id, "a", "long_sword", "weapon", False) in events
    assert Equipped(p.id, dagger.letter, "dagger", "weapon", True) in events
    assert p.equipment["weapon"] is dagger
    assert p.bonus.power == CONTENT.items["dagger"].power
    assert find(p.inventory, "a") is not None, "the old weapon stays in the pack"
    events = act(world, p.id, Wield("b"), tag=2)
    assert Rejected(p.id, 2, RejectReason.WRONG_ITEM) in events


def test_take_off_and_wear_armour_changes_defence() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    worn = p.eff_defence
    armour = CONTENT.items["leather_armour"].defence
    events = act(world, p.id, TakeOff("b"), tag=1)
    assert Equipped(p.id, "b", "leather_armour", "body", False) in events
    assert p.eff_defence == worn - armour
    events = act(world, p.id, TakeOff("b"), tag=2)
    assert Rejected(p.id, 2, RejectReason.WRONG_ITEM) in events
    events = act(world, p.id, Wear("b"), tag=3)
    assert Equipped(p.id, "b", "leather_armour", "body", True) in events
    assert p.eff_defence == worn
    events = act(world, p.id, Wear("c"), tag=4)
    assert Rejected(p.id, 4, RejectReason.WRONG_ITEM) in events


def test_cursed_worn_armour_refuses_take_off_and_drop() -> None:
    world = make_world(ROOM)
    p = world.join("ann")
    mail = add_to_pack(p.inventory, Item("chain_mail", cursed=True), CONTENT)
    assert mail is not None
    events = act(world, p.id, Wear(mail.letter), tag=1)
    assert Equipped(p.id, mail.letter, "chain_mail", "body", True) in events
    assert p.equipment["body"] is mail
    events = act(world, p.id, TakeOff(mail.letter), tag=2)
    assert Rejected(p.id, 2, RejectReason.CURSED) in events
    assert mail.known, "trying to take it off reveals the curse"
    events = act(world, p.id, Drop(mail.letter), tag=3)
    assert Rejected(p.id, 3, RejectReason.CURSED) in events
    events = act(world, p.id, Wear("b"), tag=4)
    assert Rejected(p.id, 4, RejectReason.CURSED) in events
    assert p.equipment["body"] is mail
    assert (
        p.bonus.defence == CONTENT.items["chain_mail"].defence + CONTENT.items["long_sword"].defence
    )


# --- records ---------------------------------------------------------------------------


def test_record_round_trip_keeps_pack_letters_and_equipment() -> None:
    world = make_world(ROOM)
    p = world.join("ann", "mage")
    add_to_pack(p.inventory, Item("dart", 3), CONTENT)
    act(world, p.id, TakeOff("b"), tag=1)
    wand = next(i for i in p.inventory if i.key == "wand_of_magic_missile")
    wand.charges = 1
    record = world.leave(p.id)
    world.step()
    again = make_world(ROOM)
    q = again.join("ann", record=record)
    assert pack(q) == pack(p)
    assert equipped(q) == equipped(p) == {"weapon": "a", "book": "c"}
    assert q.bonus == p.bonus
    again_wand = find(q.inventory, wand.letter)
    assert again_wand is not None and again_wand.key == wand.key and again_wand.charges == 1
