"""The OBDD table's structure as numpy index arrays, for counting whole levels at once.

See :mod:`kcxai.compilers._tables.wmc`. The recursive walk
(:meth:`LevelCounter.walk <kcxai.compilers._tables.level.LevelCounter.walk>`) computes a node's value
from its children's, visiting only the nodes the fixed features leave reachable. On a large diagram with
most features free that is nearly every node, one Python call each. Instead, every node of a level is
computed at once from arrays of its edges, one column per weight column:

    V_l = reduceat(w(E_e) * skip(l, l_e) * V[child_e])        (free feature: per node, the sum of its edges)
    V_l = w(v_f) * skip(l, l_c) * V[vchild[:, v_f]]           (fixed feature: the child of the point's value)

with the same skip factors as the walk (one product per pair of levels an edge spans,
:attr:`LevelTable.pair_levels <kcxai.compilers._tables.level.LevelTable.pair_levels>`).

Exactness: every product and sum above is one component's weight of a set of points, at most that
component's total weight, so with integer weights and every total below ``2**62`` the ``int64``
arithmetic is exact; larger totals keep the walk (Python integers). Float spaces use ``float64``: the
same rounding as Python floats, summed in another order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kcxai.compilers._tables.vectors import Array

__all__ = ["LevelStructure"]


class LevelStructure:
    """Per level, the nodes and their edges as index arrays; built once per diagram.

    Parameters
    ----------
    sizes : sequence of int
        Per level, the number of values of its feature.
    lev : sequence of int
        Per node, its level (``n_levels`` for the terminals).
    edges : sequence
        Per node, ``((mask, child), ...)``.
    vchild : sequence
        Per node, its child for each value.
    edge_pairs, value_pairs : sequence
        Per node, the skip pair of each edge and of each value's child (0: nothing skipped).
    """

    def __init__(self, sizes: Sequence[int], lev: Sequence[int], edges: Sequence[Sequence[tuple[int, int]]],
                 vchild: Sequence[Sequence[int]], edge_pairs: Sequence[Sequence[int]],
                 value_pairs: Sequence[Sequence[int]]) -> None:
        n_levels = len(sizes)
        self.n_levels = n_levels
        self.n_nodes = len(lev)
        by_level: list[list[int]] = [[] for _ in range(n_levels)]
        for n, lv in enumerate(lev):
            if lv < n_levels:
                by_level[lv].append(n)
        #: per level: its node ids; its edges' children, skip pairs and masks; where each node's edges start;
        #: per node of the level and value, the child and its skip pair
        self.ids: list[Array] = []
        self.edge_child: list[Array] = []
        self.edge_pair: list[Array] = []
        self.edge_masks: list[list[int]] = []
        self.starts: list[Array] = []
        self.vchild: list[Array] = []
        self.vpair: list[Array] = []
        for lv, nodes in enumerate(by_level):
            children: list[int] = []
            pairs: list[int] = []
            masks: list[int] = []
            starts: list[int] = []
            for n in nodes:
                starts.append(len(children))
                for (mask, child), p in zip(edges[n], edge_pairs[n]):
                    children.append(child)
                    pairs.append(p)
                    masks.append(mask)
            self.ids.append(np.asarray(nodes, dtype=np.int64))
            self.edge_child.append(np.asarray(children, dtype=np.int64))
            self.edge_pair.append(np.asarray(pairs, dtype=np.int64))
            self.edge_masks.append(masks)
            self.starts.append(np.asarray(starts, dtype=np.int64))
            shape = (len(nodes), sizes[lv])
            self.vchild.append(np.asarray([vchild[n] for n in nodes], dtype=np.int64).reshape(shape))
            self.vpair.append(np.asarray([value_pairs[n] for n in nodes], dtype=np.int64).reshape(shape))
