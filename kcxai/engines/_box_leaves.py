"""The leaf tables of the box search: per reachable leaf of every tree, the values its path allows.

A leaf's path restricts each feature to a set of value numbers. The table keeps, per leaf and
feature, the lowest and highest value of that set (its hull), and for the features of at most
:data:`MASK_BITS` values whose sets are not all ranges (a one-hot encoder's ``x != v``) the set
itself, as a ``uint64`` bit mask. Wider features restricted to sets that are not ranges keep their
hulls only (:attr:`LeafTable.hull_features`). The helpers at the end read and make such masks with
numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from kcxai._deadline import Deadline
from kcxai.models.tree import DecisionTree

__all__ = ["MASK_BITS", "LeafTable", "LeafSets", "leaf_value_sets", "IntArray", "Int32Array", "MaskArray",
           "BoolArray", "FloatArray", "NumberArray", "needed_bytes", "low_bit", "high_bit", "range_masks",
           "some_not_range"]

#: Arrays of the engine, by what their entries are.
IntArray = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]
MaskArray = npt.NDArray[np.uint64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]
#: Margins or bounds: int64, float64, or Python ints (dtype object) where int64 could overflow.
NumberArray = npt.NDArray[Any]

#: The widest domain whose leaf value sets the engine keeps exactly, as one uint64 bit mask per leaf.
MASK_BITS = 64


class LeafSets(NamedTuple):
    """What the paths of one tree allow, per reachable leaf (``tree.leaves`` order) and feature."""

    #: The lowest value number the path allows.
    low: Int32Array
    #: The highest value number the path allows.
    high: Int32Array
    #: The allowed set as a bit mask, for the narrow features (0 for the others).
    masks: MaskArray
    #: The wider features some node restricts to a value set that is not a range.
    not_ranges: set[int]


def leaf_value_sets(tree: DecisionTree, sizes: IntArray, narrow: BoolArray) -> LeafSets:
    """Per reachable leaf of ``tree`` and feature, the lowest and highest value number its path allows and
    (features of at most :data:`MASK_BITS` values, ``narrow``) the set itself as a bit mask; and the other
    features some node restricts to a set that is not a range.

    A walk down the node arrays with one mask per feature, restored on the way back (the tree's paths, whose
    total size can be quadratic in the tree's, are not built)."""
    arrays = tree.arrays
    n_leaves = len(tree.leaves)
    n_features = len(sizes)
    low = np.zeros((n_leaves, n_features), dtype=np.int32)
    high = np.tile(np.asarray(sizes - 1, dtype=np.int32), (n_leaves, 1))
    allowed = [(1 << int(s)) - 1 for s in sizes]
    masks = np.zeros((n_leaves, n_features), dtype=np.uint64)
    is_narrow: list[bool] = narrow.tolist()
    mask_now = np.asarray([m if is_narrow[f] else 0 for f, m in enumerate(allowed)], dtype=np.uint64)
    low_now = np.zeros(n_features, dtype=np.int32)
    high_now = np.array(sizes - 1, dtype=np.int32)
    not_ranges: set[int] = set()
    leaf = 0
    # (node, feature restored on the way back or -1, its mask, low and high to restore); node -1: restore only
    stack: list[tuple[int, int, int, int, int]] = [(arrays.root, -1, 0, 0, 0)]
    while stack:
        node, g, mask_g, low_g, high_g = stack.pop()
        if g >= 0:
            if node >= 0:
                stack.append((-1, g, allowed[g], int(low_now[g]), int(high_now[g])))
            allowed[g], low_now[g], high_now[g] = mask_g, low_g, high_g
            if is_narrow[g]:
                mask_now[g] = mask_g
            if node < 0:
                continue
        f = arrays.feature[node]
        if f < 0:
            low[leaf] = low_now
            high[leaf] = high_now
            masks[leaf] = mask_now
            leaf += 1
            continue
        here = allowed[f]
        for branch_mask, child in arrays.branches[node]:
            m = branch_mask & here
            if m:
                lowest = m & -m
                if (m + lowest) & m and not is_narrow[f]:  # m's bits are not consecutive
                    not_ranges.add(int(f))
                stack.append((child, f, m, lowest.bit_length() - 1, m.bit_length() - 1))
    return LeafSets(low, high, masks, not_ranges)


class LeafTable:
    """The reachable leaves of all the trees of an ensemble, one row each, grouped by tree.

    Parameters
    ----------
    trees : sequence of DecisionTree
    sizes : array of int
        The domain size of each feature.
    deadline : Deadline, optional
        Checked once per tree.

    Attributes
    ----------
    low, high : array of int32, shape (n_leaves, n_features)
        The hull of the values each leaf's path allows on each feature.
    set_features : array of int
        The features (of at most :data:`MASK_BITS` values) some leaf restricts to a value set that is not a
        range: their sets are kept exactly, ``masks[:, mask_col[f]]``.
    masks : array of uint64, shape (n_leaves, len(set_features))
    mask_col : array of int
        Per feature, its column of ``masks`` (-1: none).
    hull_features : array of int
        The wider features some node restricts to a value set that is not a range: kept by their hulls (a
        relaxation; the search decides the single points where it leaves two leaves of a tree).
    leaf_tree : array of int
        The tree of each row.
    """

    def __init__(self, trees: Sequence[DecisionTree], sizes: IntArray, deadline: Deadline | None = None) -> None:
        self.sizes = sizes
        narrow = sizes <= MASK_BITS
        lows, highs, masks, tree_of = [], [], [], []
        not_ranges: set[int] = set()
        for t, tree in enumerate(trees):
            if deadline is not None:
                deadline.check()
            sets = leaf_value_sets(tree, sizes, narrow)
            lows.append(sets.low)
            highs.append(sets.high)
            masks.append(sets.masks)
            not_ranges |= sets.not_ranges
            tree_of.append(np.full(len(sets.low), t, dtype=np.int64))
        n_features = len(sizes)
        for f in np.flatnonzero(narrow).tolist():
            if any(some_not_range(m[:, f]) for m in masks):
                not_ranges.add(f)
        self.set_features: IntArray = np.asarray(sorted(f for f in not_ranges if narrow[f]), dtype=np.int64)
        self.hull_features: IntArray = np.asarray(sorted(f for f in not_ranges if not narrow[f]), dtype=np.int64)
        self.mask_col: IntArray = np.full(n_features, -1, dtype=np.int64)
        self.mask_col[self.set_features] = np.arange(len(self.set_features))
        self.low: Int32Array = np.vstack(lows) if lows else np.zeros((0, n_features), dtype=np.int32)
        self.high: Int32Array = np.vstack(highs) if highs else np.zeros((0, n_features), dtype=np.int32)
        self.masks: MaskArray = (np.vstack([m[:, self.set_features] for m in masks]) if masks
                                 else np.zeros((0, len(self.set_features)), dtype=np.uint64))
        self.leaf_tree: IntArray = np.concatenate(tree_of) if tree_of else np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.leaf_tree)

    def meets_point(self, point: Sequence[int]) -> BoolArray:
        """Per leaf and feature, whether the leaf's value set (its hull, for :attr:`hull_features`) holds
        ``point``'s value."""
        values = np.asarray(point, dtype=np.int32)
        cols: BoolArray = (self.low <= values) & (self.high >= values)
        if len(self.set_features):
            shift = values[self.set_features].astype(np.uint64)
            cols[:, self.set_features] = (self.masks >> shift) & np.uint64(1) != 0
        return cols

    def meets_box(self, low: IntArray, high: IntArray) -> BoolArray:
        """Per leaf, whether its value sets meet the ranges ``low[f] .. high[f]`` of every feature."""
        meet: BoolArray = np.all((self.low <= high[None, :]) & (self.high >= low[None, :]), axis=1)
        if len(self.set_features):
            box = range_masks(low[self.set_features], high[self.set_features])
            meet &= np.all(self.masks & box != 0, axis=1)
        return meet

    def meets_range(self, feature: int, low: int, high: int) -> BoolArray:
        """Per leaf, whether its value set (its hull, for a hull feature) on ``feature`` meets ``low .. high``:
        one column of :meth:`meets_box`."""
        col = int(self.mask_col[feature])
        if col >= 0:
            box = range_masks(np.asarray([low], dtype=np.int64), np.asarray([high], dtype=np.int64))[0]
            out: BoolArray = self.masks[:, col] & box != 0
        else:
            out = (self.low[:, feature] <= high) & (self.high[:, feature] >= low)
        return out

    def holds(self, rows: IntArray, feature: int, value: int) -> BoolArray:
        """Whether each leaf of ``rows`` allows ``value`` on ``feature`` (its hull, for a hull feature)."""
        col = int(self.mask_col[feature])
        if col >= 0:
            out: BoolArray = (self.masks[rows, col] >> np.uint64(value)) & np.uint64(1) != 0
        else:
            out = (self.low[rows, feature] <= value) & (self.high[rows, feature] >= value)
        return out

    def sweep(self, feature: int, rows: IntArray, values: FloatArray) -> FloatArray:
        """The sum of ``values`` of the leaves ``rows`` whose set (hull) on ``feature`` holds each of its values."""
        size = int(self.sizes[feature])
        col = int(self.mask_col[feature])
        if col >= 0:
            bits = (self.masks[rows, col][:, None] >> np.arange(size, dtype=np.uint64)) & np.uint64(1)
            out: FloatArray = values @ bits.astype(np.float64)
            return out
        steps = np.zeros(size + 1)
        np.add.at(steps, self.low[rows, feature], values)
        np.add.at(steps, self.high[rows, feature] + 1, -values)
        return np.cumsum(steps[:-1])


def needed_bytes(n_leaves: int, n_features: int, n_classes: int) -> int:
    """About the bytes of the engine's arrays: its leaf tables and, per pair of classes, its rows of values."""
    return n_leaves * (16 * n_features + 8 + 24 * n_classes * (n_classes - 1)) + n_leaves * n_features


# -- uint64 bit masks of value sets ---------------------------------------------------

def _bit_position(m: MaskArray) -> Int32Array:
    """The position of the single set bit of each uint64 (a power of two, exact in a float64)."""
    return np.log2(m.astype(np.float64)).astype(np.int32)


def some_not_range(m: MaskArray) -> bool:
    """Whether some of the (non-zero) uint64 masks ``m`` is not a range of bits (a range plus its lowest
    bit is one bit past it, or 0 when it ends at bit 63)."""
    return bool(np.any((m + (m & (~m + np.uint64(1)))) & m))


def low_bit(m: MaskArray) -> Int32Array:
    """The position of the lowest set bit of each (non-zero) uint64."""
    return _bit_position(m & (~m + np.uint64(1)))


def high_bit(m: MaskArray) -> Int32Array:
    """The position of the highest set bit of each (non-zero) uint64."""
    m = m.copy()
    for s in (1, 2, 4, 8, 16, 32):
        m |= m >> np.uint64(s)
    return _bit_position(m ^ (m >> np.uint64(1)))


def range_masks(low: IntArray | Int32Array, high: IntArray | Int32Array) -> MaskArray:
    """The uint64 masks of the value ranges ``low[k] .. high[k]`` (at most :data:`MASK_BITS` values)."""
    return np.asarray([((1 << (int(h) + 1)) - 1) & ~((1 << int(lw)) - 1) for lw, h in zip(low.tolist(), high.tolist())],
                      dtype=np.uint64)
