"""Sight for every player of a level at once: fields of view over the
level's occupancy, and the visible sets as one array of pairs.

A level's :class:`Sight` holds one slot per living player on it (its place
and its field of view as a padded mask) and the occupancy last taken, so
that the players' visible sets are built together with numpy gathers
(:meth:`server.sim.world.World._visible_sets`), not one player at a time.
What every player of the level sees is kept as one sorted ``int64`` array
of *pairs* (:func:`pair_keys`: the player's id in the high 32 bits, the
seen actor's in the low 32): who sees whom, for the whole level, with no
Python object per player. A set that changed is found by comparing the
arrays (:meth:`Sight.replace_pairs`); the views compare a player's pairs
of two ticks the same way (:mod:`server.game.interest`).

:class:`FovCache` keeps the fields of view computed from each cell while
the terrain around it stays the same.

This module imports numpy and :mod:`server.sim.fov` only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from server.sim.fov import FOV_RADIUS, FieldOfView

PAIR_SHIFT = 32
"""A pair is ``owner << PAIR_SHIFT | seen`` (:func:`pair_keys`)."""
ID_MASK = (1 << PAIR_SHIFT) - 1
"""The low bits of a pair: the seen actor's id."""

NO_PAIRS: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
"""No pairs (read-only)."""
NO_PAIRS.flags.writeable = False


def pair_keys(
    owners: NDArray[np.integer[Any]], seen: NDArray[np.integer[Any]]
) -> NDArray[np.int64]:
    """The pairs ``owners[i] sees seen[i]`` as ``int64`` keys, ``owner << 32 |
    seen``: sorted keys hold each owner's run of seen ids in increasing
    order, and runs by increasing owner. Owners are players, whose ids are
    below ``2**30`` (:class:`~server.sim.world.World`), so a pair is below
    ``2**62``; seen ids are below ``2**32``."""
    keys: NDArray[np.int64] = (owners.astype(np.int64) << PAIR_SHIFT) | seen.astype(np.int64)
    return keys


def in_sorted(values: NDArray[np.int64], table: NDArray[np.int64]) -> NDArray[np.bool_]:
    """``bool[len(values)]``: whether each of ``values`` is in ``table``
    (``int64``, sorted increasing); one binary search each."""
    if not table.size:
        return np.zeros(len(values), dtype=np.bool_)
    at = np.searchsorted(table, values)
    at[at == len(table)] = 0
    found: NDArray[np.bool_] = table[at] == values
    return found


def owned_by(pairs: NDArray[np.int64], owners: NDArray[np.int64]) -> NDArray[np.bool_]:
    """``bool[len(pairs)]``: whether each of the sorted ``pairs`` belongs to
    one of ``owners`` (sorted). One search per owner's run, not per pair."""
    own = pairs >> PAIR_SHIFT
    starts = np.flatnonzero(own[1:] != own[:-1]) + 1
    lengths = np.diff(starts, prepend=0, append=len(own))
    first = np.concatenate(([0], starts))
    return np.repeat(in_sorted(own[first], owners), lengths)


def difference(
    old: NDArray[np.int64], new: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``(old − new, new − old)`` of two sorted arrays of distinct pairs
    (each below ``2**62``), both sorted: one merge of the two, each value
    tagged with its side in its lowest bit, and the values without a twin."""
    both = np.concatenate((old << 1, (new << 1) | 1))
    both.sort(kind="stable")  # two sorted runs: one merge
    twin = (both[1:] >> 1) == (both[:-1] >> 1)
    single = np.ones(len(both), dtype=np.bool_)
    single[1:] &= ~twin
    single[:-1] &= ~twin
    alone = both[single]
    side = (alone & 1).astype(np.bool_)
    return alone[~side] >> 1, alone[side] >> 1


def run_gaps(pairs: NDArray[np.int64]) -> NDArray[np.int64]:
    """For sorted ``pairs``, each seen id minus the one before it in its
    owner's run, the first of a run minus 0: the gaps the protocol sends ids
    as (``rm``, ``st``, ``mv``; docs/protocol.md)."""
    ids = pairs & ID_MASK
    gaps = ids.copy()
    if len(ids) > 1:
        gaps[1:] -= ids[:-1]
        first = (pairs[1:] >> PAIR_SHIFT) != (pairs[:-1] >> PAIR_SHIFT)
        gaps[1:][first] = ids[1:][first]
    return gaps


class FovCache:
    """One level's kept fields of view (:meth:`~server.sim.world.World._cached_fov`), by cell
    index ``y * width + x``.

    It holds arrays under int keys only, none of them objects the garbage
    collector tracks. That matters: with the thresholds
    :mod:`server.net.collector` sets, a young collection comes only after
    50,000 more tracked objects than were freed, but then walks every
    object made since the last one (most of a busy world: 20-40 ms with
    4,000 players). A world in steady play frees what it makes, so none
    comes; a :class:`FieldOfView` and two tuples kept per cell brought
    them back while the cache filled.
    """

    __slots__ = ("masks", "visible", "width")

    def __init__(self, width: int) -> None:
        self.width = width
        self.visible: dict[int, NDArray[np.bool_]] = {}
        """Cell -> the ``visible`` array of its field of view."""
        self.masks: dict[int, NDArray[np.bool_]] = {}
        """Cell -> its field of view's padded mask."""

    def mask_of(self, fov: FieldOfView, x: int, y: int) -> NDArray[np.bool_] | None:
        """The padded mask kept for cell ``(x, y)`` if ``fov`` is the field of
        view kept for it (the same ``visible`` array), else None."""
        key = y * self.width + x
        return self.masks[key] if self.visible.get(key) is fov.visible else None

    def drop_near(self, cells: list[tuple[int, int]], radius: int) -> None:
        """Forget the fields of view from the cells within ``radius``
        (Chebyshev) of any of ``cells``."""
        width, visible, masks = self.width, self.visible, self.masks
        if len(cells) * (2 * radius + 1) ** 2 > len(visible):
            near = [
                key
                for key in visible
                if any(
                    abs(key % width - cx) <= radius and abs(key // width - cy) <= radius
                    for cx, cy in cells
                )
            ]
        else:
            near = [
                (cy + dy) * width + cx + dx
                for cx, cy in cells
                for dy in range(-radius, radius + 1)
                for dx in range(-radius, radius + 1)
                if 0 <= cx + dx < width
            ]
        for key in near:
            if visible.pop(key, None) is not None:
                del masks[key]


class Sight:
    """One level's fields of view and occupancy, for building visible sets.

    Every living player on the level has a *slot*: its id (``owners``), its
    place (``xs``, ``ys``) and its :func:`~server.sim.fov.padded_mask`
    (``masks``, ``bool[slots, SIDE, SIDE]``, ``SIDE = 2R + 1``, ``R =
    FOV_RADIUS``). ``padded`` is the occupancy as last taken by
    :meth:`update` (``int32[H + 2R, W + 2R]``, with ``R`` cells of −1 around
    the level) and ``changed`` marks, in the same frame, the cells whose
    occupant differed from the update before; ``occupant_windows[y, x]`` and
    ``changed_windows[y, x]`` are their ``SIDE × SIDE`` windows centred on
    level cell ``(x, y)`` (views, not copies).

    ``pairs`` is what the slots' players see, as sorted :func:`pair_keys`
    (``int64[P]``, each player's run of seen ids, invisible ones included),
    as of the last :meth:`replace_pairs`; ``gained`` and ``lost`` are what
    that call added and took away, and ``changed_at`` its tick. The arrays
    are replaced, never changed in place, so one taken earlier still says
    what was seen then.
    """

    __slots__ = (
        "_free",
        "_fresh",
        "_gone",
        "_has_set",
        "_inner",
        "any_change",
        "before",
        "changed",
        "changed_at",
        "changed_windows",
        "count",
        "gained",
        "lost",
        "masks",
        "occupant_windows",
        "owners",
        "padded",
        "pairs",
        "version",
        "xs",
        "ys",
    )

    def __init__(self, shape: tuple[int, ...]) -> None:
        r = FOV_RADIUS
        side = 2 * r + 1
        height, width = shape
        self.before = np.full(shape, -1, dtype=np.int32)
        self.padded = np.full((height + 2 * r, width + 2 * r), -1, dtype=np.int32)
        self.changed = np.zeros(self.padded.shape, dtype=np.bool_)
        self.occupant_windows = np.lib.stride_tricks.sliding_window_view(self.padded, (side, side))
        self.changed_windows = np.lib.stride_tricks.sliding_window_view(self.changed, (side, side))
        self.any_change = False
        self.version = -1
        """The level's terrain version when fields of view were last kept (:meth:`World._keep_fovs`)."""
        self._inner = (slice(r, r + height), slice(r, r + width))
        self.masks = np.zeros((0, side, side), dtype=np.bool_)
        self.owners = np.zeros(0, dtype=np.int64)
        self.xs = np.zeros(0, dtype=np.intp)
        self.ys = np.zeros(0, dtype=np.intp)
        self.count = 0
        """Slots in use."""
        self._has_set = np.zeros(0, dtype=np.bool_)
        """By slot: its player has been given a visible set since it was placed there."""
        self._free: list[int] = []
        self._fresh: list[int] = []
        self._gone: list[int] = []
        """Players whose slot was released since the last :meth:`replace_pairs`."""
        self.pairs = NO_PAIRS
        self.gained = NO_PAIRS
        """The pairs the last :meth:`replace_pairs` added (sorted)."""
        self.lost = NO_PAIRS
        """The pairs the last :meth:`replace_pairs` took away (sorted), those
        of released players included."""
        self.changed_at = -1
        """The tick of the last :meth:`replace_pairs`."""

    def place(self, pid: int, x: int, y: int, mask: NDArray[np.bool_], slot: int | None) -> int:
        """Put player ``pid`` at ``(x, y)`` with field of view ``mask`` into
        ``slot`` (its own), or a free slot when None; return the slot. Its
        visible set is rebuilt at the next :meth:`take_fresh`."""
        if slot is None:
            if not self._free:
                self._grow()
            slot = self._free.pop()
            self.count += 1
            self._has_set[slot] = False
        self.owners[slot] = pid
        self.xs[slot], self.ys[slot] = x, y
        self.masks[slot] = mask
        self._fresh.append(slot)
        return slot

    def release(self, slot: int) -> None:
        """Free ``slot`` (its player died, left, or went to another level):
        its pairs go at the next :meth:`replace_pairs`."""
        self._gone.append(int(self.owners[slot]))
        self.owners[slot] = -1
        self._free.append(slot)
        self.count -= 1

    def active(self) -> NDArray[np.intp]:
        """The slots in use, in increasing order."""
        return np.flatnonzero(self.owners >= 0)

    def take_fresh(self) -> NDArray[np.intp]:
        """The slots in use that were placed since the last call, in increasing order."""
        pick = np.zeros(len(self.owners), dtype=np.bool_)
        pick[self._fresh] = True  # one pass over the slots, not a sort (np.unique)
        self._fresh.clear()
        pick &= self.owners >= 0
        return np.flatnonzero(pick)

    def update(self, occupancy: NDArray[np.int32]) -> None:
        """Take the level's current ``occupancy`` (``int32[H, W]``): mark the
        cells that changed since the last call and copy it in."""
        changed = self.changed[self._inner]
        np.not_equal(occupancy, self.before, out=changed)
        self.any_change = bool(changed.any())
        if self.any_change:
            np.copyto(self.before, occupancy)
            self.padded[self._inner] = occupancy

    def released(self) -> bool:
        """Whether a slot was released since the last :meth:`replace_pairs`."""
        return bool(self._gone)

    def replace_pairs(
        self, chosen: NDArray[np.intp], pairs: NDArray[np.int64], tick: int
    ) -> NDArray[np.int64]:
        """Replace the pairs of the players in slots ``chosen`` with
        ``pairs`` (sorted; theirs only, rebuilt from their fields of view),
        drop those of the players released since the last call, and return
        the ids of the players of ``chosen`` whose visible set changed, or
        who had none since they were placed, in increasing order.

        Found for all of them at once: the old and new pairs are compared as
        arrays, so a player whose set is the same costs no Python step. The
        pairs that went and came are kept as :attr:`lost` and
        :attr:`gained`, with ``tick`` as :attr:`changed_at`.
        """
        chosen_ids = np.sort(self.owners[chosen])
        drop = chosen_ids
        if self._gone:
            drop = np.union1d(chosen_ids, np.array(self._gone, dtype=np.int64))
            self._gone.clear()
        kept = self.pairs
        if len(chosen) == self.count and len(drop) == len(chosen):
            old, kept = kept, NO_PAIRS  # every player's set was rebuilt (a crowd)
        elif kept.size and drop.size:
            dropped = owned_by(kept, drop)
            old = kept[dropped]
            kept = kept[~dropped]
        else:
            old = NO_PAIRS
        if kept.size:
            merged = np.concatenate((kept, pairs))
            merged.sort(kind="stable")  # two sorted runs: one merge
            self.pairs = merged
        else:
            self.pairs = pairs
        self.lost, self.gained = difference(old, pairs)
        self.changed_at = tick
        first = self.owners[chosen[~self._has_set[chosen]]]
        self._has_set[chosen] = True
        owners = np.concatenate((self.lost >> PAIR_SHIFT, self.gained >> PAIR_SHIFT, first))
        changed = np.unique(owners)
        found: NDArray[np.int64] = changed[in_sorted(changed, chosen_ids)]
        return found

    def _grow(self) -> None:
        old = len(self.owners)
        new = max(16, 2 * old)
        masks = np.zeros((new, *self.masks.shape[1:]), dtype=np.bool_)
        masks[:old] = self.masks
        self.masks = masks
        self.owners = np.concatenate([self.owners, np.full(new - old, -1, dtype=np.int64)])
        self.xs = np.concatenate([self.xs, np.zeros(new - old, dtype=np.intp)])
        self.ys = np.concatenate([self.ys, np.zeros(new - old, dtype=np.intp)])
        self._has_set = np.concatenate([self._has_set, np.zeros(new - old, dtype=np.bool_)])
        self._free.extend(range(new - 1, old - 1, -1))
