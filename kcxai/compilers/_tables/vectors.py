"""The weights a counting walk carries: one column per component of the distribution.

Counting is linear in the distribution: under ``sum_k c_k P_k`` the weight of a set of points is
``sum_k c_k P_k(set)`` (:mod:`kcxai.distribution`). So every walk of kcxai (a decision tree's nodes, an
OBDD's levels, an SDD's vtree nodes) computes each quantity for all ``K`` components at once, as a
*vector* of ``K`` weights, and applies the coefficients ``c_k`` once, to the ``K`` weights of its answer
(:meth:`Columns.combine`). A product or uniform distribution is ``K = 1``.

A vector (:data:`Vec`) is a plain Python number when ``K = 1``, and a one-dimensional numpy array of
``K`` entries otherwise; the walks are written once with ``+``, ``*`` and the arithmetic's exact
division (``div``), which mean the same on both. Exact weights are Python integers (numpy ``object``
arrays) or, when every component's total weight is below ``2**62``, ``int64`` arrays: every entry is one
component's weight of a set of points, at most its total, so ``int64`` is exact there. Float weights are
Python floats or ``float64`` arrays.

The walks over whole units at once (numpy over the nodes of an OBDD level or an SDD vtree node) use
two-dimensional arrays with one column per component (:meth:`Columns.array`), ``int64`` when every
total is below ``2**62`` and ``float64`` in float spaces (:attr:`Columns.fits_arrays`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, Union

import numpy as np
from numpy.typing import NDArray

from kcxai.arithmetic import Arithmetic, Weight
from kcxai.distribution import ProductWeights
from kcxai.oracle import Box

__all__ = ["Columns", "Component", "Vec", "Array", "INT64_SAFE"]

#: One component of a distribution: its coefficient ``c_k`` and product weights ``P_k``.
Component = tuple[Weight, ProductWeights]
#: A numpy array of weights (one column per component where two-dimensional).
Array = NDArray[Any]
#: ``K`` weights, one per component: a Python number when ``K = 1``, else a numpy array of ``K`` entries.
Vec = Union[int, float, Array]

#: Exact weights below this bound are exact in ``int64`` (sums of two of them included).
INT64_SAFE = 1 << 62


class Columns:
    """The ``K`` weight columns of a walk: the components of a distribution, as vectors (see the module).

    Parameters
    ----------
    components : sequence of (coefficient, ProductWeights)
        ``(c_k, P_k)`` per component, as ``space.distribution.components`` gives them.

    Attributes
    ----------
    k : int
        The number of components.
    arith : Arithmetic
    exact : bool
    fits_arrays : bool
        Whether the unit walks may count with numpy (``int64`` is exact for every component, or floats).
    one : Vec
        The weight 1 in every column.
    div : callable
        ``div(a, b)``: the arithmetic's division of two vectors, entry by entry (exact ``//`` where ``b``
        divides ``a``, or ``/``).

    Examples
    --------
    >>> from kcxai.distribution import Mixture, Product
    >>> mix = Mixture([1, 3], [Product([[1, 2], [1, 1]]), Product([[2, 1], [1, 1]])])
    >>> cols = Columns(mix.components)
    >>> cols.k, cols.entries(cols.mask_weight(0, 0b01))
    (2, [1, 2])
    >>> cols.combine(cols.vec([5, 7])) == sum(c * x for (c, _), x in zip(mix.components, [5, 7]))
    True
    """

    def __init__(self, components: Sequence[Component]) -> None:
        self.components = tuple(components)
        self.coefficients = tuple(c for c, _ in self.components)
        self.pws = tuple(pw for _, pw in self.components)
        self.k = len(self.pws)
        self.arith: Arithmetic = self.pws[0].arith
        self.exact = self.arith.exact
        self.div: Callable[[Vec, Vec], Vec] = operator.floordiv if self.exact else operator.truediv
        self.fits_arrays = not self.exact or all(pw.total < INT64_SAFE for pw in self.pws)
        #: The numpy type of the unit arrays (two-dimensional: rows by columns).
        self.array_dtype: type = np.int64 if self.exact else np.float64
        #: The numpy type of a vector when ``K > 1`` (``object``: Python integers past ``int64``).
        self.dtype: type = self.array_dtype if self.fits_arrays else object
        n = len(self.pws[0].weights)
        self.n_features = n
        #: ``values[f][v]``: ``w_k(v)`` of value ``v`` of feature ``f``, per component
        self.values: list[list[Vec]] = [[self.vec([pw.weights[f][v] for pw in self.pws])
                                         for v in range(len(self.pws[0].weights[f]))] for f in range(n)]
        #: ``totals[f]``: the total weight ``Z_k(f)`` of feature ``f``, per component
        self.totals: list[Vec] = [self.vec([pw.totals[f] for pw in self.pws]) for f in range(n)]
        self.one: Vec = self.vec([self.arith.one] * self.k)
        self._masks: dict[int, Vec] = {}

    def vec(self, xs: Sequence[Weight]) -> Vec:
        """The vector of the weights ``xs`` (one per component)."""
        if self.k == 1:
            return xs[0]
        return np.array(xs, dtype=self.dtype)

    def entries(self, v: Vec) -> list[Weight]:
        """The ``K`` weights of a vector as Python numbers."""
        if isinstance(v, np.ndarray):
            return [self.arith.weight(x) for x in v.tolist()]
        return [v]

    def combine(self, v: Vec) -> Weight:
        """``sum_k c_k v_k``: the weight of a set under the distribution, from its weight per component."""
        total = self.arith.zero
        for c, x in zip(self.coefficients, self.entries(v)):
            if x:
                total += c * x
        return total

    def mask_weight(self, feature: int, mask: int) -> Vec:
        """``w_k(E)`` per component for the values ``E`` of ``mask`` (bit ``k`` is value ``k``); kept (bounded)."""
        key = mask * self.n_features + feature
        got = self._masks.get(key)
        if got is None:
            if len(self._masks) > 1 << 16:
                self._masks.clear()
            got = self._masks[key] = self.vec([pw.mask_weight(feature, mask) for pw in self.pws])
        return got

    def fixed_factors(self, point: Sequence[int], fixed: frozenset[int] | set[int]) -> tuple[Vec, Vec]:
        """``(prod_{f in S} w_k(v_f), prod_{f in S} Z_k(f))`` per component, in Python numbers first."""
        kvs: list[Weight] = []
        pfs: list[Weight] = []
        one = self.arith.one
        for pw in self.pws:
            ws, totals = pw.weights, pw.totals
            kv = pf = one
            for f in fixed:
                kv *= ws[f][point[f]]
                pf *= totals[f]
            kvs.append(kv)
            pfs.append(pf)
        return self.vec(kvs), self.vec(pfs)

    def consistent(self, point: Sequence[int], fixed: frozenset[int] | set[int]) -> Weight:
        """``sum_k c_k P_k(x_S = v_S)``: the distribution's weight of the points agreeing with ``point`` on ``S``."""
        total = self.arith.zero
        for c, pw in self.components:
            total += c * pw.consistent_weight(point, fixed)
        return total

    def masked(self, box: Box) -> "Columns":
        """The same components with every value outside ``box`` weighing 0 (what box queries count under)."""
        zero = self.arith.zero
        return Columns([(c, ProductWeights([[w if box[f] >> k & 1 else zero for k, w in enumerate(ws)]
                                             for f, ws in enumerate(pw.weights)], pw.arith))
                        for c, pw in self.components])

    def array(self, rows: Sequence[Sequence[Weight]]) -> Array:
        """Rows of one weight per component as a ``(rows, K)`` array in :attr:`array_dtype`."""
        return np.asarray(rows, dtype=self.array_dtype).reshape(len(rows), self.k)

    def row(self, v: Vec) -> Array:
        """A vector as one row of a unit array."""
        return np.asarray(self.entries(v), dtype=self.array_dtype)

    def from_row(self, row: Array) -> Vec:
        """One row of a unit array as a vector."""
        return self.vec([self.arith.weight(x) for x in row.tolist()])
