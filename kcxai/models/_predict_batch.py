"""Batched, exact prediction of encoded points: a tree walked by many points at once, summed leaf scores.

:class:`TreeRouter` sends a 2-D array of value indices down a tree's node arrays
with numpy: at each internal node, the points there are routed by a lookup of
their value of the node's feature, giving the child exactly as the point-wise
walk does (the *first* branch whose mask holds the value). Value masks are
Python ints of any width (adult's ``fnlwgt`` has 70,466 values), so a node's
lookup is built from the mask's bytes (``numpy.unpackbits``). Two walks:

* level by level (trees at most :data:`LEVELS_DEPTH` deep whose lookups fit in
  :data:`LEVELS_LIMIT` entries and :data:`LEVELS_PER_NODE` a node, e.g. every tree of a
  forest of depth 6 on adult): all node lookups in one flat table, and every point moves one level per step, a few
  numpy operations per level whatever the number of nodes;
* node by node (deeper trees, huge domains): the points at each node are routed by
  that node's lookup, built lazily, only for the nodes some point reaches, as a
  direct table for domains up to :data:`TABLE_LIMIT` values, else the runs of equal
  children (``numpy.searchsorted`` on the run starts), whose size is the number of
  value intervals the node distinguishes (two for a threshold test), not the domain size.

:class:`LeafScores` adds per-tree integer leaf scores exactly, in ``int64`` limbs
(base 2**31 digits) when the largest possible total does not fit in one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["TreeRouter", "LeafScores", "FeatureScores", "argmax_first_rows", "signs", "leaf_positions", "TABLE_LIMIT",
           "LEVELS_LIMIT", "LEVELS_PER_NODE", "LEVELS_DEPTH"]

#: Domains up to this size get a direct value -> child table per node in the node-by-node walk; larger
#: ones the runs of equal children (a threshold test: two runs, whatever the domain size).
TABLE_LIMIT = 64

_INT64_SAFE = 2 ** 62  # totals below this in magnitude cannot overflow int64 in any order of addition

def _mask_bits(mask: int, size: int) -> "np.ndarray[Any, np.dtype[np.bool_]]":
    """The values ``0 .. size - 1`` as a boolean array: ``True`` where ``mask`` has the bit."""
    mask &= (1 << size) - 1
    raw = np.frombuffer(mask.to_bytes((size + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little", count=size).astype(bool)


def _by_feature(points: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.int64]]":
    """The values of ``points`` feature after feature, as one 1-D array."""
    return np.ascontiguousarray(np.asarray(points, dtype=np.int64).T).ravel()


def _child_of_value(branches: Sequence[tuple[int, int]], size: int) -> "np.ndarray[Any, np.dtype[np.int64]]":
    """Per value of the node's feature, the child the point-wise walk takes (``-1``: no branch holds it)."""
    child = np.full(size, -1, dtype=np.int64)
    for mask, c in reversed(branches):  # the first branch holding a value wins, as in the point-wise walk
        child[_mask_bits(mask, size)] = c
    return child


class _Route:
    """A node's value -> child function, as a table or as runs."""

    __slots__ = ("table", "starts", "children")

    def __init__(self, branches: Sequence[tuple[int, int]], size: int) -> None:
        child = _child_of_value(branches, size)
        if size <= TABLE_LIMIT:
            self.table: "np.ndarray[Any, np.dtype[np.int64]] | None" = child
            self.starts = self.children = child[:0]
        else:
            self.table = None
            cuts = np.flatnonzero(child[1:] != child[:-1]) + 1
            self.starts = np.concatenate(([0], cuts)).astype(np.int64)
            self.children = child[self.starts]

    def __call__(self, values: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.int64]]":
        if self.table is not None:
            return self.table[values]
        return self.children[np.searchsorted(self.starts, values, side="right") - 1]


class _Levels:
    """The whole tree as one flat table: node ``k`` at value ``v`` goes to ``table[offset[k] + v]``.

    All points then move one level per step (``depth`` steps of a few numpy operations, whatever the
    number of nodes); a leaf loops to itself on the feature of smallest domain.
    """

    __slots__ = ("feature", "offset", "table", "depth")

    def __init__(self, feature: Sequence[int], branches: Sequence[Sequence[tuple[int, int]]],
                 sizes: Sequence[int], depth: int) -> None:
        loop_f = min(range(len(sizes)), key=lambda f: sizes[f])
        feat = np.array([f if f >= 0 else loop_f for f in feature], dtype=np.int64)
        lengths = np.asarray(sizes, dtype=np.int64)[feat]
        self.offset = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
        table = np.empty(int(lengths.sum()), dtype=np.int64)
        for nid, f in enumerate(feature):
            o = int(self.offset[nid])
            if f < 0:
                table[o:o + sizes[loop_f]] = nid
            else:
                table[o:o + sizes[f]] = _child_of_value(branches[nid], sizes[f])
        self.feature, self.table, self.depth = feat, table, depth

    def leaves(self, by_feature: "np.ndarray[Any, Any]", n: int, root: int) -> "np.ndarray[Any, np.dtype[np.int64]]":
        """``by_feature``: the points' values feature after feature (``points.T.ravel()``): a 1-D gather per
        level is 1.6x faster than a 2-D one (100 trees of depth 6, 4,096 points)."""
        rows = np.arange(n)
        cur = np.full(n, root, dtype=np.int64)
        start, offset, table = self.feature * n, self.offset, self.table
        for _ in range(self.depth):
            cur = table[offset[cur] + by_feature[start[cur] + rows]]
        return cur


#: Most entries a tree's flat table (:class:`_Levels`) may have (8 bytes each)...
LEVELS_LIMIT = 1 << 21
#: ... and per node of the tree (1 KB a node: a few times the tree's own Python objects; a forest of depth 6
#: on adult needs 37 on average); larger tables are walked node by node.
LEVELS_PER_NODE = 128
#: Deepest tree walked level by level (each level costs a step for every point, even those at a leaf).
LEVELS_DEPTH = 48


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

    __slots__ = ("feature", "branches", "root", "sizes", "_routes", "_levels")

    def __init__(self, feature: Sequence[int], branches: Sequence[Sequence[tuple[int, int]]], root: int,
                 sizes: Sequence[int]) -> None:
        self.feature = feature
        self.branches = branches
        self.root = root
        self.sizes = tuple(sizes)
        self._routes: dict[int, _Route] = {}  # built on a node's first visit
        self._levels: _Levels | None | bool = False  # False: not decided yet; None: walk node by node

    def _route(self, nid: int) -> _Route:
        r = self._routes.get(nid)
        if r is None:
            r = self._routes[nid] = _Route(self.branches[nid], self.sizes[self.feature[nid]])
        return r

    def _flat(self) -> "_Levels | None":
        """The flat table when the tree is shallow enough and the table small enough (decided once)."""
        if self._levels is False:
            self._levels = None
            sizes, feature = self.sizes, self.feature
            entries = sum(sizes[f] for f in feature if f >= 0) + len(feature) * min(sizes, default=1)
            if entries <= min(LEVELS_LIMIT, LEVELS_PER_NODE * len(feature) + 4096):
                depth = self._depth(LEVELS_DEPTH)
                if depth is not None:
                    self._levels = _Levels(feature, self.branches, sizes, depth)
        return self._levels if isinstance(self._levels, _Levels) else None

    def _depth(self, limit: int) -> int | None:
        """The tree's depth (in edges), or ``None`` past ``limit``."""
        best = 0
        stack = [(self.root, 0)]
        while stack:
            nid, d = stack.pop()
            if d > limit:
                return None
            best = max(best, d)
            stack.extend((c, d + 1) for _, c in self.branches[nid])
        return best

    def leaves(self, points: "np.ndarray[Any, Any]", by_feature: "np.ndarray[Any, Any] | None" = None
               ) -> "np.ndarray[Any, np.dtype[np.int64]]":
        """The node id of the leaf each row of ``points`` reaches: level by level through one flat table
        when the tree is at most :data:`LEVELS_DEPTH` deep and the table at most :data:`LEVELS_LIMIT`
        entries and :data:`LEVELS_PER_NODE` per node, else node by node (:meth:`leaves_by_node`).
        ``by_feature``, if given, is ``points.T.ravel()`` (an ensemble computes it once for all its trees)."""
        flat = self._flat()
        if flat is not None:
            if by_feature is None:
                by_feature = _by_feature(points)
            return flat.leaves(by_feature, len(points), self.root)
        return self.leaves_by_node(points)

    def leaves_by_node(self, points: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.int64]]":
        """:meth:`leaves`, walked node by node (each node's points routed by a lookup; any depth and domain)."""
        n = len(points)

        out = np.empty(n, dtype=np.int64)
        feature, branches = self.feature, self.branches
        stack: list[tuple[int, "np.ndarray[Any, np.dtype[np.intp]]"]] = [(self.root, np.arange(n))]
        while stack:
            nid, idx = stack.pop()
            f = feature[nid]
            if f < 0:
                out[idx] = nid
                continue
            child = self._route(nid)(points[idx, f])
            if not len(child):
                continue
            first = int(child[0])
            if (child == first).all():  # one child for all: no split of the index array
                stack.append((first, idx))
                continue
            for c in {c for _, c in branches[nid]}:
                sel = child == c
                if sel.any():
                    stack.append((c, idx[sel]))
        return out


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
    overflow ``int64``: summing Python ints in object arrays instead cost 2.2x the whole tree walk
    (100 trees of depth 3 on adult); limbs keep numpy's integer speed and every bit.
    """

    __slots__ = ("base", "routers", "columns", "positions", "tables", "limbs")

    def __init__(self, base: Sequence[int], routers: Sequence[TreeRouter], leaves: Sequence[Sequence[int]],
                 columns: Sequence[int], scores: Sequence[Sequence[Any]]) -> None:
        bound = sum(abs(b) for b in base)
        for col, rows in zip(columns, scores):
            bound += max((abs(x) for r in rows for x in (r if col < 0 else (r,))), default=0)
        self.limbs = limbs = _limbs_for(bound)
        self.base = _split(list(base), limbs)
        self.routers = tuple(routers)
        self.columns = tuple(columns)
        self.positions = [leaf_positions(lv, len(r.feature)) for lv, r in zip(leaves, routers)]
        self.tables = [_split([list(r) for r in rows] if col < 0 else list(rows), limbs)
                       for col, rows in zip(columns, scores)]

    def totals(self, points: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.int64]]":
        """Shape ``(len(points), n_classes, limbs)``: the exact totals at each point, limbs normalised
        (every limb but the last in ``[0, 2**31)``, the last signed), so that comparing limbs from the
        last to the first compares the totals."""
        points = np.asarray(points)
        by_feature = _by_feature(points)
        s = np.empty((len(points),) + self.base.shape, dtype=np.int64)
        s[:] = self.base
        for router, pos, col, table in zip(self.routers, self.positions, self.columns, self.tables):
            picked = table[pos[router.leaves(points, by_feature)]]
            if col < 0:
                s += picked
            else:
                s[:, col] += picked
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


def argmax_first_rows(totals: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.int64]]":
    """Per row of :meth:`LeafScores.totals`, the index of the first highest total
    (:func:`kcxai.models._threshold.argmax_first`)."""
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
