"""The weights a counting walk carries: one column per component of the distribution.

Counting is linear in the distribution: under ``sum_k c_k P_k`` the weight of a set of points is
``sum_k c_k P_k(set)`` (:mod:`kcxai.distribution`). So every walk of kcxai (a decision tree's nodes, an
OBDD's levels, an SDD's vtree nodes) computes each quantity for all ``K`` components at once, as a
*vector* of ``K`` weights, and applies the coefficients ``c_k`` once, to the ``K`` weights of its answer
(:meth:`Columns.combine`). A product or uniform distribution is ``K = 1``.

A vector (of type :data:`V`) is a plain Python number when ``K = 1``, and a :class:`WeightVector` (a tuple of
``K`` Python numbers with entrywise arithmetic, written out entry by entry for each ``K``: :func:`vector_type`)
otherwise; the walks are written once with ``+``, ``-``,
``*`` and the arithmetic's division (``div``: exact ``//`` or ``/``), which mean the same on both. So a
product distribution is counted with Python numbers, exactly as fast as a walk written for numbers, and
a mixture in one walk whatever ``K``. The diagrams' recursive walks run compiled from their own source
with the vector operations written out entry by entry (:mod:`kcxai.compilers._tables.inline`): no
method call per operation. Exact weights are Python integers of any size; float weights are
Python floats.

The walks over whole units at once (numpy over the nodes of an OBDD level or an SDD vtree node) use
two-dimensional arrays with one column per component (:meth:`Columns.array`), ``int64`` when every
total is below ``2**62`` and ``float64`` in float spaces (:attr:`Columns.fits_arrays`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

from kcxai.arithmetic import Arithmetic, Weight
from kcxai.distribution import ProductWeights
from kcxai.oracle import Box

__all__ = ["Columns", "Component", "V", "WeightVector", "Array", "INT64_SAFE", "number_kind", "as_int",
           "as_float", "vector_type", "UNROLLED_MAX"]

#: One component of a distribution: its coefficient ``c_k`` and product weights ``P_k``.
Component = tuple[Weight, ProductWeights]
#: A numpy array of weights (one column per component where two-dimensional).
Array = NDArray[Any]


class WeightVector(tuple[Weight, ...]):
    """``K`` weights, one per component, with entrywise ``+``, ``-``, ``*``, ``//`` and ``/`` (a tuple's own
    ``+`` and ``*`` concatenate and repeat; these do not).

    >>> WeightVector((1, 2)) * WeightVector((3, 4)) + WeightVector((1, 1))
    (4, 9)
    """

    __slots__ = ()

    def __add__(self, other: "WeightVector") -> "WeightVector":  # type: ignore[override]  # (entrywise)
        return WeightVector(map(operator.add, self, other))

    def __sub__(self, other: "WeightVector") -> "WeightVector":
        return WeightVector(map(operator.sub, self, other))

    def __mul__(self, other: "WeightVector") -> "WeightVector":  # type: ignore[override]  # (entrywise)
        return WeightVector(map(operator.mul, self, other))

    def __floordiv__(self, other: "WeightVector") -> "WeightVector":
        return WeightVector(map(operator.floordiv, self, other))

    def __truediv__(self, other: "WeightVector") -> "WeightVector":
        return WeightVector(map(operator.truediv, self, other))


#: ``K`` weights, one per component: a Python number when ``K = 1``, else a :class:`WeightVector`. The
#: vectors of one walk are all of one of these types, the walk being generic in it.
V = TypeVar("V", int, float, WeightVector)

#: Up to this many components, a walk's vectors have operations written out entry by entry (:func:`vector_type`).
UNROLLED_MAX = 32
_OPERATORS = (("__add__", "+"), ("__sub__", "-"), ("__mul__", "*"), ("__floordiv__", "//"), ("__truediv__", "/"))
_VECTOR_TYPES: dict[int, type[WeightVector]] = {}


def vector_type(k: int) -> type[WeightVector]:
    """The :class:`WeightVector` class the walks use for ``k`` components: for ``k <= UNROLLED_MAX`` a subclass
    whose operations are straight-line code, ``(a[0] + b[0], ..., a[k-1] + b[k-1])``, generated once per ``k``
    (as :mod:`dataclasses` generates its methods): no iterator per operation, so a walk's vector operations
    cost less (the walks make one to three per node and edge). Above, :class:`WeightVector` itself.

    >>> v = vector_type(3)
    >>> v((1, 2, 3)) * v((4, 5, 6)) - v((1, 1, 1))
    (3, 9, 17)
    >>> issubclass(v, WeightVector)
    True
    """
    got = _VECTOR_TYPES.get(k)
    if got is None:
        if k > UNROLLED_MAX:
            return WeightVector
        lines = [f"class WeightVector{k}(WeightVector):", "    __slots__ = ()"]
        for name, op in _OPERATORS:
            entries = "".join(f"a[{i}] {op} b[{i}], " for i in range(k))
            lines += [f"    def {name}(a, b):", f"        return _new(WeightVector{k}, ({entries}))"]
        namespace: dict[str, Any] = {"WeightVector": WeightVector, "_new": tuple.__new__}
        exec("\n".join(lines), namespace)  # noqa: S102 - the source above, made of operators and indices only
        got = _VECTOR_TYPES[k] = namespace[f"WeightVector{k}"]
    return got


def number_kind(components: Sequence[Component]) -> str:
    """The type of the vectors of a walk over ``components``: ``"int"`` (one exact component), ``"float"``
    (one float component) or ``"vector"`` (several: :class:`WeightVector`)."""
    if len(components) > 1:
        return "vector"
    return "int" if components[0][1].arith.exact else "float"


#: The one weight of a sequence of one exact weight (a Python integer).
as_int: Callable[[Sequence[Weight]], int] = operator.itemgetter(0)
#: The one weight of a sequence of one float weight.
as_float: Callable[[Sequence[Weight]], float] = operator.itemgetter(0)

#: Exact weights below this bound are exact in ``int64`` (sums of two of them included).
INT64_SAFE = 1 << 62


class Columns(Generic[V]):
    """The ``K`` weight columns of a walk: the components of a distribution, as vectors (see the module).

    Parameters
    ----------
    components : sequence of (coefficient, ProductWeights)
        ``(c_k, P_k)`` per component, as ``space.distribution.components`` gives them.
    vec : callable
        Makes a vector from ``K`` weights: :func:`as_int` or :func:`as_float` when ``K = 1``, else
        :class:`WeightVector` or its class for ``K`` (:func:`vector_type`; see :func:`number_kind`).

    Attributes
    ----------
    k : int
        The number of components.
    arith : Arithmetic
    exact : bool
    fits_arrays : bool
        Whether the unit walks may count with numpy (``int64`` is exact for every component, or floats).
    one : number or WeightVector
        The weight 1 in every column.
    div : callable
        ``div(a, b)``: the arithmetic's division of two vectors, entry by entry (exact ``//`` where ``b``
        divides ``a``, or ``/``).

    Examples
    --------
    >>> from kcxai.distribution import Mixture, Product
    >>> mix = Mixture([1, 3], [Product([[1, 2], [1, 1]]), Product([[2, 1], [1, 1]])])
    >>> cols = Columns(mix.components, WeightVector)
    >>> cols.k, cols.entries(cols.mask_weight(0, 0b01))
    (2, [1, 2])
    >>> cols.combine(cols.vec([5, 7])) == sum(c * x for (c, _), x in zip(mix.components, [5, 7]))
    True
    """

    def __init__(self, components: Sequence[Component], vec: Callable[[Sequence[Weight]], V]) -> None:
        self.vec: Callable[[Sequence[Weight]], V] = vec
        self.components = tuple(components)
        self.coefficients = tuple(c for c, _ in self.components)
        self._unit = self.coefficients == (1,)
        self.pws = tuple(pw for _, pw in self.components)
        self.k = len(self.pws)
        self.arith: Arithmetic = self.pws[0].arith
        self.exact = self.arith.exact
        self.div: Callable[[V, V], V] = operator.floordiv if self.exact else operator.truediv
        self.fits_arrays = not self.exact or all(pw.total < INT64_SAFE for pw in self.pws)
        #: The numpy type of the unit arrays.
        self.array_dtype: type = np.int64 if self.exact else np.float64
        n = len(self.pws[0].weights)
        self.n_features = n
        #: ``values[f][v]``: ``w_k(v)`` of value ``v`` of feature ``f``, per component
        self.values: list[list[V]] = [[vec([pw.weights[f][v] for pw in self.pws])
                                       for v in range(len(self.pws[0].weights[f]))] for f in range(n)]
        #: ``totals[f]``: the total weight ``Z_k(f)`` of feature ``f``, per component
        self.totals: list[V] = [vec([pw.totals[f] for pw in self.pws]) for f in range(n)]
        self.one: V = vec([self.arith.one] * self.k)
        self.zero: V = vec([self.arith.zero] * self.k)
        self._masks: dict[int, V] = {}
        self._factor_rows: list[tuple[Array, list[Array]]] = []

    def entries(self, v: V) -> list[Weight]:
        """The ``K`` weights of a vector as Python numbers."""
        if isinstance(v, WeightVector):
            return list(v)
        return [v]

    def combine(self, v: V) -> Weight:
        """``sum_k c_k v_k``: the weight of a set under the distribution, from its weight per component."""
        if not isinstance(v, WeightVector):
            return v if self._unit else self.coefficients[0] * v
        total = self.arith.zero
        for c, x in zip(self.coefficients, self.entries(v)):
            if x:
                total += c * x
        return total

    def mask_weight(self, feature: int, mask: int) -> V:
        """``w_k(E)`` per component for the values ``E`` of ``mask`` (bit ``k`` is value ``k``); kept (bounded)."""
        key = mask * self.n_features + feature
        got = self._masks.get(key)
        if got is None:
            if len(self._masks) > 1 << 16:
                self._masks.clear()
            got = self._masks[key] = self.vec([pw.mask_weight(feature, mask) for pw in self.pws])
        return got

    def fixed_factors(self, point: Sequence[int], fixed: frozenset[int] | set[int]) -> tuple[int, V, V]:
        """The bitmask of the features of ``fixed`` (``S``), and per component ``prod_{f in S} w_k(v_f)`` and
        ``prod_{f in S} Z_k(f)``, computed in Python numbers and made vectors once."""
        one = self.arith.one
        first = self.pws[0]
        ws, totals = first.weights, first.totals
        smask = 0
        kv = pf = one
        for f in fixed:
            smask |= 1 << f
            kv *= ws[f][point[f]]
            pf *= totals[f]
        if self.k == 1:
            return smask, self.vec((kv,)), self.vec((pf,))
        kvs, pfs = [kv], [pf]
        for pw in self.pws[1:]:
            ws, totals = pw.weights, pw.totals
            kv = pf = one
            for f in fixed:
                kv *= ws[f][point[f]]
                pf *= totals[f]
            kvs.append(kv)
            pfs.append(pf)
        return smask, self.vec(kvs), self.vec(pfs)

    def consistent(self, point: Sequence[int], fixed: frozenset[int] | set[int]) -> Weight:
        """``sum_k c_k P_k(x_S = v_S)``: the distribution's weight of the points agreeing with ``point`` on ``S``."""
        total = self.arith.zero
        for c, pw in self.components:
            total += c * pw.consistent_weight(point, fixed)
        return total

    def consistent_at(self, point: Sequence[int], isfixed: Sequence[bool]) -> Weight:
        """:meth:`consistent` with the fixed set given as one flag per feature."""
        total = self.arith.zero
        for c, pw in self.components:
            w = c
            for x, ws, z, v in zip(isfixed, pw.weights, pw.totals, point):
                w *= ws[v] if x else z
            total += w
        return total

    def masked(self, box: Box) -> "Columns[V]":
        """The same components with every value outside ``box`` weighing 0 (what box queries count under)."""
        zero = self.arith.zero
        return Columns([(c, ProductWeights([[w if box[f] >> k & 1 else zero for k, w in enumerate(ws)]
                                             for f, ws in enumerate(pw.weights)], pw.arith))
                        for c, pw in self.components], self.vec)

    def array(self, rows: Sequence[Sequence[Weight]]) -> Array:
        """Rows of one weight per component as a ``(rows, K)`` array in :attr:`array_dtype`."""
        return np.asarray(rows, dtype=self.array_dtype).reshape(len(rows), self.k)

    def factor_array(self, point: Sequence[int], isfixed: Sequence[bool]) -> Array:
        """Per feature (rows) and column: ``w_k(v_f)`` if the feature is fixed, ``Z_k(f)`` if free."""
        if not self._factor_rows:
            totals = self.array([[pw.totals[f] for pw in self.pws] for f in range(self.n_features)])
            values = [self.array([[pw.weights[f][v] for pw in self.pws] for v in range(len(self.pws[0].weights[f]))])
                      for f in range(self.n_features)]
            self._factor_rows.append((totals, values))
        totals, values = self._factor_rows[0]
        fac: Array = totals.copy()
        for f, fixed in enumerate(isfixed):
            if fixed:
                fac[f] = values[f][point[f]]
        return fac

    def row(self, v: V) -> Array:
        """A vector as one row of a unit array."""
        return np.asarray(self.entries(v), dtype=self.array_dtype)

    def from_row(self, row: Array) -> V:
        """One row of a unit array as a vector."""
        return self.vec([self.arith.weight(x) for x in row.tolist()])

