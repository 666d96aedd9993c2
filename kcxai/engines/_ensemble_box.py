"""Exact "can the class change?" for tree ensembles by branch and bound over boxes of values.

The same question as :class:`~kcxai.engines._ensemble_cnf.EnsembleCnf` (is
there a point with ``x_S = v_S`` that a rival class ``d`` beats the predicted
class ``c`` at?), decided by search instead of SAT, because CDCL solvers are
slow on sums of 30-50-bit integers: on a 100-tree, depth-6 XGBoost model of
adult one deletion step took 1 to 130 s with the adder encoding (Glucose 4
and CaDiCaL 1.9.5 alike), and RC2 (MaxSAT, leaf values as soft weights)
5 to 150 s.

For each rival ``d`` the margin ``score_c - score_d`` is a sum over trees;
``d`` wins where it is ``<= 0`` (``< 0`` when ``c`` wins ties). The search
keeps a *box*: a range of value numbers per free feature (the fixed features
are single values) and, per tree, the leaves whose path meets the box. A tree
all of whose remaining leaves add the same value is *settled*: its value is
added to the box's constant part and its leaves are dropped. The box's lower
bound is the constant part plus, per unsettled tree, the smallest value of its
remaining leaves (a relaxation: one tree's minimum may need other values than
another's), its upper bound the same with the largest. A box whose lower bound
is above the threshold holds no counterexample; a box whose upper bound is not
(in particular one where every tree is settled) is a counterexample at each of
its points. Otherwise the free feature that most of the unsettled leaves
restrict inside the box is split in two, at the median of those leaves'
boundaries, and the children of lower bound are searched first. A child box
only looks at its parent's leaves, so a box costs time in proportion to the
leaves still undecided, not to the whole ensemble. Boxes are split in batches
(depth first, the batch doubling from 1 to 64 boxes as a search grows long),
so that numpy's cost per call is shared by many boxes: on 100 trees of depth 8
this took the median AXp from 0.074 to 0.048-0.055 s CPU against one box at a
time. Before the first split one point of the root box is tried: each free
feature at the value that most of the trees' lowest-valued leaves allow (a
vote weighted by each tree's spread of values); where the margin there is low
enough (exact integers, confirmed by the model) it is the counterexample. On
XGBoost (100 trees of depth 6, adult) it found about half of the
counterexamples, and the median AXp went from 10.7 to 6.7 ms CPU.

A path may restrict a feature to a value set that is not a range (a one-hot
encoder's ``workclass != Private``). For a feature of at most 64 values
(:data:`MASK_BITS`) each leaf keeps its set exactly, as a bit mask, and the
box keeps a set of values for the feature instead of a range: a box is split
by the value set its leaves cut it by most often (``x == v`` against the
rest), so that boxes meet exactly the leaves whose paths they cross and the
facts above hold as they do for ranges. With each set relaxed to its hull
(as before), the search came down to single points: on adult behind a one-hot
encoder, a 20-tree depth-8 forest's median AXp took 1.07 s (2 rows of 10 had a
query past 60 s) against 0.093 s with the sets, and scikit-learn's default
forest 20 s to past 120 s per query against a median AXp of 0.89 s (load 3-5
on 2 cores). Wider features keep their sets' hulls, a relaxation that keeps
these facts true; a single point where two leaves of a tree still meet is
decided by the model itself.

Values are compared exactly: each pair's leaf contributions are scaled to
integers and replaced by their rank among the pair's distinct values (so
"settled" and the minima are exact); the bounds are int64 sums when the scaled
values allow it, and otherwise float sums that prune only with a margin above
their rounding error, the decisions being exact Python-integer sums.

Everything that does not depend on the instance (every leaf's hull and value
sets, every pair of classes' scaled values) is built with the engine.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from kcxai._deadline import Deadline
from kcxai._errors import ProblemTooLargeError
from kcxai.engines._ensemble_cnf import ensemble_view

__all__ = ["EnsembleBox", "Interrupted", "DEFAULT_MAX_MEMORY"]

_ZERO = np.zeros(1, dtype=np.int64)

#: Default bound on the engine's arrays, in bytes.
DEFAULT_MAX_MEMORY = 2 << 30


class Interrupted(Exception):
    """A query stopped by :meth:`EnsembleBox.interrupt` (the portfolio's other engine answered first)."""


class _Rival:
    """One rival ``d`` of the predicted class ``c``: the leaves of the trees that separate them."""

    __slots__ = ("rows", "tree", "rank", "table", "exact", "base", "threshold", "slack")

    def __init__(self, rows: np.ndarray, tree: np.ndarray, rank: np.ndarray, values: list[int], base: int,
                 threshold: int) -> None:
        self.rows = rows  # indices into the engine's leaf arrays, grouped by tree
        self.tree = tree  # the tree of each row (ascending)
        self.rank = rank  # the rank of each row's value among ``values``
        self.exact = values  # the distinct scaled values, ascending (Python ints)
        self.base = base
        self.threshold = threshold  # a counterexample has margin <= threshold
        n_trees = len(np.unique(tree))
        total = max((abs(v) for v in values), default=0) * n_trees + abs(base)  # bounds every partial sum
        if total < 2 ** 62:
            self.table: np.ndarray = np.asarray(values, dtype=np.int64)
            self.slack: float | None = None
        else:  # float bounds, pruning only past their rounding error: a sum of n_trees + 2 rounded terms,
            # each within 2^-53 of its magnitude (at most ``total``), and rounded partial sums
            self.table = np.asarray([float(v) for v in values], dtype=np.float64)
            self.slack = math.ldexp(float(total), -52) * (2 * n_trees + 4) + 1.0

    def total(self, ranks: np.ndarray) -> Any:
        """The sum of the values of ``ranks``: exact int64, or a float when the values are big."""
        return self.table[ranks].sum()

    def exact_total(self, ranks: np.ndarray) -> int:
        if self.slack is None:
            return int(self.table[ranks].sum())
        return sum(self.exact[k] for k in ranks.tolist())


#: The widest domain whose leaf value sets the engine keeps exactly, as one uint64 bit mask per leaf.
MASK_BITS = 64


def _leaf_sets(tree: Any, sizes: np.ndarray, narrow: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, set[int]]:
    """Per reachable leaf (``tree.leaves`` order) and feature, the lowest and highest value number its path
    allows, and (features of at most :data:`MASK_BITS` values, ``narrow``) the set itself as a bit mask
    (0 elsewhere); and the other features some node restricts to a set that is not a range. A walk down the node
    arrays with one mask per feature, restored on the way back (the tree's paths, whose total size can be
    quadratic in the tree's, are not built)."""
    a = tree.arrays
    n_leaves = len(tree.leaves)
    n = len(sizes)
    lo = np.zeros((n_leaves, n), dtype=np.int32)
    hi = np.tile(np.asarray(sizes - 1, dtype=np.int32), (n_leaves, 1))
    allowed = [(1 << int(s)) - 1 for s in sizes]
    masks = np.zeros((n_leaves, n), dtype=np.uint64)
    narrow_of: list[bool] = narrow.tolist()
    mask_now = np.asarray([m if narrow_of[f] else 0 for f, m in enumerate(allowed)], dtype=np.uint64)
    lo_now = np.zeros(n, dtype=np.int32)
    hi_now = np.array(sizes - 1, dtype=np.int32)
    not_ranges: set[int] = set()
    k = 0
    stack: list[tuple[int, int, int, int, int]] = [(a.root, -1, 0, 0, 0)]  # node, feature, mask, low, high
    while stack:
        nid, g, mg, lg, hg = stack.pop()
        if g >= 0:
            if nid >= 0:
                stack.append((-1, g, allowed[g], int(lo_now[g]), int(hi_now[g])))
            allowed[g], lo_now[g], hi_now[g] = mg, lg, hg
            if narrow_of[g]:
                mask_now[g] = mg
            if nid < 0:
                continue
        f = a.feature[nid]
        if f < 0:
            lo[k] = lo_now
            hi[k] = hi_now
            masks[k] = mask_now
            k += 1
            continue
        here = allowed[f]
        for mask, child in a.branches[nid]:
            m = mask & here
            if m:
                low = m & -m
                if (m + low) & m and not narrow_of[f]:  # m's bits are not consecutive
                    not_ranges.add(int(f))
                stack.append((child, f, m, low.bit_length() - 1, m.bit_length() - 1))
    return lo, hi, masks, not_ranges


def _bit_position(m: np.ndarray) -> np.ndarray:
    """The position of the single set bit of each uint64 (a power of two, exact in a float64)."""
    return np.log2(m.astype(np.float64)).astype(np.int32)


def _not_ranges(m: np.ndarray) -> bool:
    """Whether some of the (non-zero) uint64 masks ``m`` is not a range of bits (a range plus its lowest
    bit is one bit past it, or 0 when it ends at bit 63)."""
    return bool(np.any((m + (m & (~m + np.uint64(1)))) & m))


def _low_bit(m: np.ndarray) -> np.ndarray:
    """The position of the lowest set bit of each (non-zero) uint64."""
    return _bit_position(m & (~m + np.uint64(1)))


def _high_bit(m: np.ndarray) -> np.ndarray:
    """The position of the highest set bit of each (non-zero) uint64."""
    m = m.copy()
    for s in (1, 2, 4, 8, 16, 32):
        m |= m >> np.uint64(s)
    return _bit_position(m ^ (m >> np.uint64(1)))


def _range_masks(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The uint64 masks of the value ranges ``low[k] .. high[k]`` (at most :data:`MASK_BITS` values)."""
    return np.asarray([((1 << (int(h) + 1)) - 1) & ~((1 << int(lw)) - 1) for lw, h in zip(low.tolist(), high.tolist())],
                      dtype=np.uint64)


class EnsembleBox:
    """Exact class-change queries on a tree ensemble by branch and bound (see the module docstring).

    Same query interface as :class:`~kcxai.engines._ensemble_cnf.EnsembleCnf`.

    Parameters
    ----------
    model : RandomForest or BoostedTrees
    deadline : Deadline, optional
        The time limit of the construction (checked once per tree and per pair of classes).
    max_memory : int or None, default :data:`DEFAULT_MAX_MEMORY`
        Bound on the bytes of the engine's arrays (``None``: none); past it
        :class:`~kcxai.ProblemTooLargeError`. A query's ``deadline`` is checked once per box.
    """

    language = "search"

    def __init__(self, model: Any, *, deadline: Deadline | None = None,
                 max_memory: int | None = DEFAULT_MAX_MEMORY) -> None:
        self.model = model
        self.view = ensemble_view(model)
        self.space = model.space
        self.sizes = np.asarray([f.size for f in self.space.features], dtype=np.int64)
        self.max_memory = max_memory
        self._check_memory(sum(len(t.leaves) for t in self.view.trees))
        narrow = self.sizes <= MASK_BITS
        lows, highs, masks, trees = [], [], [], []
        not_ranges: set[int] = set()
        for t, tree in enumerate(self.view.trees):
            if deadline is not None:
                deadline.check()
            lo, hi, mk, sets = _leaf_sets(tree, self.sizes, narrow)
            lows.append(lo)
            highs.append(hi)
            masks.append(mk)
            not_ranges |= sets
            trees.append(np.full(len(lo), t, dtype=np.int64))
        n = len(self.sizes)
        for f in np.flatnonzero(narrow).tolist():
            if any(_not_ranges(m[:, f]) for m in masks):
                not_ranges.add(f)
        #: The features some leaf restricts to a value set that is not a range, of at most :data:`MASK_BITS`
        #: values: their sets are kept exactly (``masks``, one column each, ``mask_col``).
        self.set_features = np.asarray(sorted(f for f in not_ranges if narrow[f]), dtype=np.int64)
        #: The wider features some node restricts to a value set that is not a range: kept by their hulls
        #: (a relaxation; the search decides the single points where it leaves two leaves of a tree).
        self.hull_features = np.asarray(sorted(f for f in not_ranges if not narrow[f]), dtype=np.int64)
        self.mask_col = np.full(n, -1, dtype=np.int64)
        self.mask_col[self.set_features] = np.arange(len(self.set_features))
        self.lo = np.vstack(lows) if lows else np.zeros((0, n), dtype=np.int32)
        self.hi = np.vstack(highs) if highs else np.zeros((0, n), dtype=np.int32)
        g = len(self.set_features)
        self.masks = (np.vstack([m[:, self.set_features] for m in masks]) if masks
                      else np.zeros((0, g), dtype=np.uint64))
        del masks
        self.leaf_tree = np.concatenate(trees) if trees else np.zeros(0, dtype=np.int64)
        #: Number of reachable leaves of all the trees (one box each).
        self.n_leaves = len(self.leaf_tree)
        k = len(self.view.base)
        distinct, row_ids = self._distinct_rows(deadline)
        self._rivals = {c: [self._rival(c, d, distinct, row_ids, deadline) for d in range(k) if d != c]
                        for c in range(k)}
        self._witness: tuple[int, ...] | None = None
        self._meets: tuple[tuple[int, ...], np.ndarray] | None = None
        self._flipped: tuple[tuple[tuple[int, ...], int], list[tuple[int, ...] | None]] | None = None
        self._stop = threading.Event()
        self.nodes = 0

    def _check_memory(self, n_leaves: int) -> None:
        k = len(self.view.base)
        need = n_leaves * (16 * len(self.sizes) + 8 + 24 * k * (k - 1)) + n_leaves * len(self.sizes)
        if self.max_memory is not None and need > self.max_memory:
            raise ProblemTooLargeError(
                f"The search engine's arrays for this {type(self.model).__name__} ({len(self.view.trees)} trees, "
                f"{n_leaves:,} leaves) need about {need:,} bytes, more than max_memory={self.max_memory:,}. Pass a "
                "larger 'max_memory' (None: no limit), or use a model with fewer or shallower trees.")

    # -- per pair of classes ---------------------------------------------------

    def _distinct_rows(self, deadline: Deadline | None) -> tuple[list[tuple[Fraction, ...]], list[np.ndarray]]:
        """The distinct score rows (by identity: a hard-voting forest shares one row per class), and per tree the
        index of each leaf's row."""
        index: dict[int, int] = {}
        distinct: list[tuple[Fraction, ...]] = []
        per_tree = []
        for rows in self.view.rows:  # look at the clock once per tree
            if deadline is not None:
                deadline.check()
            ids = []
            for row in rows.values():
                k = index.get(id(row))
                if k is None:
                    k = index[id(row)] = len(distinct)
                    distinct.append(row)
                ids.append(k)
            per_tree.append(np.asarray(ids, dtype=np.int64))
        return distinct, per_tree

    def _rival(self, c: int, d: int, distinct: list[tuple[Fraction, ...]], row_ids: list[np.ndarray],
               deadline: Deadline | None) -> _Rival:
        """The margin ``score_c - score_d`` per leaf, scaled to integers, as ranks among its distinct values."""
        view = self.view
        diffs = [row[c] - row[d] for row in distinct]
        base = view.base[c] - view.base[d]
        scale = 1
        for x in (*set(diffs), base):
            scale = scale * x.denominator // math.gcd(scale, x.denominator)
        ints = [int(x * scale) for x in diffs]
        uniq = sorted(set(ints))
        rank_of = {v: r for r, v in enumerate(uniq)}
        rank_of_row = np.asarray([rank_of[v] for v in ints], dtype=np.int64)
        b0 = int(base * scale)
        keep_rows, keep_ranks = [], []
        at = 0
        for ids in row_ids:
            if deadline is not None:
                deadline.check()
            ranks = rank_of_row[ids]
            if len(ranks) and (ranks != ranks[0]).any():
                keep_rows.append(np.arange(at, at + len(ids), dtype=np.int64))
                keep_ranks.append(ranks)
            elif len(ranks):  # constant for this pair
                b0 += uniq[int(ranks[0])]
            at += len(ids)
        rows = np.concatenate(keep_rows) if keep_rows else np.zeros(0, dtype=np.int64)
        rank = np.concatenate(keep_ranks) if keep_ranks else np.zeros(0, dtype=np.int64)
        # ranks over the values that occur in non-constant trees only
        used = np.unique(rank)
        renumber = np.zeros(len(uniq), dtype=np.int64)
        renumber[used] = np.arange(len(used))
        return _Rival(rows, self.leaf_tree[rows], renumber[rank], [uniq[int(k)] for k in used], b0,
                      0 if view.prefers(d, c) else -1)

    # -- queries ---------------------------------------------------------------

    def interrupt(self) -> None:
        """Stop the running query (from another thread): it raises :class:`Interrupted`."""
        self._stop.set()

    def clear_interrupt(self) -> None:
        self._stop.clear()

    def _meet_columns(self, point: Sequence[int]) -> np.ndarray:
        """Per leaf and feature, whether the leaf's value set (its hull, for :attr:`hull_features`) holds
        ``point``'s value (kept for the last point)."""
        key = tuple(int(v) for v in point)
        if self._meets is None or self._meets[0] != key:
            v = np.asarray(key, dtype=np.int32)
            cols = (self.lo <= v) & (self.hi >= v)
            if len(self.set_features):
                shift = v[self.set_features].astype(np.uint64)
                cols[:, self.set_features] = (self.masks >> shift) & np.uint64(1) != 0
            self._meets = (key, cols)
        return self._meets[1]

    def _flips(self, point: Sequence[int], label: int) -> list[tuple[int, ...] | None]:
        """Per feature, a point that differs from ``point`` on that feature alone and gets another class than
        ``label`` (``None``: none found), kept for the last point.

        One sweep per feature and rival: with the other features at ``point``'s values, each tree's leaves
        that still meet them split the feature's values, so the margin at every value is a sum of steps
        (a cumulative sum; for a feature of value sets, a sum over the sets' bits); its lowest value is
        checked with the model itself."""
        key = (tuple(int(v) for v in point), label)
        if self._flipped is not None and self._flipped[0] == key:
            return self._flipped[1]
        n = len(self.sizes)
        cols = self._meet_columns(point)
        misses = n - cols.sum(axis=1)
        out: list[tuple[int, ...] | None] = [None] * n
        for r in self._rivals[label]:
            near = misses[r.rows] <= 1  # leaves the point reaches, or would with one feature changed
            rows, values = r.rows[near], r.table[r.rank[near]].astype(np.float64)
            on = misses[rows] == 0
            for i in range(n):
                if out[i] is not None or self.sizes[i] < 2:
                    continue
                sel = on | ~cols[rows, i]
                margins = self._sweep(i, rows[sel], values[sel])
                k = int(np.argmin(margins))
                if k == point[i] or margins[k] + float(r.base) > r.threshold + (r.slack or 0.0) + 0.5:
                    continue  # no flip (the half unit: integer margins summed in floats)
                candidate = tuple(k if j == i else int(point[j]) for j in range(n))
                if self.model.predict_point(candidate) != label:  # decided exactly, whatever the sweep's floats
                    out[i] = candidate
        self._flipped = (key, out)
        return out

    def _sweep(self, i: int, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
        """The sum of ``values`` of the leaves ``rows`` whose set (hull) on feature ``i`` holds each value."""
        size = int(self.sizes[i])
        c = int(self.mask_col[i])
        if c >= 0:
            bits = (self.masks[rows, c][:, None] >> np.arange(size, dtype=np.uint64)) & np.uint64(1)
            return values @ bits.astype(np.float64)
        steps = np.zeros(size + 1)
        np.add.at(steps, self.lo[rows, i], values)
        np.add.at(steps, self.hi[rows, i] + 1, -values)
        return np.cumsum(steps[:-1])

    def changes(self, point: Sequence[int], label: int, fixed: Iterable[int], deadline: Deadline | None = None) -> bool:
        """Whether some point with ``x_fixed = point_fixed`` is classified other than ``label``.

        First a point that differs from ``point`` on one free feature only (:meth:`_flips`), then the search."""
        fixed = sorted(set(fixed))
        flips = self._flips(point, label)
        for i in set(range(len(self.sizes))).difference(fixed):
            if flips[i] is not None:
                self._witness = flips[i]
                return True
        cols = self._meet_columns(point)
        meet = np.logical_and.reduce(cols[:, fixed], axis=1) if fixed else np.ones(len(cols), dtype=bool)
        for rival in self._rivals[label]:
            w = self._search(rival, point, fixed, meet, label, deadline)
            if w is not None:
                self._witness = w
                return True
        self._witness = None
        return False

    def changes_in_box(self, lo: Sequence[int], hi: Sequence[int], label: int,
                       deadline: Deadline | None = None) -> bool:
        """Whether some point with ``lo[f] <= x_f <= hi[f]`` (value numbers) for every feature is
        classified other than ``label``: the sufficiency of a box of ranges (what widening an
        explanation's conditions asks). The same search, its root box the given ranges and its leaves
        those whose value sets meet them."""
        low = np.asarray(lo, dtype=np.int64)
        high = np.asarray(hi, dtype=np.int64)
        fixed = [i for i in range(len(self.sizes)) if low[i] == high[i]]
        meet = np.all((self.lo <= high[None, :]) & (self.hi >= low[None, :]), axis=1)
        if len(self.set_features):
            box = _range_masks(low[self.set_features], high[self.set_features])
            meet &= np.all(self.masks & box != 0, axis=1)
        for rival in self._rivals[label]:
            w = self._search(rival, tuple(int(x) for x in low), fixed, meet, label, deadline, bounds=(low, high))
            if w is not None:
                self._witness = w
                return True
        self._witness = None
        return False

    def _search(self, r: _Rival, point: Sequence[int], fixed: list[int], meet: np.ndarray, label: int,
                deadline: Deadline | None, bounds: tuple[np.ndarray, np.ndarray] | None = None
                ) -> tuple[int, ...] | None:
        s = self._searcher(r, point, fixed, meet, label, deadline)
        return s.run(None if bounds is None else (bounds[0][s.free], bounds[1][s.free]))

    def _searcher(self, r: _Rival, point: Sequence[int], fixed: list[int], meet: np.ndarray, label: int,
                  deadline: Deadline | None) -> "_Search":
        """The search of one query and rival over the leaves ``meet`` selects."""
        fixed_set = set(fixed)
        free = np.asarray([i for i in range(len(self.sizes)) if i not in fixed_set], dtype=np.int64)
        mine = meet[r.rows]
        return _Search(self, r, point, free, r.rows[mine], r.tree[mine], r.rank[mine], label, deadline)

    def core_features(self, point: Sequence[int], fixed: Iterable[int]) -> set[int]:
        """No core: all the fixed features."""
        return set(fixed)

    def model_point(self) -> tuple[int, ...]:
        """After a positive :meth:`changes`: the counterexample found."""
        assert self._witness is not None
        return self._witness

    def differs(self, point: Sequence[int], features: Iterable[int]) -> set[int]:
        """After a positive :meth:`changes`: the features among ``features`` where the counterexample differs."""
        w = self.model_point()
        return {i for i in features if w[i] != point[i]}

    def close(self) -> None:
        """Nothing to free."""


class _Batch:
    """Open boxes of one search: bounds per free feature (for a feature of value sets, the hull of its set),
    the sets of the free :attr:`EnsembleBox.set_features` as masks, constant parts, and the rows (leaves)
    still undecided, grouped by box (``own``, ascending) then by tree."""

    __slots__ = ("lo", "hi", "sets", "base", "rows", "own", "low")

    def __init__(self, lo: np.ndarray, hi: np.ndarray, sets: np.ndarray, base: np.ndarray, rows: np.ndarray,
                 own: np.ndarray, low: np.ndarray) -> None:
        self.lo, self.hi, self.sets, self.base, self.rows, self.own, self.low = lo, hi, sets, base, rows, own, low

    def take(self, boxes: np.ndarray) -> "_Batch":
        """The sub-batch of the given boxes (ascending), renumbered."""
        new = np.full(len(self.lo), -1, dtype=np.int64)
        new[boxes] = np.arange(len(boxes))
        keep = new[self.own] >= 0
        return _Batch(self.lo[boxes], self.hi[boxes], self.sets[boxes], self.base[boxes], self.rows[keep],
                      new[self.own[keep]], self.low[boxes])


def _starts(keys: np.ndarray) -> np.ndarray:
    """The positions where a sorted key array changes (0 first)."""
    brk = np.flatnonzero(keys[1:] != keys[:-1])
    brk += 1
    return np.concatenate((_ZERO, brk))


def _per_box(values: np.ndarray, owner: np.ndarray, n_boxes: int) -> np.ndarray:
    """Sums of ``values`` per owner (``owner`` ascending; boxes without values get 0)."""
    out = np.zeros(n_boxes, dtype=values.dtype)
    if len(values):
        bs = _starts(owner)
        out[owner[bs]] = np.add.reduceat(values, bs)
    return out


def _most_common(owner: np.ndarray, keys: np.ndarray, n_boxes: int, default: np.ndarray) -> np.ndarray:
    """Per box, the key that occurs most often among its rows (``default`` for a box without rows)."""
    out = default.copy()
    if not len(owner):
        return out
    order = np.lexsort((keys, owner))
    owner, keys = owner[order], keys[order]
    brk = np.flatnonzero((owner[1:] != owner[:-1]) | (keys[1:] != keys[:-1])) + 1
    starts = np.concatenate((_ZERO, brk))
    count = np.diff(starts, append=len(owner))
    run_owner, run_key = owner[starts], keys[starts]
    best = np.lexsort((-count, run_owner))
    first = best[_starts(run_owner[best])]
    out[run_owner[first]] = run_key[first]
    return out


class _Search:
    """The search over boxes of one query and one rival (see the module docstring).

    Boxes are expanded in batches of at most :data:`WIDTH`, depth first (the batch of children of lowest
    bounds next), so that numpy's per-call cost is shared by many boxes. Before the first split, one point
    of the root box is tried (:meth:`probe`).
    """

    WIDTH = 64
    #: The batch width doubles every ``GROW`` expansions (against one more box every 2 or 4: depth-8 forest
    #: of adult, median AXp 31.5 -> 28.7 ms CPU, XGBoost 6.9 -> 7.2 ms).
    GROW = 3

    def __init__(self, engine: EnsembleBox, r: _Rival, point: Sequence[int], free: np.ndarray, sel: np.ndarray,
                 tree: np.ndarray, rank: np.ndarray, label: int, deadline: Deadline | None) -> None:
        self.engine, self.r, self.label, self.deadline = engine, r, label, deadline
        self.point = np.asarray(point, dtype=np.int64)
        self.free = free
        self.flo = engine.lo[sel][:, free] if len(free) else np.zeros((len(sel), 0), dtype=np.int32)
        self.fhi = engine.hi[sel][:, free] if len(free) else np.zeros((len(sel), 0), dtype=np.int32)
        col = engine.mask_col[free]
        #: positions (among the free features) of the features of value sets, and each free feature's slot
        self.spos = np.flatnonzero(col >= 0)
        self.slot = np.full(len(free), -1, dtype=np.int64)
        self.slot[self.spos] = np.arange(len(self.spos))
        self.fsets = engine.masks[sel][:, col[self.spos]]
        self.tree = tree
        self.rank = rank
        self.big = r.slack is not None
        self.exact = np.asarray(r.exact, dtype=object) if self.big else r.table
        self.n_trees = int(tree.max()) + 1 if len(tree) else 1
        #: above every value number: (box, value) pairs sort as ``box * key_width + value``
        self.key_width = int(engine.sizes.max()) + 1 if len(engine.sizes) else 1
        #: whether :meth:`probe` applies: every leaf's value set kept exactly (no hulls)
        self.probes = not len(engine.hull_features) and len(free) > 0

    def witness(self, lo: np.ndarray) -> tuple[int, ...]:
        out = self.point.copy()
        out[self.free] = lo
        return tuple(int(x) for x in out)

    def evaluate(self, lo: np.ndarray, hi: np.ndarray, sets: np.ndarray, base: np.ndarray, rows: np.ndarray,
                 own: np.ndarray) -> _Batch | tuple[int, ...] | None:
        """Settle the trees of each box; a counterexample (the box's lowest values: in every set), or the
        open boxes (``None``: none)."""
        if len(rows):
            key = own * self.n_trees + self.tree[rows]
            gs = _starts(key)
            ranks = self.rank[rows]
            mn = np.minimum.reduceat(ranks, gs)
            mx = np.maximum.reduceat(ranks, gs)
            g_own = own[gs]
        else:
            gs = mn = mx = g_own = np.zeros(0, dtype=np.int64)
        settled = mn == mx
        if self.big:
            low, opened, base, w = self._bounds_big(lo, base, mn, mx, g_own, settled)
        else:
            low, opened, base, w = self._bounds(lo, base, mn, mx, g_own, settled)
        if w is not None:
            return w
        if not opened.any():
            return None
        counts = np.empty(len(gs), dtype=np.int64)
        counts[:-1] = gs[1:] - gs[:-1]
        if len(gs):
            counts[-1] = len(rows) - gs[-1]
        keep = np.repeat(opened[g_own] & ~settled, counts)
        new = np.cumsum(opened) - 1
        return _Batch(lo[opened], hi[opened], sets[opened], base[opened], rows[keep], new[own[keep]], low[opened])

    def _bounds(self, lo: np.ndarray, base: np.ndarray, mn: np.ndarray, mx: np.ndarray, g_own: np.ndarray,
                settled: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...] | None]:
        """Per box (int64 values): the lower bound, whether it stays open, the constant part with the settled
        trees added, and a counterexample (the first box whose upper bound is at most the threshold)."""
        r, n_boxes = self.r, len(lo)
        sums = np.zeros((3, n_boxes), dtype=np.int64)
        if len(g_own):
            vals = r.table[np.stack((mn, mx))]
            bs = _starts(g_own)
            sums[:, g_own[bs]] = np.add.reduceat(np.vstack((vals, vals[0] * settled)), bs, axis=1)
        low = base + sums[0]
        hit = base + sums[1] <= r.threshold
        if hit.any():
            return low, hit, base, self.witness(lo[int(np.argmax(hit))])
        return low, low <= r.threshold, base + sums[2], None

    def _bounds_big(self, lo: np.ndarray, base: np.ndarray, mn: np.ndarray, mx: np.ndarray, g_own: np.ndarray,
                    settled: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...] | None]:
        """:meth:`_bounds` with float bounds that prune only past their rounding margin, boxes all of whose
        trees are settled within it decided by exact Python-integer sums."""
        r, n_boxes = self.r, len(lo)
        fbase = np.asarray([float(b) for b in base])
        low = fbase + _per_box(r.table[mn], g_own, n_boxes)
        high = fbase + _per_box(r.table[mx], g_own, n_boxes)
        slack = r.slack if r.slack is not None else 0.0
        hit = high + slack <= r.threshold
        cut = low > r.threshold + slack
        open_groups = np.bincount(g_own[~settled], minlength=n_boxes) if len(g_own) else np.zeros(n_boxes, np.int64)
        for b in np.flatnonzero(~hit & ~cut & (open_groups == 0)).tolist():
            exact = int(base[b]) + sum(self.exact[mn[g_own == b]].tolist())
            hit[b], cut[b] = exact <= r.threshold, exact > r.threshold
        if hit.any():
            return low, hit, base, self.witness(lo[int(np.argmax(hit))])
        add = np.where(settled, self.exact[mn], 0) if len(mn) else mn
        return low, ~cut, base + _per_box(add, g_own, n_boxes), None

    def run(self, root: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[int, ...] | None:
        """The search from the box of all the free features' values, or from ``root`` (their ranges)."""
        got = self.start(root)
        if not isinstance(got, _Batch):
            return got
        if self.probes:
            w = self.probe(got)
            if w is not None:
                return w
        return self.descend(got)

    def start(self, root: tuple[np.ndarray, np.ndarray] | None = None) -> _Batch | tuple[int, ...] | None:
        """The root box (all the free features' values, or ``root``'s ranges) evaluated."""
        engine = self.engine
        f = len(self.free)
        if root is None:
            lo0 = np.zeros((1, f), dtype=np.int32)
            hi0 = (engine.sizes[self.free] - 1).astype(np.int32)[None, :]
        else:
            lo0 = np.asarray(root[0], dtype=np.int32)[None, :]
            hi0 = np.asarray(root[1], dtype=np.int32)[None, :]
        sets0 = _range_masks(lo0[0, self.spos], hi0[0, self.spos])[None, :]
        base0 = np.asarray([self.r.base], dtype=object if self.big else np.int64)
        everything = np.arange(len(self.tree))
        return self.evaluate(lo0, hi0, sets0, base0, everything, np.zeros(len(self.tree), dtype=np.int64))

    def descend(self, root: _Batch) -> tuple[int, ...] | None:
        """The depth-first search below the open boxes ``root``."""
        engine, deadline = self.engine, self.deadline
        stack = [root]
        stop = engine._stop
        expanded = 0
        while stack:
            if deadline is not None:
                deadline.check()
            if stop.is_set():
                raise Interrupted
            batch = stack.pop()
            engine.nodes += len(batch.lo)
            got = self.expand(batch)
            if got is None:
                continue
            if not isinstance(got, _Batch):
                return got
            width = min(self.WIDTH, 1 << min(expanded // self.GROW, 16))  # doubling every GROW expansions
            expanded += 1
            if len(got.lo) <= width:
                stack.append(got)
                continue
            by_bound = np.argsort(got.low, kind="stable")
            chunks = [np.sort(by_bound[k:k + width]) for k in range(0, len(by_bound), width)]
            stack.extend(got.take(c) for c in reversed(chunks))  # the lowest bounds on top
        return None

    def probe(self, b: _Batch) -> tuple[int, ...] | None:
        """A counterexample in the first box of ``b`` at the point :meth:`vote` picks, or ``None`` (nothing
        proved): the margin there at most the threshold, confirmed by the model itself. On adult's depth-8
        forest and XGBoost models it found about half of the counterexamples the search would find, at about
        the cost of one expansion (XGBoost's median AXp: 10.7 -> 6.7 ms CPU)."""
        got = self.vote(b)
        if got is None or got[1] > self.r.threshold:
            return None
        w = self.witness(got[0])
        return w if self.engine.model.predict_point(w) != self.label else None

    def vote(self, b: _Batch) -> tuple[np.ndarray, int] | None:
        """A point of the first box of ``b`` (its free features' values) and the margin there, an exact
        integer (``None``: the box has no undecided leaf). Only when :attr:`probes` (no hulls).

        Each undecided leaf of lowest value in its tree votes, with its tree's spread of values, for the
        values its range (or value set) allows inside the box; each free feature takes its most voted
        value. The margin there is the box's constant part plus the value of the one undecided leaf of
        each tree that holds the point (the box meets exactly the leaves whose paths it crosses)."""
        rows = b.rows[:int(np.searchsorted(b.own, 1))]
        if not len(rows):
            return None
        vals = self.r.table[self.rank[rows]]
        gs = _starts(self.tree[rows])
        counts = np.diff(gs, append=len(rows))
        mn = np.repeat(np.minimum.reduceat(vals, gs), counts)
        spread = np.repeat(np.maximum.reduceat(vals, gs), counts) - mn
        weight = np.where(vals == mn, spread, 0).astype(np.float64)
        lo, hi = b.lo[0].astype(np.int64), b.hi[0].astype(np.int64)
        fl, fh = self.flo[rows], self.fhi[rows]
        n_free, span = len(lo), int((hi - lo).max(initial=0)) + 2
        at = np.arange(n_free) * span - lo  # feature f's value v at f * span + v - lo: steps, then sums
        w = np.repeat(weight, n_free)
        steps = np.bincount((np.maximum(fl, lo) + at).ravel(), weights=w, minlength=n_free * span)
        steps -= np.bincount((np.minimum(fh, hi) + 1 + at).ravel(), weights=w, minlength=n_free * span)
        votes = np.cumsum(steps.reshape(n_free, span), axis=1)
        votes[np.arange(span)[None, :] > (hi - lo)[:, None]] = -np.inf
        q = lo + np.argmax(votes, axis=1)
        bits = np.arange(MASK_BITS, dtype=np.uint64)
        for k, f in enumerate(self.spos.tolist()):  # features of value sets: votes per value of the box's set
            allowed = (self.fsets[rows, k] & b.sets[0, k])[:, None] >> bits & np.uint64(1)
            in_box = (b.sets[0, k] >> bits) & np.uint64(1) != 0
            q[f] = int(np.argmax(np.where(in_box, weight @ allowed.astype(np.float64), -np.inf)))
        holds = np.all((fl <= q) & (fh >= q), axis=1)
        for k, f in enumerate(self.spos.tolist()):
            holds &= (self.fsets[rows, k] >> np.uint64(q[f])) & np.uint64(1) != 0
        return q, int(b.base[0]) + self.r.exact_total(self.rank[rows][holds])

    def points(self, b: _Batch) -> _Batch | tuple[int, ...] | None:
        """Decide the single points of a batch with the model (points where two leaves of a tree still
        meet: only the hulls of :attr:`EnsembleBox.hull_features` leave such points): a counterexample, or
        the batch without them."""
        single = np.all(b.lo == b.hi, axis=1)
        if not single.any():
            return b
        pts = np.repeat(self.point[None, :], int(single.sum()), axis=0)
        pts[:, self.free] = b.lo[single]
        wrong = np.flatnonzero(self.engine.model.predict_points(pts) != self.label)
        if len(wrong):
            return tuple(int(x) for x in pts[wrong[0]])
        rest = np.flatnonzero(~single)
        return b.take(rest) if len(rest) else None

    def expand(self, b: _Batch) -> _Batch | tuple[int, ...] | None:
        """Split every box of a batch in two (see :meth:`split`) and evaluate the children."""
        if len(self.engine.hull_features):
            got = self.points(b)
            if not isinstance(got, _Batch):
                return got
            b = got
        j, mid, part, flj, fhj = self.split(b)
        rows, own = b.rows, b.own
        mid_r = mid[own]
        left = flj <= mid_r
        right = fhj > mid_r
        slot = self.slot[j]
        lo = np.repeat(b.lo, 2, axis=0)
        hi = np.repeat(b.hi, 2, axis=0)
        sets = np.repeat(b.sets, 2, axis=0)
        by_range = np.flatnonzero(slot < 0)
        hi[2 * by_range, j[by_range]] = mid[by_range]
        lo[2 * by_range + 1, j[by_range]] = mid[by_range] + 1
        by_set = np.flatnonzero(slot >= 0)
        if len(by_set):  # split a value set in two: ``part`` and the rest
            s = slot[by_set]
            whole = b.sets[by_set, s]
            rest = whole ^ part[by_set]
            for child, m in ((2 * by_set, part[by_set]), (2 * by_set + 1, rest)):
                sets[child, s] = m
                lo[child, j[by_set]] = _low_bit(m)
                hi[child, j[by_set]] = _high_bit(m)
            at = np.flatnonzero(slot[own] >= 0)
            o = own[at]
            leaf = self.fsets[rows[at], slot[o]]
            left[at] = leaf & part[o] != 0
            right[at] = leaf & (b.sets[o, slot[o]] ^ part[o]) != 0
        crows = np.concatenate((rows[left], rows[right]))
        cown = np.concatenate((2 * own[left], 2 * own[right] + 1))
        order = np.argsort(cown, kind="stable")
        return self.evaluate(lo, hi, sets, np.repeat(b.base, 2), crows[order], cown[order])

    def split(self, b: _Batch) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per box, the free feature most of its undecided leaves restrict inside it, and where to split it:
        for a feature of ranges the median of those leaves' boundaries on it (``mid``: the left child keeps
        the values up to it); for a feature of value sets the set those leaves cut the box's set by most
        often (``part``: the left child's set; a leaf's set and its complement in the box cut alike). A
        box whose leaves restrict nothing: its widest feature, halved (a set: its lowest value apart). Also
        each row's lowest and highest value numbers on its box's feature (``flj``, ``fhj``)."""
        rows, own = b.rows, b.own
        fl, fh = self.flo[rows], self.fhi[rows]
        above = fl > b.lo[own]  # the leaf's lowest value is above the box's: a boundary inside the box
        below = fh < b.hi[own]
        inside = above | below
        spos = self.spos
        if len(spos):
            whole = b.sets[own]
            inside[:, spos] = self.fsets[rows] & whole != whole
        n = len(b.lo)
        count = np.zeros((n, inside.shape[1]), dtype=np.int64)
        bs = _starts(own)
        count[own[bs]] = np.add.reduceat(inside.view(np.int8), bs, axis=0, dtype=np.int64)
        count[b.lo == b.hi] = -1
        j = np.argmax(count, axis=1)
        boxes = np.arange(n)
        none = count[boxes, j] <= 0
        if none.any():
            j[none] = np.argmax((b.hi - b.lo)[none], axis=1)
        mid = (b.lo[boxes, j] + b.hi[boxes, j]) // 2  # halving, unless boundaries say otherwise
        slot = self.slot[j]
        jr = j[own]
        at = np.arange(len(rows))
        flj, fhj = fl[at, jr], fh[at, jr]
        by_range = slot[own] < 0
        # the boundaries inside the box on its feature (of ranges): a leaf's lowest value less one, its highest
        width = self.key_width
        key_own = own.astype(np.int64) * width
        low_in, high_in = above[at, jr], below[at, jr]
        if len(spos):
            low_in &= by_range
            high_in &= by_range
        keys = np.concatenate(((key_own + flj - 1)[low_in], (key_own + fhj)[high_in]))
        if len(keys):  # per box, the median of its boundaries: one sort of (box, boundary) keys
            keys.sort()
            kown = keys // width
            cs = _starts(kown)
            sizes = np.empty(len(cs), dtype=np.int64)
            sizes[:-1] = cs[1:] - cs[:-1]
            sizes[-1] = len(keys) - cs[-1]
            mid[kown[cs]] = keys[cs + sizes // 2] % width
        part = np.zeros(n, dtype=np.uint64)
        by_set = np.flatnonzero(slot >= 0)
        if len(by_set):
            whole_b = b.sets[by_set, slot[by_set]]
            part[by_set] = whole_b & (~whole_b + np.uint64(1))  # the lowest value, unless leaves say otherwise
            at = np.flatnonzero(~by_range)
            o = own[at]
            whole = b.sets[o, slot[o]]
            cut = self.fsets[rows[at], slot[o]] & whole
            inner = cut != whole
            cut, whole, o = cut[inner], whole[inner], o[inner]
            part = _most_common(o, np.minimum(cut, whole ^ cut), n, part)
        return j, mid, part, flj, fhj
