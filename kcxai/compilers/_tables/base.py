"""What the two diagram tables share: the structure's units, and one counting walk over ``K`` weight columns.

See :mod:`kcxai.compilers._tables.wmc` for the recursions. A table (:class:`Table`) is the diagram's
structure only; a :class:`Counter` is a table with the weight columns it counts in
(:class:`~kcxai.compilers._tables.vectors.Columns`: one per component of the distribution, or the
components masked to a box), and answers every count two ways, with the same numbers:

* a *walk* of the nodes the fixed features leave reachable, each node's value a vector of ``K`` weights
  (a Python number when ``K = 1``), recursively (:meth:`Counter.walk`);
* on large diagrams with several free features, whole *units* at once with numpy (a level of the OBDD
  table, every node over one vtree node of the SDD table), a ``(nodes, K)`` array per unit, where the
  counts fit its arithmetic (:meth:`Counter.unit_values`).

Both are parameterised by the values of the *terminals*: ``FALSE`` weighs 0 and ``TRUE`` 1 in every
column by default, but a walk may be given any value per terminal and column (a diagram with more
terminals counts the same way). A value ``None`` is the zero vector: a node that reaches no terminal
of nonzero value weighs ``None``, so the walk skips its products.

A node's value only depends on the factors of the features below it, grouped by *unit* (a level, or a
vtree node): :class:`UnitValues` holds what a walk computed for one fixed set, per unit, so that a
deletion-loop session asking about freeing a feature recomputes only the units above it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from enum import Enum
from typing import Final, Generic, Union

import numpy as np

from kcxai._types import Point
from kcxai.arithmetic import Weight
from kcxai.compilers._tables.inline import inline_vectors
from kcxai.compilers._tables.vectors import (
    UNROLLED_MAX,
    Array,
    Columns,
    Component,
    V,
    WeightVector,
    as_float,
    as_int,
    number_kind,
    vector_type,
)
from kcxai.oracle import Box, SessionBase
from kcxai.space import FeatureSpace

__all__ = ["Table", "Counter", "DiagramSession", "UnitValues", "FALSE", "TRUE", "recursion", "VECTOR_MIN_NODES",
           "RECURSIVE_MAX_FREE", "counter_for", "AnyCounter", "MISSING", "RECURSION_MARGIN"]

FALSE = 0
TRUE = 1

#: Diagrams with at least this many internal nodes count whole units with numpy (below it, the walk visits
#: few enough nodes to be cheaper than numpy's per-call cost).
VECTOR_MIN_NODES = 2000
#: With at most this many free features, a query reaches few nodes: the walk, which visits only those, beats
#: numpy's whole units even on a large diagram.
RECURSIVE_MAX_FREE = 3
#: The Python calls a walk leaves for its callers, above its own depth.
RECURSION_MARGIN = 200


class _Missing(Enum):
    MISSING = 0


#: What a walk's store of node values returns for a node it does not hold (``None`` is a node of weight 0).
MISSING: Final = _Missing.MISSING


@contextmanager
def recursion(depth: int) -> Iterator[None]:
    """Allow at least ``depth`` nested Python calls (restored afterwards)."""
    old = sys.getrecursionlimit()
    need = depth + RECURSION_MARGIN
    if need > old:
        sys.setrecursionlimit(need)
    try:
        yield
    finally:
        if need > old:
            sys.setrecursionlimit(old)


class Table:
    """What both tables share: the diagram's structure, grouped into units.

    Attributes
    ----------
    space : FeatureSpace
    roots : list of int
        Per class, the root of ``kappa(x) = c``.
    n_units : int
    units_of : list of tuple of int
        Per feature, the units whose values depend on it (freeing it changes them).
    depth : int
        The recursion depth a walk may need.
    """

    space: FeatureSpace
    roots: list[int]
    n_units: int
    units_of: list[tuple[int, ...]]
    depth: int

    @property
    def n_nodes(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def holds(self, label: int, point: Sequence[int]) -> bool:  # pragma: no cover - abstract
        """Whether class ``label``'s function holds at ``point``."""
        raise NotImplementedError

    def counter(self, columns: Columns[V]) -> "Counter[V]":  # pragma: no cover - abstract
        """The table counting in ``columns``."""
        raise NotImplementedError


class UnitValues(Generic[V]):
    """What the walks computed for one fixed set, per unit: node values (the recursive walk) and whole unit
    arrays (numpy), with the numpy node array they were last copied into (shared by the queries of a session).

    A unit's node values and its array are both for the same fixed set; either may be missing. The node values
    are the walk's own (plain tuples of ``K`` weights where the walk runs with its vector operations inline:
    :mod:`kcxai.compilers._tables.inline`); only walks read them."""

    __slots__ = ("nodes", "arrays", "scratch")

    def __init__(self, n_units: int) -> None:
        self.nodes: list[dict[int, V | None]] = [{} for _ in range(n_units)]
        self.arrays: list[Array | None] = [None] * n_units
        #: the node array of the last numpy query, and per unit the array last copied into it
        self.scratch: list[tuple[Array, list[Array | None]]] = []

    def with_fresh(self, units: Sequence[int]) -> "UnitValues[V]":
        """These values with ``units`` emptied (for a query whose fixed set differs on them)."""
        out: UnitValues[V] = UnitValues.__new__(UnitValues)
        out.nodes = list(self.nodes)
        out.arrays = list(self.arrays)
        out.scratch = self.scratch
        for u in units:
            out.nodes[u] = {}
            out.arrays[u] = None
        return out


class Counter(Generic[V]):
    """A table with the weight columns it counts in (see the module): the walk written once for any ``K``.

    Subclasses give the recursive walk, the units in evaluation order (children first) with the node ids each
    computes, one unit's values and a root's value with numpy. Every public method answers plain weights
    under the distribution (``sum_k c_k`` of the columns').
    """

    table: Table
    columns: Columns[V]
    #: the units in evaluation order (children first)
    order_units: list[int]

    def __init__(self, table: Table, columns: Columns[V]) -> None:
        self.table = table
        self.columns = columns
        self.n_features = table.space.n_features
        self._terminals: dict[int, V | None] = {FALSE: None, TRUE: columns.one}
        #: per feature in some pair, the pairs it is in
        self._members: list[tuple[int, Array]] | None = None
        self._n_pairs = 0
        #: :meth:`walk` as :meth:`counts` runs it: compiled with its vector operations inline for vectors of up to
        #: ``UNROLLED_MAX`` components, as written for numbers and longer vectors
        self.walk_function: Callable[..., V | None] = type(self).walk
        if isinstance(columns.one, WeightVector) and columns.k <= UNROLLED_MAX:
            self.walk_function = inline_vectors(type(self).walk, columns.k, type(columns.one))

    def factors(self, point: Sequence[int], isfixed: Sequence[bool]) -> list[V]:
        """Per feature, its factor: ``w_k(v_f)`` if fixed, ``Z_k(f)`` if free."""
        values, totals = self.columns.values, self.columns.totals
        return [values[f][point[f]] if x else totals[f] for f, x in enumerate(isfixed)]

    def new_values(self) -> UnitValues[V]:
        """Empty unit values (nothing computed yet)."""
        return UnitValues(self.table.n_units)

    def counts(self, labels: Sequence[int], point: Sequence[int], isfixed: Sequence[bool], values: UnitValues[V],
               terminals: Mapping[int, V | None] | None = None) -> V | None:
        """Per column, the weight of ``{x : kappa(x) in labels, x_S = v_S}`` (``None``: 0 in every column), the
        terminals weighing ``terminals`` (default: ``FALSE`` 0 and ``TRUE`` 1 in every column).

        ``values`` holds what is known for this fixed set and receives what is computed. Queries on diagrams of
        fewer than :data:`VECTOR_MIN_NODES` internal nodes, with at most :data:`RECURSIVE_MAX_FREE` free
        features, and all of them when the counts do not fit numpy's arithmetic, walk the reachable nodes; the
        others compute whole units with numpy.
        """
        term = self._terminals if terminals is None else terminals
        if self.table.n_nodes < VECTOR_MIN_NODES or not self.columns.fits_arrays or \
                len(isfixed) - sum(isfixed) <= RECURSIVE_MAX_FREE:
            fac = self.factors(point, isfixed)
            if self.table.depth + RECURSION_MARGIN <= sys.getrecursionlimit():  # (most diagrams: no limit to raise)
                return self.walk_function(self, labels, point, isfixed, fac, values.nodes, term)
            with recursion(self.table.depth):
                return self.walk_function(self, labels, point, isfixed, fac, values.nodes, term)
        return self.columns.from_row(self.array_counts(labels, point, isfixed, values, term))

    def weight(self, labels: Sequence[int], point: Sequence[int], isfixed: Sequence[bool],
               values: UnitValues[V] | None = None) -> Weight:
        """The weight of ``{x : kappa(x) in labels, x_S = v_S}`` under the distribution."""
        count = self.counts(labels, point, isfixed, self.new_values() if values is None else values)
        return self.columns.arith.zero if count is None else self.columns.combine(count)

    def disagree(self, labels: Sequence[int], point: Sequence[int], isfixed: Sequence[bool],
                 values: UnitValues[V] | None = None) -> Weight:
        """``disagree_weight`` from the count of ``labels``: the consistent weight minus the count (exact
        spaces: ``labels`` is the instance's class) or the count itself (float spaces: the other classes)."""
        counted = self.weight(labels, point, isfixed, values)
        if not self.columns.exact:
            return counted
        return self.columns.consistent_at(point, isfixed) - counted

    def session(self, point: Point, labels: Sequence[int], fixed: frozenset[int]) -> "DiagramSession[V]":
        """A deletion-loop session counting ``labels`` (see :meth:`disagree`)."""
        return DiagramSession(self, point, labels, fixed)

    def box_weights(self, box: Box, labels: Sequence[int]) -> tuple[Weight, Weight]:
        """``(disagree, consistent)`` weights of a box: the same count in the columns masked to the box."""
        masked = self.table.counter(self.columns.masked(box))
        free = (0,) * self.n_features
        isfixed = [False] * self.n_features
        consistent = masked.columns.consistent_at(free, isfixed)
        if not consistent:
            return masked.columns.arith.zero, consistent
        return masked.disagree(labels, free, isfixed), consistent

    def box_weights_by_value(self, box: Box, labels: Sequence[int], feature: int) -> tuple[tuple[Weight, Weight], ...]:
        """Per value of ``feature``, the box's weights with ``feature`` set to it: the masked columns counted with
        ``feature`` fixed to each value in turn, recomputing only the units above it (as a session does)."""
        size = self.table.space.features[feature].size
        masked = self.table.counter(self.columns.masked(box[:feature] + ((1 << size) - 1,) + box[feature + 1:]))
        isfixed = [f == feature for f in range(self.n_features)]
        values = masked.new_values()
        out = []
        for k in range(size):
            point = (0,) * feature + (k,) + (0,) * (self.n_features - feature - 1)
            here = values if k == 0 else values.with_fresh(self.table.units_of[feature])
            out.append((masked.disagree(labels, point, isfixed, here), masked.columns.consistent_at(point, isfixed)))
        return tuple(out)

    def walk(self, labels: Sequence[int], point: Sequence[int], isfixed: Sequence[bool], fac: Sequence[V],
             stores: list[dict[int, V | None]], terminals: Mapping[int, V | None]) -> V | None:  # pragma: no cover
        """:meth:`counts` by a walk of the reachable nodes (``stores[u]``: unit ``u``'s node values).

        Every binary ``+``, ``-`` and ``*`` of a walk is an operation on vectors: :meth:`counts` runs the walk
        compiled with them written out entry by entry (:func:`~kcxai.compilers._tables.inline.inline_vectors`).
        """
        raise NotImplementedError

    # -- numpy ---------------------------------------------------------------------------------
    #
    # The arrays are flat and component-major: a quantity per node (or pair, or edge) and column is one array
    # whose block ``k`` holds column ``k`` (``x[k * n + i]``), so that every gather, product and segment sum is
    # one numpy call over all columns at once (``K = 1``: the plain one-dimensional arrays).

    def spread(self, idx: Array, stride: int) -> Array:
        """Indices ``idx`` into a per-column quantity of ``stride`` entries, for every column (flat layout)."""
        k = self.columns.k
        if k == 1:
            return idx
        spread: Array = (idx[None, :] + (np.arange(k, dtype=np.int64) * stride)[:, None]).ravel()
        return spread

    def flat(self, rows: Array) -> Array:
        """A ``(n, K)`` array in the flat layout (column ``k``'s entries in block ``k``)."""
        flat: Array = np.ascontiguousarray(rows.T).ravel()
        return flat

    def pair_members(self) -> list[tuple[int, ...]]:  # pragma: no cover - abstract
        """The sets of features whose factors multiply an edge (skip or smoothing *pairs*; pair 0: none)."""
        raise NotImplementedError

    def unit_values(self, u: int, val: Array, sm: Array, point: Sequence[int], isfixed: Sequence[bool],
                    fac: Array) -> Array:  # pragma: no cover - abstract
        """Unit ``u``'s node values (flat), from ``val`` (every node's values, flat), ``sm`` (every pair's product,
        flat) and ``fac`` (per feature, its factor in each column: ``(features, K)``)."""
        raise NotImplementedError

    def root_value(self, label: int, val: Array, sm: Array) -> Array:  # pragma: no cover - abstract
        """The weight of ``kappa(x) = label`` per column (``K`` entries), from the roots' values."""
        raise NotImplementedError

    def pair_products(self, fac: Array) -> Array:
        """Per pair, the product of the factors of its features, as a ``(pairs, K)`` array."""
        cols = self.columns
        if self._members is None:
            pairs = self.pair_members()
            rows: list[list[int]] = [[] for _ in range(self.n_features)]
            for p, feats in enumerate(pairs):
                for f in feats:
                    rows[f].append(p)
            self._members = [(f, np.asarray(r, dtype=np.int64)) for f, r in enumerate(rows) if r]
            self._n_pairs = len(pairs)
        out: Array = np.ones((self._n_pairs, cols.k), dtype=cols.array_dtype)
        for f, inside in self._members:
            out[inside] *= fac[f]
        return out

    def array_counts(self, labels: Sequence[int], point: Sequence[int], isfixed: Sequence[bool],
                     values: UnitValues[V], terminals: Mapping[int, V | None]) -> Array:
        """:meth:`counts` with numpy, a unit at a time, every column at once: the ``K`` counts."""
        cols = self.columns
        n_ids = self.n_ids()
        fac = cols.factor_array(point, isfixed)
        sm = self.flat(self.pair_products(fac))
        if not values.scratch:
            val: Array = np.zeros(n_ids * cols.k, dtype=cols.array_dtype)
            values.scratch.append((val, [None] * len(values.arrays)))
        val, copied = values.scratch[0]
        for t, x in terminals.items():
            val[t::n_ids] = 0 if x is None else cols.row(x)
        unit_ids = self.unit_ids()
        for u in self.order_units:
            ids = unit_ids[u]
            if not len(ids):
                continue
            got = values.arrays[u]
            if got is None:
                got = values.arrays[u] = self.unit_values(u, val, sm, point, isfixed, fac)
            if copied[u] is not got:
                val[ids] = got
                copied[u] = got
        total: Array = np.zeros(cols.k, dtype=cols.array_dtype)
        for label in labels:
            total = total + self.root_value(label, val, sm)
        return total

    def n_ids(self) -> int:  # pragma: no cover - abstract
        """The number of node ids (entries per column of the node array)."""
        raise NotImplementedError

    def unit_ids(self) -> list[Array]:  # pragma: no cover - abstract
        """Per unit, where its node values go in the flat node array (:meth:`spread` of its node ids)."""
        raise NotImplementedError


class DiagramSession(SessionBase, Generic[V]):
    """Incremental deletion-loop session of a counter: recompute only the units above the feature freed."""

    __slots__ = ("_counter", "_point", "_labels", "_isfixed", "_values", "_last", "_weight")

    def __init__(self, counter: Counter[V], point: Point, labels: Sequence[int], fixed: frozenset[int]) -> None:
        self._counter: Counter[V] = counter
        self._point = tuple(point)
        self._labels = tuple(labels)
        self._isfixed = [f in fixed for f in range(counter.n_features)]
        self._values: UnitValues[V] = counter.new_values()
        #: the last weight_if_freed: the feature, what it computed, its weight
        self._last: tuple[int, UnitValues[V], Weight] | None = None
        self._weight: Weight | None = None

    @property
    def fixed(self) -> frozenset[int]:
        return frozenset(f for f, x in enumerate(self._isfixed) if x)

    def weight(self) -> Weight:
        if self._weight is None:
            self._weight = self._counter.disagree(self._labels, self._point, self._isfixed, self._values)
        return self._weight

    def weight_if_freed(self, feature: int) -> Weight:
        if not self._isfixed[feature]:
            return self.weight()
        last = self._last
        if last is not None and last[0] == feature:
            return last[2]
        isfixed = list(self._isfixed)
        isfixed[feature] = False
        values = self._values.with_fresh(self._counter.table.units_of[feature])
        w = self._counter.disagree(self._labels, self._point, isfixed, values)
        self._last = (feature, values, w)
        return w

    def free(self, feature: int) -> None:
        if not self._isfixed[feature]:
            return
        last = self._last
        if last is not None and last[0] == feature:  # keep what weight_if_freed computed
            self._values, self._weight = last[1], last[2]
        else:
            self._values = self._values.with_fresh(self._counter.table.units_of[feature])
            self._weight = None
        self._last = None
        self._isfixed[feature] = False


#: A counter of any number type (see :func:`~kcxai.compilers._tables.vectors.number_kind`).
AnyCounter = Union[Counter[int], Counter[float], Counter[WeightVector]]


def counter_for(table: Table, components: Sequence[Component]) -> AnyCounter:
    """``table`` counting under ``components`` (``space.distribution.components``): all of them in one walk,
    with Python numbers for one component and :class:`~kcxai.compilers._tables.vectors.WeightVector` for more."""
    kind = number_kind(components)
    if kind == "vector":
        return table.counter(Columns(components, vector_type(len(components))))
    if kind == "int":
        return table.counter(Columns(components, as_int))
    return table.counter(Columns(components, as_float))
