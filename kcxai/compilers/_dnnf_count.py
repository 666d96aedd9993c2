"""Exact weighted model counting with conditioning on the d-DNNFs compiled from a model's circuit.

The d-DNNF (from d4, :mod:`kcxai.compilers._d4`) is over the circuit's variables
(:mod:`kcxai.compilers._cnf`). Every variable weighs 1 in both polarities except the *weighted* ones: the
value indicators of the features, whose weights are the product distribution's, and the class
selectors (exactly one holds, the model's class): a count of the classes in a set gives the other
selectors weight 0. A node's value is the weighted count of its
models over the weighted variables below it:

* ``t``: 1; ``f``: 0;
* an AND node: the product of its edges' values (decomposable: the edges share no variable);
* an OR node: the sum of its edges' values (deterministic: their models are disjoint), each edge
  multiplied by ``w(x) + w(not x)`` for every weighted variable of the node that the edge does not
  mention (smoothing: the edge's models are free on it);
* an edge: its child's value times the weights of its weighted literals.

The count is the root's value times ``w(x) + w(not x)`` for the weighted variables the root does not
mention. Unweighted variables (gates, ladder variables) weigh 1 as literals and 1 when left free. That is
exact because the value indicators determine all the others (every gate is defined from the features,
the selector is the class): each point of feature space is one model, and d4 may drop a gate whose
output no longer matters (its circuit mode's gate removal) without changing the count. The compilation
checks it: the count with every weight 1 must be d4's model count and the number of points. With the
space's integer weights every number is a Python ``int``; with float weights, a ``float``.

Conditioning ``x_f = v_f`` sets the weight of every other value's indicator to 0, so that nothing is
compiled again: a query is one traversal. A deletion-loop session (:class:`DnnfSession`) keeps the
node values of its fixed set and, when a feature is freed, recomputes only the nodes whose variables
include that feature's (:meth:`DnnfCircuit.affected`).

References
----------
A. Darwiche. On the tractable counting of theory models and its application to truth maintenance and
belief revision. Journal of Applied Non-Classical Logics, 2001 (counting on d-DNNF, smoothing).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Container, Iterable, Mapping, Sequence

from kcxai._errors import BackendError
from kcxai.arithmetic import Weight
from kcxai.compilers._d4 import Dnnf
from kcxai.distribution import ProductWeights
from kcxai.oracle import Box, CountingOracle, OracleSession, SessionBase, box_weight
from kcxai.space import FeatureSpace
from kcxai._types import Point

__all__ = ["DnnfCircuit", "DnnfOracle", "DnnfMixtureOracle", "DnnfSession", "dnnf_oracle"]

#: Node kinds, as small ints.
_TRUE, _FALSE, _AND, _OR = 0, 1, 2, 3
_KIND = {"t": _TRUE, "f": _FALSE, "a": _AND, "o": _OR}
#: What freeing a feature changes in one circuit: the positive and negative literal weights, all the literal
#: weights, and every node's value.
_Change = tuple[dict[int, Weight], dict[int, Weight], dict[int, Weight], list[Weight]]

#: Features whose affected nodes a circuit keeps (:meth:`DnnfCircuit.affected`).
_AFFECTED_KEPT = 256


class DnnfCircuit:
    """A d-DNNF ready for weighted counting (see the module docstring): node kinds, edges with their
    weighted literals only, and the weighted variables each OR edge and the root leave free.

    Parameters
    ----------
    dnnf : Dnnf
    indicators : tuple of tuple of int
        Per feature, per value, the literal of its value indicator (:attr:`kcxai.compilers._cnf.Cnf.indicators`).
    selectors : tuple of int
        Per class, its selector variable (:attr:`kcxai.compilers._cnf.Cnf.selectors`).
    """

    def __init__(self, dnnf: Dnnf, indicators: Sequence[Sequence[int]], selectors: Sequence[int]) -> None:
        self.n_nodes = dnnf.n_nodes
        self.n_edges = dnnf.n_edges
        self.indicators = indicators
        self.selectors = tuple(selectors)
        self.weighted = sorted({abs(x) for ind in indicators for x in ind} | set(self.selectors))
        #: per feature, the bitset of its weighted variables (bit i: weighted variable number i)
        bit = {v: i for i, v in enumerate(self.weighted)}
        self.feature_bits = [sum(1 << bit[v] for v in {abs(x) for x in ind}) for ind in indicators]
        kinds = [_KIND[k] for k in dnnf.kinds]
        below: list[int] = []  # per node, its weighted variables (bitset)
        edges: list[tuple[tuple[int, tuple[int, ...], int], ...]] = []
        gaps: dict[int, int] = {}  # weighted variables left free (bitset) -> gap number
        for i, es in enumerate(dnnf.edges):
            sets = []
            for child, lits in es:
                wl = tuple(x for x in lits if abs(x) in bit)
                m = below[child]
                for x in wl:
                    if -x in wl:
                        raise BackendError(f"d4's d-DNNF has an edge with both literals of variable {abs(x)}")
                    m |= 1 << bit[abs(x)]
                sets.append((child, wl, m))
            m_all = 0
            for _, _, m in sets:
                m_all |= m
            below.append(m_all)
            edges.append(tuple((child, wl, gaps.setdefault(m_all & ~m, len(gaps)) if kinds[i] == _OR and m != m_all
                                else -1) for child, wl, m in sets))
        self.kinds = kinds
        self.edges = edges
        self.below = below
        self.root = dnnf.root
        self.gaps = [self._vars_of(m) for m, _ in sorted(gaps.items(), key=lambda kv: kv[1])]
        self.root_gap = self._vars_of(((1 << len(self.weighted)) - 1) & ~below[self.root])
        self._affected: OrderedDict[int, tuple[int, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def _vars_of(self, m: int) -> tuple[int, ...]:
        out = []
        while m:
            low = m & -m
            out.append(self.weighted[low.bit_length() - 1])
            m ^= low
        return tuple(out)

    def affected(self, feature: int) -> tuple[int, ...]:
        """The nodes whose value depends on ``feature``'s weights, children first (kept for the last
        :data:`_AFFECTED_KEPT` features asked)."""
        with self._lock:
            got = self._affected.get(feature)
            if got is not None:
                self._affected.move_to_end(feature)
                return got
        m = self.feature_bits[feature]
        got = tuple(i for i, b in enumerate(self.below) if b & m)
        with self._lock:
            self._affected[feature] = got
            while len(self._affected) > _AFFECTED_KEPT:
                self._affected.popitem(last=False)
        return got

    # -- evaluation ------------------------------------------------------------------------------

    def gap_factors(self, pos: Mapping[int, Weight], neg: Mapping[int, Weight], one: Weight) -> list[Weight]:
        """Per gap, the product of ``w(x) + w(not x)`` over its variables."""
        out = []
        for vs in self.gaps:
            f = one
            for v in vs:
                f *= pos[v] + neg[v]
            out.append(f)
        return out

    def evaluate(self, lw: Mapping[int, Weight], gapf: Sequence[Weight], one: Weight, val: list[Weight] | None = None,
                 nodes: Sequence[int] | None = None) -> list[Weight]:
        """Every node's value under the literal weights ``lw`` (a mapping from weighted literals); or, given
        ``val``, the values of ``nodes`` (children first) recomputed in it."""
        todo: Sequence[int] = range(self.n_nodes) if val is None or nodes is None else nodes
        if val is None:
            val = [one] * self.n_nodes
        zero = one * 0
        kinds, edges = self.kinds, self.edges
        for i in todo:
            kind = kinds[i]
            if kind == _OR:
                v = zero
                for child, lits, g in edges[i]:
                    x = val[child]
                    if x:
                        for lit in lits:
                            x *= lw[lit]
                        if g >= 0:
                            x *= gapf[g]
                        v += x
            elif kind == _AND:
                v = one
                for child, lits, _ in edges[i]:
                    x = val[child]
                    if not x:
                        v = zero
                        break
                    for lit in lits:
                        x *= lw[lit]
                    v *= x
            else:
                v = one if kind == _TRUE else zero
            val[i] = v
        return val

    def unit_count(self) -> int:
        """The number of models (every weighted literal weighing 1): d4's count, checked."""
        pos = {v: 1 for v in self.weighted}
        lw: dict[int, Weight] = {**pos, **{-v: 1 for v in self.weighted}}  # every class counted
        val = self.evaluate(lw, self.gap_factors(pos, pos, 1), 1)
        return int(self.top(val, pos, pos, 1))

    def top(self, val: Sequence[Weight], pos: Mapping[int, Weight], neg: Mapping[int, Weight], one: Weight) -> Weight:
        """The count: the root's value times the factors of what the root leaves free."""
        out = val[self.root]
        for v in self.root_gap:
            out *= pos[v] + neg[v]
        return out


class _Weights:
    """The weights of the weighted literals for one query: value indicators under a product distribution with
    some features fixed (or restricted to a box), the selectors of the classes counted."""

    __slots__ = ("pos", "neg", "one")

    def __init__(self, circuit: DnnfCircuit, pw: ProductWeights, masks: Sequence[int], labels: Iterable[int]) -> None:
        one = pw.arith.one
        zero = pw.arith.zero
        pos: dict[int, Weight] = {v: one for v in circuit.weighted}
        neg: dict[int, Weight] = dict(pos)
        for f, ind in enumerate(circuit.indicators):
            ws = pw.weights[f]
            mask = masks[f]
            if len(ind) == 2:  # a binary feature's variable: value 1 positive, value 0 negative
                x = abs(ind[1])
                p, n = (ws[1] if mask & 2 else zero), (ws[0] if mask & 1 else zero)
                if ind[1] < 0:
                    p, n = n, p
                pos[x], neg[x] = p, n
            else:
                for k, lit in enumerate(ind):
                    w = ws[k] if mask >> k & 1 else zero
                    if lit > 0:
                        pos[lit] = w
                    else:
                        neg[-lit] = w
        counted = set(labels)
        for c, v in enumerate(circuit.selectors):
            if c not in counted:
                pos[v] = zero
        self.pos, self.neg, self.one = pos, neg, one

    def literals(self) -> dict[int, Weight]:
        """Weight by literal (positive and negative)."""
        out = dict(self.pos)
        out.update({-v: w for v, w in self.neg.items()})
        return out


class DnnfOracle:
    """The counting oracle of a model compiled to a d-DNNF under one product distribution.

    Attributes
    ----------
    language : str
        ``"ddnnf"``.
    space : FeatureSpace
    n_classes : int
    circuit : DnnfCircuit
    pw : ProductWeights
    """

    language = "ddnnf"

    def __init__(self, space: FeatureSpace, circuit: DnnfCircuit, pw: ProductWeights) -> None:
        self.space = space
        self.circuit = circuit
        self.pw = pw
        self.n_classes = len(circuit.selectors)
        self._full = tuple((1 << f.size) - 1 for f in space.features)

    def masks(self, point: Sequence[int], fixed: Container[int]) -> list[int]:
        """Per feature, the values allowed: ``point``'s on the fixed features, all on the others."""
        return [1 << point[f] if f in fixed else m for f, m in enumerate(self._full)]

    def class_count(self, masks: Sequence[int], labels: Iterable[int]) -> Weight:
        """The weight of ``{x : kappa(x) in labels, x_f in masks[f] for every f}``."""
        c = self.circuit
        w = _Weights(c, self.pw, masks, labels)
        return c.top(c.evaluate(w.literals(), c.gap_factors(w.pos, w.neg, w.one), w.one), w.pos, w.neg, w.one)

    def others(self, label: int) -> tuple[int, ...]:
        """The classes counted for ``disagree_weight``: ``(label,)`` in exact spaces (the weight is the consistent
        weight minus this class's), the other classes in float spaces (no cancellation)."""
        if self.pw.arith.exact:
            return (label,)
        return tuple(c for c in range(self.n_classes) if c != label)

    def disagree_from(self, consistent: Weight, count: Weight) -> Weight:
        """``disagree_weight`` from the consistent weight and the count of :meth:`others`."""
        return consistent - count if self.pw.arith.exact else count

    def predict_point(self, point: Point) -> int:
        masks = [1 << k for k in point]
        for c in range(self.n_classes - 1):  # the classes partition the space (checked when compiled)
            if self.class_count(masks, (c,)):
                return c
        return self.n_classes - 1

    def disagree_weight(self, point: Point, label: int, fixed: frozenset[int]) -> Weight:
        count = self.class_count(self.masks(point, fixed), self.others(label))
        return self.disagree_from(self.pw.consistent_weight(point, fixed), count)

    def session(self, point: Point, label: int, fixed: frozenset[int]) -> OracleSession:
        return DnnfSession(self, point, label, fixed)

    # -- boxes (the BoxOracle capability) -------------------------------------------------------------

    def box_weights(self, box: Box, label: int) -> tuple[Weight, Weight]:
        """``(disagree, consistent)`` weights of a box: indicators of the values outside it weigh 0."""
        consistent = box_weight(self.pw, box)
        if not consistent:
            return self.pw.arith.zero, self.pw.arith.zero
        return self.disagree_from(consistent, self.class_count(box, self.others(label))), consistent

    def box_weights_by_value(self, box: Box, label: int, feature: int) -> tuple[tuple[Weight, Weight], ...]:
        """Per value of ``feature``, :meth:`box_weights` with ``feature`` set to it."""
        return tuple(self.box_weights(box[:feature] + (1 << k,) + box[feature + 1:], label)
                     for k in range(self.space.features[feature].size))


class DnnfSession(SessionBase):
    """A deletion-loop session: the node values of the current fixed set; freeing a feature recomputes only the
    nodes whose variables include the feature's."""

    __slots__ = ("_o", "_point", "_fixed", "_circuits", "_parts", "_last", "_weight")

    def __init__(self, oracle: DnnfOracle, point: Point, label: int, fixed: frozenset[int]) -> None:
        self._o = oracle
        self._point = tuple(point)
        self._fixed = set(fixed)
        c = oracle.circuit
        w = _Weights(c, oracle.pw, oracle.masks(point, self._fixed), oracle.others(label))
        lw = w.literals()
        self._parts = [(w, lw, c.evaluate(lw, c.gap_factors(w.pos, w.neg, w.one), w.one))]
        self._circuits = [c]
        self._last: tuple[int, list[_Change], Weight] | None = None
        self._weight: Weight | None = None

    @property
    def fixed(self) -> frozenset[int]:
        return frozenset(self._fixed)

    def weight(self) -> Weight:
        if self._weight is None:
            o = self._o
            count = o.pw.arith.zero
            for c, (w, _, val) in zip(self._circuits, self._parts):
                count += c.top(val, w.pos, w.neg, w.one)
            self._weight = o.disagree_from(o.pw.consistent_weight(self._point, self._fixed), count)
        return self._weight

    def weight_if_freed(self, feature: int) -> Weight:
        if feature not in self._fixed:
            return self.weight()
        last = self._last
        if last is not None and last[0] == feature:
            return last[2]
        o = self._o
        count = o.pw.arith.zero
        changes = []
        for c, (w, lw, val) in zip(self._circuits, self._parts):
            nodes = c.affected(feature)
            pos, neg = dict(w.pos), dict(w.neg)
            _free_weights(c, o.pw, feature, pos, neg)
            lw2 = dict(lw)
            lw2.update(pos)
            lw2.update({-v: x for v, x in neg.items()})
            gapf2 = c.gap_factors(pos, neg, w.one)
            val2 = c.evaluate(lw2, gapf2, w.one, val.copy(), nodes)
            count += c.top(val2, pos, neg, w.one)
            changes.append((pos, neg, lw2, val2))
        fixed = self._fixed - {feature}
        result = o.disagree_from(o.pw.consistent_weight(self._point, fixed), count)
        self._last = (feature, changes, result)
        return result

    def free(self, feature: int) -> None:
        if feature not in self._fixed:
            return
        if self._last is None or self._last[0] != feature:
            self.weight_if_freed(feature)
        _, changes, result = self._last  # type: ignore[misc]
        parts = []
        for (w, _, _), (pos, neg, lw2, val2) in zip(self._parts, changes):
            w2 = _Weights.__new__(_Weights)
            w2.pos, w2.neg, w2.one = pos, neg, w.one
            parts.append((w2, lw2, val2))
        self._parts = parts
        self._fixed.discard(feature)
        self._weight = result
        self._last = None


def _free_weights(c: DnnfCircuit, pw: ProductWeights, feature: int, pos: dict[int, Weight],
                  neg: dict[int, Weight]) -> None:
    """Set ``feature``'s indicator weights to those of a free feature."""
    ind = c.indicators[feature]
    ws = pw.weights[feature]
    one = pw.arith.one
    if len(ind) == 2:
        x = abs(ind[1])
        pos[x], neg[x] = (ws[1], ws[0]) if ind[1] > 0 else (ws[0], ws[1])
    else:
        for k, lit in enumerate(ind):
            if lit > 0:
                pos[lit], neg[lit] = ws[k], one
            else:
                neg[-lit], pos[-lit] = ws[k], one


class DnnfMixtureOracle:
    """``sum_k c_k * oracle_k`` under a mixture: one :class:`DnnfOracle` per product component, on one circuit
    (a d-DNNF counts one product of literal weights per pass)."""

    def __init__(self, space: FeatureSpace, parts: Sequence[tuple[Weight, DnnfOracle]]) -> None:
        self.space = space
        self.parts = tuple(parts)
        self.language = "ddnnf"
        self.n_classes = self.parts[0][1].n_classes

    def _sum(self, weights: Iterable[tuple[Weight, Weight]]) -> Weight:
        total = self.space.arith.zero
        for c, w in weights:
            total += c * w
        return total

    def predict_point(self, point: Point) -> int:
        return self.parts[0][1].predict_point(point)

    def disagree_weight(self, point: Point, label: int, fixed: frozenset[int]) -> Weight:
        return self._sum((c, o.disagree_weight(point, label, fixed)) for c, o in self.parts)

    def session(self, point: Point, label: int, fixed: frozenset[int]) -> OracleSession:
        return _MixtureSession(self, [(c, o.session(point, label, fixed)) for c, o in self.parts])

    def box_weights(self, box: Box, label: int) -> tuple[Weight, Weight]:
        got = [(c, o.box_weights(box, label)) for c, o in self.parts]
        return self._sum((c, w[0]) for c, w in got), self._sum((c, w[1]) for c, w in got)

    def box_weights_by_value(self, box: Box, label: int, feature: int) -> tuple[tuple[Weight, Weight], ...]:
        size = self.space.features[feature].size
        return tuple(self.box_weights(box[:feature] + (1 << k,) + box[feature + 1:], label) for k in range(size))


class _MixtureSession(SessionBase):
    """The deletion-loop session of a :class:`DnnfMixtureOracle`: one session per component."""

    __slots__ = ("_o", "_parts")

    def __init__(self, oracle: DnnfMixtureOracle, parts: Sequence[tuple[Weight, OracleSession]]) -> None:
        self._o = oracle
        self._parts = tuple(parts)

    @property
    def fixed(self) -> frozenset[int]:
        return self._parts[0][1].fixed

    def weight(self) -> Weight:
        return self._o._sum((c, s.weight()) for c, s in self._parts)

    def weight_if_freed(self, feature: int) -> Weight:
        return self._o._sum((c, s.weight_if_freed(feature)) for c, s in self._parts)

    def free(self, feature: int) -> None:
        for _, s in self._parts:
            s.free(feature)


def dnnf_oracle(space: FeatureSpace, circuit: DnnfCircuit) -> CountingOracle:
    """The oracle of ``space``'s distribution: a :class:`DnnfOracle` for a product, else one per component."""
    comps = space.distribution.components
    if len(comps) == 1 and comps[0][0] == 1:
        return DnnfOracle(space, circuit, comps[0][1])
    return DnnfMixtureOracle(space, [(c, DnnfOracle(space, circuit, pw)) for c, pw in comps])
