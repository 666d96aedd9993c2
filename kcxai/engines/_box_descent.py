"""Guessed counterexamples for the box search: steepest descent on a rival's margin inside a box.

From a point of a box, the margin of every point that differs on one feature only is read in one pass:
each tree's leaf that holds the point (*its* leaf) adds its value to every value of every feature its
path allows, and each leaf that misses the point on exactly one feature adds its value to the values of
that feature it allows (one step at each end of the allowed range, then a cumulative sum; a bit per
value for a feature of value sets). The point moves to the lowest of these margins while that lowers
the margin, one feature per step (a local minimum is where no single change lowers it). A point whose
margin is at most the rival's threshold is a counterexample once the model itself confirms it (the
margins here are float sums, good enough to guide, never to decide).

Descents start from the instance and, when the search runs long, from points drawn in the box with a
generator seeded by the query (:func:`query_seed`), so that the same query gives the same answer.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from kcxai.engines._box_leaves import MASK_BITS, BoolArray, FloatArray, Int32Array, IntArray, MaskArray

__all__ = ["MarginDescent", "query_seed", "random_points"]

_BITS = np.arange(MASK_BITS, dtype=np.uint64)


def query_seed(point: Sequence[int] | IntArray, free: IntArray, label: int, rival: int) -> int:
    """A seed from the query: the instance, its free features, its class and the rival."""
    key = np.asarray([*(int(v) for v in point), -1, *free.tolist(), -2, label, rival], dtype=np.int64)
    return zlib.crc32(key.tobytes())


def random_points(rng: np.random.Generator, count: int, low: Int32Array, high: Int32Array, sets: MaskArray,
                  set_pos: IntArray) -> IntArray:
    """``count`` points of the box (its free features' values), each value drawn uniformly from the box's
    range or set."""
    points = rng.integers(low, high.astype(np.int64) + 1, size=(count, len(low)))
    for k, j in enumerate(set_pos.tolist()):
        members = np.flatnonzero((sets[k] >> _BITS) & np.uint64(1))
        points[:, j] = members[rng.integers(0, len(members), size=count)]
    return points


class MarginDescent:
    """Steepest descent on one rival's margin over the rows (leaves) of one search (see the module docstring).

    Parameters
    ----------
    leaf_low, leaf_high : array of int32, shape (n_rows, n_free)
        The hull of each row's allowed values on each free feature.
    leaf_sets : array of uint64, shape (n_rows, n_set)
        The allowed value sets on the free features of value sets.
    set_pos : array of int
        The positions (among the free features) of those features.
    values : array of float64
        Each row's value (its scaled margin contribution).
    """

    def __init__(self, leaf_low: Int32Array, leaf_high: Int32Array, leaf_sets: MaskArray, set_pos: IntArray,
                 values: FloatArray) -> None:
        self.leaf_low, self.leaf_high, self.leaf_sets, self.set_pos = leaf_low, leaf_high, leaf_sets, set_pos
        self.values = values
        self.range_pos = np.setdiff1d(np.arange(leaf_low.shape[1]), set_pos)
        self.is_range = np.ones(leaf_low.shape[1], dtype=bool)
        self.is_range[set_pos] = False
        self.slot_of = np.full(leaf_low.shape[1], -1, dtype=np.int64)
        self.slot_of[set_pos] = np.arange(len(set_pos))
        #: The bits a segment of a feature of value sets holds: up to the highest value any leaf allows.
        union = np.bitwise_or.reduce(leaf_sets, axis=0).tolist() if leaf_sets.size else []
        self.set_width = max((int(m).bit_length() for m in union), default=0)

    def _contains(self, rows: IntArray, j: int, value: int, slot: int) -> BoolArray:
        """Whether each row's leaf allows ``value`` on free feature ``j`` (``slot``: its set column, or -1)."""
        if slot >= 0:
            out: BoolArray = (self.leaf_sets[rows, slot] >> np.uint64(value)) & np.uint64(1) != 0
        else:
            out = (self.leaf_low[rows, j] <= value) & (self.leaf_high[rows, j] >= value)
        return out

    def run(self, rows: IntArray, start: IntArray, low: Int32Array, high: Int32Array, sets: MaskArray, limit: float,
            max_steps: int = 64) -> tuple[IntArray, float]:
        """From ``start`` (a point of the box ``low``, ``high``, ``sets`` over the free features), the point of
        the lowest margin (less the base) reached, and that margin; stops early at a margin of at most
        ``limit``. ``rows``: the rows that meet the box, grouped by tree."""
        n_free = len(start)
        slot_of = self.slot_of
        point = np.asarray(start, dtype=np.int64).copy()
        contains = (self.leaf_low[rows] <= point) & (self.leaf_high[rows] >= point)
        for k, j in enumerate(self.set_pos.tolist()):
            contains[:, j] = (self.leaf_sets[rows, k] >> np.uint64(point[j])) & np.uint64(1) != 0
        misses = n_free - contains.sum(axis=1)
        values = self.values[rows]
        current = float(values[misses == 0].sum())
        widths = (high.astype(np.int64) - low + 2)
        widths[self.set_pos] = self.set_width
        seg = np.concatenate(([0], np.cumsum(widths)))
        blocked = np.zeros(int(seg[-1]), dtype=bool)  # the end slot of each range segment, the values out of the box
        blocked[seg[1:][self.is_range] - 1] = True
        for k, j in enumerate(self.set_pos.tolist()):
            blocked[seg[j]:seg[j + 1]] = (sets[k] >> _BITS[:self.set_width]) & np.uint64(1) == 0
        for _ in range(max_steps):
            if current <= limit:
                break
            margins = self._margins(rows, contains, misses, values, low, high, sets, seg)
            margins[blocked] = np.inf
            margins[seg[:-1] + np.where(slot_of >= 0, point, point - low)] = np.inf  # no move
            best = int(np.argmin(margins))
            if not margins[best] < current - 0.5:
                break
            j = int(np.searchsorted(seg, best, side="right")) - 1
            value = best - int(seg[j]) + (0 if slot_of[j] >= 0 else int(low[j]))
            point[j] = value
            column = self._contains(rows, j, value, int(slot_of[j]))
            misses += contains[:, j].astype(np.int64) - column
            contains[:, j] = column
            current = float(margins[best])
        return point, current

    def _margins(self, rows: IntArray, contains: BoolArray, misses: IntArray, values: FloatArray, low: Int32Array,
                 high: Int32Array, sets: MaskArray, seg: IntArray) -> FloatArray:
        """The margin (less the base) after each single change, laid out by feature segments (``seg``).

        The point's leaves that allow every value of the box on a feature add the same to all its values
        (the current margin); only the pairs (leaf, feature) whose leaf restricts the box on the feature, and
        the leaves missing the point on one feature, add by value."""
        at0 = np.flatnonzero(misses == 0)  # the point's leaves
        at1 = np.flatnonzero(misses == 1)  # leaves missing it on one feature
        size = int(seg[-1]) + 1
        widths = np.diff(seg)
        current = float(values[at0].sum())
        # pairs (row, feature, weight): the point's leaves where they restrict the box (less their value over the
        # whole segment, plus it over their values), the one-miss leaves on their missed feature
        rows0 = rows[at0]
        restricts = (self.leaf_low[rows0] > low) | (self.leaf_high[rows0] < high)
        if len(self.set_pos):
            restricts[:, self.set_pos] = self.leaf_sets[rows0] & sets != sets
        p0, f0 = np.nonzero(restricts)
        miss1 = np.argmin(contains[at1], axis=1)
        pair_row = np.concatenate((at0[p0], at1))
        pair_feat = np.concatenate((f0, miss1))
        weight = values[pair_row]
        less = np.bincount(f0, values[at0[p0]], minlength=len(widths))  # per feature: what its restricting leaves add
        margins: FloatArray = np.repeat(-less, widths).astype(np.float64) + current
        by_range = self.is_range[pair_feat]
        if by_range.any():
            leaf, feat, w = rows[pair_row[by_range]], pair_feat[by_range], weight[by_range]
            lo = np.maximum(self.leaf_low[leaf, feat], low[feat])
            hi = np.minimum(self.leaf_high[leaf, feat], high[feat])
            ok = lo <= hi
            base = (seg[feat] - low[feat])[ok]
            steps = (np.bincount(base + lo[ok], w[ok], minlength=size)
                     - np.bincount(base + hi[ok] + 1, w[ok], minlength=size))
            margins += np.cumsum(steps)[:-1]
        if not by_range.all():
            at = ~by_range
            feat = pair_feat[at]
            slot = self.slot_of[feat]
            allowed = self.leaf_sets[rows[pair_row[at]], slot] & sets[slot]
            bits = allowed[:, None] >> _BITS[:self.set_width] & np.uint64(1) != 0
            pair, bit = np.nonzero(bits)
            margins += np.bincount(seg[feat[pair]] + bit, weight[at][pair], minlength=size)[:-1]
        return margins
