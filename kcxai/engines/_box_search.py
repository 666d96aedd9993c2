"""The batched branch and bound of one query and one rival: boxes of values split until each is decided.

A *box* holds a range of value numbers per free feature (a set of values, as a bit mask, for a free
feature of :attr:`~kcxai.engines._box_leaves.LeafTable.set_features`) and, per tree, the rows (leaves)
whose path meets it. A tree all of whose rows have one value is *settled*: its value joins the box's
constant part and its rows are dropped. The box's lower bound is the constant part plus each unsettled
tree's lowest value, its upper bound the same with the highest. A box whose lower bound is above the
rival's threshold holds no counterexample; a box whose upper bound is not holds one at each of its
points (its lowest values are returned). Otherwise the box is split in two (:meth:`BoxSearch.split`),
and the children of lowest bounds are searched first.

Boxes are evaluated and split in batches (:class:`BoxBatch`: the boxes of a batch side by side in
numpy arrays, their rows grouped by box), depth first, the batch width doubling from 1 to
:attr:`BoxSearch.WIDTH` as a search grows long. Counterexamples are also guessed by steepest descent on
the margin (:mod:`kcxai.engines._box_descent`): from the instance, and from seeded random points of the
root box as a search grows long.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from functools import cached_property
from typing import Union

import numpy as np

from kcxai._deadline import Deadline
from kcxai._types import Point
from kcxai.engines._box_leaves import (
    BoolArray,
    FloatArray,
    Int32Array,
    IntArray,
    LeafTable,
    MaskArray,
    NumberArray,
    high_bit,
    low_bit,
    range_masks,
)
from kcxai.engines._box_descent import MarginDescent, query_seed, random_points
from kcxai.engines._box_groups import group_starts, most_common, per_box
from kcxai.engines._box_rivals import Rival
from kcxai.models.classifier import Classifier

__all__ = ["BoxBatch", "BoxSearch", "Interrupted", "OutOfBoxes", "Found"]

#: What evaluating boxes gives: the open boxes, a counterexample, or ``None`` (no box left open).
Found = Union["BoxBatch", Point, None]


class Interrupted(Exception):
    """A query stopped by :meth:`~kcxai.engines._ensemble_box.EnsembleBox.interrupt` (the portfolio's other
    engine answered first)."""


class OutOfBoxes(Exception):
    """A search that expanded more than its ``max_boxes`` (:attr:`BoxSearch.max_boxes`) without deciding."""


class BoxBatch:
    """Open boxes of one search, side by side.

    Attributes
    ----------
    low, high : array of int32, shape (n_boxes, n_free)
        Per box and free feature, its lowest and highest value number (for a feature of value sets, the
        hull of its set).
    sets : array of uint64, shape (n_boxes, n_set_features)
        The value sets of the free features of value sets, as masks.
    base : array of int64 (object: Python ints, for float bounds)
        The constant part of each box's margin (the settled trees' values and the rival's base).
    rows : array of int
        The rows still undecided, grouped by box (``owner``, ascending), then by tree.
    owner : array of int
        The box of each row.
    bound : array
        The lower bound of each box's margin.
    """

    __slots__ = ("low", "high", "sets", "base", "rows", "owner", "bound")

    def __init__(self, low: Int32Array, high: Int32Array, sets: MaskArray, base: NumberArray, rows: IntArray,
                 owner: IntArray, bound: NumberArray) -> None:
        self.low, self.high, self.sets, self.base = low, high, sets, base
        self.rows, self.owner, self.bound = rows, owner, bound

    def __len__(self) -> int:
        return len(self.low)

    def take(self, boxes: IntArray) -> "BoxBatch":
        """The sub-batch of the given boxes (ascending), renumbered."""
        new = np.full(len(self.low), -1, dtype=np.int64)
        new[boxes] = np.arange(len(boxes))
        keep = new[self.owner] >= 0
        return BoxBatch(self.low[boxes], self.high[boxes], self.sets[boxes], self.base[boxes], self.rows[keep],
                        new[self.owner[keep]], self.bound[boxes])


class _Split:
    """Where each box of a batch is split (:meth:`BoxSearch.split`)."""

    __slots__ = ("feature", "mid", "part", "row_low", "row_high")

    def __init__(self, feature: IntArray, mid: IntArray, part: MaskArray, row_low: Int32Array,
                 row_high: Int32Array) -> None:
        #: Per box, the free feature (its position among the free features) split.
        self.feature = feature
        #: Per box split by range: the left child keeps the values up to ``mid``.
        self.mid = mid
        #: Per box split by value set: the left child's set (the right one keeps the rest).
        self.part = part
        #: Per row, the lowest and highest value its leaf allows on its box's split feature.
        self.row_low = row_low
        self.row_high = row_high


class BoxSearch:
    """The search over boxes of one query and one rival (see the module docstring).

    Parameters
    ----------
    leaves : LeafTable
        The engine's leaf tables.
    model : Classifier
        The ensemble: confirms guessed counterexamples and decides single points.
    rival : Rival
    point : sequence of int
        The instance: the fixed features keep its values.
    free : array of int
        The free features, ascending.
    selected : array of bool
        Per row of ``rival``, whether its leaf meets the query (the fixed features' values, or the box).
    label : int
        The predicted class ``c``.
    deadline : Deadline, optional
        Checked once per batch.
    stop : threading.Event, optional
        Set by another thread to stop the search (:class:`Interrupted`).
    max_boxes : int, optional
        The boxes the search may expand; past them :class:`OutOfBoxes` (``None``: no bound). The root box
        is evaluated whatever the bound (it is not expanded). A search so bounded makes no descents from
        random points (:meth:`restarts`): they are work its count of boxes would not see.

    Attributes
    ----------
    boxes : int
        The boxes expanded so far.
    """

    #: The widest batch.
    WIDTH = 64
    #: The batch width doubles every ``GROW`` expansions.
    GROW = 3
    #: Descents from random points of the root box are tried after this many boxes, then after 8, 64, ...
    #: times as many.
    RESTART_AFTER = 64
    #: How many random points each time.
    RESTARTS = 16

    def __init__(self, leaves: LeafTable, model: Classifier, rival: Rival, point: Sequence[int], free: IntArray,
                 selected: BoolArray, label: int, deadline: Deadline | None = None,
                 stop: threading.Event | None = None, max_boxes: int | None = None) -> None:
        self.leaves, self.model, self.rival, self.label = leaves, model, rival, label
        self.deadline, self.stop, self.max_boxes = deadline, stop, max_boxes
        self.boxes = 0
        self._rows = rival.leaf_rows[selected]
        self.point = np.asarray(point, dtype=np.int64)
        self.free = free
        self._col = col = leaves.mask_col[free]
        #: Positions (among the free features) of the features of value sets, and each free feature's slot
        #: among them (-1: a feature of ranges).
        self.set_pos: IntArray = np.flatnonzero(col >= 0)
        self.set_slot: IntArray = np.full(len(free), -1, dtype=np.int64)
        self.set_slot[self.set_pos] = np.arange(len(self.set_pos))
        #: The positions of the features of ranges.
        self.range_pos: IntArray = np.flatnonzero(col < 0)
        self.row_tree: IntArray = rival.leaf_tree[selected]
        self.row_rank: IntArray = rival.leaf_rank[selected]
        #: Whether the bounds are float sums (big values, :attr:`Rival.slack`).
        self.float_bounds = rival.slack is not None
        #: The exact values by rank (Python ints for float bounds).
        self.exact_values: NumberArray = (np.asarray(rival.values, dtype=object) if self.float_bounds
                                               else rival.value_table)
        self.n_trees = int(self.row_tree.max()) + 1 if len(self.row_tree) else 1
        #: Above every value number: (box, value) pairs sort as ``box * key_width + value``.
        self.key_width = int(leaves.sizes.max()) + 1 if len(leaves.sizes) else 1
        self._descent: MarginDescent | None = None
        self._root: BoxBatch | None = None
        self._restart_at = self.RESTART_AFTER if max_boxes is None else math.inf
        self._rng: np.random.Generator | None = None

    # -- the rows' value sets on the free features (built on first use: a query its root box decides
    # never needs them) --------------------------------------------------------------------------------

    @cached_property
    def leaf_low(self) -> Int32Array:
        """Per row and free feature, the lowest value number its leaf allows."""
        return self._table(self.leaves.low)

    @cached_property
    def leaf_high(self) -> Int32Array:
        """Per row and free feature, the highest value number its leaf allows."""
        return self._table(self.leaves.high)

    def _table(self, table: Int32Array) -> Int32Array:
        if not len(self.free):
            return np.zeros((len(self._rows), 0), dtype=np.int32)
        out: Int32Array = table[self._rows][:, self.free]
        return out

    @cached_property
    def leaf_low_r(self) -> Int32Array:
        """:attr:`leaf_low` on the features of ranges alone."""
        return self.leaf_low[:, self.range_pos]

    @cached_property
    def leaf_high_r(self) -> Int32Array:
        """:attr:`leaf_high` on the features of ranges alone."""
        return self.leaf_high[:, self.range_pos]

    @cached_property
    def leaf_sets(self) -> MaskArray:
        """Per row and free feature of value sets, the set its leaf allows."""
        out: MaskArray = self.leaves.masks[self._rows][:, self._col[self.set_pos]]
        return out

    def witness(self, free_values: NumberArray) -> Point:
        """The instance with its free features set to ``free_values``."""
        out = self.point.copy()
        out[self.free] = free_values
        return tuple(int(x) for x in out)

    # -- evaluating boxes ----------------------------------------------------------

    def evaluate(self, low: Int32Array, high: Int32Array, sets: MaskArray, base: NumberArray, rows: IntArray,
                 owner: IntArray) -> Found:
        """Settle the trees of each box; a counterexample (the box's lowest values: in every set), or the
        open boxes (``None``: none)."""
        if len(rows):
            key = owner * self.n_trees + self.row_tree[rows]
            starts = group_starts(key)  # one group per (box, tree)
            ranks = self.row_rank[rows]
            min_rank = np.minimum.reduceat(ranks, starts)
            max_rank = np.maximum.reduceat(ranks, starts)
            group_box = owner[starts]
        else:
            starts = min_rank = max_rank = group_box = np.zeros(0, dtype=np.int64)
        settled = min_rank == max_rank
        bound: NumberArray
        if self.float_bounds:
            bound, opened, base, found = self._float_bounds(low, base, min_rank, max_rank, group_box, settled)
        else:
            bound, opened, base, found = self._bounds(low, base, min_rank, max_rank, group_box, settled)
        if found is not None:
            return found
        if not opened.any():
            return None
        group_sizes = np.empty(len(starts), dtype=np.int64)
        group_sizes[:-1] = starts[1:] - starts[:-1]
        if len(starts):
            group_sizes[-1] = len(rows) - starts[-1]
        keep = np.repeat(opened[group_box] & ~settled, group_sizes)
        renumber = np.cumsum(opened) - 1
        return BoxBatch(low[opened], high[opened], sets[opened], base[opened], rows[keep], renumber[owner[keep]],
                        bound[opened])

    def _bounds(self, low: Int32Array, base: IntArray, min_rank: IntArray, max_rank: IntArray, group_box: IntArray,
                settled: BoolArray) -> tuple[IntArray, BoolArray, IntArray, Point | None]:
        """Per box (int64 values): the lower bound, whether it stays open, the constant part with the settled
        trees added, and a counterexample (the first box whose upper bound is at most the threshold)."""
        rival, n_boxes = self.rival, len(low)
        sums = np.zeros((3, n_boxes), dtype=np.int64)  # the lowest values, the highest, the settled trees'
        if len(group_box):
            values = rival.value_table[np.stack((min_rank, max_rank))]
            starts = group_starts(group_box)
            sums[:, group_box[starts]] = np.add.reduceat(np.vstack((values, values[0] * settled)), starts, axis=1)
        lower = base + sums[0]
        all_low = base + sums[1] <= rival.threshold
        if all_low.any():
            return lower, all_low, base, self.witness(low[int(np.argmax(all_low))])
        return lower, lower <= rival.threshold, base + sums[2], None

    def _float_bounds(self, low: Int32Array, base: NumberArray, min_rank: IntArray, max_rank: IntArray,
                      group_box: IntArray, settled: BoolArray
                      ) -> tuple[FloatArray, BoolArray, NumberArray, Point | None]:
        """:meth:`_bounds` with float bounds that prune only past their rounding margin, boxes all of whose
        trees are settled within it decided by exact Python-integer sums."""
        rival, n_boxes = self.rival, len(low)
        float_base = np.asarray([rival.to_float(int(b)) for b in base.tolist()], dtype=np.float64)
        lower = float_base + per_box(rival.value_table[min_rank], group_box, n_boxes)
        upper = float_base + per_box(rival.value_table[max_rank], group_box, n_boxes)
        slack = rival.slack if rival.slack is not None else 0.0
        threshold = rival.to_float(rival.threshold)
        all_low = upper + slack <= threshold
        cut = lower > threshold + slack
        open_groups = (np.bincount(group_box[~settled], minlength=n_boxes) if len(group_box)
                       else np.zeros(n_boxes, np.int64))
        for b in np.flatnonzero(~all_low & ~cut & (open_groups == 0)).tolist():
            exact = int(base[b]) + sum(self.exact_values[min_rank[group_box == b]].tolist())
            all_low[b], cut[b] = exact <= rival.threshold, exact > rival.threshold
        if all_low.any():
            return lower, all_low, base, self.witness(low[int(np.argmax(all_low))])
        add = np.where(settled, self.exact_values[min_rank], 0) if len(min_rank) else min_rank
        return lower, ~cut, base + per_box(add, group_box, n_boxes), None

    # -- the search ------------------------------------------------------------------

    def run(self, root: tuple[IntArray, IntArray] | None = None, proven: Sequence[int] = ()) -> Point | None:
        """The search from the box of all the free features' values, or from ``root`` (their ranges), without
        the points where some free feature of ``proven`` (positions among the free features) has the
        instance's value (regions known to hold no counterexample)."""
        return self.run_from(self.start(root), proven)

    def run_from(self, got: Found, proven: Sequence[int] = ()) -> Point | None:
        """:meth:`run` from the root box :meth:`start` evaluated."""
        for j in proven:
            if not isinstance(got, BoxBatch):
                return got
            got = self.carve(got, j, int(self.point[self.free[j]]))
        if not isinstance(got, BoxBatch):
            return got
        return self.descend(got)

    def start(self, root: tuple[IntArray, IntArray] | None = None) -> Found:
        """The root box (all the free features' values, or ``root``'s ranges) evaluated."""
        n_free = len(self.free)
        if root is None:
            low0 = np.zeros((1, n_free), dtype=np.int32)
            high0 = (self.leaves.sizes[self.free] - 1).astype(np.int32)[None, :]
        else:
            low0 = np.asarray(root[0], dtype=np.int32)[None, :]
            high0 = np.asarray(root[1], dtype=np.int32)[None, :]
        sets0 = range_masks(low0[0, self.set_pos], high0[0, self.set_pos])[None, :]
        base0 = np.asarray([self.rival.base], dtype=object if self.float_bounds else np.int64)
        every_row = np.arange(len(self.row_tree))
        got = self.evaluate(low0, high0, sets0, base0, every_row, np.zeros(len(self.row_tree), dtype=np.int64))
        if isinstance(got, BoxBatch):
            self._root = BoxBatch(low0, high0, sets0, base0, every_row, np.zeros(len(every_row), dtype=np.int64),
                                  got.bound)
        return got

    # -- guessed counterexamples ---------------------------------------------------

    def guess(self, start: IntArray, box: BoxBatch | None = None, k: int = 0) -> Point | None:
        """A counterexample found by steepest descent (:mod:`kcxai.engines._box_descent`) from ``start`` (the
        free features' values) in box ``k`` of ``box`` (default: the root box, all rows), confirmed by the
        model; ``None``: the descent ended at a margin above the threshold."""
        box = self._root if box is None else box
        if box is None:
            return None
        if self._descent is None:
            values = self.rival.value_table[self.row_rank].astype(np.float64)
            self._descent = MarginDescent(self.leaf_low, self.leaf_high, self.leaf_sets, self.set_pos, values)
        rival = self.rival
        first, last = np.searchsorted(box.owner, [k, k + 1])
        limit = rival.float_limit(int(box.base[k]))
        point, margin = self._descent.run(box.rows[first:last], start, box.low[k], box.high[k], box.sets[k], limit)
        if margin > limit:
            return None
        found = self.witness(point)
        return found if self.model.predict_point(found) != self.label else None

    def guess_from_instance(self) -> Point | None:
        """:meth:`guess` from the instance (after :meth:`start`)."""
        return self.guess(self.point[self.free]) if len(self.free) else None

    def restarts(self, count: int) -> Point | None:
        """:meth:`guess` from ``count`` points of the root box drawn by a generator seeded by the query."""
        if self._root is None or not len(self.free):
            return None
        if self._rng is None:
            rival_index = int(self.rival.threshold)  # the rival's tie rule and values make the stream its own
            self._rng = np.random.default_rng([query_seed(self.point, self.free, self.label, rival_index),
                                               len(self.row_tree)])
        root = self._root
        starts = random_points(self._rng, count, root.low[0], root.high[0], root.sets[0], self.set_pos)
        for start in starts:
            found = self.guess(start)
            if found is not None:
                return found
        return None


    def descend(self, root: BoxBatch) -> Point | None:
        """The depth-first search below the open boxes ``root``."""
        deadline, stop = self.deadline, self.stop
        stack = [root]
        expanded = 0
        while stack:
            if deadline is not None:
                deadline.check()
            if stop is not None and stop.is_set():
                raise Interrupted
            batch = stack.pop()
            if self.max_boxes is not None and self.boxes + len(batch) > self.max_boxes:
                raise OutOfBoxes
            self.boxes += len(batch)
            if self.boxes >= self._restart_at:  # a long search: guess again, from random points
                self._restart_at *= 8
                found = self.restarts(self.RESTARTS)
                if found is not None:
                    return found
            got = self.expand(batch)
            if got is None:
                continue
            if not isinstance(got, BoxBatch):
                return got
            width = min(self.WIDTH, 1 << min(expanded // self.GROW, 16))  # doubling every GROW expansions
            expanded += 1
            if len(got) <= width:
                stack.append(got)
                continue
            by_bound = np.argsort(got.bound, kind="stable")
            chunks = [np.sort(by_bound[k:k + width]) for k in range(0, len(by_bound), width)]
            stack.extend(got.take(c) for c in reversed(chunks))  # the lowest bounds on top
        return None

    def points(self, batch: BoxBatch) -> Found:
        """Decide the single points of a batch with the model (points where two leaves of a tree still
        meet: only the hulls of :attr:`LeafTable.hull_features` leave such points): a counterexample, or
        the batch without them."""
        single = np.all(batch.low == batch.high, axis=1)
        if not single.any():
            return batch
        pts = np.repeat(self.point[None, :], int(single.sum()), axis=0)
        pts[:, self.free] = batch.low[single]
        wrong = np.flatnonzero(self.model.predict_points(pts) != self.label)
        if len(wrong):
            return tuple(int(x) for x in pts[wrong[0]])
        rest = np.flatnonzero(~single)
        return batch.take(rest) if len(rest) else None

    def expand(self, batch: BoxBatch) -> Found:
        """Split every box of a batch in two (see :meth:`split`) and evaluate the children."""
        if len(self.leaves.hull_features):
            got = self.points(batch)
            if not isinstance(got, BoxBatch):
                return got
            batch = got
        cut = self.split(batch)
        j, mid = cut.feature, cut.mid
        rows, owner = batch.rows, batch.owner
        row_mid = mid[owner]
        to_left = cut.row_low <= row_mid
        to_right = cut.row_high > row_mid
        slot = self.set_slot[j]
        low = np.repeat(batch.low, 2, axis=0)
        high = np.repeat(batch.high, 2, axis=0)
        sets = np.repeat(batch.sets, 2, axis=0)
        by_range = np.flatnonzero(slot < 0)
        high[2 * by_range, j[by_range]] = mid[by_range]
        low[2 * by_range + 1, j[by_range]] = mid[by_range] + 1
        by_set = np.flatnonzero(slot >= 0)
        if len(by_set):  # split a value set in two: ``part`` and the rest
            s = slot[by_set]
            whole = batch.sets[by_set, s]
            rest = whole ^ cut.part[by_set]
            for child, m in ((2 * by_set, cut.part[by_set]), (2 * by_set + 1, rest)):
                sets[child, s] = m
                low[child, j[by_set]] = low_bit(m)
                high[child, j[by_set]] = high_bit(m)
            at = np.flatnonzero(slot[owner] >= 0)
            box = owner[at]
            leaf = self.leaf_sets[rows[at], slot[box]]
            to_left[at] = leaf & cut.part[box] != 0
            to_right[at] = leaf & (batch.sets[box, slot[box]] ^ cut.part[box]) != 0
        child_rows = np.concatenate((rows[to_left], rows[to_right]))
        child_owner = np.concatenate((2 * owner[to_left], 2 * owner[to_right] + 1))
        order = np.argsort(child_owner, kind="stable")
        return self.evaluate(low, high, sets, np.repeat(batch.base, 2), child_rows[order], child_owner[order])

    def carve(self, batch: BoxBatch, j: int, value: int) -> Found:
        """The boxes of ``batch`` without their points where free feature ``j`` (a position) is ``value``, which
        every box holds: a box of ranges becomes the boxes below and above the value, a box of value sets
        keeps the other values; the pieces evaluated."""
        rows, owner, n = batch.rows, batch.owner, len(batch)
        slot = int(self.set_slot[j])
        low = np.repeat(batch.low, 2, axis=0)
        high = np.repeat(batch.high, 2, axis=0)
        sets = np.repeat(batch.sets, 2, axis=0)
        if slot < 0:  # child 2b: the values below ``value``; 2b + 1: above it
            high[0::2, j] = value - 1
            low[1::2, j] = value + 1
            keep = np.stack((batch.low[:, j] < value, batch.high[:, j] > value), axis=1).ravel()
            to_left = self.leaf_low[rows, j] < value
            to_right = self.leaf_high[rows, j] > value
        else:  # child 2b: the set without ``value``; 2b + 1: empty
            rest = batch.sets[:, slot] & ~(np.uint64(1) << np.uint64(value))
            sets[0::2, slot] = rest
            nonempty = rest != 0
            some = np.where(nonempty, rest, np.uint64(1))
            low[0::2, j] = np.where(nonempty, low_bit(some), 0)
            high[0::2, j] = np.where(nonempty, high_bit(some), 0)
            keep = np.stack((nonempty, np.zeros(n, dtype=bool)), axis=1).ravel()
            to_left = self.leaf_sets[rows, slot] & rest[owner] != 0
            to_right = np.zeros(len(rows), dtype=bool)
        to_left &= keep[2 * owner]
        to_right &= keep[2 * owner + 1]
        kept = np.flatnonzero(keep)
        if not len(kept):
            return None
        child_rows = np.concatenate((rows[to_left], rows[to_right]))
        child_owner = np.concatenate((2 * owner[to_left], 2 * owner[to_right] + 1))
        order = np.argsort(child_owner, kind="stable")
        renumber = np.full(2 * n, -1, dtype=np.int64)
        renumber[kept] = np.arange(len(kept))
        return self.evaluate(low[kept], high[kept], sets[kept], np.repeat(batch.base, 2)[kept], child_rows[order],
                             renumber[child_owner[order]])

    def split(self, batch: BoxBatch) -> _Split:
        """Per box, the free feature most of its undecided leaves restrict inside it, and where to split it:
        for a feature of ranges the median of those leaves' boundaries on it (the left child keeps the
        values up to it); for a feature of value sets the set those leaves cut the box's set by most often
        (the left child's set; a leaf's set and its complement in the box cut alike). A box whose leaves
        restrict nothing: its widest feature, halved (a set: its lowest value apart)."""
        rows, owner = batch.rows, batch.owner
        set_pos, range_pos = self.set_pos, self.range_pos
        restricts = np.empty((len(rows), len(self.free)), dtype=bool)
        if len(range_pos):  # a boundary inside the box: the leaf's lowest value above the box's, or its highest below
            box_low, box_high = batch.low[:, range_pos], batch.high[:, range_pos]
            restricts[:, range_pos] = ((self.leaf_low_r[rows] > box_low[owner])
                                       | (self.leaf_high_r[rows] < box_high[owner]))
        if len(set_pos):
            whole = batch.sets[owner]
            restricts[:, set_pos] = self.leaf_sets[rows] & whole != whole
        n_boxes = len(batch)
        count = np.zeros((n_boxes, restricts.shape[1]), dtype=np.int64)
        starts = group_starts(owner)
        count[owner[starts]] = np.add.reduceat(restricts.view(np.int8), starts, axis=0, dtype=np.int64)
        count[batch.low == batch.high] = -1
        j = np.argmax(count, axis=1)
        boxes = np.arange(n_boxes)
        none = count[boxes, j] <= 0
        if none.any():
            j[none] = np.argmax((batch.high - batch.low)[none], axis=1)
        mid = (batch.low[boxes, j] + batch.high[boxes, j]) // 2  # halving, unless boundaries say otherwise
        slot = self.set_slot[j]
        row_j = j[owner]
        row_low, row_high = self.leaf_low[rows, row_j], self.leaf_high[rows, row_j]  # (no reshape: a copy when
        # the column selection left the tables in Fortran order)
        by_range = slot[owner] < 0
        # the boundaries inside the box on its feature (of ranges): a leaf's lowest value less one, its highest
        width = self.key_width
        key_owner = owner.astype(np.int64) * width
        box_at = owner * len(self.free) + row_j
        low_in = row_low > batch.low.reshape(-1)[box_at]
        high_in = row_high < batch.high.reshape(-1)[box_at]
        if len(set_pos):
            low_in &= by_range
            high_in &= by_range
        keys = np.concatenate(((key_owner + row_low - 1)[low_in], (key_owner + row_high)[high_in]))
        if len(keys):  # per box, the median of its boundaries: one sort of (box, boundary) keys
            keys.sort()
            key_box = keys // width
            key_starts = group_starts(key_box)
            key_counts = np.empty(len(key_starts), dtype=np.int64)
            key_counts[:-1] = key_starts[1:] - key_starts[:-1]
            key_counts[-1] = len(keys) - key_starts[-1]
            mid[key_box[key_starts]] = keys[key_starts + key_counts // 2] % width
        part = np.zeros(n_boxes, dtype=np.uint64)
        by_set = np.flatnonzero(slot >= 0)
        if len(by_set):
            whole_set = batch.sets[by_set, slot[by_set]]
            part[by_set] = whole_set & (~whole_set + np.uint64(1))  # the lowest value, unless leaves say otherwise
            at = np.flatnonzero(~by_range)
            box = owner[at]
            whole_box = batch.sets[box, slot[box]]
            leaf_cut = self.leaf_sets[rows[at], slot[box]] & whole_box
            inner = leaf_cut != whole_box
            leaf_cut, whole_box, box = leaf_cut[inner], whole_box[inner], box[inner]
            part = most_common(box, np.minimum(leaf_cut, whole_box ^ leaf_cut), n_boxes, part)
        return _Split(j, mid, part, row_low, row_high)
