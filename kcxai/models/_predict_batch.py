"""Batched, exact prediction of encoded points: trees walked by many points at once, summed leaf scores.

:class:`TreeWalk` moves (tree, point) pairs one test per step of the trees' binary tests
(:mod:`kcxai.models._binary_tree`) with a few numpy operations over all of them at once: the slots of
all trees concatenated, each slot's child, feature and width packed in one ``int64``, pairs of several
trees walked together up to :data:`MAX_PAIRS` (a cache-sized batch), as many steps as the deepest of
those trees, pairs at a leaf dropped every few steps. Its cost is the pairs' path lengths in numpy
operations, with a Python overhead per step only (measurements: ``docs/results.md``, and
``benchmarks/bench_sampling.py``).

:class:`LeafScores` adds per-tree integer leaf scores exactly, in ``int64`` limbs
(base 2**31 digits) when the largest possible total does not fit in one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from kcxai.models._binary_tree import BinaryTree, binary_tree

__all__ = ["BinaryTree", "TreeWalk", "TreeRouter", "LeafScores", "FeatureScores", "argmax_first", "argmax_first_rows",
           "signs", "leaf_positions", "MAX_PAIRS"]

_INT64_SAFE = 2 ** 62  # totals below this in magnitude cannot overflow int64 in any order of addition

#: Most (tree, point) pairs walked together: more trees' pairs are walked in turn. Small enough for the
#: pairs' arrays to stay in the processor's cache, large enough for numpy's per-call cost not to matter.
MAX_PAIRS = 1 << 15


class TreeWalk:
    """Many trees (:class:`BinaryTree`) walked by many points at once: their slots concatenated.

    Examples
    --------
    >>> import numpy as np, kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> walk = TreeWalk([tree.router.binary])
    >>> pts = np.array([[1, 1, 1, 1, 0, 0, 0, 0, 1], [0] * 9])
    >>> slots = walk.slots(pts)[0]                    # per tree, the leaf slot each point reaches
    >>> [tree.arrays.label[n] for n in walk.node[slots]] == [tree.predict_point(tuple(p)) for p in pts.tolist()]
    True
    """

    __slots__ = ("offsets", "feat", "lo", "width", "first", "bit_at", "bits", "node", "leaf", "depths", "packed",
                 "shift", "_intervals", "_fields")

    def __init__(self, trees: Sequence[BinaryTree], *, pack: bool = True) -> None:
        sizes = [len(t) for t in trees]
        self.offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        byte_offsets = np.concatenate(([0], np.cumsum([len(t.bits) for t in trees]))).astype(np.int64)

        def cat(parts: Any, dtype: Any) -> "np.ndarray[Any, Any]":
            return np.concatenate(list(parts) or [np.zeros(0, dtype=dtype)]).astype(dtype)

        self.feat = cat((t.feat for t in trees), np.int64)
        self.first = cat((t.first + o for t, o in zip(trees, self.offsets)), np.int64)
        self.bit_at = cat((np.where(t.bit_at >= 0, t.bit_at + b, -1) for t, b in zip(trees, byte_offsets)), np.int64)
        self.bits = cat((t.bits for t in trees), np.uint8)
        self.node = cat((t.node for t in trees), np.int64)
        self.leaf = self.node >= 0
        self.depths = np.array([t.depth for t in trees], dtype=np.int64)
        lo = cat((t.lo for t in trees), np.int64)
        width = cat((t.width for t in trees), np.uint64).view(np.int64)  # a domain size at most
        self._intervals = bool(lo.any())  # else every test is a prefix ``v < width``: no ``lo`` to read
        #: Values are compared shifted left by this many bits (room for the feature below the width in
        #: :attr:`packed`; 0 unpacked).
        self.shift = 0
        #: Per slot, ``first << (shift + width bits) | width << shift | feature``: one gather a step and
        #: the width compared in place, when the bits fit; else ``None`` (then ``first``, ``feat`` and
        #: ``width`` are read from their own arrays).
        self.packed: "np.ndarray[Any, np.dtype[np.int64]] | None" = None
        fb = int(self.feat.max(initial=0)).bit_length()
        wb = int(width.max(initial=0)).bit_length()
        self._fields = (0, 0, 0)  # packed: feature mask, width mask (in place), shift of ``first``
        if pack and len(self.feat).bit_length() + wb + fb <= 62:
            self.shift = fb
            self.packed = (self.first << (wb + fb)) | (width << fb) | self.feat
            self._fields = ((1 << fb) - 1, ((1 << wb) - 1) << fb, wb + fb)
        #: ``lo`` and ``width`` shifted as the values are.
        self.lo = lo << self.shift
        self.width = width << self.shift

    @property
    def n_trees(self) -> int:
        return len(self.offsets) - 1

    def chunks(self, points: "np.ndarray[Any, Any]", max_pairs: int | None = None
               ) -> Iterator[tuple[int, int, "np.ndarray[Any, np.dtype[np.int64]]"]]:
        """``(t0, t1, slots)``: trees ``t0 .. t1 - 1`` walked together (at most ``max_pairs``, default
        :data:`MAX_PAIRS`, pairs unless one tree has more), ``slots`` of shape ``(t1 - t0, n)``: the (global)
        leaf slot each point reaches in each tree."""
        points = np.asarray(points, dtype=np.int64)
        n = len(points)
        values = (np.ascontiguousarray(points) << self.shift).ravel()  # point after point
        step = max(1, (MAX_PAIRS if max_pairs is None else max_pairs) // max(1, n))
        for t0 in range(0, self.n_trees, step):
            t1 = min(self.n_trees, t0 + step)
            yield t0, t1, self._walk(values, n, points.shape[1] if points.ndim == 2 else 0, t0, t1)

    def slots(self, points: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.int64]]":
        """Shape ``(n_trees, len(points))``: the (global) leaf slot each point reaches in each tree."""
        parts = [s for _, _, s in self.chunks(points)]
        return np.concatenate(parts) if parts else np.zeros((0, len(points)), dtype=np.int64)

    #: Pairs at a leaf are dropped every this many steps (a leaf loops to itself meanwhile), and only
    #: while as many steps remain (checking every step cost more than the steps it saved), so that
    #: trees of depth 6 or less are walked without a check.
    DROP_EVERY = 4

    def _walk(self, values: "np.ndarray[Any, Any]", n: int, n_features: int, t0: int, t1: int
              ) -> "np.ndarray[Any, np.dtype[np.int64]]":
        """Every (root, point) pair of trees ``t0 .. t1 - 1`` moved one test per step, as many steps
        as the deepest of them; pairs at a leaf leave the walk."""
        out = np.repeat(self.offsets[t0:t1], n)
        at = np.flatnonzero(~self.leaf[out])  # the pairs still walking (index into ``out``)
        cur = out[at]
        row = (at % n) * n_features if n else at  # where the pair's point starts in ``values``
        steps = int(self.depths[t0:t1].max(initial=0))
        for step in range(1, steps + 1):
            nxt = self._step(values, cur, row)
            if step % self.DROP_EVERY or steps - step < self.DROP_EVERY:
                cur = nxt
                continue
            stop = nxt == cur  # only a leaf is its own next slot
            cur = nxt
            if stop.any():
                out[at[stop]] = cur[stop]
                go = ~stop
                at, cur, row = at[go], cur[go], row[go]
        out[at] = cur
        return out.reshape(t1 - t0, n)

    def _step(self, values: "np.ndarray[Any, Any]", cur: "np.ndarray[Any, Any]", row: "np.ndarray[Any, Any]"
              ) -> "np.ndarray[Any, np.dtype[np.int64]]":
        """The next slot of each pair (``first + inside``)."""
        if self.packed is not None:
            feature_mask, width_mask, first_shift = self._fields
            rec = self.packed[cur]
            v = values[row + (rec & feature_mask)]
            width = rec & width_mask
            first = rec >> first_shift
        else:
            v, width, first = values[row + self.feat[cur]], self.width[cur], self.first[cur]
        if self._intervals:
            inside = (v - self.lo[cur]).view(np.uint64) < width.view(np.uint64)
        else:
            inside = v < width
        if len(self.bits):
            self._bitmap_tests(cur, v >> self.shift, inside)
        return first + inside

    def _bitmap_tests(self, cur: "np.ndarray[Any, Any]", v: "np.ndarray[Any, Any]",
                      inside: "np.ndarray[Any, Any]") -> None:
        """``inside`` set from the bitmaps at the pairs whose test is one."""
        b = self.bit_at[cur]
        j = np.flatnonzero(b >= 0)
        if len(j):
            vj = v[j]
            inside[j] = (self.bits[b[j] + (vj >> 3)] >> (vj & 7).astype(np.uint8)) & 1


class TreeRouter:
    """The leaves many points reach in one tree (node arrays as :class:`~kcxai.models.tree.TreeArrays`).

    Examples
    --------
    >>> import numpy as np, kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> a = tree.arrays
    >>> router = TreeRouter(a.feature, a.branches, a.root, tree.space.domain_sizes)
    >>> pts = np.array([[1, 1, 1, 1, 0, 0, 0, 0, 1], [0] * 9])
    >>> [a.label[leaf] for leaf in router.leaves(pts)] == [tree.predict_point(tuple(p)) for p in pts.tolist()]
    True
    """

    __slots__ = ("feature", "branches", "root", "sizes", "_binary", "_walk")

    def __init__(self, feature: Sequence[int], branches: Sequence[Sequence[tuple[int, int]]], root: int,
                 sizes: Sequence[int]) -> None:
        self.feature = feature
        self.branches = branches
        self.root = root
        self.sizes = tuple(sizes)
        self._binary: BinaryTree | None = None
        self._walk: TreeWalk | None = None

    @property
    def binary(self) -> BinaryTree:
        """The tree as binary tests (built on first use)."""
        if self._binary is None:
            self._binary = self.build_binary({})
        return self._binary

    def build_binary(self, cache: dict[Any, Any]) -> BinaryTree:
        """:attr:`binary` built anew (not kept), with a mask cache shared by an ensemble's trees
        (:func:`binary_tree`): an ensemble keeps only its concatenated walk."""
        return self._binary or binary_tree(self.feature, self.branches, self.root, self.sizes, cache)

    def leaves(self, points: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.int64]]":
        """The node id of the leaf each row of ``points`` reaches."""
        if self._walk is None:
            self._walk = TreeWalk([self.binary])
        return self._walk.node[self._walk.slots(points)[0]]


class LeafScores:
    """Exact per-class totals ``base + sum over trees`` of integer leaf scores, for many points at once.

    Parameters
    ----------
    base : sequence of int
        The initial total of each class.
    routers : sequence of TreeRouter
        One per tree.
    leaves : sequence of sequences of int
        Per tree, its reachable leaves (the order of ``scores``).
    columns : sequence of int
        Per tree, the class column it adds to, or ``-1`` when its scores are rows with one entry per class.
    scores : sequence of sequences
        Per tree, per leaf: an int (a column tree) or a tuple of ints (one per class).

    Totals are exact ``int64`` sums split into :attr:`limbs` base-2**31 digits: one limb (plain ``int64``)
    when no total can reach 2**62 in magnitude (the sum of the base's and of every tree's largest
    magnitudes), else as many as the largest magnitude needs. A float64 leaf probability of scikit-learn
    is a dyadic rational, so a soft forest's integer-scaled scores reach 2**62 per tree and their sums
    overflow ``int64``: limbs keep numpy's integer speed (Python ints in object arrays do not) and every
    bit.
    """

    __slots__ = ("base", "walk", "table", "limbs")

    def __init__(self, base: Sequence[int], routers: Sequence[TreeRouter], leaves: Sequence[Sequence[int]],
                 columns: Sequence[int], scores: Sequence[Sequence[Any]]) -> None:
        bound = sum(abs(b) for b in base)
        for col, rows in zip(columns, scores):
            bound += max((abs(x) for r in rows for x in (r if col < 0 else (r,))), default=0)
        self.limbs = limbs = _limbs_for(bound)
        self.base = _split(list(base), limbs)
        cache: dict[Any, Any] = {}
        self.walk = walk = TreeWalk([r.build_binary(cache) for r in routers])
        #: Per slot of the walk, what its leaf adds to each class (zero at the tests).
        self.table = np.zeros((len(walk.node),) + self.base.shape, dtype=np.int64)
        # leaf scores repeat (a pure leaf of a forest): each distinct row, or value, split into limbs once
        distinct: tuple[dict[Any, int], dict[Any, int]] = ({}, {})  # rows (one int per class), single values
        numbered = [np.fromiter((d.setdefault(tuple(r) if col < 0 else r, len(d)) for r in rows), dtype=np.int64,
                                count=len(rows))
                    for col, rows in zip(columns, scores) for d in (distinct[col >= 0],)]
        split = (_split([list(r) for r in distinct[0]], limbs), _split(list(distinct[1]), limbs))
        for t, (router, lv, col, number) in enumerate(zip(routers, leaves, columns, numbered)):
            lo, hi = int(walk.offsets[t]), int(walk.offsets[t + 1])
            pos = leaf_positions(lv, len(router.feature) + 1)[walk.node[lo:hi]]  # node -1 (a test): -1
            at = np.flatnonzero(pos >= 0)
            if col < 0:
                self.table[lo + at] = split[0][number[pos[at]]]
            else:
                self.table[lo + at, col] = split[1][number[pos[at]]]

    def totals(self, points: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.int64]]":
        """Shape ``(len(points), n_classes, limbs)``: the exact totals at each point, limbs normalised
        (every limb but the last in ``[0, 2**31)``, the last signed), so that comparing limbs from the
        last to the first compares the totals."""
        points = np.asarray(points)
        s = np.empty((len(points),) + self.base.shape, dtype=np.int64)
        s[:] = self.base
        for _, _, slots in self.walk.chunks(points):
            s += self.table[slots].sum(axis=0)
        return _carry(s, self.limbs)


class FeatureScores:
    """Exact per-class totals ``base + sum over features`` of integer per-value scores (an additive model),
    for many points at once, in normalised ``int64`` limbs as :class:`LeafScores`.

    ``tables[f][v]`` holds one int per class: what value ``v`` of feature ``f`` adds.
    """

    __slots__ = ("base", "tables", "limbs")

    def __init__(self, base: Sequence[int], tables: Sequence[Sequence[Sequence[int]]]) -> None:
        bound = sum(abs(b) for b in base) + sum(max((abs(x) for col in t for x in col), default=0) for t in tables)
        self.limbs = limbs = _limbs_for(bound)
        self.base = _split(list(base), limbs)
        self.tables = [_split([list(col) for col in t], limbs) for t in tables]

    def totals(self, points: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.int64]]":
        """Shape ``(len(points), n_classes, limbs)``, as :meth:`LeafScores.totals`."""
        points = np.asarray(points)
        s = np.empty((len(points),) + self.base.shape, dtype=np.int64)
        s[:] = self.base
        for f, table in enumerate(self.tables):
            s += table[points[:, f]]
        return _carry(s, self.limbs)


def _carry(s: "np.ndarray[Any, np.dtype[np.int64]]", limbs: int) -> "np.ndarray[Any, np.dtype[np.int64]]":
    """Normalise limbs in place: every limb but the last back into ``[0, 2**31)``."""
    for i in range(limbs - 1):
        s[..., i + 1] += s[..., i] >> _LIMB
        s[..., i] &= (1 << _LIMB) - 1
    return s


_LIMB = 31  # bits per limb: the sum of 2**31 trees' limbs still fits in int64


def _limbs_for(bound: int) -> int:
    """How many limbs hold totals up to ``bound`` in magnitude: one while int64 cannot overflow."""
    limbs = 1
    if bound >= _INT64_SAFE:
        while bound >> (_LIMB * (limbs - 1)) >= 1 << _LIMB:
            limbs += 1
    return limbs


def _split(values: Any, limbs: int) -> "np.ndarray[Any, np.dtype[np.int64]]":
    """Ints (nested lists) as an ``int64`` array with a last axis of ``limbs`` base-2**31 digits (the last signed)."""
    if limbs == 1:
        return np.array(values, dtype=np.int64)[..., None]
    obj = np.array(values, dtype=object)
    out = np.empty(obj.shape + (limbs,), dtype=np.int64)
    mask = (1 << _LIMB) - 1
    for i in range(limbs):
        part = obj >> (_LIMB * i)
        out[..., i] = (part & mask if i < limbs - 1 else part).astype(np.int64)
    return out


def _greater(a: "np.ndarray[Any, Any]", b: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.bool_]]":
    """Row-wise ``a > b`` for normalised limbs (last axis), compared from the last limb down."""
    gt = a[..., -1] > b[..., -1]
    eq = a[..., -1] == b[..., -1]
    for i in range(a.shape[-1] - 2, -1, -1):
        gt |= eq & (a[..., i] > b[..., i])
        eq &= a[..., i] == b[..., i]
    return gt


def argmax_first(scores: Sequence[Any]) -> int:
    """The index of the first highest score: how the additive models pick a class at one point.

    Examples
    --------
    >>> argmax_first([1, 3, 3, 2])
    1
    """
    best = 0
    for c in range(1, len(scores)):
        if scores[c] > scores[best]:
            best = c
    return best


def argmax_first_rows(totals: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.int64]]":
    """Per row of :meth:`LeafScores.totals`, the index of the first highest total
    (:func:`argmax_first` row by row)."""
    if totals.shape[-1] == 1:
        return np.argmax(totals[..., 0], axis=1).astype(np.int64)  # numpy's argmax returns the first maximum
    best = np.zeros(len(totals), dtype=np.int64)
    top = totals[:, 0].copy()
    for c in range(1, totals.shape[1]):
        better = _greater(totals[:, c], top)
        best[better] = c
        top[better] = totals[better, c]
    return best


def signs(totals: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.int64]]":
    """The sign (-1, 0, 1) of each total given as normalised limbs (last axis)."""
    top = totals[..., -1]
    low_nonzero = (totals[..., :-1] != 0).any(axis=-1)
    return np.where(top != 0, np.sign(top), low_nonzero.astype(np.int64)).astype(np.int64)


def leaf_positions(leaves: Sequence[int], n_nodes: int) -> "np.ndarray[Any, np.dtype[np.int64]]":
    """An array mapping a leaf's node id to its position in ``leaves`` (``-1`` elsewhere)."""
    pos = np.full(n_nodes, -1, dtype=np.int64)
    pos[np.asarray(leaves, dtype=np.int64)] = np.arange(len(leaves), dtype=np.int64)
    return pos
