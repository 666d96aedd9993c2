"""One query of the box-bounds engine: the boxes of a branch and bound, processed in batches with numpy.

A :class:`Query` holds what one query ``(box, label)`` reads: the leaves that meet the box (local rows, grouped
by tree), per rival class their ranks, the free features' columns of the leaf sets, and the weights of the
free features' values under every component of the distribution. :class:`Boxes` is a batch of open boxes:
per box its value sets on the free features, its constant part (the trees settled in it), its weight under
each component, and the rows (leaves) of its unsettled trees. :func:`search` runs the branch and bound:
largest boxes first, until a stopping rule, the deadline or the box limit.

See :mod:`kcxai.engines._box_bounds` for the method and its guarantees.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from kcxai._deadline import Deadline
from kcxai.arithmetic import Weight
from kcxai.engines._box_bounds_tables import MASK_BITS, LeafTable, PairValues, highest_bits, lowest_bits
from kcxai.oracle import Box
from kcxai.space import FeatureSpace

__all__ = ["LeafEngine", "Query", "Boxes", "search", "SearchEnd", "component_weights"]


class LeafEngine(Protocol):
    """What a query reads of its engine (:class:`~kcxai.engines._box_bounds.BoxBounds` implements it; declared
    here so that the search need not import the engine that imports it)."""

    @property
    def space(self) -> FeatureSpace:
        """The model's feature space."""

    @property
    def n_classes(self) -> int:
        """The number of classes."""

    @property
    def table(self) -> LeafTable:
        """The leaves' value sets."""

    def pair(self, c: int, d: int) -> PairValues:
        """The leaf margins ``score_c - score_d``."""

    def predict_points(self, points: np.ndarray) -> np.ndarray:
        """The model's class of each point (rows of value numbers)."""

_EMPTY = np.zeros(0, dtype=np.int64)
_ONE = np.uint64(1)
#: ``_PREFIX[k]``: the mask of value numbers ``0 .. k``.
_PREFIX = np.asarray([(1 << (k + 1)) - 1 for k in range(MASK_BITS)], dtype=np.uint64)

#: The most boxes split in one batch, and how many batches pass before the batch width doubles (from 1).
MAX_WIDTH = 128
GROW = 1


def _starts(keys: np.ndarray) -> np.ndarray:
    """The positions where a sorted key array changes (0 first; empty for an empty array)."""
    if not len(keys):
        return _EMPTY
    return np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))


def _per_box(values: np.ndarray, owner: np.ndarray, n_boxes: int) -> np.ndarray:
    """Sums of ``values`` per owner (``owner`` ascending); owners without values get 0."""
    out = np.zeros((n_boxes,) + values.shape[1:], dtype=values.dtype)
    if len(values):
        at = _starts(owner)
        out[owner[at]] = np.add.reduceat(values, at, axis=0)
    return out


def _median_per_box(owner: np.ndarray, values: np.ndarray, weights: np.ndarray, width: int,
                    out: np.ndarray) -> None:
    """Set ``out[o]`` to the weighted median of the ``values`` (in ``[0, width)``) owned by ``o``, for every
    owner: the least value at which the running weight reaches half of ``o``'s."""
    if not len(owner):
        return
    order = np.argsort(owner * width + values, kind="stable")
    owner, values, weights = owner[order], values[order], weights[order]
    at = _starts(owner)
    running = np.cumsum(weights)
    before = np.repeat(running[at] - weights[at], np.diff(np.append(at, len(owner))))
    half = np.repeat(_per_box(weights, owner, int(owner[-1]) + 1)[owner[at]] / 2, np.diff(np.append(at, len(owner))))
    reached = running - before >= half
    first = np.flatnonzero(reached & np.concatenate(([True], (owner[1:] != owner[:-1]) | ~reached[:-1])))
    first = first[_starts(owner[first])]
    out[owner[first]] = values[first]


def _most_common_per_box(owner: np.ndarray, keys: np.ndarray, out: np.ndarray) -> None:
    """Set ``out[o]`` to the key that ``o`` owns most often (the least such key on a tie), for every owner."""
    if not len(owner):
        return
    order = np.lexsort((keys, owner))
    owner, keys = owner[order], keys[order]
    at = np.flatnonzero(np.concatenate(([True], (owner[1:] != owner[:-1]) | (keys[1:] != keys[:-1]))))
    count = np.diff(np.append(at, len(owner)))
    run_owner, run_key = owner[at], keys[at]
    best = np.lexsort((-count, run_owner))
    first = best[_starts(run_owner[best])]
    out[run_owner[first]] = run_key[first]


def component_weights(space: Any, box: Box) -> list[Weight]:
    """The weight of ``box`` under each product component of ``space``'s distribution: the product of its value
    sets' weights (a free feature's total and a fixed feature's one weight read directly, as wide features'
    sets can hold thousands of values)."""
    out = []
    sizes = space.domain_sizes
    for _, pw in space.distribution.components:
        w = space.arith.one
        for f, m in enumerate(box):
            if m == (1 << sizes[f]) - 1:
                w *= pw.totals[f]
            elif m & (m - 1) == 0:
                w *= pw.weights[f][m.bit_length() - 1]
            else:
                w *= pw.mask_weight(f, m)
        out.append(w)
    return out


def _popcount(masks: np.ndarray) -> np.ndarray:
    """The number of set bits of each ``uint64`` (SWAR: numpy < 2 has no ``bitwise_count``)."""
    m = masks - ((masks >> _ONE) & np.uint64(0x5555555555555555))
    m = (m & np.uint64(0x3333333333333333)) + ((m >> np.uint64(2)) & np.uint64(0x3333333333333333))
    m = (m + (m >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    counts: np.ndarray = ((m * np.uint64(0x0101010101010101)) >> np.uint64(56)).astype(np.int64)
    return counts


def _single_bits(masks: np.ndarray) -> np.ndarray:
    """Whether each non-zero ``uint64`` has exactly one bit set."""
    single: np.ndarray = (masks & (masks - _ONE)) == 0
    return single


class Boxes:
    """A batch of open boxes of one query (see the module docstring).

    Attributes
    ----------
    masks : ndarray of uint64, shape (n, free narrow features)
    low, high : ndarray of int64, shape (n, free wide features)
        Ranges of value numbers whose ends are values of the query's box.
    base_low, base_high : ndarray of int64, shape (n, rivals)
        The scaled margins of the trees settled in each box (rounded down, up).
    weights : ndarray, shape (n, components)
        Each box's weight under each product component (Python ints, or floats).
    rows, own : ndarray of int64
        The query's leaf rows still undecided in each box, and their box (ascending; rows of a box by tree).
    spread : ndarray of float64
        Per row, the spread of its tree's margins in its box (greatest less least, summed over the rivals), as
        :meth:`Query.evaluate` found it (zeros until then): what the choice of a split weighs leaves by.
    """

    __slots__ = ("masks", "low", "high", "base_low", "base_high", "weights", "rows", "own", "spread")

    def __init__(self, masks: np.ndarray, low: np.ndarray, high: np.ndarray, base_low: np.ndarray,
                 base_high: np.ndarray, weights: np.ndarray, rows: np.ndarray, own: np.ndarray,
                 spread: np.ndarray | None = None) -> None:
        self.masks, self.low, self.high = masks, low, high
        self.base_low, self.base_high, self.weights = base_low, base_high, weights
        self.rows, self.own = rows, own
        self.spread = np.zeros(len(rows)) if spread is None else spread

    def __len__(self) -> int:
        return len(self.weights)

    def take(self, boxes: np.ndarray, keep_rows: np.ndarray | None = None) -> "Boxes":
        """The boxes ``boxes`` (ascending indices), renumbered, with their rows (only ``keep_rows`` if given)."""
        new = np.full(len(self), -1, dtype=np.int64)
        new[boxes] = np.arange(len(boxes))
        keep = new[self.own] >= 0
        if keep_rows is not None:
            keep &= keep_rows
        return Boxes(self.masks[boxes], self.low[boxes], self.high[boxes], self.base_low[boxes],
                     self.base_high[boxes], self.weights[boxes], self.rows[keep], new[self.own[keep]],
                     self.spread[keep])


class Query:
    """What one query ``(box, label)`` reads (see the module docstring)."""

    def __init__(self, engine: LeafEngine, box: Box, label: int) -> None:
        table: LeafTable = engine.table
        space = engine.space
        sizes = space.domain_sizes
        self.engine, self.box, self.label = engine, box, label
        self.exact = space.is_exact
        free = [f for f, m in enumerate(box) if m & (m - 1)]
        self.free_narrow = [f for f in free if sizes[f] <= MASK_BITS]
        self.free_wide = [f for f in free if sizes[f] > MASK_BITS]
        #: the query's box as a point where it allows one value (the free features' entries are overwritten)
        self.point = np.asarray([(m & -m).bit_length() - 1 for m in box], dtype=np.int64)
        meet = np.ones(table.n_leaves, dtype=bool)
        for f, m in enumerate(box):
            if m == (1 << sizes[f]) - 1:
                continue
            col = table.column[f]
            if sizes[f] <= MASK_BITS:
                meet &= (table.leaf_mask[:, col] & np.uint64(m)) != 0
            else:  # the hull of the box's set against the leaves' hulls
                meet &= (table.leaf_low[:, col] <= m.bit_length() - 1) & \
                    (table.leaf_high[:, col] >= (m & -m).bit_length() - 1)
        leaves = np.flatnonzero(meet)
        self.n_trees = max(table.n_trees, 1)
        self.leaf_tree = table.leaf_tree[leaves]
        self.rivals: list[PairValues] = [engine.pair(label, d) for d in range(engine.n_classes) if d != label]
        self.leaf_rank = [p.rank[leaves] for p in self.rivals]
        narrow_cols = [table.column[f] for f in self.free_narrow]
        wide_cols = [table.column[f] for f in self.free_wide]
        self.leaf_mask = table.leaf_mask[leaves][:, narrow_cols]
        self.leaf_first = table.leaf_first[leaves][:, narrow_cols].astype(np.int64)
        self.leaf_last = table.leaf_last[leaves][:, narrow_cols].astype(np.int64)
        self.range_column = table.range_columns[narrow_cols]
        self.leaf_low = table.leaf_low[leaves][:, wide_cols].astype(np.int64)
        self.leaf_high = table.leaf_high[leaves][:, wide_cols].astype(np.int64)
        self.n_rows = len(leaves)
        self._weights(space)

    # -- weights ---------------------------------------------------------------

    def _weights(self, space: Any) -> None:
        """Per free feature, its values' weights under each component (narrow: a matrix a mask's bits multiply;
        wide: prefix sums over the box's values, with each value's next and previous value in the box)."""
        comps = space.distribution.components
        self.coefficients = np.asarray([c for c, _ in comps], dtype=object if self.exact else np.float64)
        self.root_weights = component_weights(space, self.box)
        self.total_weight = sum((c * w for (c, _), w in zip(comps, self.root_weights)), space.arith.zero)
        self.dtype: Any = object if self.exact else np.float64
        self.narrow_weights: list[np.ndarray] = []
        for f in self.free_narrow:
            w = np.asarray([pw.weights[f] for _, pw in comps], dtype=object).T
            if self.exact and max(sum(pw.weights[f]) for _, pw in comps) < 2 ** 62:
                w = w.astype(np.int64)  # exact int64 sums: bits @ weights
            elif not self.exact:
                w = w.astype(np.float64)
            self.narrow_weights.append(w)
        self.wide_prefix: list[np.ndarray] = []
        width = max([space.domain_sizes[f] for f in self.free_wide], default=0) + 1
        self.next_in = np.zeros((len(self.free_wide), width), dtype=np.int64)
        self.prev_in = np.zeros((len(self.free_wide), width), dtype=np.int64)
        self.wide_width = width
        for j, f in enumerate(self.free_wide):
            m, size = self.box[f], space.domain_sizes[f]
            inside = np.asarray([int(c) for c in bin(m)[2:].zfill(size)[::-1]], dtype=bool)
            values = np.arange(size)
            prefix = np.zeros((size + 1, len(comps)), dtype=self.dtype)
            prefix[0] = space.arith.zero
            for k, (_, pw) in enumerate(comps):
                ws = np.asarray(pw.weights[f], dtype=self.dtype)
                ws[~inside] = space.arith.zero
                prefix[1:, k] = np.cumsum(ws)
            self.wide_prefix.append(prefix)
            # the least value of the box's set at or after v, the greatest at or before v (size / -1: none)
            after = np.where(inside, values, size)
            self.next_in[j, :size] = np.minimum.accumulate(after[::-1])[::-1]
            self.next_in[j, size:] = size
            self.prev_in[j, :size] = np.maximum.accumulate(np.where(inside, values, -1))

    def narrow_weight(self, j: int, masks: np.ndarray) -> np.ndarray:
        """The weights (one column per component) of the value sets ``masks`` of free narrow feature ``j``."""
        w = self.narrow_weights[j]
        bits = (masks[:, None] >> np.arange(len(w), dtype=np.uint64)) & _ONE
        out = bits.astype(w.dtype) @ w
        weights: np.ndarray = out.astype(self.dtype) if out.dtype != self.dtype else out
        return weights

    def wide_weight(self, j: int, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """The weights (one column per component) of the box's values in ``low .. high`` on free wide feature ``j``."""
        prefix = self.wide_prefix[j]
        weights: np.ndarray = prefix[high + 1] - prefix[low]
        return weights

    def mass(self, weights: np.ndarray) -> np.ndarray:
        """Each box's weight under the distribution: its components' weights summed with their coefficients."""
        if len(self.coefficients) == 1 and self.coefficients[0] == 1:
            return weights[:, 0]
        masses: np.ndarray = weights @ self.coefficients
        return masses

    def key(self, masses: np.ndarray) -> np.ndarray:
        """Masses as floats, for ordering only (exact ones shifted so that none overflows)."""
        if not self.exact:
            return masses.astype(np.float64)
        shift = max(0, int(self.total_weight).bit_length() - 1000)
        return (masses >> shift).astype(np.float64) if shift else masses.astype(np.float64)

    # -- boxes -----------------------------------------------------------------

    def root(self) -> Boxes:
        """The query's box, all its leaves undecided."""
        r = len(self.rivals)
        masks = np.asarray([[self.box[f] for f in self.free_narrow]], dtype=np.uint64).reshape(1, -1)
        low = np.asarray([[self.next_in[j, 0] for j in range(len(self.free_wide))]], dtype=np.int64).reshape(1, -1)
        high = np.asarray([[self.box[f].bit_length() - 1 for f in self.free_wide]], dtype=np.int64).reshape(1, -1)
        base_low = np.asarray([[p.base_low for p in self.rivals]], dtype=np.int64).reshape(1, r)
        base_high = np.asarray([[p.base_high for p in self.rivals]], dtype=np.int64).reshape(1, r)
        weights = np.empty((1, len(self.root_weights)), dtype=self.dtype)
        weights[0, :] = self.root_weights
        rows = np.arange(self.n_rows, dtype=np.int64)
        return Boxes(masks, low, high, base_low, base_high, weights, rows, np.zeros(self.n_rows, dtype=np.int64))

    def evaluate(self, b: Boxes) -> tuple[np.ndarray, np.ndarray, Boxes | None]:
        """Which boxes agree everywhere (``label`` wins at every point), which disagree everywhere, and the
        open rest (``None``: none) with the trees settled in them folded into their constant parts.

        Bounds per rival: the constant part plus, per unsettled tree, its least (greatest) margin among the
        leaves that meet the box. A box left open whose trees are all settled (possible only when rounding
        hides a decision) or that is one point (possible only with hulls) is decided by the model itself."""
        n = len(b)
        rows, own = b.rows, b.own
        at = _starts(own * self.n_trees + self.leaf_tree[rows])
        group_box = own[at]
        settled = np.ones(len(at), dtype=bool)
        agree = np.ones(n, dtype=bool)
        beaten = np.zeros(n, dtype=bool)
        least, most = [], []
        spread = np.zeros(len(at))
        for r, pair in enumerate(self.rivals):
            ranks = self.leaf_rank[r][rows]
            lo = np.minimum.reduceat(ranks, at) if len(at) else _EMPTY
            hi = np.maximum.reduceat(ranks, at) if len(at) else _EMPTY
            agree &= b.base_low[:, r] + _per_box(pair.low[lo], group_box, n) >= pair.need
            beaten |= b.base_high[:, r] + _per_box(pair.high[hi], group_box, n) < pair.need
            settled &= lo == hi
            spread += pair.high[hi].astype(np.float64) - pair.low[lo].astype(np.float64)
            least.append(lo)
            most.append(hi)
        agree &= ~beaten
        undecided = ~agree & ~beaten
        if not undecided.any():
            return agree, beaten, None
        fold = settled & undecided[group_box]
        base_low, base_high = b.base_low.copy(), b.base_high.copy()
        for r, pair in enumerate(self.rivals):
            base_low[:, r] += _per_box(np.where(fold, pair.low[least[r]], 0), group_box, n)
            base_high[:, r] += _per_box(np.where(fold, pair.high[most[r]], 0), group_box, n)
        sizes = np.diff(np.append(at, len(rows)))
        keep = np.repeat(~settled, sizes)
        b = Boxes(b.masks, b.low, b.high, b.base_low, b.base_high, b.weights, rows, own, np.repeat(spread, sizes))
        left = np.bincount(own[keep], minlength=n) > 0
        single = np.all(_single_bits(b.masks), axis=1) & np.all(b.low == b.high, axis=1)
        by_model = undecided & (~left | single)
        if by_model.any():
            idx = np.flatnonzero(by_model)
            points = np.repeat(self.point[None, :], len(idx), axis=0)
            points[:, self.free_narrow] = lowest_bits(b.masks[idx]) if len(self.free_narrow) else points[:, []]
            points[:, self.free_wide] = b.low[idx]
            same = self.engine.predict_points(points) == self.label
            agree[idx[same]] = True
            beaten[idx[~same]] = True
            undecided &= ~by_model
        if not undecided.any():
            return agree, beaten, None
        out = b.take(np.flatnonzero(undecided), keep)
        sel = np.flatnonzero(undecided)
        out.base_low, out.base_high = base_low[sel], base_high[sel]
        return agree, beaten, out

    def expand(self, b: Boxes) -> Boxes:
        """Split every box in two on the feature most of its undecided leaves cut (see :meth:`_choose`); the
        children, not yet evaluated, box ``k``'s at ``2k`` and ``2k + 1``."""
        n, n_narrow = len(b), len(self.free_narrow)
        rows, own = b.rows, b.own
        feature = self._choose(b)
        narrow = np.flatnonzero(feature < n_narrow)
        wide = np.flatnonzero(feature >= n_narrow)
        masks = np.repeat(b.masks, 2, axis=0)
        low = np.repeat(b.low, 2, axis=0)
        high = np.repeat(b.high, 2, axis=0)
        weights = np.repeat(b.weights, 2, axis=0)
        go_left = np.zeros(len(rows), dtype=bool)
        go_right = np.zeros(len(rows), dtype=bool)
        div = np.floor_divide if self.exact else np.true_divide
        if len(narrow):
            j = feature[narrow]
            left, right = self._split_narrow(b, narrow, j)
            masks[2 * narrow, j] = left
            masks[2 * narrow + 1, j] = right
            at = np.flatnonzero(feature[own] < n_narrow)
            o = own[at]
            slot = np.full(n, -1, dtype=np.int64)
            slot[narrow] = np.arange(len(narrow))
            leaf = self.leaf_mask[rows[at], feature[o]]
            go_left[at] = leaf & left[slot[o]] != 0
            go_right[at] = leaf & right[slot[o]] != 0
            for jj in np.unique(j).tolist():
                sel = np.flatnonzero(j == jj)
                wl, wr = self.narrow_weight(jj, left[sel]), self.narrow_weight(jj, right[sel])
                parent = b.weights[narrow[sel]]
                weights[2 * narrow[sel]] = div(parent, wl + wr) * wl
                weights[2 * narrow[sel] + 1] = div(parent, wl + wr) * wr
        if len(wide):
            j = feature[wide] - n_narrow
            mid = self._split_wide(b, wide, j)
            left_high = self.prev_in[j, mid]
            right_low = self.next_in[j, mid + 1]
            high[2 * wide, j] = left_high
            low[2 * wide + 1, j] = right_low
            at = np.flatnonzero(feature[own] >= n_narrow)
            o = own[at]
            slot = np.full(n, -1, dtype=np.int64)
            slot[wide] = np.arange(len(wide))
            jr = feature[o] - n_narrow
            go_left[at] = self.leaf_low[rows[at], jr] <= left_high[slot[o]]
            go_right[at] = self.leaf_high[rows[at], jr] >= right_low[slot[o]]
            for jj in np.unique(j).tolist():
                sel = np.flatnonzero(j == jj)
                boxes = wide[sel]
                wl = self.wide_weight(jj, b.low[boxes, jj], left_high[sel])
                wr = self.wide_weight(jj, right_low[sel], b.high[boxes, jj])
                parent = b.weights[boxes]
                weights[2 * boxes] = div(parent, wl + wr) * wl
                weights[2 * boxes + 1] = div(parent, wl + wr) * wr
        child_rows = np.concatenate((rows[go_left], rows[go_right]))
        child_own = np.concatenate((2 * own[go_left], 2 * own[go_right] + 1))
        order = np.argsort(child_own, kind="stable")
        return Boxes(masks, low, high, np.repeat(b.base_low, 2, axis=0), np.repeat(b.base_high, 2, axis=0),
                     weights, child_rows[order], child_own[order])

    def _choose(self, b: Boxes) -> np.ndarray:
        """Per box, the free feature (narrow ones first, then wide) that its undecided leaves cut most (a leaf
        cuts a feature when its set meets only part of the box's), each leaf counted with its tree's spread
        in the box; where no leaf cuts any (hulls), the widest."""
        n = len(b)
        rows, own = b.rows, b.own
        box_masks = b.masks[own]
        cut = np.concatenate(((self.leaf_mask[rows] & box_masks) != box_masks,
                              (self.leaf_low[rows] > b.low[own]) | (self.leaf_high[rows] < b.high[own])), axis=1)
        count = _per_box(cut * b.spread[:, None], own, n)
        single = np.concatenate((_single_bits(b.masks), b.low == b.high), axis=1)
        count[single] = -1
        feature: np.ndarray = np.argmax(count, axis=1)
        none = count[np.arange(n), feature] <= 0
        if none.any():
            width = np.concatenate((_popcount(b.masks), b.high - b.low + 1), axis=1)
            width[single] = 0
            feature[none] = np.argmax(width[none], axis=1)
        return feature

    def _split_narrow(self, b: Boxes, boxes: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The two value sets of each box of ``boxes`` on its free narrow feature ``j``: for a feature whose
        leaf sets are ranges, the values up to the median of the leaves' boundaries inside the box (each
        weighed by its tree's spread) and the rest; otherwise the set the leaves cut the box's by most often
        (a set and its complement in the box cut alike) and the rest."""
        whole = b.masks[boxes, j]
        n = len(b)
        slot = np.full(n, -1, dtype=np.int64)
        slot[boxes] = np.arange(len(boxes))
        rows, own = b.rows, b.own
        at = np.flatnonzero(slot[own] >= 0)
        at_rows, o = rows[at], slot[own[at]]
        jr = j[o]
        by_range = self.range_column[j]
        first, last = lowest_bits(whole), highest_bits(whole)
        mid = (first + last) // 2
        r_at = by_range[o]
        leaf_first, leaf_last = self.leaf_first[at_rows, jr], self.leaf_last[at_rows, jr]
        lower = r_at & (leaf_first > first[o])
        upper = r_at & (leaf_last < last[o])
        spread = b.spread[at]
        _median_per_box(np.concatenate((o[lower], o[upper])), np.concatenate((leaf_first[lower] - 1, leaf_last[upper])),
                        np.concatenate((spread[lower], spread[upper])), MASK_BITS, mid)
        part = whole & (~whole + _ONE)  # the lowest value alone, unless the leaves say otherwise
        cutting = self.leaf_mask[at_rows, jr] & whole[o]
        s_at = ~r_at & (cutting != whole[o])
        if s_at.any():
            cut = cutting[s_at]
            _most_common_per_box(o[s_at], np.minimum(cut, whole[o[s_at]] ^ cut), part)
        left = np.where(by_range, whole & _PREFIX[mid], part)
        return left, whole ^ left

    def _split_wide(self, b: Boxes, boxes: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Per box of ``boxes``, where to split its free wide feature ``j``: the left child keeps the values up to
        the median of the leaves' boundaries inside the box, each weighed by its tree's spread (halfway when no
        leaf has one)."""
        low, high = b.low[boxes, j], b.high[boxes, j]
        mid: np.ndarray = (low + high) // 2
        slot = np.full(len(b), -1, dtype=np.int64)
        slot[boxes] = np.arange(len(boxes))
        at = np.flatnonzero(slot[b.own] >= 0)
        at_rows, o = b.rows[at], slot[b.own[at]]
        leaf_low, leaf_high = self.leaf_low[at_rows, j[o]], self.leaf_high[at_rows, j[o]]
        lower = leaf_low > low[o]
        upper = leaf_high < high[o]
        spread = b.spread[at]
        _median_per_box(np.concatenate((o[lower], o[upper])), np.concatenate((leaf_low[lower] - 1, leaf_high[upper])),
                        np.concatenate((spread[lower], spread[upper])), self.wide_width, mid)
        return mid


class SearchEnd:
    """Why a search stopped: ``"exact"`` (no box left open), ``"stopped"`` (the caller's rule held),
    ``"max_boxes"``, ``"max_rows"`` or ``"deadline"``."""

    EXACT = "exact"
    STOPPED = "stopped"
    MAX_BOXES = "max_boxes"
    MAX_ROWS = "max_rows"
    DEADLINE = "deadline"


def search(q: Query, stop: Callable[[Weight, Weight], bool], deadline: Deadline | None,
           max_boxes: int | None, max_rows: int | None = None) -> tuple[Weight, Weight, int, str, int]:
    """The branch and bound of ``q``: ``(lower, upper, boxes, why, rows)``, the proven bounds on the disagreeing
    weight when it stopped, the boxes evaluated, why (:class:`SearchEnd`), and the rows evaluated (per box
    evaluated, the leaves of its undecided trees that meet it: what its evaluation costs, from a few per box
    on small boosted trees to thousands on a default random forest's).

    Open boxes wait in batches sorted by weight, the batch of the heaviest box first; each step splits the
    heaviest boxes of that batch (1, then 2, 4, ... up to :data:`MAX_WIDTH` at a time) and evaluates their
    children. ``stop(lower, upper)`` is asked before each step, and the limits: no step once ``max_rows``
    rows have been evaluated (the last step may pass it by one batch's rows)."""
    zero = q.engine.space.arith.zero
    agree_w, disagree_w = zero, zero
    total = q.total_weight
    heap: list[tuple[float, int, Boxes]] = []
    pushed = 0
    rows = 0

    def settle(b: Boxes) -> None:
        nonlocal agree_w, disagree_w, pushed, rows
        rows += len(b.rows)
        agree, disagree, rest = q.evaluate(b)
        mass = q.mass(b.weights)
        agree_w += mass[agree].sum() if agree.any() else zero
        disagree_w += mass[disagree].sum() if disagree.any() else zero
        if rest is None:
            return
        keys = q.key(q.mass(rest.weights))
        order = np.argsort(-keys, kind="stable")
        for k in range(0, len(order), MAX_WIDTH):
            chunk = order[k:k + MAX_WIDTH]
            heapq.heappush(heap, (-float(keys[chunk[0]]), pushed, _ordered(rest, chunk)))
            pushed += 1

    settle(q.root())
    boxes, steps = 1, 0
    weight = q.engine.space.arith.weight
    while True:
        lower, upper = weight(disagree_w), weight(total - agree_w)
        if not heap:  # every box decided: the disagreeing ones' weight (in floats, the other sum may round apart)
            return lower, lower, boxes, SearchEnd.EXACT, rows
        if stop(lower, upper):
            return lower, upper, boxes, SearchEnd.STOPPED, rows
        if max_rows is not None and rows >= max_rows:
            return lower, upper, boxes, SearchEnd.MAX_ROWS, rows
        if deadline is not None and time.perf_counter() > deadline.at:
            return lower, upper, boxes, SearchEnd.DEADLINE, rows
        width = min(MAX_WIDTH, 1 << min(steps // GROW, 30))
        if max_boxes is not None:
            width = min(width, (max_boxes - boxes) // 2)
            if width <= 0:
                return lower, upper, boxes, SearchEnd.MAX_BOXES, rows
        _, seq, batch = heapq.heappop(heap)
        if len(batch) > width:  # the heaviest boxes now, the rest back (sorted: its first is its heaviest)
            rest = batch.take(np.arange(width, len(batch)))
            heapq.heappush(heap, (-float(q.key(q.mass(rest.weights[:1]))[0]), seq, rest))
            batch = batch.take(np.arange(width))
        children = q.expand(batch)
        boxes += len(children)
        steps += 1
        settle(children)


def _ordered(b: Boxes, order: Sequence[int] | np.ndarray) -> Boxes:
    """The boxes ``order`` of ``b`` in that order (not ascending: rows regrouped)."""
    order = np.asarray(order, dtype=np.int64)
    position = np.full(len(b), -1, dtype=np.int64)
    position[order] = np.arange(len(order))
    keep = position[b.own] >= 0
    new_own = position[b.own[keep]]
    rows = b.rows[keep]
    regroup = np.argsort(new_own, kind="stable")
    spread = b.spread[keep][regroup]
    return Boxes(b.masks[order], b.low[order], b.high[order], b.base_low[order], b.base_high[order],
                 b.weights[order], rows[regroup], new_own[regroup], spread)
