"""The exact walk of a decision tree's nodes under ``K`` product components at once (``K = 1``: a product).

Each node's region ``{x : x_f in A_f(node)}`` (``A_f`` the values its ancestors allow) has, under each
component ``k``, an exact weight ``R_k(node) = prod_f w_k(A_f(node))``, and so has the part of it that
other classes than ``c`` cover, ``O_k(node, c)`` (the paper's path counts ``||R_j|| = d_1 x ... x d_m``
summed over the leaves below); both are computed once. A query for ``(v, c, S)`` descends from the root
only into subtrees that test a fixed feature, following at a fixed feature the branch holding ``v_f``; a
subtree that tests no fixed feature (a *frontier* node ``n``) holds

    O_k(n, c) * prod_{f in S} w_k(v_f) / prod_{f in S} w_k(A_f(n))

points of another class that agree with ``v`` on ``S``. The division is exact: ``O_k(n, c)`` is a sum of
leaf regions, each a multiple of the denominator, and so is a sum of several frontier nodes' ``O_k``
sharing one denominator, which the walk divides once. So a query visits the nodes above tests of fixed
features, not the whole tree, and answers ``sum_k c_k`` of the components' weights.

Every weight is a vector of the ``K`` components' weights (:mod:`kcxai.compilers._tables.vectors`): the
walk is the same for a product and for a mixture. A box query (a set of values ``B_g`` per constrained
feature ``g``) is the same walk with ``prod_g w_k(A_g(n) & B_g) / w_k(A_g(n))`` as the factor, and may
keep the weights apart by the values of one feature that a frontier node allows (what widening needs).

References
----------
Izza, Ignatiev, Narodytska, Cooper and Marques-Silva, "Efficient Explanations With Relevant Sets"
(2021): the path counts ``||R_j||`` of a decision tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, Union

from kcxai.arithmetic import Weight
from kcxai.compilers._tables.vectors import (
    Columns,
    Component,
    V,
    WeightVector,
    as_float,
    as_int,
    number_kind,
    vector_type,
)
from kcxai.models.tree import DecisionTree
from kcxai.oracle import Box
from kcxai._types import Point

__all__ = ["TreeWalk", "AnyTreeWalk", "tree_walk"]


class TreeWalk(Generic[V]):
    """A decision tree's exact walk under ``K`` product components (see the module).

    Parameters
    ----------
    tree : DecisionTree
        Read through its public view ``tree.arrays``.
    columns : Columns
        The components' weights (see :func:`tree_walk`, which makes them).

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.engines._tree_walk import tree_walk
    >>> tree = kcxai.datasets.running_example_tree()
    >>> tree_walk(tree, tree.space.distribution.components).disagree((1, 1, 1, 1, 0, 0, 0, 0, 1), 1, frozenset({0, 8}))
    7
    """

    def __init__(self, tree: DecisionTree, columns: Columns[V]) -> None:
        self.columns: Columns[V] = columns
        cols = columns
        arrays = tree.arrays
        self._feat = feat = arrays.feature
        self._labels = arrays.label
        self._root = arrays.root
        n = len(feat)
        full = tuple((1 << f.size) - 1 for f in tree.space.features)
        # Per node: the values A its ancestors allow for its tested feature and w(A), its reachable branches,
        # the bitmask of the features tested in its subtree and of the classes of the leaves below it, and
        # its region's weight R (reached nodes only; a node no point reaches keeps 0).
        self._allowed = [0] * n
        self._w_allowed: list[V] = [cols.one] * n
        self._branches: list[tuple[tuple[int, int, V], ...]] = [()] * n
        self._tested = [0] * n
        self._classes = [0] * n
        region: list[V] = [cols.zero] * n
        region[arrays.root] = cols.vec([pw.total for pw in cols.pws])
        div = cols.div
        order: list[int] = []
        stack = [(arrays.root, full)]
        while stack:
            nid, allowed = stack.pop()
            order.append(nid)
            f = feat[nid]
            if f < 0:
                continue
            a = self._allowed[nid] = allowed[f]
            wa = self._w_allowed[nid] = cols.mask_weight(f, a)
            out = []
            for mask, child in arrays.branches[nid]:
                m = a & mask
                if m:
                    wm = cols.mask_weight(f, m)
                    out.append((child, m, wm))
                    region[child] = div(region[nid], wa) * wm
                    stack.append((child, allowed[:f] + (m,) + allowed[f + 1:]))
            self._branches[nid] = tuple(out)
        self._order = order
        for nid in reversed(order):  # children before parents
            if feat[nid] < 0:
                self._classes[nid] = 1 << arrays.label[nid]
                continue
            tested, classes = 1 << feat[nid], 0
            for child, _, _ in self._branches[nid]:
                tested |= self._tested[child]
                classes |= self._classes[child]
            self._tested[nid], self._classes[nid] = tested, classes
        self._region: list[V] = region
        self._others: dict[int, list[V]] = {}
        self._active: dict[int, list[bool]] = {}
        #: per class, (active, others): what a query reads, in one look-up
        self._per_label: dict[int, tuple[list[bool], list[V]]] = {}
        #: whether an answer is its one column's weight (one component, coefficient 1): no combining
        self._plain = cols.k == 1 and cols.coefficients == (1,)

    @property
    def regions(self) -> list[list[Weight]]:
        """Per component, per node: the exact weight of the node's region (0 where no point reaches it)."""
        per_node = [self.columns.entries(r) for r in self._region]
        return [list(col) for col in zip(*per_node)]

    def others(self, label: int) -> list[V]:
        """Per node, ``O_k(node, label)``: the weight of its region that other classes cover (kept per class)."""
        got = self._others.get(label)
        if got is None:
            feat, labels, branches = self._feat, self._labels, self._branches
            zero = self.columns.zero
            got = [r if f < 0 and c != label else zero for r, f, c in zip(self._region, feat, labels)]
            for nid in reversed(self._order):
                if feat[nid] >= 0:
                    total = zero
                    for child, _, _ in branches[nid]:
                        total = total + got[child]
                    got[nid] = total
            self._others[label] = got
        return got

    def active(self, label: int) -> list[bool]:
        """Per node, whether a leaf of another class than ``label`` lies below it (kept per class)."""
        got = self._active.get(label)
        if got is None:
            mine = 1 << label
            got = self._active[label] = [c & ~mine != 0 for c in self._classes]
        return got

    # -- queries ------------------------------------------------------------------------------

    def disagree(self, point: Point, label: int, fixed: frozenset[int], budget: int = -1) -> Weight | None:
        """The weight of ``{x : kappa(x) != label, x_S = v_S}`` under the distribution (``sum_k c_k`` of the
        components'), or ``None`` when the walk would visit more than ``budget`` nodes (``budget >= 0``).

        A run of frontier nodes reached with the same factor is summed before its one division."""
        cols = self.columns
        div = cols.div
        smask, kv, pf = cols.fixed_factors(point, fixed)
        feat, branches, w_allowed, tested = self._feat, self._branches, self._w_allowed, self._tested
        per_label = self._per_label.get(label)
        if per_label is None:
            per_label = self._per_label[label] = (self.active(label), self.others(label))
        active, others = per_label
        total: V = cols.zero
        run: V | None = None
        run_pf = pf
        stack = [(self._root, pf)]
        while stack:
            nid, pf = stack.pop()
            budget -= 1
            if budget == -1:
                return None
            if not active[nid]:  # every point below has class `label`
                continue
            if not tested[nid] & smask:
                if run is None:
                    run, run_pf = others[nid], pf
                elif pf is run_pf:
                    run = run + others[nid]
                else:
                    total = total + div(run, run_pf)
                    run, run_pf = others[nid], pf
                continue
            f = feat[nid]
            if smask >> f & 1:
                bit = 1 << point[f]
                for child, m, wm in branches[nid]:
                    if m & bit:
                        stack.append((child, div(pf, w_allowed[nid]) * wm))
                        break
            else:
                for child, _, _ in branches[nid]:
                    stack.append((child, pf))
        if run is None:
            return cols.arith.zero
        weight = (total + div(run, run_pf)) * kv
        if self._plain:
            return weight  # type: ignore[return-value]  # (one column: V is the Weight itself)
        return cols.combine(weight)

    def box(self, box: Box, label: int, split: int) -> dict[int, list[Weight]]:
        """Per component, the weight of ``{x in box : kappa(x) != label}``, kept apart by the values of
        ``split`` (a feature, or ``-1``: none) that the frontier nodes allow: ``{mask: [weight_k, ...]}`` (the
        one mask ``0`` when ``split < 0``; no entry where no point of another class lies in the box).

        The constrained features are those whose box is not their whole domain (but ``split``); a frontier
        node weighs ``O_k(n, c) prod_g w_k(A_g(n) & B_g) / w_k(A_g(n))``."""
        cols = self.columns
        div, weigh = cols.div, cols.mask_weight
        full = [(1 << len(ws)) - 1 for ws in cols.pws[0].weights]
        cmask = 0 if split < 0 else 1 << split
        num = den = cols.one
        for g, b in enumerate(box):
            if g != split and b != full[g]:
                cmask |= 1 << g
                num = num * weigh(g, b)
                den = den * cols.totals[g]
        feat, branches, w_allowed, allowed, tested = (self._feat, self._branches, self._w_allowed, self._allowed,
                                                      self._tested)
        active, others = self.active(label), self.others(label)
        out: dict[int, V] = {}
        # runs of frontier nodes reached with the same factors and split values: summed, then divided once
        run: V | None = None
        run_key = (num, den, 0)
        stack = [(self._root, num, den, full[split] if split >= 0 else 0)]
        while stack:
            nid, num, den, am = stack.pop()
            if not active[nid]:
                continue
            if not tested[nid] & cmask:
                if run is not None and num is run_key[0] and den is run_key[1] and am == run_key[2]:
                    run = run + others[nid]
                else:
                    if run is not None:
                        _add_to(out, run_key[2], div(run, run_key[1]) * run_key[0])
                    run, run_key = others[nid], (num, den, am)
                continue
            f = feat[nid]
            if f == split:
                for child, m, _ in branches[nid]:
                    stack.append((child, num, den, m))
            elif cmask >> f & 1:
                b = box[f]
                w_ab = weigh(f, allowed[nid] & b)
                for child, m, wm in branches[nid]:
                    mb = m & b
                    if mb:
                        stack.append((child, div(num, w_ab) * weigh(f, mb), div(den, w_allowed[nid]) * wm, am))
            else:
                for child, _, _ in branches[nid]:
                    stack.append((child, num, den, am))
        if run is not None:
            _add_to(out, run_key[2], div(run, run_key[1]) * run_key[0])
        return {mask: cols.entries(v) for mask, v in out.items()}


def _add_to(acc: dict[int, V], key: int, x: V) -> None:
    got = acc.get(key)
    acc[key] = x if got is None else got + x


#: A tree walk of any number type (see :func:`~kcxai.compilers._tables.vectors.number_kind`).
AnyTreeWalk = Union[TreeWalk[int], TreeWalk[float], TreeWalk[WeightVector]]


def tree_walk(tree: DecisionTree, components: Sequence[Component]) -> AnyTreeWalk:
    """The walk of ``tree`` under ``components`` (``space.distribution.components``): all of them at once, with
    Python numbers for one component and :class:`~kcxai.compilers._tables.vectors.WeightVector` for more."""
    kind = number_kind(components)
    if kind == "vector":
        return TreeWalk(tree, Columns(components, vector_type(len(components))))
    if kind == "int":
        return TreeWalk(tree, Columns(components, as_int))
    return TreeWalk(tree, Columns(components, as_float))
