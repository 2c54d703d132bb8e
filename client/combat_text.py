"""Message-log lines for fights and what they do: attacks, deaths, missiles,
harm, rays, explosions, statuses, changed terrain, burnt items, polymorphs.

One function per event (``docs/protocol.md``, "Events"), each taking the
event list and the model and returning a sentence, or ``None`` when the
fields are malformed. :mod:`client.event_text` lists them in its event table
and checks the event's length before calling them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from client.naming import item_phrase, kind_name, who, with_article

if TYPE_CHECKING:
    from client.model import GameModel

__all__ = [
    "atk_line",
    "boom_line",
    "burn_line",
    "die_line",
    "harm_line",
    "land_line",
    "poly_line",
    "ray_line",
    "status_line",
    "terrain_line",
    "throw_line",
]


def _the(text: str) -> str:
    """Capitalise the first letter of a sentence."""
    return text[:1].upper() + text[1:]


def _words(key: object) -> str:
    """A wire key as words (``"magic_missile"`` -> ``"magic missile"``)."""
    return key.replace("_", " ") if isinstance(key, str) else "something"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def atk_line(ev: Sequence[Any], model: GameModel) -> str | None:
    _, attacker, target, outcome, damage, surprise = ev[:6]
    if not isinstance(damage, int) or outcome not in ("miss", "hit", "crit", "lucky"):
        return None
    a = who(model, attacker)
    t = who(model, target)
    if outcome == "miss":
        return f"{a.subject()} {a.verb('miss')} {t.object()}."
    prefix = {"crit": "A critical hit! ", "lucky": "A lucky hit! "}.get(outcome, "")
    if surprise:
        pronoun = "you" if t.you else "it"
        clause = f"{a.subject()} {a.verb('surprise')} {t.object()} and {a.verb('hit')} {pronoun}"
    else:
        clause = f"{a.subject()} {a.verb('hit')} {t.object()}"
    if damage > 0:
        return f"{prefix}{clause} for {damage}."
    does = "do" if a.you else "does"
    return f"{prefix}{clause} but {does} no damage."


def die_line(ev: Sequence[Any], model: GameModel) -> str | None:
    victim = who(model, ev[1])
    killer = who(model, ev[2]) if len(ev) > 2 and ev[2] is not None else None
    if victim.you:
        if killer is not None and not killer.you:
            return f"You are killed by {killer.object()}. You die..."
        return "You die..."
    if killer is None:
        return f"{victim.subject()} dies."
    return f"{killer.subject()} {killer.verb('kill')} {victim.object()}!"


def throw_line(ev: Sequence[Any], model: GameModel) -> str | None:
    a = who(model, ev[1])
    at = ev[3]
    if not isinstance(ev[2], str):
        return None
    line = f"{a.subject()} {a.verb('throw')} {item_phrase(model, ev[2])}"
    if isinstance(at, list) and len(at) == 2:
        for view in model.actors.values():
            if (view.x, view.y) == (at[0], at[1]) and view.id != ev[1]:
                return f"{line} at {who(model, view.id).object()}."
    return line + "."


def land_line(ev: Sequence[Any], model: GameModel) -> str | None:
    item, shattered = ev[2], ev[5]
    if not isinstance(item, str) or item.startswith("bolt:"):
        return None  # a bolt's end needs no line: its harm events tell the outcome
    name = _the(f"the {model.item_name(item)}")
    return f"{name} shatters!" if shattered is True else f"{name} lands."


_CAUSES: Mapping[str, str] = {
    "throw": "missile", "ray": "ray", "beam": "beam", "bolt": "bolt", "ball": "explosion",
    "spell": "spell", "breath": "breath", "shield": "shield", "potion": "potion",
}  # fmt: skip


def harm_line(ev: Sequence[Any], model: GameModel) -> str | None:
    _, target, source, dtype, damage, cause, outcome = ev[:7]
    if not _is_int(damage) or outcome not in ("miss", "hit", "crit", "lucky"):
        return None
    t = who(model, target)
    typed = isinstance(dtype, str) and dtype in model.damage_types
    kind = f" {_words(dtype)}" if typed else ""  # "physical" and the like go unnamed
    if cause in ("status", "hunger"):
        why = " from hunger" if cause == "hunger" else ""
        if damage <= 0:
            return None
        return f"{t.subject()} {t.verb('suffer')} {damage}{kind} damage{why}."
    noun = _CAUSES.get(cause) if isinstance(cause, str) else None
    if noun is None:
        return None
    if source is None:
        thing = f"The {noun}"
    else:
        s = who(model, source)
        if s.you:
            thing = f"Your own {noun}" if t.you else f"Your {noun}"
        else:
            thing = f"{s.subject()}'s {noun}"  # a player's name keeps its spelling
    if outcome == "miss":
        return f"{thing} misses {t.object()}."
    prefix = {"crit": "A critical hit! ", "lucky": "A lucky hit! "}.get(outcome, "")
    if damage > 0:
        return f"{prefix}{thing} hits {t.object()} for {damage}{kind} damage."
    return f"{prefix}{thing} hits {t.object()} but does no damage."


def ray_line(ev: Sequence[Any], model: GameModel) -> str | None:
    _, source, kind, cells, bounces, hits, beam = ev[:7]
    if not (isinstance(cells, list) and isinstance(bounces, list) and isinstance(hits, list)):
        return None
    noun = "beam" if beam is True else "ray"
    what = f"{_words(kind)} {noun}"
    if source is None:
        line = f"{_the(with_article(what))} flashes past."
    else:
        s = who(model, source)
        line = f"{s.subject()} {s.verb('fire')} {with_article(what)}."
    if bounces:
        line += " It bounces!" if len(bounces) == 1 else f" It bounces {len(bounces)} times!"
    for hit in hits:
        if isinstance(hit, list) and len(hit) >= 2 and hit[1] is True:
            line += f" It reflects off {who(model, hit[0]).object()}!"
    return line


def boom_line(ev: Sequence[Any], model: GameModel) -> str | None:
    if not _is_int(ev[5]):
        return None
    return f"{_the(with_article(_words(ev[2])))} explosion bursts!"


def status_line(ev: Sequence[Any], model: GameModel) -> str | None:
    a = who(model, ev[1])
    if not _is_int(ev[2]):
        return None
    name = model.status_name(ev[2])
    be = "are" if a.you else "is"
    if ev[3] is True:
        return f"{a.subject()} {be} {name}."
    return f"{a.subject()} {be} no longer {name}."


def _terrain_name(model: GameModel, code: int) -> str | None:
    table = model.terrain_table
    if 0 <= code < len(table) and isinstance(table[code], list) and len(table[code]) > 1:
        return str(table[code][1])
    return None


_DOORS = (3, 4)


def terrain_line(ev: Sequence[Any], model: GameModel) -> str | None:
    _, x, y, code = ev[:4]
    if not (_is_int(x) and _is_int(y) and _is_int(code)):
        return None
    new = _terrain_name(model, code)
    old_code = model.replaced_tiles.get((x, y))
    old = _terrain_name(model, old_code) if old_code is not None else None
    if new is None or old is None or old == new:
        return None
    if old_code in _DOORS and code not in _DOORS:
        return f"The {old} is destroyed!"
    return f"The {old} turns into {new}."


_BURNS: Mapping[str, str] = {
    "fire": "burns up", "cold": "freezes and shatters", "acid": "dissolves",
    "electricity": "is destroyed by electricity",
}  # fmt: skip


def burn_line(ev: Sequence[Any], model: GameModel) -> str | None:
    item, dtype = ev[3], ev[4]
    if not isinstance(item, str):
        return None
    how = _BURNS.get(dtype, "is destroyed") if isinstance(dtype, str) else "is destroyed"
    return f"{_the(with_article(model.item_name(item)))} {how}!"


def poly_line(ev: Sequence[Any], model: GameModel) -> str | None:
    kind = ev[3]
    if not isinstance(kind, str):
        return None
    name = who(model, ev[1]).name
    return f"{name[:1].upper()}{name[1:]} changes into {with_article(kind_name(model, kind))}!"
