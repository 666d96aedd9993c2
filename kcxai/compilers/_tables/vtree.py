"""The SDD node table: decision nodes over a vtree whose leaves are feature blocks.

See :mod:`kcxai.compilers._tables.wmc`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kcxai.arithmetic import Weight
from kcxai.compilers._tables.base import TRUE, Table, recursion
from kcxai.space import FeatureSpace

__all__ = ["VtreeTable"]


class VtreeTable(Table):
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

        with recursion(self.depth):
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
