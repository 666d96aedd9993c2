"""Additive scores compiled into class functions: the threshold compiler.

A score is a sum (or a product) over *blocks*: a feature, whose outcomes are
its values (:class:`FeatureBlock`), or a decision tree of a forest, whose
outcomes are its leaves. :func:`argmax_functions` gives one function per class,
"this class is the first of highest score", built through a
:class:`~kcxai.functions.FunctionBuilder`; the models
(:mod:`kcxai.models.linear`, :mod:`kcxai.models.forest`) call it from their
``build``. :func:`argmax_first` is the same rule on one point.

The construction follows Chan and Darwiche's symbolic compilation of naive
Bayes classifiers as used by Shih, Choi and Darwiche (IJCAI 2018): each pairwise
test ``score_c(x) >= score_d(x)`` (:func:`threshold_function`) is compiled
block by block, in the given order, and the sub-function reached after the
first ``i`` blocks depends only on the partial sum ``s``. Each sub-function is
cached with the *interval* of partial sums for which it is the same function
(the intersection of its children's intervals shifted by their weights), so two
different partial sums that no completion can tell apart share one node; a
partial sum that the remaining blocks cannot move across the threshold is a
constant. The class functions are conjunctions of the pairwise tests (one test
per pair of classes).

Examples
--------
A builder of Python predicates over points is enough to see the compiled
functions (the compilers pass builders of diagrams):

>>> class Predicates:
...     def true(self): return lambda x: True
...     def false(self): return lambda x: False
...     def neg(self, f): return lambda x: not f(x)
...     def conj(self, f, g): return lambda x: f(x) and g(x)
...     def disj(self, f, g): return lambda x: f(x) or g(x)
...     def value_in(self, i, mask): return lambda x: bool(mask >> x[i] & 1)
>>> f = threshold_function(Predicates(), [FeatureBlock(0), FeatureBlock(1)], [[0, 1, 2], [0, 1, 2]], -3)
>>> [(a, b) for a in range(3) for b in range(3) if f((a, b))]  # a + b - 3 >= 0
[(1, 2), (2, 1), (2, 2)]
"""

from __future__ import annotations

import math
import sys
from bisect import bisect_right
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from kcxai.models._numbers import Exact, lcm_of_denominators

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.functions import FunctionBuilder

__all__ = ["Block", "FeatureBlock", "exclusive_branches", "threshold_function", "argmax_functions", "argmax_first"]

_INF = math.inf

#: A function handle of the builder (an SDD node, a BDD node, a bitset).
F = TypeVar("F")


class Block(Protocol):
    """A part of an additive score: it splits feature space into outcomes.

    A feature is a block whose outcomes are its values; a decision tree in a
    forest is a block whose outcomes are its leaves.
    """

    def outcome(self, point: Sequence[int]) -> int:
        """The outcome of a point."""
        ...

    def assemble(self, builder: FunctionBuilder[F], children: Sequence[F]) -> F:
        """``OR_o (outcome = o and children[o])``."""
        ...


def exclusive_branches(builder: FunctionBuilder[F], feature: int, branches: Sequence[tuple[int, F]]) -> F:
    """``OR_j (x_feature in E_j and f_j)`` for disjoint value sets ``E_j``, as an if-then-else chain.

    ``branches`` is a sequence of ``(mask, function)``; branches holding the same
    function object are merged first. The chain
    ``E_1 ? f_1 : (E_2 ? f_2 : ... f_m)`` equals the disjunction on feature
    space, and it also never mixes two branches *outside* it: the SDD and OBDD
    compilers leave the validity of a feature's Boolean encoding out of their
    diagrams, and there a disjunction over branches whose literals overlap on
    invalid encodings builds disjunctions of the branches' functions. Measured
    through the OBDD compiler: a 16-feature naive Bayes went from more than
    2,000,000 nodes (the guard) to 4,659, and a hard-voting forest of 10 trees
    of depth 5 from the 60 s guard to 1.9 s.
    """
    groups: dict[int, list[Any]] = {}
    for mask, f in branches:
        g = groups.get(id(f))
        if g is None:
            groups[id(f)] = [mask, f]
        else:
            g[0] |= mask
    items = [g for g in groups.values() if g[0]]
    if not items:
        return builder.false()
    out = items[-1][1]
    for mask, f in reversed(items[:-1]):
        lit = builder.value_in(feature, mask)
        out = builder.disj(builder.conj(lit, f), builder.conj(builder.neg(lit), out))
    return out


class FeatureBlock:
    """A feature as a block: one outcome per value, assembled as an if-then-else chain."""

    __slots__ = ("feature",)

    def __init__(self, feature: int) -> None:
        self.feature = feature

    def outcome(self, point: Sequence[int]) -> int:
        return point[self.feature]

    def assemble(self, builder: FunctionBuilder[F], children: Sequence[F]) -> F:
        """``OR_k (x_feature = k and children[k])``, an if-then-else chain (:func:`exclusive_branches`)."""
        return exclusive_branches(builder, self.feature, [(1 << k, c) for k, c in enumerate(children)])


class _IntervalCache:
    """Disjoint half-open intervals ``[lo, hi)`` of partial sums, each mapped to a node."""

    __slots__ = ("los", "his", "nodes")

    def __init__(self) -> None:
        self.los: list[Any] = []
        self.his: list[Any] = []
        self.nodes: list[Any] = []

    def find(self, s: Any) -> tuple[int, Any]:
        k = bisect_right(self.los, s) - 1
        if k >= 0 and s < self.his[k]:
            return k, self.nodes[k]
        return k, None

    def insert(self, k: int, lo: Any, hi: Any, node: Any) -> None:
        # ``k`` is the interval left of the missed sum (or -1); clip to stay disjoint.
        if k >= 0 and self.his[k] > lo:
            lo = self.his[k]
        if k + 1 < len(self.los) and self.los[k + 1] < hi:
            hi = self.los[k + 1]
        self.los.insert(k + 1, lo)
        self.his.insert(k + 1, hi)
        self.nodes.insert(k + 1, node)


def threshold_function(builder: FunctionBuilder[F], blocks: Sequence[Block], deltas: Sequence[Sequence[Exact]],
                       start: Exact, *, mult: bool = False) -> F:
    """The function ``start (+) sum_b deltas[b][outcome_b(x)] >= unit``.

    With ``mult=False`` the numbers are ``int`` (or ``Fraction``), ``(+)`` is
    ``+`` and ``unit`` is 0; with ``mult=True`` they are positive ``Fraction``,
    ``(+)`` is ``*`` and ``unit`` is 1. Blocks are taken in the given order; see
    the module docstring for the interval cache.
    """
    op: Callable[[Any, Any], Any]
    inv: Callable[[Any, Any], Any]
    if mult:
        unit: Any = Fraction(1)
        op, inv = (lambda a, b: a * b), (lambda a, b: a / b)
    else:
        unit = 0
        op, inv = (lambda a, b: a + b), (lambda a, b: a - b)
    # fold constant blocks into the start
    kept_blocks: list[Block] = []
    kept: list[tuple[Any, ...]] = []
    for blk, ds in zip(blocks, deltas):
        distinct = set(ds)
        if len(distinct) == 1:
            start = op(start, ds[0])
        else:
            kept_blocks.append(blk)
            kept.append(tuple(ds))
    n = len(kept)
    lo_rem: list[Any] = [unit] * (n + 1)
    hi_rem: list[Any] = [unit] * (n + 1)
    for b in range(n - 1, -1, -1):
        lo_rem[b] = op(lo_rem[b + 1], min(kept[b]))
        hi_rem[b] = op(hi_rem[b + 1], max(kept[b]))
    true_from = [inv(unit, lo_rem[b]) for b in range(n + 1)]  # s >= true_from[b]: true whatever follows
    false_below = [inv(unit, hi_rem[b]) for b in range(n + 1)]  # s < false_below[b]: false whatever follows
    caches = [_IntervalCache() for _ in range(n)]
    t_node, f_node = builder.true(), builder.false()

    def shift(bound: Any, a: Any) -> Any:
        if bound == _INF or bound == -_INF:
            return bound
        return inv(bound, a)

    def rec(b: int, s: Any) -> tuple[Any, Any, Any]:
        if s >= true_from[b]:
            return t_node, true_from[b], _INF
        if s < false_below[b]:
            return f_node, -_INF, false_below[b]
        cache = caches[b]
        k, node = cache.find(s)
        if node is not None:
            return node, cache.los[k], cache.his[k]
        lo, hi = -_INF, _INF
        seen: dict[Any, Any] = {}
        children = []
        for a in kept[b]:
            if a not in seen:
                child, clo, chi = rec(b + 1, op(s, a))
                seen[a] = child
                lo = max(lo, shift(clo, a))
                hi = min(hi, shift(chi, a))
            children.append(seen[a])
        node = kept_blocks[b].assemble(builder, children)
        cache.insert(k, lo, hi, node)  # the children only touched deeper caches: ``k`` still holds
        return node, lo, hi

    limit = sys.getrecursionlimit()
    if limit < n + 200:
        sys.setrecursionlimit(n + 200)
    try:
        return rec(0, start)[0]
    finally:
        sys.setrecursionlimit(limit)


def argmax_functions(builder: FunctionBuilder[F], blocks: Sequence[Block], base: Sequence[Fraction],
                     terms: Sequence[Sequence[Sequence[Fraction]]], *, mult: bool = False) -> list[F]:
    """One function per class ``c``: ``c`` is the first class of highest score.

    ``score_c(x) = base[c] (+) sum_b terms[b][outcome_b(x)][c]`` with ``(+)`` a
    sum (exact rationals) or, with ``mult=True``, a product (positive rationals).
    Class ``c`` is predicted iff it beats every earlier class strictly and ties
    or beats every later one; each pair is one :func:`threshold_function`.
    """
    k_classes = len(base)
    if k_classes == 1:
        return [builder.true()]
    tests: dict[tuple[int, int], Any] = {}
    for c in range(k_classes):
        for d in range(c + 1, k_classes):
            if mult:
                start: Any = base[c] / base[d]
                deltas: list[list[Any]] = [[t[c] / t[d] for t in blk] for blk in terms]
            else:
                diffs = [[t[c] - t[d] for t in blk] for blk in terms]
                scale = lcm_of_denominators([base[c] - base[d], *(x for row in diffs for x in row)])
                start = int((base[c] - base[d]) * scale)
                deltas = [[int(x * scale) for x in row] for row in diffs]
            tests[c, d] = threshold_function(builder, blocks, deltas, start, mult=mult)  # score_c >= score_d
    if k_classes == 2:
        return [tests[0, 1], builder.neg(tests[0, 1])]
    out = []
    for c in range(k_classes):
        f = builder.true()
        for d in range(k_classes):
            if d > c:
                f = builder.conj(f, tests[c, d])
            elif d < c:
                f = builder.conj(f, builder.neg(tests[d, c]))
        out.append(f)
    return out


def argmax_first(scores: Sequence[Any]) -> int:
    """The index of the first highest score: the point-wise rule :func:`argmax_functions` compiles.

    Examples
    --------
    >>> argmax_first([1, 3, 3, 2])
    1
    """
    best = 0
    for c in range(1, len(scores)):
        if scores[c] > scores[best]:
            best = c
    return best
