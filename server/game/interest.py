"""What changed in each player's view, for every player of a level at once.

The world keeps who sees whom on a level as one sorted array of pairs
(:meth:`~server.sim.world.World.visible_pairs`: the player's id in the high
32 bits of an ``int64``, the seen actor's in the low), and the pairs its
last step added and took away. Crossed with the tick's changed actors
(:class:`~server.game.index.TickIndex`: one-cell steps, longer moves, other
changes), those arrays give every player's ``rm``, ``add``, ``st``, ``mv``
and ``upd`` ids with a few numpy operations per level and tick, already
sorted and gap-coded as the protocol sends them (docs/protocol.md). A
player's frame then takes its lists from the level's dicts
(:class:`~server.game.views.LevelFrames`) instead of crossing sets and
walking ids one by one (issue 44: the per-player Python
left is the player's own few rows).

Only players whose message is built from their whole visible set can use
them (:meth:`~server.sim.world.World.sees_whole`: nothing invisible is cut
from it, this tick or the last); :class:`~server.game.views.LevelFrames`
checks that, and builds the others' lists from sets as before.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from server.sim.sight import ID_MASK, PAIR_SHIFT, in_sorted, run_gaps

MOVED = 8
"""The kind of a changed actor whose position alone changed, by more than
one cell (an ``mv`` triple); kinds 0-7 are one-cell steps by direction code
(:data:`~protocol.messages.STEP_CODES`), :data:`OTHER` is the rest."""
OTHER = 9
"""The kind of a changed actor sent as a whole ``upd`` row."""

Lists = tuple[
    list[int] | None,
    list[int] | None,
    list[int] | None,
    list[int] | None,
    list[int] | None,
    list[int] | None,
]
"""One player's ``(rm, rm_ids, add_ids, st, mv, upd_ids)``, each None when
empty: ``rm`` as the protocol's gaps and ``rm_ids`` as ids, the ids that
came into view, the ``st`` codes, the ``mv`` triples (flat), and the ids of
the actors in view sent as ``upd`` rows; ids increasing in each."""


class ChangedActors:
    """The tick's changed actors as arrays, made once per tick.

    Args:
        steps: By id, the direction code of each actor that moved one cell.
        moves: By id, the ``(x, y)`` of each that moved further.
        others: The ids of the other changed actors (``upd`` rows).
    """

    __slots__ = ("_first", "_table", "ids", "kinds", "xs", "ys")

    def __init__(
        self, steps: dict[int, int], moves: dict[int, tuple[int, int]], others: list[int]
    ) -> None:
        ns, nm = len(steps), len(moves)
        ids = np.array([*steps, *moves, *others], dtype=np.int64)
        kinds = np.full(len(ids), OTHER, dtype=np.int64)
        kinds[:ns] = np.fromiter(steps.values(), np.int64, ns)
        kinds[ns : ns + nm] = MOVED
        xs = np.zeros(len(ids), dtype=np.int64)
        ys = np.zeros(len(ids), dtype=np.int64)
        if nm:
            cells = np.array(list(moves.values()), dtype=np.int64)
            xs[ns : ns + nm] = cells[:, 0]
            ys[ns : ns + nm] = cells[:, 1]
        order = np.argsort(ids)
        self.ids = ids[order]
        """``int64[C]``: the changed actors' ids, increasing."""
        self.kinds = kinds[order]
        """``int64[C]``: each one's kind (0-7 a step's direction, :data:`MOVED`, :data:`OTHER`)."""
        self.xs = xs[order]
        """``int64[C]``: the cell a :data:`MOVED` actor moved to (0 for the others)."""
        self.ys = ys[order]
        self._first = int(self.ids[0]) - 1 if len(ids) else 0
        self._table: NDArray[np.int64] | None = None
        """By ``id - _first``, the actor's position in :attr:`ids` or -1,
        with a -1 at each end (:meth:`find`); made when first needed, if
        the ids span at most :data:`TABLE_SPAN` values."""
        if len(ids) and int(self.ids[-1]) - self._first < TABLE_SPAN:
            table = np.full(int(self.ids[-1]) - self._first + 2, -1, dtype=np.int64)
            table[self.ids - self._first] = np.arange(len(ids))
            self._table = table

    def find(self, seen: NDArray[np.int64]) -> NDArray[np.int64]:
        """``int64[len(seen)]``: each id's position in :attr:`ids`, or -1
        when that actor did not change. One gather from a table by id when
        the changed ids are close together (as a level's are: players and
        monsters are numbered as they come), else a binary search each."""
        ids = self.ids
        if not ids.size:
            return np.full(len(seen), -1, dtype=np.int64)
        table = self._table
        if table is not None:
            found: NDArray[np.int64] = table[np.clip(seen - self._first, 0, len(table) - 1)]
            return found
        at = np.searchsorted(ids, seen)
        at[at == len(ids)] = 0
        return np.where(ids[at] == seen, at, -1)


TABLE_SPAN = 1 << 16
"""The widest span of changed ids that :meth:`ChangedActors.find` looks up
in a table (512 KB of ``int64``); wider ones are searched."""


class ViewChanges:
    """For one level and tick, every player's :data:`Lists`, by player id.

    Args:
        pairs: Who sees whom on the level now (sorted pairs).
        gained: The pairs that came since the last tick (sorted).
        lost: The pairs that went since the last tick (sorted).
        changed: The tick's changed actors.

    Each kind of list is kept by player (a dict each, read by
    :class:`~server.game.views.LevelFrames` directly) only for the players
    that have one (most of a walking crowd has ``st`` codes; a few have ``upd``
    rows).
    """

    __slots__ = ("add", "mv", "rm", "rm_ids", "st", "upd")

    def __init__(
        self,
        pairs: NDArray[np.int64],
        gained: NDArray[np.int64],
        lost: NDArray[np.int64],
        changed: ChangedActors,
    ) -> None:
        at = changed.find(pairs & ID_MASK)
        hit = at >= 0
        seen = pairs[hit]  # the pairs whose seen actor changed
        at = at[hit]
        if gained.size and seen.size:  # those just come into view go whole, in add
            stayed = ~in_sorted(seen, gained)
            seen = seen[stayed]
            at = at[stayed]
        kinds = changed.kinds[at]
        step = kinds < MOVED
        steps = seen[step]
        far = kinds == MOVED
        moves = seen[far]
        others = seen[kinds == OTHER]
        self.rm = _by_owner(lost, run_gaps(lost), 1)
        """By player, its ``rm``: the ids that left its view as the protocol's gaps."""
        self.rm_ids = _by_owner(lost, lost & ID_MASK, 1)
        """By player, the ids that left its view."""
        self.add = _by_owner(gained, gained & ID_MASK, 1)
        """By player, the ids that came into its view."""
        self.st = _by_owner(steps, (run_gaps(steps) << 3) | kinds[step], 1)
        """By player, its ``st`` codes."""
        mv = np.stack((run_gaps(moves), changed.xs[at[far]], changed.ys[at[far]]), axis=1)
        self.mv = _by_owner(moves, mv.ravel(), 3)
        """By player, its ``mv`` triples (flat)."""
        self.upd = _by_owner(others, others & ID_MASK, 1)
        """By player, the ids in its view sent as ``upd`` rows."""

    def get(self, pid: int) -> Lists:
        """Player ``pid``'s lists (each None when empty)."""
        return (
            self.rm.get(pid),
            self.rm_ids.get(pid),
            self.add.get(pid),
            self.st.get(pid),
            self.mv.get(pid),
            self.upd.get(pid),
        )


def _by_owner(
    pairs: NDArray[np.int64], values: NDArray[np.int64], width: int
) -> dict[int, list[int]]:
    """``values`` (``width`` of them per pair of the sorted ``pairs``) cut
    into one list per owner that has pairs, by owner."""
    if not pairs.size:
        return {}
    own = pairs >> PAIR_SHIFT
    starts = np.flatnonzero(own[1:] != own[:-1]) + 1
    owners = own[np.concatenate(([0], starts))].tolist()
    bounds = (starts * width).tolist()
    flat = values.tolist()
    begins = [0, *bounds]
    ends = [*bounds, len(flat)]
    return {o: flat[b:e] for o, b, e in zip(owners, begins, ends, strict=True)}
