"""The tables the box-bounds engine (:mod:`kcxai.engines._box_bounds`) reads: every leaf's value sets, and per
pair of classes every leaf's score difference as a rank among exact integers with rounded integer bounds.

Built once per model from its :class:`~kcxai.functions.AdditiveTrees` description; nothing here depends on a
query.

Leaves. Every reachable leaf of every tree is one row (trees one after the other, each tree's leaves in
``tree.leaves`` order, the order of ``AdditiveTrees.scores``). A feature of at most :data:`MASK_BITS` values
(a *narrow* feature) keeps each leaf's value set exactly, as a ``uint64`` bit mask; a *wide* feature keeps the
lowest and highest value number the leaf allows (its hull: exact for the ranges numeric thresholds give, a
superset otherwise, which keeps every bound true).

Pairs. For classes ``c`` and ``d`` the margin ``score_c - score_d`` of a leaf is an exact rational; scaled by
the least common multiple of their denominators (and the base's) it is an integer. Each leaf keeps the rank of
its integer among the distinct ones, so that "a tree's leaves that meet a box all add the same" is exact. When
the sums of a pair's integers could pass 62 bits, the integers are divided by a power of two, rounded down for
lower bounds and up for upper bounds: the bounds stay true and fit ``int64`` sums.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from kcxai.functions import AdditiveTrees

__all__ = ["MASK_BITS", "LeafTable", "PairValues", "pair_values", "lowest_bits", "highest_bits"]

#: The widest feature whose leaf value sets are kept exactly, as one ``uint64`` bit mask per leaf.
MASK_BITS = 64

#: Sums of a pair's rounded values (one per tree, plus the base) stay below ``2**SUM_BITS``.
SUM_BITS = 62


def _is_range(mask: int) -> bool:
    """Whether the set bits of a non-zero ``mask`` are consecutive."""
    low = mask & -mask
    return (mask + low) & mask == 0


class LeafTable:
    """Every reachable leaf's value sets (see the module docstring).

    Attributes
    ----------
    n_trees : int
    leaf_tree : ndarray of int64
        The tree of each leaf (ascending).
    narrow, wide : tuple of int
        The features of at most :data:`MASK_BITS` values, and the others.
    column : tuple of int
        Each feature's column in ``leaf_mask`` (narrow) or ``leaf_low`` / ``leaf_high`` (wide).
    leaf_mask : ndarray of uint64, shape (n_leaves, len(narrow))
        The set of values each leaf allows, per narrow feature.
    leaf_first, leaf_last : ndarray of int16, shape (n_leaves, len(narrow))
        The lowest and highest value number in each of those sets.
    range_columns : ndarray of bool, shape (len(narrow),)
        Whether every leaf's set on that narrow feature is a range of value numbers (numeric thresholds).
    leaf_low, leaf_high : ndarray of int32, shape (n_leaves, len(wide))
        The hull of each leaf's set, per wide feature.
    hulls_exact : bool
        Whether every leaf's set on every wide feature is its hull (so every set is kept exactly).
    """

    def __init__(self, spec: AdditiveTrees) -> None:
        sizes = spec.space.domain_sizes
        self.n_trees = len(spec.trees)
        self.narrow = tuple(f for f, s in enumerate(sizes) if s <= MASK_BITS)
        self.wide = tuple(f for f, s in enumerate(sizes) if s > MASK_BITS)
        column = [0] * len(sizes)
        for cols in (self.narrow, self.wide):
            for k, f in enumerate(cols):
                column[f] = k
        self.column = tuple(column)
        per_tree = [self._tree_rows(tree, sizes) for tree in spec.trees]
        n_leaves = sum(len(tree.leaves) for tree in spec.trees)
        self.leaf_tree = np.repeat(np.arange(self.n_trees, dtype=np.int64),
                                   [len(tree.leaves) for tree in spec.trees])
        self.leaf_mask = np.tile(np.asarray([(1 << sizes[f]) - 1 for f in self.narrow], dtype=np.uint64),
                                 (n_leaves, 1))
        self.leaf_low = np.zeros((n_leaves, len(self.wide)), dtype=np.int32)
        self.leaf_high = np.tile(np.asarray([sizes[f] - 1 for f in self.wide], dtype=np.int32), (n_leaves, 1))
        self.hulls_exact = True
        ranges = [True] * len(self.narrow)
        at = 0
        for (leaf, feature, mask), tree in zip(per_tree, spec.trees):
            self._store(np.asarray(leaf, dtype=np.int64) + at, feature, mask, sizes, ranges)
            at += len(tree.leaves)
        self.range_columns = np.asarray(ranges, dtype=bool)
        self.leaf_first = lowest_bits(self.leaf_mask).astype(np.int16)
        self.leaf_last = highest_bits(self.leaf_mask).astype(np.int16)

    @property
    def n_leaves(self) -> int:
        return len(self.leaf_tree)

    @staticmethod
    def _tree_rows(tree: object, sizes: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
        """Per reachable leaf (its number in ``tree.leaves``), the features its path restricts and their sets:
        three parallel lists (leaf number, feature, mask). A walk down the node arrays keeping the current
        restrictions, undone on the way back (memory linear in the tree's size, whatever its depth)."""
        arrays = tree.arrays  # type: ignore[attr-defined]
        number = {nid: k for k, nid in enumerate(tree.leaves)}  # type: ignore[attr-defined]
        full = [(1 << s) - 1 for s in sizes]
        allowed = list(full)
        restricted: dict[int, int] = {}
        leaf_of: list[int] = []
        feature_of: list[int] = []
        mask_of: list[int] = []
        stack: list[tuple[int, int, int]] = [(arrays.root, -1, 0)]  # (node, feature set on entry, its mask)
        while stack:
            nid, g, mask = stack.pop()
            if g >= 0:
                if nid >= 0:
                    stack.append((-1, g, allowed[g]))  # undo on the way back
                allowed[g] = mask
                if mask == full[g]:
                    restricted.pop(g, None)
                else:
                    restricted[g] = mask
                if nid < 0:
                    continue
            f = arrays.feature[nid]
            if f < 0:
                k = number[nid]
                for g2, m2 in restricted.items():
                    leaf_of.append(k)
                    feature_of.append(g2)
                    mask_of.append(m2)
                continue
            here = allowed[f]
            for branch, child in arrays.branches[nid]:
                m = branch & here
                if m:
                    stack.append((child, f, m))
        return leaf_of, feature_of, mask_of

    def _store(self, leaf: np.ndarray, feature: list[int], mask: list[int], sizes: Sequence[int],
               ranges: list[bool]) -> None:
        """Write one tree's restrictions into the leaf arrays."""
        if not len(leaf):
            return
        is_narrow = np.asarray([sizes[f] <= MASK_BITS for f in feature], dtype=bool)
        col = np.asarray([self.column[f] for f in feature], dtype=np.int64)
        for k in np.flatnonzero(is_narrow).tolist():
            if ranges[col[k]] and not _is_range(mask[k]):
                ranges[int(col[k])] = False
        narrow_at = np.flatnonzero(is_narrow)
        self.leaf_mask[leaf[narrow_at], col[narrow_at]] = np.asarray([mask[k] for k in narrow_at.tolist()],
                                                                     dtype=np.uint64)
        wide_at = np.flatnonzero(~is_narrow).tolist()
        if wide_at:
            masks = [mask[k] for k in wide_at]
            self.hulls_exact = self.hulls_exact and all(_is_range(m) for m in masks)
            self.leaf_low[leaf[wide_at], col[wide_at]] = [(m & -m).bit_length() - 1 for m in masks]
            self.leaf_high[leaf[wide_at], col[wide_at]] = [m.bit_length() - 1 for m in masks]


def lowest_bits(masks: np.ndarray) -> np.ndarray:
    """The position of the lowest set bit of each non-zero ``uint64`` (a power of two: exact in a float)."""
    positions: np.ndarray = np.log2((masks & (~masks + np.uint64(1))).astype(np.float64)).astype(np.int64)
    return positions


def highest_bits(masks: np.ndarray) -> np.ndarray:
    """The position of the highest set bit of each non-zero ``uint64``."""
    m = masks.copy()
    for s in (1, 2, 4, 8, 16, 32):
        m |= m >> np.uint64(s)
    positions: np.ndarray = np.log2((m ^ (m >> np.uint64(1))).astype(np.float64)).astype(np.int64)
    return positions


class PairValues:
    """The margin ``score_c - score_d`` of every leaf, for one ordered pair of classes (see the module
    docstring).

    Attributes
    ----------
    rank : ndarray of int64
        Per leaf, the rank of its exact scaled margin among the pair's distinct ones.
    low, high : ndarray of int64
        Per rank, the scaled margin rounded down and up (equal when ``exact``).
    base_low, base_high : int
        The base scores' margin, rounded down and up.
    need : int
        ``c`` beats ``d`` at a point whose (real) scaled margin is ``>= need`` when ``need`` is 0 (``c`` wins
        ties against ``d``), ``> 0`` when it is 1; so a box whose lower bound is ``>= need`` is ``c``'s against
        ``d`` everywhere, and one whose upper bound is ``< need`` is ``d``'s everywhere.
    exact : bool
        Whether the integers were kept unrounded.
    """

    __slots__ = ("rank", "low", "high", "base_low", "base_high", "need", "exact")

    def __init__(self, rank: np.ndarray, low: np.ndarray, high: np.ndarray, base_low: int, base_high: int,
                 need: int, exact: bool) -> None:
        self.rank, self.low, self.high = rank, low, high
        self.base_low, self.base_high, self.need, self.exact = base_low, base_high, need, exact

    def swapped(self, need: int) -> "PairValues":
        """The same pair seen from ``d``: every margin negated (ranks reversed, bounds swapped)."""
        top = len(self.low) - 1
        return PairValues(top - self.rank, -self.high[::-1], -self.low[::-1], -self.base_high, -self.base_low,
                          need, self.exact)


def pair_values(spec: AdditiveTrees, c: int, d: int) -> PairValues:
    """The :class:`PairValues` of ``(c, d)``: each leaf's ``score_c - score_d`` scaled to an integer, ranked and
    (if its sums could pass :data:`SUM_BITS` bits) rounded outward by a power of two."""
    diffs = [row[c] - row[d] for rows in spec.scores for row in rows]
    base = Fraction(spec.base[c]) - Fraction(spec.base[d])
    scale = base.denominator
    for den in {x.denominator for x in diffs}:
        scale = scale * den // math.gcd(scale, den)
    ints = [x.numerator * (scale // x.denominator) for x in diffs]
    base_int = base.numerator * (scale // base.denominator)
    distinct = sorted(set(ints))
    rank_of = {v: r for r, v in enumerate(distinct)}
    rank = np.asarray([rank_of[v] for v in ints], dtype=np.int64)
    biggest = max([abs(v) for v in distinct] + [abs(base_int), 1])
    shift = max(0, (biggest * (len(spec.trees) + 1)).bit_length() - SUM_BITS)
    low = np.asarray([v >> shift for v in distinct], dtype=np.int64)
    high = np.asarray([-((-v) >> shift) for v in distinct], dtype=np.int64)
    need = 0 if spec.priority.index(c) < spec.priority.index(d) else 1
    return PairValues(rank, low, high, base_int >> shift, -((-base_int) >> shift), need, shift == 0)
