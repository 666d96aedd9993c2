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
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import numpy as np

from kcxai.compilers._tables.vectors import Array, Columns, Vec
from kcxai.space import FeatureSpace

__all__ = ["Table", "Counter", "UnitValues", "FALSE", "TRUE", "recursion", "Terminals", "VECTOR_MIN_NODES",
           "RECURSIVE_MAX_FREE"]

FALSE = 0
TRUE = 1

#: Per terminal node, its value in each column (``None``: 0 in every column).
Terminals = Mapping[int, "Vec | None"]

#: Diagrams with at least this many internal nodes count whole units with numpy (below it, the walk visits
#: few enough nodes to be cheaper than numpy's per-call cost).
VECTOR_MIN_NODES = 2000
#: With at most this many free features, a query reaches few nodes: the walk, which visits only those, beats
#: numpy's whole units even on a large diagram.
RECURSIVE_MAX_FREE = 3


@contextmanager
def recursion(depth: int) -> Iterator[None]:
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

    def counter(self, columns: Columns) -> "Counter":  # pragma: no cover - abstract
        """The table counting in ``columns``."""
        raise NotImplementedError


class UnitValues:
    """What the walks computed for one fixed set, per unit: node values (the recursive walk) and whole unit
    arrays (numpy), with the numpy node array they were last copied into (shared by the queries of a session).

    A unit's node values and its array are both for the same fixed set; either may be missing."""

    __slots__ = ("nodes", "arrays", "scratch")

    def __init__(self, n_units: int) -> None:
        self.nodes: list[dict[int, Vec | None]] = [{} for _ in range(n_units)]
        self.arrays: list[Array | None] = [None] * n_units
        #: the node array of the last numpy query, and per unit the array last copied into it
        self.scratch: list[tuple[Array, list[Array | None]]] = []

    def with_fresh(self, units: Sequence[int]) -> "UnitValues":
        """These values with ``units`` emptied (for a query whose fixed set differs on them)."""
        out = UnitValues.__new__(UnitValues)
        out.nodes = list(self.nodes)
        out.arrays = list(self.arrays)
        out.scratch = self.scratch
        for u in units:
            out.nodes[u] = {}
            out.arrays[u] = None
        return out


class Counter:
    """A table with the weight columns it counts in (see the module): the walk written once for any ``K``.

    Subclasses give the recursive walk, the units in evaluation order (children first) with the node ids each
    computes, one unit's values and a root's value with numpy.
    """

    table: Table
    columns: Columns
    #: the units in evaluation order (children first)
    order_units: list[int]

    def __init__(self, table: Table, columns: Columns) -> None:
        self.table = table
        self.columns = columns
        self.n_features = table.space.n_features
        self._members: Array | None = None

    def factors(self, point: Sequence[int], isfixed: Sequence[bool]) -> list[Vec]:
        """Per feature, its factor: ``w_k(v_f)`` if fixed, ``Z_k(f)`` if free."""
        cols = self.columns
        return [cols.values[f][point[f]] if isfixed[f] else cols.totals[f] for f in range(self.n_features)]

    def terminals(self) -> dict[int, Vec | None]:
        """The default terminal values: ``FALSE`` 0 and ``TRUE`` 1 in every column."""
        return {FALSE: None, TRUE: self.columns.one}

    def counts(self, labels: Sequence[int], point: Sequence[int], isfixed: Sequence[bool], values: UnitValues,
               terminals: Terminals | None = None) -> Vec | None:
        """Per column, the weight of ``{x : kappa(x) in labels, x_S = v_S}`` (``None``: 0 in every column).

        ``values`` holds what is known for this fixed set and receives what is computed. Queries with at most
        :data:`RECURSIVE_MAX_FREE` free features, on diagrams of fewer than :data:`VECTOR_MIN_NODES` internal
        nodes, and all of them when the counts do not fit numpy's arithmetic, walk the reachable nodes; the
        others compute whole units with numpy.
        """
        term = self.terminals() if terminals is None else terminals
        n_free = len(isfixed) - sum(isfixed)
        if not self.columns.fits_arrays or n_free <= RECURSIVE_MAX_FREE or self.table.n_nodes < VECTOR_MIN_NODES:
            with recursion(self.table.depth):
                return self.walk(labels, point, isfixed, self.factors(point, isfixed), values.nodes, term)
        return self.columns.from_row(self.array_counts(labels, point, isfixed, values, term))

    def walk(self, labels: Sequence[int], point: Sequence[int], isfixed: Sequence[bool], fac: Sequence[Vec],
             stores: list[dict[int, Vec | None]], terminals: Terminals) -> Vec | None:  # pragma: no cover
        """:meth:`counts` by a walk of the reachable nodes (``stores[u]``: unit ``u``'s node values)."""
        raise NotImplementedError

    # -- numpy ---------------------------------------------------------------------------------

    def pair_members(self) -> list[tuple[int, ...]]:  # pragma: no cover - abstract
        """The sets of features whose factors multiply an edge (skip or smoothing *pairs*; pair 0: none)."""
        raise NotImplementedError

    def unit_values(self, u: int, val: Array, sm: Array, point: Sequence[int], isfixed: Sequence[bool],
                    fac: Array) -> Array:  # pragma: no cover - abstract
        """Unit ``u``'s node values (one row per node of ``ids[u]``), from ``val`` (every node's values)."""
        raise NotImplementedError

    def root_value(self, label: int, val: Array, sm: Array) -> Array:  # pragma: no cover - abstract
        """The weight of ``kappa(x) = label`` per column, from the roots' values."""
        raise NotImplementedError

    def pair_products(self, fac: Array) -> Array:
        """Per pair, the product of the factors of its features (one column per component)."""
        members = self._membership()
        cols = self.columns
        out: Array = np.ones((members.shape[0], cols.k), dtype=cols.array_dtype)
        for f in range(self.n_features):
            inside = members[:, f]
            if inside.any():
                out[inside] *= fac[f]
        return out

    def _membership(self) -> Array:
        got = self._members
        if got is None:
            pairs = self.pair_members()
            got = np.zeros((len(pairs), self.n_features), dtype=bool)
            for p, feats in enumerate(pairs):
                got[p, list(feats)] = True
            self._members = got
        return got

    def array_counts(self, labels: Sequence[int], point: Sequence[int], isfixed: Sequence[bool], values: UnitValues,
                     terminals: Terminals) -> Array:
        """:meth:`counts` with numpy, a unit at a time: one column per component."""
        cols = self.columns
        fac = cols.array([cols.entries(x) for x in self.factors(point, isfixed)])
        sm = self.pair_products(fac)
        if not values.scratch:
            val: Array = np.zeros((self.n_ids(), cols.k), dtype=cols.array_dtype)
            values.scratch.append((val, [None] * len(values.arrays)))
        val, copied = values.scratch[0]
        for t, x in terminals.items():
            val[t] = 0 if x is None else cols.row(x)
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
        """The number of node ids (rows of the node array)."""
        raise NotImplementedError

    def unit_ids(self) -> list[Array]:  # pragma: no cover - abstract
        """Per unit, the node ids it computes (the rows of its array)."""
        raise NotImplementedError
