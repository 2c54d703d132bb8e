"""Naming actors, items, spells and rewards inside message-log sentences.

Pure helpers shared by the sentence builders (:mod:`client.event_text`,
:mod:`client.combat_text`, :mod:`client.notices`) and the menus: they read a
:class:`~client.model.GameModel` for names and never change it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from client.model import GameModel

__all__ = [
    "Who",
    "item_phrase",
    "kind_name",
    "option_label",
    "spell_phrase",
    "who",
    "with_article",
]


class Who:
    """How to name one actor in a sentence (second or third person).

    ``proper`` names (players') keep their spelling at the start of a
    sentence; noun phrases ("the rat", "something") are capitalised.
    """

    __slots__ = ("name", "proper", "you")

    def __init__(self, name: str, *, you: bool = False, proper: bool = False) -> None:
        self.name = name
        self.you = you
        self.proper = proper

    def subject(self) -> str:
        """The actor as the start of a sentence."""
        if self.you:
            return "You"
        if self.proper:
            return self.name
        return self.name[:1].upper() + self.name[1:]

    def object(self) -> str:
        return "you" if self.you else self.name

    def verb(self, base: str) -> str:
        """Conjugate a regular verb for this actor ("hit" -> "hits", "go" -> "goes")."""
        if self.you:
            return base
        if base.endswith(("s", "sh", "ch", "x", "o")):
            return base + "es"
        return base + "s"


def kind_name(model: GameModel, kind: str) -> str:
    """A monster kind's display name (the key itself, or "something", if unknown)."""
    entry = model.kinds.get(kind)
    if entry:
        return str(entry[0])
    return kind or "something"


def who(model: GameModel, actor_id: object) -> Who:
    """Name an actor id: "you", a player's name, or "the <kind>"."""
    if not isinstance(actor_id, int) or isinstance(actor_id, bool):
        return Who("something")
    if actor_id == model.player_id:
        return Who("you", you=True)
    view = model.actors.get(actor_id)
    if view is not None:
        if view.is_player:
            return Who(view.name, proper=True) if view.name else Who("someone")
        return Who("the " + kind_name(model, view.kind))
    # out of view (e.g. removed by this delta's "rm" before its "die" event):
    # the model remembers a player's name or a monster's kind name
    remembered = model.names.get(actor_id)
    if remembered:
        kind_names = {str(entry[0]) for entry in model.kinds.values() if entry}
        if remembered in kind_names or remembered in model.kinds:
            return Who("the " + remembered)
        return Who(remembered, proper=True)
    return Who("something")


def item_phrase(model: GameModel, key: str) -> str:
    """An item key as a noun phrase with its article (``"a dagger"``)."""
    entry = model.items.get(key)
    name = str(entry[0]) if entry else key.replace("_", " ")
    return with_article(name)


def with_article(name: str) -> str:
    """``"a dagger"``, ``"an apple"``."""
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return f"{article} {name}"


def spell_phrase(model: GameModel, key: object) -> str:
    """A spell key's display name ("a spell" when the key is not a string)."""
    return model.spell_name(key) if isinstance(key, str) else "a spell"


_OPTION_LABELS: Mapping[str, str] = {
    "health": "more health", "energy": "more energy", "power": "more power",
    "defence": "more defence",
}  # fmt: skip


def option_label(option: str) -> str:
    """A level-up reward key in words (``"resist_fire"`` -> ``"resistance to fire"``)."""
    if option in _OPTION_LABELS:
        return _OPTION_LABELS[option]
    if option.startswith("resist_"):
        return "resistance to " + option[len("resist_") :].replace("_", " ")
    return "the ability: " + option.replace("_", " ")
