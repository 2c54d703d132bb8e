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

import sys
from typing import Any

import numpy as np
from numpy.typing import NDArray

from server.sim.fov import FOV_RADIUS, FieldOfView, field_of_view, padded_mask

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


FOV_BLOCK = 128
"""Rows per block of :class:`FovCache` (about 37 kB each)."""


class FovCache:
    """One level's kept fields of view, by cell (:meth:`rows_of`).

    The padded masks (:func:`~server.sim.fov.padded_mask`) are rows of
    stacked arrays, blocks of :data:`FOV_BLOCK` rows (``bool[FOV_BLOCK,
    SIDE, SIDE]``), found through ``rows`` (``int32[H * W]``, by cell index
    ``y * W + x``: the cell's row, or −1); :meth:`masks` gathers many in a
    few numpy calls. Each row also has its field of view's ``visible``
    array, a read-only view of the row clipped to the level (``views``), the
    one object every :class:`FieldOfView` taken from that cell shares while
    the entry stands (the views pack its bits once per such array).

    A dropped entry's row (:meth:`drop_near`) is written again only once
    nothing but this cache holds its ``visible`` array (a :class:`FieldOfView`
    handed out earlier may still be read, and a view compares the one it
    last sent with a new one); until then new rows come from new blocks.
    Blocks are never moved or copied, so an array handed out keeps only its
    block alive. Past ``limit`` entries, the cache starts afresh.

    **Memory**, per level: 289 bytes a row (``SIDE = 17``) in blocks, and a
    view object of about 140 bytes each: about 0.47 kB per cell whose field
    of view is kept (a default level's 2,208 walkable cells, all kept: about
    1 MB); at most ``limit`` entries, 4,096 in the world (about 1.8 MB),
    plus the rows of dropped entries still held (by players' fields of view
    and the views' packed-bits cache, which held those arrays before too),
    the index (four bytes per cell of the level, 52 kB for 198 × 66) and a
    padded copy of the terrain (17 kB).

    It holds arrays, ints and lists of arrays only: nothing the garbage
    collector walks but three lists. That matters: with the thresholds
    :mod:`server.net.collector` sets, a young collection comes only after
    50,000 more tracked objects than were freed, but then walks every
    object made since the last one (most of a busy world: 20-40 ms with
    4,000 players). A world in steady play frees what it makes, so none
    comes; a :class:`FieldOfView` and two tuples kept per cell brought
    them back while the cache filled.
    """

    __slots__ = (
        "_dropped",
        "_free",
        "_inner",
        "_live",
        "_terrain",
        "_terrain_windows",
        "blocks",
        "height",
        "limit",
        "rows",
        "views",
        "width",
    )

    def __init__(self, height: int, width: int, limit: int) -> None:
        """A cache for a level of ``height × width`` cells holding at most
        ``limit`` entries (``>= 1``).

        Raises:
            ValueError: ``limit`` out of range.
        """
        if limit < 1:
            raise ValueError(f"limit {limit} below 1")
        self.height, self.width, self.limit = height, width, limit
        self.rows = np.full(height * width, -1, dtype=np.int32)
        """Cell index ``y * W + x`` -> its row, or −1."""
        self.blocks: list[NDArray[np.bool_]] = []
        """Row ``r`` is ``blocks[r // FOV_BLOCK][r % FOV_BLOCK]``, a padded mask."""
        self.views: list[NDArray[np.bool_] | None] = []
        """Row -> its cell's ``visible`` array (None: a free row)."""
        self._free: list[int] = []
        """Rows nobody holds, to be written again."""
        self._dropped: list[int] = []
        """Rows of dropped entries whose ``visible`` may still be held."""
        self._live = 0
        """Cells with a row."""
        r = FOV_RADIUS
        side = 2 * r + 1
        self._terrain = np.full((height + 2 * r, width + 2 * r), 255, dtype=np.uint8)
        """The level's terrain with ``FOV_RADIUS`` cells of 255 around it, as
        last read by :meth:`terrain_windows`."""
        self._terrain_windows = np.lib.stride_tricks.sliding_window_view(
            self._terrain, (side, side)
        )
        self._inner = (slice(r, r + height), slice(r, r + width))

    def __len__(self) -> int:
        """Cells whose field of view is kept."""
        return self._live

    def rows_of(
        self, transparent: NDArray[np.bool_], xs: NDArray[np.intp], ys: NDArray[np.intp]
    ) -> NDArray[np.intp]:
        """``intp[n]``: the rows of the fields of view from cells ``(xs[i],
        ys[i])``, each computed (once per cell) if not kept.

        Args:
            transparent: The level's ``bool[H, W]``, True where light passes.
            xs: Cell columns, ``intp[n]``, on the level.
            ys: Cell rows, ``intp[n]``.
        """
        cells = ys * self.width + xs
        rows = self.rows[cells]
        missing = rows < 0
        if not missing.any():
            found: NDArray[np.intp] = rows.astype(np.intp)
            return found
        new = np.unique(cells[missing])
        if self._live + len(new) > self.limit:
            self._start_afresh()
            new = np.unique(cells)
        self._room(len(new))
        for cell in new.tolist():
            y, x = divmod(cell, self.width)
            self._add(cell, x, y, field_of_view(transparent, x, y, FOV_RADIUS))
        found = self.rows[cells].astype(np.intp)
        return found

    def masks(self, rows: NDArray[np.intp]) -> NDArray[np.bool_]:
        """``bool[n, SIDE, SIDE]``: the padded masks of ``rows``."""
        blocks = self.blocks
        if len(blocks) == 1:
            one: NDArray[np.bool_] = blocks[0][rows]
            return one
        out = np.empty((len(rows), *blocks[0].shape[1:]), dtype=np.bool_)
        block = rows // FOV_BLOCK
        for b in np.unique(block).tolist():
            at = block == b
            out[at] = blocks[b][rows[at] - b * FOV_BLOCK]
        return out

    def terrain_windows(
        self, terrain: NDArray[np.uint8], xs: NDArray[np.intp], ys: NDArray[np.intp]
    ) -> NDArray[np.uint8]:
        """``uint8[n, SIDE, SIDE]``: the windows of ``terrain`` (the level's,
        ``uint8[H, W]``) centred on cells ``(xs[i], ys[i])``, indexed ``[i, y
        - ys[i] + R, x - xs[i] + R]``; 255 off the level."""
        self._terrain[self._inner] = terrain  # a copy of the level's: 13 kB
        windows: NDArray[np.uint8] = self._terrain_windows[ys, xs]
        return windows

    def fovs(self, rows: list[int], xs: list[int], ys: list[int]) -> list[FieldOfView]:
        """A :class:`FieldOfView` from each cell ``(xs[i], ys[i])``, whose
        field of view is in ``rows[i]`` (:meth:`rows_of`, this update: a
        dropped row has no ``visible``), sharing its ``visible`` array."""
        r, views = FOV_RADIUS, self.views
        return [
            FieldOfView(x - r if x > r else 0, y - r if y > r else 0, views[row])  # type: ignore[arg-type]
            for row, x, y in zip(rows, xs, ys, strict=True)
        ]

    def drop_near(self, cells: list[tuple[int, int]], radius: int) -> None:
        """Forget the fields of view from the cells within ``radius``
        (Chebyshev) of any of ``cells``."""
        grid = self.rows.reshape(self.height, self.width)
        for cx, cy in cells:
            window = grid[
                max(0, cy - radius) : cy + radius + 1, max(0, cx - radius) : cx + radius + 1
            ]
            kept = window[window >= 0]
            if kept.size:
                self._dropped.extend(kept.tolist())
                self._live -= len(kept)
                window[...] = -1

    def _add(self, cell: int, x: int, y: int, fov: FieldOfView) -> None:
        """Keep ``fov``, the field of view from cell ``(x, y)``, in a free
        row (:meth:`_room` made sure of one)."""
        row = self._free.pop()
        self._live += 1
        self.rows[cell] = row
        block = self.blocks[row // FOV_BLOCK]
        block[row % FOV_BLOCK] = padded_mask(fov, x, y, FOV_RADIUS)
        view: NDArray[np.bool_] = block[row % FOV_BLOCK][_on_level(self.height, self.width, x, y)]
        view.flags.writeable = False
        self.views[row] = view

    def _room(self, n: int) -> None:
        """Make ``n`` rows free: rows of dropped entries nobody holds any
        more, else a new block (rows still held are bounded by what holds
        them: the players' fields of view and those their views keep)."""
        if len(self._free) >= n:
            return
        views, held = self.views, []
        for row in self._dropped:
            # Held by views and getrefcount's argument alone: nobody else
            # can read the row (a view of a view refers to the block).
            if sys.getrefcount(views[row]) <= 2:
                views[row] = None
                self._free.append(row)
            else:
                held.append(row)
        self._dropped = held
        side = 2 * FOV_RADIUS + 1
        while len(self._free) < n:
            first = len(views)
            self.blocks.append(np.zeros((FOV_BLOCK, side, side), dtype=np.bool_))
            views.extend([None] * FOV_BLOCK)
            self._free.extend(range(first + FOV_BLOCK - 1, first - 1, -1))

    def _start_afresh(self) -> None:
        """Forget every entry and row (arrays handed out keep their blocks)."""
        self.rows[:] = -1
        self.blocks, self.views, self._free, self._dropped = [], [], [], []
        self._live = 0


def remember_windows(
    grids: list[NDArray[np.uint8]],
    terrain: NDArray[np.uint8],
    masks: NDArray[np.bool_],
    xs: list[int],
    ys: list[int],
) -> tuple[list[int], list[int]]:
    """Map memory brought up to date for many viewers at once.

    Viewer ``i`` stands at ``(xs[i], ys[i])``, sees ``masks[i]`` and
    remembers ``grids[i]`` (its map memory of the level, ``uint8[H, W]``,
    255 where never seen); ``terrain[i]`` is the level's terrain on its
    window (:meth:`FovCache.terrain_windows`). The windows (``[n, SIDE,
    SIDE]``) are indexed ``[i, y - ys[i] + R, x - xs[i] + R]``, ``R =
    FOV_RADIUS``. The cells in view whose memory differs from the terrain
    are *fresh*: found for all viewers with a few numpy calls, and written
    into the grids of the viewers that have any.

    Returns:
        ``(counts, cells)``: ``counts[i]`` fresh cells of viewer ``i``, and
        every viewer's fresh cells, viewer by viewer, each row by row, as a
        flat ``[x, y, code, ...]`` list (viewer ``i``'s are the ``3 *
        counts[i]`` values after those of the viewers before it).
    """
    r = FOV_RADIUS
    memory = np.empty(masks.shape, dtype=np.uint8)  # off the level: never read
    height, width = grids[0].shape if grids else (0, 0)
    for i, grid in enumerate(grids):
        x, y = xs[i], ys[i]
        if r <= x < width - r and r <= y < height - r:
            memory[i] = grid[y - r : y + r + 1, x - r : x + r + 1]
        else:
            on = _on_level(height, width, x, y)
            memory[i][on] = grid[max(0, y - r) : y + r + 1, max(0, x - r) : x + r + 1]
    fresh = memory != terrain
    fresh &= masks
    counts = np.count_nonzero(fresh.reshape(len(masks), -1), axis=1)
    if not counts.any():
        return counts.tolist(), []
    at, wy, wx = np.nonzero(fresh)
    cells = np.empty((len(at), 3), dtype=np.int64)
    cells[:, 0] = np.asarray(xs)[at] + wx - r
    cells[:, 1] = np.asarray(ys)[at] + wy - r
    cells[:, 2] = terrain[at, wy, wx]
    np.copyto(memory, terrain, where=fresh)
    for i in np.flatnonzero(counts).tolist():
        x, y = xs[i], ys[i]
        on = _on_level(height, width, x, y)
        grids[i][max(0, y - r) : y + r + 1, max(0, x - r) : x + r + 1] = memory[i][on]
    return counts.tolist(), cells.ravel().tolist()


def _on_level(height: int, width: int, x: int, y: int) -> tuple[slice, slice]:
    """The part of the ``SIDE × SIDE`` window centred on ``(x, y)`` that lies
    on a level of ``height × width`` cells, as ``(rows, cols)`` of the window."""
    r = FOV_RADIUS
    rows = slice(max(0, r - y), min(2 * r + 1, height - y + r))
    return rows, slice(max(0, r - x), min(2 * r + 1, width - x + r))


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

    def place_many(
        self,
        pids: list[int],
        xs: NDArray[np.intp],
        ys: NDArray[np.intp],
        masks: NDArray[np.bool_],
        slots: NDArray[np.intp],
    ) -> NDArray[np.intp]:
        """:meth:`place` for many players at once: player ``pids[i]`` at
        ``(xs[i], ys[i])`` with field of view ``masks[i]`` (``bool[n, SIDE,
        SIDE]``) into ``slots[i]``, its own, or a free slot where it is −1;
        return the slots (``intp[n]``; ``slots`` is filled in)."""
        new = np.flatnonzero(slots < 0)
        if new.size:
            while len(self._free) < len(new):
                self._grow()
            taken = self._free[-len(new) :]
            del self._free[-len(new) :]
            taken.reverse()  # the order place() pops them in
            slots[new] = taken
            self.count += len(new)
            self._has_set[taken] = False
        self.owners[slots] = pids
        self.xs[slots] = xs
        self.ys[slots] = ys
        self.masks[slots] = masks
        self._fresh.extend(slots.tolist())
        return slots

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
