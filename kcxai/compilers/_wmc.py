"""Exact weighted model counting over valid encodings, with conditioning, for the SDD and OBDD oracles.

Both compilers export their diagram once into a node table at the level of
*features* (see :mod:`kcxai.compilers._encoding`): each feature's block of
Boolean variables is read as one multi-valued test. Counting then never
touches the backend again, never uses its 64-bit or floating-point counters,
and conditions by weights instead of building new diagrams.

Weights
-------
For a point ``v`` and a fixed set ``S``, every feature ``f`` has a factor
``fac_f = w_f(v_f)`` if ``f`` is fixed and ``Z_f`` (the feature's total
weight) if it is free; a free feature contributes ``w_f(E) = sum_{k in E}
w_f(k)`` where a node sends the values ``E`` one way, a fixed one the single
branch of ``v_f``. With the space's integer weights every number is a Python
``int``; with float weights, a ``float``.

OBDD table (:class:`LevelTable`): a reduced ordered multi-valued diagram.
Node ``n`` at level ``l`` (its feature's position in the block order) has
edges ``(E, child)``; its value counts the features at levels ``>= l``:

    V(n) = sum_e w(E_e) * skip(l, child_e) * V(child_e)   (free feature)
    V(n) = w(v_f) * skip(l, c) * V(c), c the child of v_f  (fixed feature)

with ``skip(l, l')`` the product of ``fac`` over the levels strictly between
(features not tested on that edge), ``V(TRUE) = 1`` and ``V(FALSE) = 0``.

SDD table (:class:`VtreeTable`): decision nodes over vtree nodes whose leaves
are whole feature blocks; a node normalised for a vtree node inside one block
is a *leaf*, the set ``E`` of values where it holds. For a decision node over
vtree node ``x`` (children ``xl``, ``xr``) with elements ``(p_i, s_i)``:

    V(n) = sum_i sm(xl, p_i) * V(p_i) * sm(xr, s_i) * V(s_i)

where ``sm(x, u)`` (smoothing) is the product of ``fac`` over the features
below ``x`` but not below ``u``'s vtree node. Primes partition the Boolean
assignments of ``xl``, hence its valid ones, so the sum is exact.

Distributions: a table counts under one product distribution (its ``pw``);
:func:`diagram_oracle` gives one table per component of a mixture, sharing
the structure (:meth:`_Table.reweighted`), so the loops above never see a
mixture.

In both, ``count_c = top * V(root_c)`` is the weight of ``{x : kappa(x) = c,
x_S = v_S}``. In exact spaces ``disagree_weight = consistent_weight(v, S) -
count_c``, an exact ``int``. In float spaces it is the sum of ``count_c'`` over
the other classes instead (no cancellation: an empty set weighs exactly 0.0);
each count is a sum of products of the space's float weights, with the
rounding error of that many float operations (relative error about the number
of feature levels times 2**-53 on each count).

Sessions
--------
A node's value only depends on the factors of the features below it: the
levels at or below its own (OBDD) or the features below its vtree node (SDD).
A deletion-loop session keeps the values computed for the current ``S``,
grouped by *unit* (a level, or a vtree node); asking about freeing feature
``i`` recomputes only the units above ``i`` and reuses the rest, and
committing the removal keeps what was just computed.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from kcxai._errors import InvalidInputError
from kcxai.arithmetic import Weight
from kcxai.distribution import ProductWeights
from kcxai.oracle import CountingOracle, OracleSession, SessionBase, per_component
from kcxai.space import FeatureSpace

__all__ = ["LevelTable", "VtreeTable", "DiagramOracle", "DiagramSession", "check_partition", "diagram_oracle",
           "FALSE", "TRUE"]

FALSE = 0
TRUE = 1


@contextmanager
def _recursion(depth: int) -> Iterator[None]:
    """Allow at least ``depth`` nested Python calls (restored afterwards)."""
    old = sys.getrecursionlimit()
    need = depth + 200
    if need > old:
        sys.setrecursionlimit(need)
    try:
        yield
    finally:
        if need > old:
            sys.setrecursionlimit(old)


class _Table:
    """What both tables share: factors, units, evaluation with a split memo."""

    space: FeatureSpace
    roots: list[int]
    n_units: int
    #: per feature, the units whose values depend on it
    units_of: list[tuple[int, ...]]
    #: recursion depth a traversal may need
    depth: int

    #: the product distribution the weights are taken from
    pw: ProductWeights

    def factors(self, point: Sequence[int], fixed: Any) -> list[Weight]:
        ws, totals = self.pw.weights, self.pw.totals
        return [ws[f][point[f]] if f in fixed else totals[f] for f in range(self.space.n_features)]

    def _weigh(self) -> None:  # pragma: no cover - abstract
        """Compute the weight arrays from ``self.pw`` (the structure is shared)."""
        raise NotImplementedError

    def reweighted(self, pw: ProductWeights) -> "_Table":
        """The same diagram counting under another product distribution (structure shared)."""
        other = copy.copy(self)
        other.pw = pw
        other._weigh()
        return other

    def evaluate(self, labels: Sequence[int], point: Sequence[int], fixed: Any, fac: list[Weight],
                 memo: list[dict[int, Weight]], tmp: list[dict[int, Weight]] | None,
                 affected: Sequence[bool] | None) -> Weight:  # pragma: no cover - abstract
        """``count(labels, point, fixed)`` with ``fac`` given; ``memo[u]`` holds the values of unit ``u``
        for this ``fixed`` set, except for the ``affected`` units, whose values go to ``tmp``."""
        raise NotImplementedError

    def count(self, labels: Sequence[int], point: Sequence[int], fixed: Any) -> Weight:
        """Weight of ``{x : kappa(x) in labels, x_fixed = point_fixed}``."""
        fac = self.factors(point, fixed)
        memo: list[dict[int, Weight]] = [{} for _ in range(self.n_units)]
        with _recursion(self.depth):
            return self.evaluate(labels, point, fixed, fac, memo, None, None)


class LevelTable(_Table):
    """An OBDD read feature by feature: a reduced ordered multi-valued diagram.

    Parameters
    ----------
    space : FeatureSpace
    order : sequence of int
        The features by level (features with a single value may be left out).
    feature : list of int
        Per node, its feature (``-1`` for the terminals 0 = FALSE and 1 = TRUE).
    edges : list of tuple
        Per node, ``((mask, child), ...)``; the masks partition the feature's values.
    roots : list of int
        Per class, the node of ``kappa(x) = c``.
    """

    def __init__(self, space: FeatureSpace, order: Sequence[int], feature: list[int],
                 edges: list[tuple[tuple[int, int], ...]], roots: list[int]) -> None:
        self.space = space
        self.order = tuple(order)
        n_levels = len(self.order)
        level_of = [n_levels] * space.n_features
        for lev, f in enumerate(self.order):
            level_of[f] = lev
        self.level_of = level_of
        self.feature = feature
        self.edges = edges
        self.roots = list(roots)
        self.pw = space.distribution.components[0][1]
        lev = [n_levels] * len(feature)
        vchild: list[tuple[int, ...]] = [()] * len(feature)
        for n, f in enumerate(feature):
            if f < 0:
                continue
            lev[n] = level_of[f]
            size = space.features[f].size
            vc = [0] * size
            for mask, child in edges[n]:
                for k in range(size):
                    if mask >> k & 1:
                        vc[k] = child
            vchild[n] = tuple(vc)
        self.lev = lev
        self.vchild = vchild
        self._weigh()
        self.n_levels = n_levels
        self.n_units = n_levels + 1
        # freeing feature f changes the values of the nodes at levels <= level_of[f]
        self.units_of = [tuple(range(level_of[f] + 1)) if level_of[f] < n_levels else ()
                         for f in range(space.n_features)]
        self.depth = n_levels + 2

    def _weigh(self) -> None:
        # per node, its edges (w(E), child, the child's level for the skip factors)
        mask_weight, lev, edges = self.pw.mask_weight, self.lev, self.edges
        wedges: list[tuple[tuple[Weight, int, int], ...]] = [()] * len(self.feature)
        for n, f in enumerate(self.feature):
            if f >= 0:
                wedges[n] = tuple((mask_weight(f, mask), child, lev[child]) for mask, child in edges[n])
        self.wedges = wedges

    @property
    def n_nodes(self) -> int:
        """Internal nodes (terminals not counted)."""
        return sum(1 for f in self.feature if f >= 0)

    @property
    def n_edges(self) -> int:
        return sum(len(e) for e in self.edges)

    def holds(self, label: int, point: Sequence[int]) -> bool:
        n = self.roots[label]
        feature, vchild = self.feature, self.vchild
        while n > 1:
            n = vchild[n][point[feature[n]]]
        return n == TRUE

    def evaluate(self, labels: Sequence[int], point: Sequence[int], fixed: Any, fac: list[Weight],
                 memo: list[dict[int, Weight]], tmp: list[dict[int, Weight]] | None,
                 affected: Sequence[bool] | None) -> Weight:
        lev, feature, vchild, wedges, order = self.lev, self.feature, self.vchild, self.wedges, self.order
        arith = self.pw.arith
        one = arith.one
        lfac = [fac[f] for f in order]
        skips: dict[int, Weight] = {}
        width = self.n_levels + 1
        isfixed = [f in fixed for f in range(len(fac))]

        def skip(a: int, b: int) -> Weight:
            # product of the factors of the levels strictly between a and b
            key = a * width + b
            r = skips.get(key)
            if r is None:
                r = one
                for j in range(a + 1, b):
                    r *= lfac[j]
                skips[key] = r
            return r

        def value(n: int) -> Weight:
            if n <= 1:
                return n
            ln = lev[n]
            store = tmp[ln] if affected is not None and affected[ln] else memo[ln]  # type: ignore[index]
            r = store.get(n)
            if r is not None:
                return r
            f = feature[n]
            if isfixed[f]:
                c = vchild[n][point[f]]
                r = value(c)
                if r:
                    r = r * fac[f]
                    lc = lev[c]
                    if lc > ln + 1:
                        r = r * skip(ln, lc)
            else:
                r = 0
                for w, c, lc in wedges[n]:
                    x = value(c)
                    if x:
                        if lc > ln + 1:
                            x = x * skip(ln, lc)
                        r += w * x
            store[n] = r
            return r

        total = arith.zero
        for label in labels:
            root = self.roots[label]
            r = value(root)
            if r:
                lr = lev[root]
                if lr > 0:
                    r = r * skip(-1, lr)
                total += r
        return total


class VtreeTable(_Table):
    """An SDD read feature by feature, over a vtree whose leaves are whole feature blocks.

    Parameters
    ----------
    space : FeatureSpace
    vnodes : list of (features_mask, left, right)
        The vtree above the blocks: per vtree node, the bitmask of the features
        below it and its children (``-1`` for a block, i.e. one feature).
    vnode_of_feature : list of int
        Per feature, its block's vtree node (``-1`` for features without variables).
    kind : list of int
        Per node: 0 terminal, 1 leaf, 2 decision.
    data : list
        Per node: ``None`` (terminal), ``(feature, mask)`` (leaf) or
        ``(vnode, ((prime, sub), ...))`` (decision).
    roots : list of int
        Per class.
    root_vnode : int
        The vtree's root.
    """

    def __init__(self, space: FeatureSpace, vnodes: list[tuple[int, int, int]], vnode_of_feature: list[int],
                 kind: list[int], data: list[Any], roots: list[int], root_vnode: int) -> None:
        self.space = space
        self.vnodes = vnodes
        self.vnode_of_feature = vnode_of_feature
        self.kind = kind
        self.data = data
        self.roots = list(roots)
        self.root_vnode = root_vnode
        self.pw = space.distribution.components[0][1]
        n_v = len(vnodes)
        self.n_units = n_v
        # smoothing pairs (x, u): the features below x and not below u (u = -1: none)
        pair_index: dict[tuple[int, int], int] = {}
        pair_feats: list[tuple[int, ...]] = []

        def pair(x: int, u: int) -> int:
            key = (x, u)
            got = pair_index.get(key)
            if got is None:
                fx = vnodes[x][0]
                fu = vnodes[u][0] if u >= 0 else 0
                diff = fx & ~fu
                got = pair_index[key] = len(pair_feats)
                pair_feats.append(tuple(f for f in range(space.n_features) if diff >> f & 1))
            return got

        def home(n: int) -> int:
            k = kind[n]
            if k == 2:
                return data[n][0]
            if k == 1:
                return vnode_of_feature[data[n][0]]
            return -1

        home_of = [home(n) for n in range(len(kind))]
        elems: list[tuple[tuple[int, int, int, int], ...]] = [()] * len(kind)
        for n, k in enumerate(kind):
            if k == 2:
                x, els = data[n]
                _, xl, xr = vnodes[x]
                elems[n] = tuple((p, s, pair(xl, home_of[p]) if home_of[p] != xl else -1,
                                  pair(xr, home_of[s]) if home_of[s] != xr else -1) for p, s in els)
        self.home = home_of
        self.elems = elems
        self._weigh()
        self.pair_feats = pair_feats
        self.root_pairs = [pair(root_vnode, home_of[r]) if home_of[r] != root_vnode else -1 for r in self.roots]
        # freeing feature f changes the values of the nodes whose vtree node is above f's block
        units_of: list[tuple[int, ...]] = []
        for f in range(space.n_features):
            units_of.append(tuple(x for x in range(n_v) if vnodes[x][0] >> f & 1))
        self.units_of = units_of
        depth = [0] * n_v
        for x in range(n_v):  # children before parents
            _, xl, xr = vnodes[x]
            depth[x] = 1 + max(depth[xl] if xl >= 0 else 0, depth[xr] if xr >= 0 else 0)
        self.depth = 2 * (max(depth) if depth else 0) + 4

    def _weigh(self) -> None:
        # per leaf node: (feature, mask, w(E))
        mask_weight, kind, data = self.pw.mask_weight, self.kind, self.data
        leaf_w: list[tuple[int, int, Weight]] = [(0, 0, 0)] * len(kind)
        for n, k in enumerate(kind):
            if k == 1:
                f, mask = data[n]
                leaf_w[n] = (f, mask, mask_weight(f, mask))
        self.leaf_w = leaf_w

    @property
    def n_nodes(self) -> int:
        """Decision nodes above the blocks."""
        return sum(1 for k in self.kind if k == 2)

    @property
    def n_edges(self) -> int:
        return sum(len(e) for e in self.elems)

    def holds(self, label: int, point: Sequence[int]) -> bool:
        kind, data = self.kind, self.data

        def ev(n: int) -> bool:
            k = kind[n]
            if k == 0:
                return n == TRUE
            if k == 1:
                f, mask = data[n]
                return bool(mask >> point[f] & 1)
            for p, s in data[n][1]:
                if ev(p):
                    return ev(s)
            return False

        with _recursion(self.depth):
            return ev(self.roots[label])

    def evaluate(self, labels: Sequence[int], point: Sequence[int], fixed: Any, fac: list[Weight],
                 memo: list[dict[int, Weight]], tmp: list[dict[int, Weight]] | None,
                 affected: Sequence[bool] | None) -> Weight:
        kind, elems, leaf_w, home, pair_feats = self.kind, self.elems, self.leaf_w, self.home, self.pair_feats
        arith = self.pw.arith
        one = arith.one
        smooth: dict[int, Weight] = {}
        isfixed = [f in fixed for f in range(len(fac))]

        def sm(k: int) -> Weight:
            r = smooth.get(k)
            if r is None:
                r = one
                for f in pair_feats[k]:
                    r *= fac[f]
                smooth[k] = r
            return r

        def value(n: int) -> Weight:
            k = kind[n]
            if k == 0:
                return n
            if k == 1:
                f, mask, wE = leaf_w[n]
                if isfixed[f]:
                    return fac[f] if mask >> point[f] & 1 else 0
                return wE
            h = home[n]
            store = tmp[h] if affected is not None and affected[h] else memo[h]  # type: ignore[index]
            r = store.get(n)
            if r is not None:
                return r
            r = 0
            for p, s, kp, ks in elems[n]:
                a = value(p)
                if not a:
                    continue
                b = value(s)
                if not b:
                    continue
                if kp >= 0:
                    a = a * sm(kp)
                if ks >= 0:
                    b = b * sm(ks)
                r += a * b
            store[n] = r
            return r

        total = arith.zero
        for label in labels:
            r = value(self.roots[label])
            k = self.root_pairs[label]
            if r and k >= 0:
                r = r * sm(k)
            total += r
        return total


class DiagramOracle:
    """The counting oracle of a compiled diagram (see :mod:`kcxai.compilers._wmc`).

    Attributes
    ----------
    language : str
        ``"sdd"`` or ``"obdd"``.
    space : FeatureSpace
    n_classes : int
    table : LevelTable or VtreeTable
        The exported diagram counting is done on.
    """

    def __init__(self, language: str, space: FeatureSpace, table: _Table) -> None:
        self.language = language
        self.space = space
        self.table = table
        self.n_classes = len(table.roots)

    def predict_point(self, point: tuple[int, ...]) -> int:
        table = self.table
        for c in range(self.n_classes):
            if table.holds(c, point):  # type: ignore[attr-defined]
                return c
        raise InvalidInputError(  # pragma: no cover - compile checks the partition
            f"No class function of the compiled model holds at point {point}.")

    def class_weight(self, point: tuple[int, ...], label: int, fixed: frozenset[int]) -> Weight:
        """Weight of ``{x : kappa(x) = label and x_fixed = point_fixed}``."""
        return self.table.count((label,), point, fixed)

    def others(self, label: int) -> tuple[int, ...]:
        """The classes counted for ``disagree_weight``: ``(label,)`` in exact spaces (the weight
        is the consistent weight minus this class's), the other classes in float spaces (their
        sum, so that an empty set weighs exactly 0.0)."""
        if self.table.pw.arith.exact:
            return (label,)
        return tuple(c for c in range(self.n_classes) if c != label)

    def disagree_weight(self, point: tuple[int, ...], label: int, fixed: frozenset[int]) -> Weight:
        count = self.table.count(self.others(label), point, fixed)
        pw = self.table.pw
        if pw.arith.exact:
            return pw.consistent_weight(point, fixed) - count
        return count

    def session(self, point: tuple[int, ...], label: int, fixed: frozenset[int]) -> OracleSession:
        return DiagramSession(self, point, label, fixed)


class DiagramSession(SessionBase):
    """Incremental deletion-loop session: recompute only the units above the feature freed."""

    __slots__ = ("_o", "_point", "_label", "_labels", "_fixed", "_fac", "_memo", "_last", "_weight")

    def __init__(self, oracle: DiagramOracle, point: tuple[int, ...], label: int, fixed: frozenset[int]) -> None:
        self._o = oracle
        self._point = tuple(point)
        self._label = label
        self._labels = oracle.others(label)
        self._fixed = set(fixed)
        table = oracle.table
        self._fac = table.factors(point, self._fixed)
        self._memo: list[dict[int, Weight]] = [{} for _ in range(table.n_units)]
        self._last: tuple[int, list[dict[int, Weight]], Weight] | None = None
        self._weight: Weight | None = None

    @property
    def fixed(self) -> frozenset[int]:
        return frozenset(self._fixed)

    def weight(self) -> Weight:
        if self._weight is None:
            table = self._o.table
            with _recursion(table.depth):
                count = table.evaluate(self._labels, self._point, self._fixed, self._fac,
                                       self._memo, None, None)
            self._weight = self._disagree(self._fixed, count)
        return self._weight

    def weight_if_freed(self, feature: int) -> Weight:
        if feature not in self._fixed:
            return self.weight()
        last = self._last
        if last is not None and last[0] == feature:
            return last[2]
        table = self._o.table
        fac = list(self._fac)
        fac[feature] = table.pw.totals[feature]
        fixed = self._fixed - {feature}
        units = table.units_of[feature]
        affected = [False] * table.n_units
        tmp: list[dict[int, Weight]] = [{}] * table.n_units
        for u in units:
            affected[u] = True
            tmp[u] = {}
        with _recursion(table.depth):
            count = table.evaluate(self._labels, self._point, fixed, fac, self._memo, tmp, affected)
        w = self._disagree(fixed, count)
        self._last = (feature, tmp, w)
        return w

    def _disagree(self, fixed: Any, count: Weight) -> Weight:
        pw = self._o.table.pw
        return pw.consistent_weight(self._point, fixed) - count if pw.arith.exact else count

    def free(self, feature: int) -> None:
        if feature not in self._fixed:
            return
        last = self._last
        units = self._o.table.units_of[feature]
        if last is not None and last[0] == feature:  # keep what weight_if_freed computed
            for u in units:
                self._memo[u] = last[1][u]
            self._weight = last[2]
        else:
            for u in units:
                self._memo[u] = {}
            self._weight = None
        self._fixed.discard(feature)
        self._fac[feature] = self._o.table.pw.totals[feature]
        self._last = None


def check_partition(oracle: DiagramOracle, model: Any) -> None:
    """The class functions must cover feature space exactly once (their weights sum to the total)."""
    pw = oracle.table.pw
    point = (0,) * oracle.space.n_features
    total = sum(oracle.class_weight(point, c, frozenset()) for c in range(oracle.n_classes))
    ok = total == pw.total if pw.arith.exact else abs(total - pw.total) <= 1e-9
    if not ok:
        raise InvalidInputError(
            f"{type(model).__name__}.build() must return class functions that partition feature space; "
            f"their weights sum to {total}, not to the total weight {pw.total}.")


def diagram_oracle(language: str, space: FeatureSpace, table: _Table) -> CountingOracle:
    """The oracle of an exported diagram under ``space``'s distribution (one table per mixture component,
    sharing the diagram's structure)."""
    return per_component(space, lambda pw: DiagramOracle(
        language, space, table if pw is table.pw else table.reweighted(pw)))
