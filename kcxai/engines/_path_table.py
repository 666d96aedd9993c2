"""A decision tree's leaves as numpy tables, and the deletion-loop session that answers from them.

Under a product distribution ``P`` the weight of ``{x : kappa(x) != c, x_S = v_S}`` is a sum over
the leaves ``L`` of other classes whose path allows ``v`` on every feature of ``S`` (the features
``D_L`` on which ``v`` leaves the path are all free) of

    prod_{f in S} w(v_f) * prod_{f not in S} w(A_f(L))

(``A_f(L)`` the values the path allows, the whole domain when it does not test ``f``). Under a
mixture ``sum_k c_k P_k`` it is the same sum with a factor per component: one table per feature of
shape ``(K, leaves)`` holds every component's ``w_k(A_f(L))``, so a query is a few numpy operations
over the candidate leaves and all ``K`` components at once.

:class:`PathTable` holds, per feature, the bit of the feature on every leaf whose path excludes each
value, and these factors. :class:`PathSession` keeps, for the current fixed set ``S``, the bits of
``D_L`` still fixed and, per component and leaf, the product of the factors of the freed features;
freeing a feature updates both in one pass, and a query for freeing ``i`` reads the leaves whose
remaining bits are at most ``i``.

Exactness. When every component's total weight is below ``2**62`` the factors are int64 and every
partial sum is at most the total (leaf regions are disjoint), so queries are exact integers and every
decision is the integer one. Otherwise the factors are floats, normalised per feature, and only
*screen* decisions: each is the correctly rounded quotient of exact integers, so a sum of ``N``
positive products of at most ``n + 2`` of them is within a relative ``gamma`` (below ``1e-9`` for a
million leaves) of the exact value, and no term can underflow (the table is not built when the
smallest possible term is below ``2**-900``). A decision whose float value lies within that margin
of the bound is made again with the tree oracle's exact integer count; a query with no candidate
leaf is exactly zero. So every decision, and every weight returned, is exactly the integer one.

References
----------
Izza, Ignatiev, Narodytska, Cooper and Marques-Silva, "Efficient Explanations With Relevant Sets"
(2021): the path counts ``||R_j||`` of a decision tree, here per component of a mixture.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Union

import numpy as np

from kcxai._types import Point
from kcxai.arithmetic import Bound, Probability, Weight
from kcxai.compilers._tables.vectors import Array, Component
from kcxai.models.tree import DecisionTree
from kcxai.oracle import SessionBase
from kcxai.space import FeatureSpace

__all__ = ["PathTable", "PathSession", "MAX_TABLE_ENTRIES", "MIN_TABLE_LEAVES", "INT_TOTAL_BITS", "TRACK_ALL"]

#: The most entries (features x components x leaves) a path table holds; larger trees are answered by
#: the exact traversal alone.
MAX_TABLE_ENTRIES = 1 << 23
#: Trees with fewer reachable leaves are answered by the exact walk alone: on them one walk per query costs
#: less than a session's numpy calls (docs/results.md, "Counting speed under fitted distributions").
MIN_TABLE_LEAVES = 256
#: A session tracks every leaf of another class when there are at most this many (times the components),
#: else only the leaves a query can reach (more bookkeeping per feature freed, smaller arrays).
TRACK_ALL = 1 << 16
#: Components whose total weight has at most this many bits are counted in int64, exactly.
INT_TOTAL_BITS = 62

#: Unit roundoff of float64.
_U = 2.0 ** -53
#: The smallest term the float screening accepts (far above float64's smallest normal number, 2**-1022).
_FLOOR = 2.0 ** -900

#: Leaves (columns of the tables): their indices, or a slice when they are contiguous.
Leaves = Union[Array, slice]
#: What a session's query computes for ``S \\ {feature}``: ``(error, consistent, empty)``.
_Query = tuple[Weight, float, bool]


def _allowed(tree: DecisionTree, order: Sequence[int]) -> list[Array]:
    """Per feature, a boolean ``(values, leaves)`` array: whether leaf ``order[j]``'s path allows the value."""
    feats = tree.space.features
    n_leaves = len(order)
    allowed = [np.ones((f.size, n_leaves), dtype=bool) for f in feats]
    cols: list[list[int]] = [[] for _ in feats]
    masks: list[list[int]] = [[] for _ in feats]
    paths = tree.paths
    for col, li in enumerate(order):
        for f, m in paths[li].masks:
            cols[f].append(col)
            masks[f].append(m)
    for f, feat in enumerate(feats):
        if not cols[f]:
            continue
        size = feat.size
        if size <= 63:
            ms = np.array(masks[f], dtype=np.int64)
            allowed[f][:, cols[f]] = (ms[None, :] >> np.arange(size, dtype=np.int64)[:, None]) & 1 == 1
        else:
            for col, m in zip(cols[f], masks[f]):
                allowed[f][:, col] = np.frombuffer(bin(m)[2:].zfill(size)[::-1].encode(), dtype=np.uint8) == ord("1")
    return allowed


class PathTable:
    """The leaves of a decision tree as numpy tables under ``K`` product components (see the module).

    Built by :meth:`build`, which returns ``None`` where it does not apply.

    Attributes
    ----------
    n_features, n_components, n_leaves : int
    exact : bool
        Whether the factors are exact int64 weights (else normalised floats that screen decisions).
    labels : ndarray of int64
        Per leaf (sorted by class), its class index.
    margin : float
        The relative margin within which a float decision is made exactly.
    """

    def __init__(self, tree: DecisionTree, parts: Sequence[Component], total: Weight,
                 regions: Sequence[Sequence[Weight]], exact: bool) -> None:
        space = tree.space
        feats = space.features
        n = self.n_features = len(feats)
        k_n = self.n_components = len(parts)
        self.exact = exact
        labels = np.array([p.label for p in tree.paths], dtype=np.int64)
        order = np.argsort(labels, kind="stable")
        self.labels = labels[order]
        self.n_leaves = n_leaves = len(order)
        allowed = _allowed(tree, order.tolist())
        self.offsets = np.cumsum([0] + [f.size for f in feats[:-1]]).astype(np.int64)
        #: per (feature, value) row, the feature's bit on the leaves whose path excludes the value
        self.bad = np.concatenate([np.where(a, np.uint64(0), np.uint64(1 << f)) for f, a in enumerate(allowed)])
        self.coef = [int(c) for c, _ in parts]
        #: per component, its weight of each value (rows: offsets + value), as Python ints
        self.value_weights = [[int(w) for ws in pw.weights for w in ws] for _, pw in parts]
        dtype = np.int64 if exact else np.float64
        #: w[f, k, L]: component k's weight of the values leaf L's path allows for f (normalised if floats)
        self.w = np.empty((n, k_n, n_leaves), dtype=dtype)
        pv: list[Array] = []
        for f in range(n):
            if exact:
                ws = np.array([[int(x) for x in pw.weights[f]] for _, pw in parts], dtype=np.int64)  # (K, size)
                self.w[f] = ws @ allowed[f].astype(np.int64)
                pv.append(ws)
            else:
                ws_f = np.array([[float(x) for x in pw.weights[f]] for _, pw in parts], dtype=np.float64)
                zs = np.array([float(pw.totals[f]) for _, pw in parts], dtype=np.float64)[:, None]
                self.w[f] = (ws_f @ allowed[f].astype(np.float64)) / zs
                pv.append(ws_f / zs)
        #: per component, the weight of each value (normalised if floats), values of all features side by side
        self.pv = np.concatenate(pv, axis=1)
        #: wall[k, L]: the product over all features of w[f, k, L] (leaf L's region weight, normalised if floats)
        self.wall = self.w.prod(axis=0)
        self.krange = np.arange(k_n)
        #: the float coefficient of each component: c_k P_k(all) / total
        self.fcoef = np.array([float(Fraction(int(c) * int(pw.total), int(total))) for c, pw in parts],
                              dtype=np.float64)
        if not exact:
            self._limbs(tree, parts, regions, order.tolist(), allowed)
        self._others: dict[int, Leaves] = {}
        self._last_rest: tuple[tuple[Point, int, tuple[int, ...]], Array] | None = None
        # Relative error of a float estimate: each factor within (size + 2) u, at most n + 2 factors a term
        # (and as many divisions), a sum of at most (leaves + K) positive terms; the margin is twice that
        # plus the comparison's own rounding.
        smax = max((f.size for f in feats), default=1)
        steps = (n + 2) * (smax + 6) + n_leaves + k_n + 16
        gamma = steps * _U / (1 - steps * _U)
        self.margin = 8 * gamma + 2.0 ** -40

    @classmethod
    def build(cls, tree: DecisionTree, parts: Sequence[Component], total: Weight,
              regions: Sequence[Sequence[Weight]]) -> "PathTable | None":
        """The table of ``tree`` under the components ``parts`` (coefficient, product weights) of total weight
        ``total``, ``regions[k][node]`` being the exact weight under component ``k`` of the node's region (the
        product over the features of the values its ancestors allow), or ``None`` where it does not apply:
        float weights (answered in floats already), no or more than 63 features (bitmasks in uint64), a table
        above :data:`MAX_TABLE_ENTRIES`, or, with totals too large for int64, weights beyond float range or a
        possible underflow of a term."""
        space = tree.space
        n = space.n_features
        if not space.is_exact or n > 63 or n == 0 or tree.n_leaves < MIN_TABLE_LEAVES:
            return None
        if n * len(parts) * tree.n_leaves > MAX_TABLE_ENTRIES:
            return None
        if all(int(pw.total).bit_length() <= INT_TOTAL_BITS for _, pw in parts):
            return cls(tree, parts, total, regions, exact=True)
        ints = [int(c) for c, _ in parts]
        for _, pw in parts:  # the floats made: per-feature weights and totals (totals of the space only in ratios)
            ints += [int(w) for ws in pw.weights for w in ws] + [int(t) for t in pw.totals]
        if max(ints).bit_length() > 1000 or min(ints) <= 0:
            return None
        # the smallest possible term: a component's coefficient times its least likely value of every feature
        smallest = min(
            math.log2(int(c) * int(pw.total)) - math.log2(int(total))
            + sum(math.log2(min(int(w) for w in ws)) - math.log2(int(z)) for ws, z in zip(pw.weights, pw.totals))
            for c, pw in parts)
        if smallest < math.log2(_FLOOR) + 8:
            return None
        limbs = max(int(pw.total).bit_length() for _, pw in parts) // 32 + 1
        if len(parts) * tree.n_leaves * (n + limbs) > MAX_TABLE_ENTRIES:
            return None
        return cls(tree, parts, total, regions, exact=False)

    def others(self, label: int) -> Leaves:
        """The leaves of other classes than ``label``: a slice when they are contiguous (two classes), else indices."""
        got = self._others.get(label)
        if got is None:
            idx = np.flatnonzero(self.labels != label)
            got = slice(int(idx[0]), int(idx[-1]) + 1) if idx.size and idx[-1] - idx[0] + 1 == idx.size else idx
            self._others[label] = got
        return got

    def rest(self, point: Sequence[int], label: int, fixed: Sequence[int]) -> Array:
        """Per leaf of another class than ``label``, the bits of the features of ``fixed`` on which ``point``
        leaves its path (uint64; read-only: the last answer is kept, as a query and the session that follows
        it ask the same)."""
        key = (tuple(point), label, tuple(fixed))
        last = self._last_rest
        if last is not None and last[0] == key:
            return last[1]
        others = self.others(label)
        if not fixed:
            got = np.zeros(self.labels[others].shape, dtype=np.uint64)
        else:
            rows = self.offsets[list(fixed)] + np.asarray(point, dtype=np.int64)[list(fixed)]
            got = np.bitwise_or.reduce(self.bad[rows][:, others], axis=0)
        got.setflags(write=False)
        self._last_rest = (key, got)
        return got

    def kv(self, point: Sequence[int], fixed: Sequence[int]) -> list[int]:
        """Per component, ``prod_{f in fixed} w_k(point_f)`` (exact)."""
        rows = [int(self.offsets[f]) + point[f] for f in fixed]
        out = []
        for ws in self.value_weights:
            x = 1
            for r in rows:
                x *= ws[r]
            out.append(x)
        return out

    def _limbs(self, tree: DecisionTree, parts: Sequence[Component], regions: Sequence[Sequence[Weight]],
               order: Sequence[int], allowed: Sequence[Array]) -> None:
        """For exact counts from float tables: each leaf's exact region weight per component as 32-bit limbs
        (int64, so that sums of up to 2**31 of them stay exact), and per feature an id of the values each
        leaf's path allows with the exact weight of each id per component."""
        paths = tree.paths
        n_limbs = max(int(pw.total).bit_length() for _, pw in parts) // 32 + 1
        raw = b"".join(int(reg[paths[li].leaf]).to_bytes(4 * n_limbs, "little") for reg in regions for li in order)
        limbs = np.frombuffer(raw, dtype=np.uint32).reshape(len(parts), len(order), n_limbs)
        #: limbs[k, j, L]: 32-bit limb j of leaf L's region weight under component k
        self.limbs = np.ascontiguousarray(limbs.transpose(0, 2, 1)).astype(np.int64)
        #: mask_id[f, L]: an id of the values leaf L's path allows for f (0: all of them)
        self.mask_id = np.zeros((self.n_features, len(order)), dtype=np.int64)
        ids: list[dict[int, int]] = [{(1 << f.size) - 1: 0} for f in tree.space.features]
        for col, li in enumerate(order):
            for f, m in paths[li].masks:
                self.mask_id[f, col] = ids[f].setdefault(m, len(ids[f]))
        #: per feature, per id: the exact weight of its values under each component
        self.id_weights: list[list[tuple[int, ...]]] = [
            [tuple(int(pw.mask_weight(f, m)) for _, pw in parts) for m in ids[f]] for f in range(self.n_features)]
        self.n_ids = np.array([len(x) for x in self.id_weights], dtype=np.int64)

    def count(self, point: Sequence[int], label: int, fixed: frozenset[int]) -> int:
        """``disagree_weight`` of the tree under this table's components, exactly."""
        fx = sorted(fixed)
        live = np.flatnonzero(self.rest(point, label, fx) == 0)
        return self.count_leaves(point, fx, np.arange(self.n_leaves)[self.others(label)][live])

    def count_leaves(self, point: Sequence[int], fixed: Sequence[int], cols: Array) -> int:
        """The exact weight of the points agreeing with ``point`` on ``fixed`` in the leaves ``cols`` (leaves
        whose path allows ``point`` on every fixed feature): ``sum_k c_k prod_{f in S} w_k(v_f) sum_L
        prod_{f not in S} w_k(A_f(L))``. int64 tables: directly. Float tables: the leaves are grouped by
        what their paths allow on ``S``; per group the region weights are summed as int64 limbs and divided
        once by the group's ``prod_{f in S} w_k(A_f)`` (exact: every region weight in the group is a multiple)."""
        if not cols.size:
            return 0
        kv = self.kv(point, fixed)
        if self.exact:
            free = [f for f in range(self.n_features) if f not in set(fixed)]
            per = self.w[:, :, cols][free].prod(axis=0).sum(axis=1) if free else np.full(self.n_components, cols.size)
            return sum(c * x * int(p) for c, x, p in zip(self.coef, kv, per.tolist()))
        groups, reps = self._groups(fixed, cols)
        sums = np.add.reduceat(self.limbs[:, :, cols[groups[0]]], groups[1], axis=2)  # (K, limbs, G)
        sums = np.ascontiguousarray(sums.transpose(0, 2, 1))
        lo = (sums & 0xFFFFFFFF).astype(np.uint32)
        hi = (sums >> 32).astype(np.uint32)
        total = 0
        for k, (c, x) in enumerate(zip(self.coef, kv)):
            acc = 0
            for g, rep in enumerate(reps):
                div = 1
                for f, i in zip(fixed, rep):
                    div *= self.id_weights[f][i][k]
                acc += (int.from_bytes(lo[k, g].tobytes(), "little")
                        + (int.from_bytes(hi[k, g].tobytes(), "little") << 32)) // div
            total += c * x * acc
        return total

    def _groups(self, fixed: Sequence[int], cols: Array) -> tuple[tuple[Array, Array], list[tuple[int, ...]]]:
        """The leaves ``cols`` grouped by what their paths allow on ``fixed``: (an order of the leaves that
        puts each group together, the start of each group in it), and each group's mask ids on ``fixed``."""
        if not fixed:
            return (np.arange(cols.size), np.zeros(1, dtype=np.int64)), [()]
        fx = np.asarray(fixed, dtype=np.int64)
        ids = self.mask_id[fx][:, cols]  # (|S|, leaves)
        radix = self.n_ids[fx]
        if math.prod(radix.tolist()) < 1 << 62:
            key = np.cumprod(np.concatenate([[1], radix[:-1]])) @ ids
            order = np.argsort(key, kind="stable")
            sk = key[order]
            starts = np.flatnonzero(np.concatenate([[True], sk[1:] != sk[:-1]]))
        else:
            _, first, inv = np.unique(ids, axis=1, return_index=True, return_inverse=True)
            order = np.argsort(inv.reshape(-1), kind="stable")
            starts = np.searchsorted(inv.reshape(-1)[order], np.arange(first.size))
        reps = [tuple(r) for r in ids[:, order[starts]].T.tolist()]
        return (order, starts), reps


#: 1 << f and its complement as uint64, per feature (f < 64)
_BIT = [np.uint64(1 << f) for f in range(64)]
_NOT_BIT = [np.uint64(((1 << 64) - 1) ^ (1 << f)) for f in range(64)]


class PathSession(SessionBase):
    """The deletion-loop session of :class:`~kcxai.engines.dt.TreeOracle` over a :class:`PathTable`.

    Queries are exact int64 sums, or float estimates that decide where they are clear of the bound and
    are decided exactly otherwise (see the module); weights are always exact. Only *live* leaves (at
    most one bit of ``D_L`` still fixed: those a query can reach) carry their products; a leaf becomes
    live when a feature is freed.
    """

    __slots__ = ("_space", "_t", "_point", "_label", "_fixed", "_smask", "_rest", "_cols", "_all", "_lrest", "_lcols",
                 "_lprod", "_pvp", "_scale", "_kv", "_memo")

    def __init__(self, space: FeatureSpace, table: PathTable, point: Point, label: int, fixed: frozenset[int]) -> None:
        self._space = space
        self._t = table
        self._point = tuple(point)
        self._label = label
        self._fixed = frozenset(fixed)
        smask = 0
        for f in self._fixed:
            smask |= 1 << f
        self._smask = smask
        fixed_list = sorted(self._fixed)
        self._cols = np.arange(table.n_leaves)[table.others(label)]
        rest = self._rest = table.rest(point, label, fixed_list)  # per leaf of another class: bits of D_L still fixed
        # the leaves tracked: all of them when the arrays are small, else the live ones
        self._all = table.n_components * rest.size <= TRACK_ALL
        if self._all:  # (a slice when the other classes' leaves are contiguous: numpy then reads views, not copies)
            others = table.others(label)
            self._lrest, self._lcols = rest, others if isinstance(others, slice) else self._cols
        else:
            live = np.flatnonzero(rest & (rest - 1) == 0)  # at most one bit (numpy 1.x has no bitwise_count)
            self._lrest, self._lcols = rest[live], self._cols[live]
        self._lprod = self._products(self._lcols)
        if table.exact:
            self._kv = table.kv(point, fixed_list)
        else:  # per component: its float coefficient times prod over the fixed features of P_k(v_f)
            rows = table.offsets + np.asarray(point, dtype=np.int64)
            self._pvp = table.pv[:, rows]  # (K, n): P_k(v_f)
            self._scale = table.fcoef * self._pvp[:, fixed_list].prod(axis=1)
        self._memo: dict[int, _Query] = {}  # feature -> (error, consistent, empty) for this S

    def _products(self, cols: Leaves) -> Array:
        """Per component, for the leaves ``cols`` (indices or a slice): the product over the free features of
        ``w_k(A_f(L))`` (or the leaf's whole product divided by the fixed features' factors, when they are fewer;
        exact for ints), one feature at a time over views (a 3-d fancy index costs several times more)."""
        t = self._t
        free = [f for f in range(t.n_features) if not self._smask >> f & 1]
        size = len(range(t.n_leaves)[cols]) if isinstance(cols, slice) else cols.size
        if not free or not size:
            return np.ones((t.n_components, size), dtype=t.w.dtype)
        if not isinstance(cols, slice) and 2 * size >= t.n_leaves:  # most leaves: views of all, one gather after
            return self._products(slice(None))[:, cols]
        fixed = [f for f in range(t.n_features) if self._smask >> f & 1]
        use = free if len(free) <= len(fixed) + 1 else fixed
        out = t.w[use[0]][:, cols].copy() if use else np.ones((t.n_components, size), dtype=t.w.dtype)
        for f in use[1:]:
            out *= t.w[f][:, cols]
        if use is free:
            return out
        whole: Array = t.wall[:, cols]
        quotient: Array = whole // out if t.exact else whole / out
        return quotient

    @property
    def fixed(self) -> frozenset[int]:
        return self._fixed

    @property
    def table(self) -> PathTable:
        """The table the session reads."""
        return self._t

    # -- queries ----------------------------------------------------------------------

    def _query(self, feature: int) -> _Query:
        """For ``S \\ {feature}``: ``(error, consistent, empty)``, with ``empty`` whether no leaf of another
        class agrees with the instance there. Exact tables: the exact integer error weight (``consistent``
        unused); float tables: float estimates of the error and consistent probabilities."""
        got = self._memo.get(feature)
        if got is not None:
            return got
        t = self._t
        freed = feature >= 0 and self._smask >> feature & 1
        if freed:
            cand = np.flatnonzero((self._lrest & _NOT_BIT[feature]) == 0)
        else:
            cand = np.flatnonzero(self._lrest == 0)
        if not cand.size:
            got = (0, 0.0, True)
        else:
            prod = self._lprod[:, cand]
            if freed:
                lc = self._lcols
                prod *= self._t.w[feature][:, cand + lc.start if isinstance(lc, slice) else lc[cand]]
            per = prod.sum(axis=1)
            if t.exact:
                kv = self._kv
                if freed:
                    row = int(t.offsets[feature]) + self._point[feature]
                    kv = [x // ws[row] for x, ws in zip(kv, t.value_weights)]
                got = (sum(c * x * int(p) for c, x, p in zip(t.coef, kv, per.tolist())), 0.0, False)
            else:
                d = self._scale / self._pvp[:, feature] if freed else self._scale
                got = (float(d @ per), float(d.sum()), False)
        self._memo[feature] = got
        return got

    def _screen(self, err: float, rhs: float, zero: bool) -> bool | None:
        """``error <= bound`` from the float estimate ``err`` and bound ``rhs`` (``zero``: the bound is exactly
        0; some leaf is a candidate), or ``None`` when the floats cannot tell (decided exactly)."""
        if zero:
            return False  # a candidate leaf has positive weight
        if rhs < _FLOOR:
            return None
        m = self._t.margin
        if err <= rhs * (1 - m):
            return True
        if err >= rhs * (1 + m):
            return False
        return None

    def _exact(self, fixed: frozenset[int]) -> Weight:
        keep = np.uint64(sum(1 << f for f in fixed))
        return self._t.count_leaves(self._point, sorted(fixed), self._cols[(self._rest & keep) == 0])

    # -- the session protocol --------------------------------------------------------

    def weight(self) -> Weight:
        return self.weight_if_freed(-1)

    def weight_if_freed(self, feature: int) -> Weight:
        fixed = self._fixed - {feature}
        err, _, empty = self._query(feature if feature in self._fixed else -1)
        if empty:
            return 0
        return err if self._t.exact else self._exact(fixed)

    def holds_if_freed(self, feature: int, bound: Bound) -> bool:
        """Whether freeing ``feature`` keeps ``error <= bound.delta`` (``bound`` over the space's total weight)."""
        if self._t.exact or feature not in self._fixed or bound.total != self._space.total_weight or \
                not isinstance(bound.delta, Fraction):
            return bound.holds(self.weight_if_freed(feature))
        err, _, empty = self._query(feature)
        if empty:
            return True
        got = self._screen(err, float(bound.delta), bound.delta == 0)
        if got is None:
            got = bound.holds(self._exact(self._fixed - {feature}))
        return got

    def holds_precision_if_freed(self, feature: int, precision: Probability) -> bool:
        """Whether freeing ``feature`` keeps ``Pr(kappa(x) = c | x_S = v_S) >= precision``, decided exactly."""
        fixed = self._fixed - {feature}
        if not self._t.exact and isinstance(precision, Fraction) and feature in self._fixed:
            err, cons, empty = self._query(feature)
            if empty:
                return True
            got = self._screen(err, float(1 - precision) * cons, precision == 1)
            if got is not None:
                return got
        space = self._space
        cons_w = space.consistent_weight(self._point, fixed)
        bound = space.arith.bound(precision)
        return bound.holds_from_below(cons_w - self.weight_if_freed(feature), cons_w)

    def free(self, feature: int) -> None:
        if feature not in self._fixed:
            return
        t = self._t
        had = None if self._all else np.flatnonzero(self._rest & _BIT[feature])
        self._lprod = self._lprod * t.w[feature][:, self._lcols]
        self._lrest = self._lrest & _NOT_BIT[feature]
        self._rest = self._lrest if self._all else self._rest & _NOT_BIT[feature]
        if t.exact:
            row = int(t.offsets[feature]) + self._point[feature]
            self._kv = [x // ws[row] for x, ws in zip(self._kv, t.value_weights)]
        else:
            self._scale = self._scale / self._pvp[:, feature]
        self._smask &= ~(1 << feature)
        self._fixed = self._fixed - {feature}
        self._memo = {}
        if had is not None and had.size:  # leaves that had this bit and one other become live
            r = self._rest[had]
            new = had[(r != 0) & (r & (r - 1) == 0)]  # exactly one bit
            if new.size:
                cols = self._cols[new]
                self._lrest = np.concatenate([self._lrest, self._rest[new]])
                self._lcols = np.concatenate([self._lcols, cols])
                self._lprod = np.concatenate([self._lprod, self._products(cols)], axis=1)
