"""The OBDD table's counts computed level by level with numpy, for large diagrams.

See :mod:`kcxai.compilers._tables.wmc`.

:meth:`LevelTable.evaluate <kcxai.compilers._tables.level.LevelTable.evaluate>` computes a node's value
from its children's, recursively, visiting only the nodes the fixed features leave reachable. On a large
diagram with most features free that is nearly every node, one Python call each. Here every node of a
level is computed at once, from arrays of its edges:

    V_l = reduceat(w(E_e) * skip(l, l_e) * V[child_e])        (free feature: per node, the sum of its edges)
    V_l = w(v_f) * skip(l, l_c) * V[vchild[:, v_f]]           (fixed feature: the child of the point's value)

with the same skip factors as the recursive evaluation (one product per pair of levels an edge spans).

Exactness: every product and sum above is the weight of a set of points, at most the space's total weight,
so with integer weights and a total below ``2**62`` the ``int64`` arithmetic is exact; larger totals keep
the recursive evaluation (Python integers). Float spaces use ``float64``: the same rounding as Python
floats, summed in another order.

The structure (which node is where, edges by level) is shared by the tables of a mixture's components;
the edge weights are each component's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kcxai.arithmetic import Weight

__all__ = ["LevelStructure", "LevelArrays", "VECTOR_MIN_NODES", "fits_int64"]

#: Diagrams with at least this many internal nodes are counted level by level with numpy (below it, the
#: recursive evaluation visits few enough nodes to be cheaper than numpy's per-call cost).
VECTOR_MIN_NODES = 2000

_INT64_SAFE = 1 << 62


def fits_int64(total: Weight, exact: bool) -> bool:
    """Whether counts bounded by ``total`` are exact in numpy's arithmetic (``float64`` when not exact)."""
    return not exact or total < _INT64_SAFE


class LevelStructure:
    """Per level, the nodes and their edges as index arrays; built once per diagram.

    Parameters
    ----------
    sizes : sequence of int
        Per level, the number of values of its feature.
    lev : sequence of int
        Per node, its level (``n_levels`` for the terminals 0 and 1).
    edges : sequence
        Per node, ``((mask, child), ...)``.
    vchild : sequence
        Per node, its child for each value.
    """

    def __init__(self, sizes: Sequence[int], lev: Sequence[int], edges: Sequence[Sequence[tuple[int, int]]],
                 vchild: Sequence[Sequence[int]]) -> None:
        n_levels = len(sizes)
        self.n_levels = n_levels
        self.n_nodes = len(lev)
        by_level: list[list[int]] = [[] for _ in range(n_levels)]
        for n, lv in enumerate(lev):
            if lv < n_levels:
                by_level[lv].append(n)
        levels = np.asarray(lev, dtype=np.int64)
        self.pairs: dict[tuple[int, int], int] = {}  # (a, b) -> index in the skip table; 0: nothing skipped
        self.ids: list[np.ndarray] = []
        self.edge_child: list[np.ndarray] = []
        self.edge_pair: list[np.ndarray] = []
        self.edge_masks: list[list[int]] = []
        self.starts: list[np.ndarray] = []
        self.vchild: list[np.ndarray] = []
        self.vpair: list[np.ndarray] = []
        for lv, nodes in enumerate(by_level):
            children: list[int] = []
            pairs: list[int] = []
            masks: list[int] = []
            starts: list[int] = []
            for n in nodes:
                starts.append(len(children))
                for mask, child in edges[n]:
                    children.append(child)
                    pairs.append(self._pair(lv, lev[child]))
                    masks.append(mask)
            self.ids.append(np.asarray(nodes, dtype=np.int64))
            self.edge_child.append(np.asarray(children, dtype=np.int64))
            self.edge_pair.append(np.asarray(pairs, dtype=np.int64))
            self.edge_masks.append(masks)
            self.starts.append(np.asarray(starts, dtype=np.int64))
            vc = np.asarray([vchild[n] for n in nodes], dtype=np.int64).reshape(len(nodes), sizes[lv])
            self.vchild.append(vc)
            pair_of = np.asarray([self._pair(lv, b) for b in range(n_levels + 1)], dtype=np.int64)
            self.vpair.append(pair_of[levels[vc]])
        self.pair_list = sorted(self.pairs, key=self.pairs.__getitem__)

    def _pair(self, a: int, b: int) -> int:
        """The skip-table index of the levels strictly between ``a`` and ``b`` (0: none)."""
        if b <= a + 1:
            return 0
        got = self.pairs.get((a, b))
        if got is None:
            got = self.pairs[(a, b)] = len(self.pairs) + 1
        return got


class LevelArrays:
    """A :class:`LevelStructure` with one product distribution's edge weights: the numpy evaluation.

    Parameters
    ----------
    structure : LevelStructure
    order : sequence of int
        The features by level.
    mask_weight : callable
        ``mask_weight(feature, mask)``, the distribution's weight of a set of values.
    exact : bool
        ``int64`` arithmetic (exact weights whose total fits, see :func:`fits_int64`) or ``float64``.
    """

    def __init__(self, structure: LevelStructure, order: Sequence[int], mask_weight: Any, exact: bool) -> None:
        self.s = structure
        self.order = tuple(order)
        self.dtype = np.int64 if exact else np.float64
        self.exact = exact
        self.edge_w = [np.asarray([mask_weight(order[lv], m) for m in masks], dtype=self.dtype)
                       for lv, masks in enumerate(structure.edge_masks)]

    def evaluate(self, roots: Sequence[int], negated: Sequence[bool], root_levels: Sequence[int], point: Sequence[int],
                 isfixed: Sequence[bool], lfac: Sequence[Weight], memo: list[dict[Any, Any]],
                 tmp: list[dict[Any, Any]] | None, affected: Sequence[bool] | None) -> Weight:
        """The sum over ``roots`` of their weights (complemented where ``negated``), as
        :meth:`LevelTable.evaluate <kcxai.compilers._tables.level.LevelTable.evaluate>`; ``memo[l]["v"]`` holds
        level ``l``'s values for the current fixed set, except for the ``affected`` levels (into ``tmp``), and
        ``memo[n_levels]`` (the terminals' unit) every node's value from the last query."""
        s = self.s
        n_levels = s.n_levels
        skip: list[Weight] = [1] * (len(s.pair_list) + 1)
        for k, (a, b) in enumerate(s.pair_list, start=1):
            r: Weight = 1
            for j in range(a + 1, b):
                r *= lfac[j]
            skip[k] = r
        skips = np.asarray(skip, dtype=self.dtype)
        # the terminals' unit is never affected: it keeps the node values across a session's queries, and
        # which array each level's values were copied from (a level whose array is unchanged is not copied)
        kept = memo[n_levels]
        val = kept.get("val")
        if val is None:
            val = kept["val"] = np.zeros(s.n_nodes, dtype=self.dtype)
            val[1] = 1
            kept["from"] = [None] * n_levels
        copied = kept["from"]
        for lv in range(n_levels - 1, -1, -1):
            ids = s.ids[lv]
            if not len(ids):
                continue
            store = tmp[lv] if affected is not None and affected[lv] else memo[lv]  # type: ignore[index]
            got = store.get("v")
            if got is None:
                got = store["v"] = self._level(lv, val, skips, point, isfixed, lfac)
            if copied[lv] is not got:
                val[ids] = got
                copied[lv] = got
        total: Weight = 0 if self.exact else 0.0
        full = None
        for root, neg, lr in zip(roots, negated, root_levels):
            r = val[root].item()
            if r and lr > 0:
                for j in range(lr):
                    r *= lfac[j]
            if neg:
                if full is None:
                    full = 1 if self.exact else 1.0
                    for j in range(n_levels):
                        full *= lfac[j]
                r = full - r
            total += r
        return total

    def _level(self, lv: int, val: np.ndarray, skips: np.ndarray, point: Sequence[int], isfixed: Sequence[bool],
               lfac: Sequence[Weight]) -> np.ndarray:
        s = self.s
        f = self.order[lv]
        if isfixed[f]:
            v = point[f]
            return (val[s.vchild[lv][:, v]] * skips[s.vpair[lv][:, v]]) * self.dtype(lfac[lv])
        contrib = (self.edge_w[lv] * skips[s.edge_pair[lv]]) * val[s.edge_child[lv]]
        return np.add.reduceat(contrib, s.starts[lv])
