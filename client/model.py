"""The client's picture of the game, built only from server messages.

:class:`GameModel` applies ``welcome``, ``snap``, ``delta`` and ``info``
messages (docs/protocol.md) to numpy grids and dicts that the terminal UI and
the bots read. It does no I/O and draws nothing. Grids are indexed ``[y, x]``.
Typed readers (:meth:`GameModel.inventory`, :meth:`GameModel.known_spells`,
...) turn the wire records of ``me`` into small dataclasses.

Server data is applied defensively: a record that does not have the shape the
protocol describes (wrong length, wrong types, a cell outside the level, an
actor id not in view) is skipped, so a confused or newer server cannot crash
a client through the model.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from client.records import InfoAbout, InvItem, KnownSpell, is_int, is_number
from protocol.errors import ErrorCode, ProtocolError
from protocol.fov import unpack_fov
from protocol.messages import (
    BACK_TICKS,
    Delta,
    Info,
    ServerMessage,
    Snapshot,
    Welcome,
    unpack_ids,
    unpack_moves,
    unpack_steps,
)

UNKNOWN = 255
"""Terrain code of a cell never seen."""

FLAG_ASLEEP = 1
FLAG_FLEEING = 2
FLAG_HUNTING = 4
FLAG_SELF = 8
FLAG_PLAYER = 16

LOG_LINES = 200
"""Lines kept in :attr:`GameModel.log`."""

INFO_KEPT = 32
"""``info`` answers kept in :attr:`GameModel.info` (the oldest are dropped)."""


_is_int = is_int
_is_number = is_number

__all__ = ["ActorView", "GameModel", "InfoAbout", "InvItem", "KnownSpell"]


@dataclass(slots=True)
class ActorView:
    """One actor in view: the wire record ``[id, kind, name, x, y, hp, max_hp, flags, sts]``.

    On the wire ``kind`` is a kind code, an index into ``welcome.kinds``
    (protocol 5); here it is that entry's key (``"rat"``,
    ``"player.mage"``). ``name`` is a player's name, ``""`` for monsters;
    ``(x, y)`` in cells; ``sts`` the status bit mask (bit k set iff status
    code k is active).
    """

    id: int
    kind: str
    name: str
    x: int
    y: int
    hp: int
    max_hp: int
    flags: int
    sts: int = 0

    @property
    def asleep(self) -> bool:
        """Flag 1: the actor is asleep."""
        return bool(self.flags & FLAG_ASLEEP)

    @property
    def fleeing(self) -> bool:
        """Flag 2: a monster fleeing."""
        return bool(self.flags & FLAG_FLEEING)

    @property
    def hunting(self) -> bool:
        """Flag 4: a monster that has noticed someone."""
        return bool(self.flags & FLAG_HUNTING)

    @property
    def is_self(self) -> bool:
        """Flag 8: this is the client's own character."""
        return bool(self.flags & FLAG_SELF)

    @property
    def is_player(self) -> bool:
        """Flag 16: a player's character."""
        return bool(self.flags & FLAG_PLAYER)

    @classmethod
    def from_record(cls, record: object, kind_keys: Sequence[str]) -> ActorView | None:
        """Build a view from a wire actor record; None if it is malformed.

        Args:
            record: ``[id, kind, name, x, y, hp, max_hp, flags, sts]``, ``kind``
                a kind code.
            kind_keys: The keys of ``welcome.kinds``, by kind code.

        A kind code outside ``kind_keys``, or of an empty key, is malformed.
        A missing or malformed ``sts`` reads as 0; elements after the ninth
        are ignored (room for later versions).
        """
        if not isinstance(record, list) or len(record) < 8:
            return None
        ident, code, name, x, y, hp, max_hp, flags = record[:8]
        if not (_is_int(code) and 0 <= code < len(kind_keys) and isinstance(name, str)):
            return None
        if not all(_is_int(v) for v in (ident, x, y, hp, max_hp, flags)):
            return None
        kind = kind_keys[code]
        if not kind:  # (a malformed welcome.kinds entry)
            return None
        sts = record[8] if len(record) > 8 and _is_int(record[8]) and record[8] >= 0 else 0
        return cls(ident, kind, name, x, y, hp, max_hp, flags, sts)


def _kind_entry(entry: object) -> bool:
    """A well-formed ``welcome.kinds`` entry: ``[key, name, glyph, colour]``, all str."""
    return (
        isinstance(entry, list) and len(entry) >= 4 and all(isinstance(v, str) for v in entry[:4])
    )


def _triples(flat: object) -> list[tuple[int, int, Any]]:
    """``[x, y, v, x, y, v, ...]`` -> ``[(x, y, v), ...]``; bad or partial triples dropped."""
    if not isinstance(flat, list):
        return []
    out = []
    for i in range(0, len(flat) - 2, 3):
        x, y, v = flat[i], flat[i + 1], flat[i + 2]
        if _is_int(x) and _is_int(y):
            out.append((x, y, v))
    return out


class GameModel:
    """What this client knows of the game.

    Attributes:
        player_id: own actor id (from ``welcome``), None before.
        name: own player name.
        token: the resume secret from ``welcome``.
        tick: tick of the latest ``welcome``/``snap``/``delta``.
        tick_rate: ticks per second.
        terrain_table: ``welcome.terrain``, indexed by terrain code.
        kinds: kind key -> ``[name, glyph, colour]``, from ``welcome.kinds``.
        kind_keys: the kind keys of ``welcome.kinds``, by kind code.
        items: ``welcome.items``: item key -> ``[name, glyph, colour,
            category, about]``.
        classes: ``welcome.classes``: ``[key, name]`` pairs.
        spells: ``welcome.spells``: spell key -> ``[name, level, school, aim]``.
        statuses: ``welcome.statuses``: ``[key, name]`` per status code.
        damage_types: ``welcome.damage_types``: damage type keys.
        depth: current level number.
        width: level width ``W`` in cells.
        height: level height ``H`` in cells.
        known: ``uint8[H, W]`` remembered terrain codes, 255 = unknown.
        visible: ``bool[H, W]``, the current field of view.
        actors: actors in view now, by id (including self).
        names: every actor ever seen: id -> player name or kind name.
        objs: remembered top item key per cell ``(x, y)``.
        me: own state, complete (``snap.me`` merged with every ``delta.me``).
        ack: ``seq`` of the last command carried out or rejected, -1 if none.
        info: the latest ``info`` answer per actor id (at most
            :data:`INFO_KEPT`, newest last).
        replaced_tiles: ``(x, y) -> code`` remembered before the latest
            delta's ``tiles`` changed it (for describing ``terrain`` events).
        log: message lines for display; filled by the UI, not by the model.
    """

    def __init__(self, welcome: Welcome | None = None) -> None:
        """Start empty, or from ``welcome`` (same as calling :meth:`apply` on it)."""
        self.player_id: int | None = None
        self.name = ""
        self.token: str | None = None
        self.tick = 0
        self.tick_rate = 10
        self.terrain_table: list[Any] = []
        self.kinds: dict[str, Any] = {}
        self.kind_keys: list[str] = []
        self.items: dict[str, Any] = {}
        self.classes: list[Any] = []
        self.spells: dict[str, Any] = {}
        self.statuses: list[Any] = []
        self.damage_types: list[str] = []
        self.depth = 0
        self.width = 0
        self.height = 0
        self.known: npt.NDArray[np.uint8] = np.full((0, 0), UNKNOWN, dtype=np.uint8)
        self.visible: npt.NDArray[np.bool_] = np.zeros((0, 0), dtype=np.bool_)
        self.actors: dict[int, ActorView] = {}
        self.kept: dict[int, tuple[ActorView, int]] = {}
        """By id, the actors that left the view, with the tick of the delta
        that removed them, kept :data:`~protocol.messages.BACK_TICKS` ticks
        for a delta's ``back`` (protocol 8)."""
        self._prune_at = 0
        self.names: dict[int, str] = {}
        self.objs: dict[tuple[int, int], str] = {}
        self.me: dict[str, Any] = {}
        self.ack = -1
        self.info: dict[int, Info] = {}
        self.replaced_tiles: dict[tuple[int, int], int] = {}
        self.log: collections.deque[str] = collections.deque(maxlen=LOG_LINES)
        self._passable_lut = np.zeros(256, dtype=np.bool_)
        if welcome is not None:
            self.apply(welcome)

    # --- reading -----------------------------------------------------------

    @property
    def position(self) -> tuple[int, int] | None:
        """Own cell ``(x, y)``: from :attr:`me`, else the own actor record; None if unknown."""
        x, y = self.me.get("x"), self.me.get("y")
        if _is_int(x) and _is_int(y):
            return (x, y)
        for view in self.actors.values():
            if view.id == self.player_id or view.is_self:
                return (view.x, view.y)
        return None

    def passable(self) -> npt.NDArray[np.bool_]:
        """``bool[H, W]``: remembered cells whose terrain is passable (unknown = False)."""
        passable: npt.NDArray[np.bool_] = self._passable_lut[self.known]
        return passable

    def display_name(self, view: ActorView) -> str:
        """A player's name, else the kind's name from ``welcome.kinds``, else the kind key."""
        if view.name:
            return view.name
        entry = self.kinds.get(view.kind)
        if isinstance(entry, list) and entry and isinstance(entry[0], str):
            return entry[0]
        return view.kind

    def item_entry(self, key: str) -> tuple[str, str, str, str, dict[str, Any]]:
        """``(name, glyph, colour, category, about)`` of an item key from
        ``welcome.items``; missing parts read as the key with spaces, ``"?"``,
        ``"white"``, ``""`` and ``{}``."""
        entry = self.items.get(key)
        row: list[Any] = list(entry) if isinstance(entry, list) else []
        name = row[0] if row and isinstance(row[0], str) else key.replace("_", " ")
        glyph = row[1] if len(row) > 1 and isinstance(row[1], str) and row[1] else "?"
        colour = row[2] if len(row) > 2 and isinstance(row[2], str) else "white"
        category = row[3] if len(row) > 3 and isinstance(row[3], str) else ""
        about = row[4] if len(row) > 4 and isinstance(row[4], dict) else {}
        return name, glyph, colour, category, about

    def item_name(self, key: str) -> str:
        """An item's name from ``welcome.items`` (the key with spaces if unknown)."""
        return self.item_entry(key)[0]

    def status_name(self, code: int) -> str:
        """The display name of status ``code`` (``"status <code>"`` if unknown)."""
        if 0 <= code < len(self.statuses):
            entry = self.statuses[code]
            if isinstance(entry, list) and len(entry) > 1 and isinstance(entry[1], str):
                return entry[1]
        return f"status {code}"

    def status_names(self, mask: int) -> list[str]:
        """Names of the statuses whose bits are set in an actor's ``sts`` mask."""
        names = []
        code = 0
        while mask > 0 and code < 64:
            if mask & 1:
                names.append(self.status_name(code))
            mask >>= 1
            code += 1
        return names

    def spell_name(self, key: str) -> str:
        """A spell's name from ``welcome.spells`` (the key with spaces if unknown)."""
        entry = self.spells.get(key)
        if isinstance(entry, list) and entry and isinstance(entry[0], str):
            return entry[0]
        return key.replace("_", " ")

    def inventory(self) -> list[InvItem]:
        """``me.inv`` as :class:`InvItem` records (malformed entries skipped)."""
        inv = self.me.get("inv")
        if not isinstance(inv, list):
            return []
        return [item for item in map(InvItem.from_record, inv) if item is not None]

    def known_spells(self) -> list[KnownSpell]:
        """``me.spells`` joined with ``welcome.spells`` (malformed entries skipped)."""
        out = []
        spells = self.me.get("spells")
        for entry in spells if isinstance(spells, list) else []:
            if not isinstance(entry, list) or len(entry) < 5:
                continue
            letter, key, fail, cost, forgotten = entry[:5]
            if not (
                isinstance(letter, str)
                and isinstance(key, str)
                and _is_number(fail)
                and _is_int(cost)
                and isinstance(forgotten, bool)
            ):
                continue
            row = self.spells.get(key)
            table: list[Any] = list(row) if isinstance(row, list) else []
            level = table[1] if len(table) > 1 and _is_int(table[1]) else 0
            school = table[2] if len(table) > 2 and isinstance(table[2], str) else ""
            aim = table[3] if len(table) > 3 and table[3] in ("dir", "cell", "self") else "dir"
            out.append(
                KnownSpell(
                    letter,
                    key,
                    round(fail),
                    cost,
                    forgotten,
                    self.spell_name(key),
                    level,
                    school,
                    aim,
                )
            )
        return out

    def my_statuses(self) -> list[tuple[int, int]]:
        """``me.sts`` as ``(status code, rounds left)`` pairs."""
        sts = self.me.get("sts")
        return [
            (e[0], e[1])
            for e in (sts if isinstance(sts, list) else [])
            if isinstance(e, list) and len(e) >= 2 and _is_int(e[0]) and _is_int(e[1])
        ]

    def food(self) -> tuple[int, int] | None:
        """``me.food`` as ``(nourishment, hunger rating)``, None if absent."""
        food = self.me.get("food")
        if isinstance(food, list) and len(food) >= 2 and _is_int(food[0]) and _is_int(food[1]):
            return food[0], food[1]
        return None

    def resistances(self) -> dict[str, int]:
        """``me.resist``: damage type -> level (non-zero ones)."""
        resist = self.me.get("resist")
        if not isinstance(resist, dict):
            return {}
        return {k: v for k, v in resist.items() if isinstance(k, str) and _is_int(v) and v}

    def looked_at(self, ident: int) -> tuple[bool, InfoAbout] | None:
        """The latest ``info`` about actor ``ident`` as ``(found, about)``; None
        while no answer has come."""
        info = self.info.get(ident)
        if info is None:
            return None
        about = info.about if isinstance(info.about, dict) else {}
        return bool(info.found), InfoAbout.from_about(about, self.kinds)

    def choice_options(self) -> list[str]:
        """The level-up rewards on offer (``me.options``) while ``me.choice`` > 0."""
        choice, options = self.me.get("choice"), self.me.get("options")
        if not (_is_int(choice) and choice > 0 and isinstance(options, list)):
            return []
        return [o for o in options if isinstance(o, str)]

    # --- applying messages ---------------------------------------------------

    def apply(self, msg: ServerMessage) -> list[list[Any]]:
        """Apply one server message.

        ``welcome`` sets the code tables; ``snap`` replaces the whole level
        state; ``delta`` updates it in the order the protocol prescribes
        (``tiles``, ``fov``, ``rm``, ``add``, ``upd``, ``objs``, then ``me``);
        ``info`` is kept in :attr:`info` for the look screen. Other messages
        change nothing here.

        Args:
            msg: a decoded server message.

        Returns:
            The events of a ``delta`` (well-formed ones: non-empty lists whose
            first element is a string), ``[]`` for any other message.

        Raises:
            ProtocolError: ``bad_field`` for a ``snap`` whose ``map`` is not
                ``w * h`` bytes (:func:`protocol.codec.decode_server` already
                refuses those); the model is then unchanged.
        """
        if isinstance(msg, Delta):
            return self._apply_delta(msg)
        if isinstance(msg, Snapshot):
            self._apply_snapshot(msg)
        elif isinstance(msg, Welcome):
            self._apply_welcome(msg)
        elif isinstance(msg, Info):
            self._apply_info(msg)
        return []

    def _apply_info(self, msg: Info) -> None:
        if not (_is_int(msg.id) and isinstance(msg.about, dict)):
            return
        self.info.pop(msg.id, None)
        self.info[msg.id] = msg
        while len(self.info) > INFO_KEPT:
            del self.info[next(iter(self.info))]

    def _apply_welcome(self, msg: Welcome) -> None:
        self.player_id = msg.id
        self.name = msg.name
        self.token = msg.token
        self.tick = msg.tick
        if _is_int(msg.tick_rate) and msg.tick_rate > 0:
            self.tick_rate = msg.tick_rate
        self.terrain_table = list(msg.terrain) if isinstance(msg.terrain, list) else []
        table = msg.kinds if isinstance(msg.kinds, list) else []
        # Every entry keeps its code, so the codes after a malformed one stay
        # right; an entry without a key names nothing (its records are
        # dropped as malformed), one with a key alone shows the key.
        self.kind_keys = [
            e[0] if isinstance(e, list) and e and isinstance(e[0], str) else "" for e in table
        ]
        self.kinds = {e[0]: list(e[1:4]) for e in table if _kind_entry(e)}
        self.items = dict(msg.items) if isinstance(msg.items, dict) else {}
        self.classes = list(msg.classes) if isinstance(msg.classes, list) else []
        self.spells = dict(msg.spells) if isinstance(msg.spells, dict) else {}
        self.statuses = list(msg.statuses) if isinstance(msg.statuses, list) else []
        types = msg.damage_types if isinstance(msg.damage_types, list) else []
        self.damage_types = [t for t in types if isinstance(t, str)]
        lut = np.zeros(256, dtype=np.bool_)
        for code, entry in enumerate(self.terrain_table[:UNKNOWN]):
            if isinstance(entry, list) and len(entry) >= 5 and entry[4] is True:
                lut[code] = True
        self._passable_lut = lut

    def _apply_snapshot(self, msg: Snapshot) -> None:
        w, h, data = msg.w, msg.h, msg.map
        if not (_is_int(w) and _is_int(h) and isinstance(data, bytes)) or w < 0 or h < 0:
            raise ProtocolError(ErrorCode.BAD_FIELD, "snap: w and h must be ints >= 0")
        if len(data) != w * h:
            raise ProtocolError(ErrorCode.BAD_FIELD, f"snap: map must be {w} * {h} bytes")
        self.tick = msg.tick
        self.depth = msg.depth
        self.width, self.height = w, h
        self.known = np.frombuffer(data, dtype=np.uint8).reshape(h, w).copy()
        self.visible = self._fov(msg.fov)
        self.actors = {}
        self.kept = {}  # the server forgets them too (docs/protocol.md, back)
        self._add_actors(msg.actors)
        self.objs = {}
        self._set_objs(msg.objs)
        self.me = dict(msg.me) if isinstance(msg.me, dict) else {}
        self.replaced_tiles = {}
        if _is_int(msg.ack):
            self.ack = msg.ack

    def _apply_delta(self, msg: Delta) -> list[list[Any]]:
        if _is_int(msg.tick):
            self.tick = msg.tick
        else:  # the tick after the last snap or delta's (protocol 9)
            self.tick += 1
        if _is_int(msg.ack):  # the step from the last one (protocol 10)
            self.ack += msg.ack
        self.replaced_tiles = {}
        if msg.tiles is not None:
            known, w, h = self.known, self.width, self.height
            replaced = self.replaced_tiles
            for x, y, code in _triples(msg.tiles):
                if 0 <= x < w and 0 <= y < h and _is_int(code) and 0 <= code <= UNKNOWN:
                    replaced.setdefault((x, y), int(known[y, x]))
                    known[y, x] = code
        if msg.fov is not None:
            self.visible = self._fov(msg.fov)
        self._remove_actors(msg.rm)
        if msg.add is not None:
            self._add_actors(msg.add)
        if isinstance(msg.back, list):
            self._bring_back(msg.back)
        if isinstance(msg.upd, list):
            self._update_actors(msg.upd)
        if isinstance(msg.mv, list):
            self._move_actors(msg.mv)
        if isinstance(msg.st, list):
            self._step_actors(msg.st)
        if msg.objs is not None:
            self._set_objs(msg.objs)
        if isinstance(msg.me, dict):
            self.me.update(msg.me)
        own = self.actors.get(self.player_id) if self.player_id is not None else None
        if own is not None:  # a delta's me has no cell: it is the own record's (protocol 10)
            self.me["x"], self.me["y"] = own.x, own.y
        if not isinstance(msg.ev, list):
            return []
        return [e for e in msg.ev if isinstance(e, list) and e and isinstance(e[0], str)]

    # --- helpers ---------------------------------------------------------------

    def _fov(self, fov: object) -> npt.NDArray[np.bool_]:
        try:
            return unpack_fov(fov, self.width, self.height)
        except ProtocolError:
            return np.zeros((self.height, self.width), dtype=np.bool_)

    def _add_actors(self, records: object) -> None:
        if not isinstance(records, list):
            return
        for record in records:
            view = ActorView.from_record(record, self.kind_keys)
            if view is not None:
                self.actors[view.id] = view
                self.kept.pop(view.id, None)
                self.names[view.id] = self.display_name(view)

    def _remove_actors(self, flat: object) -> None:
        """Apply ``rm``, ids as gaps (protocol 6): each actor leaves the view
        but is kept :data:`~protocol.messages.BACK_TICKS` ticks for ``back``
        (protocol 8); older kept ones are forgotten."""
        tick, actors, kept = self.tick, self.actors, self.kept
        for ident in unpack_ids(flat):
            view = actors.pop(ident, None)
            if view is not None:
                kept[ident] = (view, tick)
        if tick >= self._prune_at:
            self.kept = {a: e for a, e in kept.items() if tick - e[1] <= BACK_TICKS}
            self._prune_at = tick + BACK_TICKS

    def _bring_back(self, flat: list[Any]) -> None:
        """Apply ``back``: ``[gap, x, y, ...]``, kept actors coming back into
        view at a new cell, ids as in ``mv`` (protocol 8,
        :func:`~protocol.messages.unpack_moves`; an id not kept is skipped,
        and a malformed triple ends the list)."""
        for ident, x, y in unpack_moves(flat):
            entry = self.kept.pop(ident, None)
            if entry is not None:
                view = entry[0]
                view.x, view.y = x, y
                self.actors[ident] = view

    def _update_actors(self, records: list[Any]) -> None:
        for record in records:
            if not isinstance(record, list) or len(record) < 6:
                continue
            ident, x, y, hp, max_hp, flags = record[:6]
            view = self.actors.get(ident) if _is_int(ident) else None
            if view is None or not all(_is_int(v) for v in (x, y, hp, max_hp, flags)):
                continue
            view.x, view.y, view.hp, view.max_hp, view.flags = x, y, hp, max_hp, flags
            if len(record) > 6 and _is_int(record[6]) and record[6] >= 0:
                view.sts = record[6]

    def _move_actors(self, flat: list[Any]) -> None:
        """Apply ``mv``: ``[gap, x, y, ...]``, new positions of actors in view,
        ids as gaps (:func:`~protocol.messages.unpack_moves`; an unknown id
        is skipped, and a malformed triple ends the list)."""
        for ident, x, y in unpack_moves(flat):
            view = self.actors.get(ident)
            if view is not None:
                view.x, view.y = x, y

    def _step_actors(self, flat: list[Any]) -> None:
        """Apply ``st``: ``[gap × 8 + direction, ...]``, actors in view that
        stepped one cell from where they were (protocol 7,
        :func:`~protocol.messages.unpack_steps`; an unknown id is skipped,
        and a malformed value ends the list)."""
        for ident, dx, dy in unpack_steps(flat):
            view = self.actors.get(ident)
            if view is not None:
                view.x += dx
                view.y += dy

    def _set_objs(self, flat: object) -> None:
        objs = self.objs
        for x, y, key in _triples(flat):
            if not isinstance(key, str):
                continue
            if key:
                objs[(x, y)] = key
            else:
                objs.pop((x, y), None)
