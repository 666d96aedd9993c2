"""The threshold compiler: class functions of a model whose class scores add up, through a FunctionBuilder.

A model that describes its scores as data -- a sum (or product) of per-feature terms
(:class:`~kcxai.functions.AdditiveScores`: linear models, naive Bayes) or a sum of tree leaf scores
(:class:`~kcxai.functions.AdditiveTrees`: random forests, boosted trees) -- has its class functions
built here, each term's *block* (a feature, whose outcomes are its values, or a tree, whose outcomes
are its reachable leaves) assembled by the builder. :func:`class_functions` is the one door the
compilers build a model's functions through: described models here, any other model by its own
``build(builder)``.

The construction follows Chan and Darwiche's symbolic compilation of naive Bayes classifiers as used by
Shih, Choi and Darwiche: each pairwise test ``score_c(x) >= score_d(x)`` (:func:`threshold_function`) is
compiled block by block, in the given order, and the sub-function reached after the first ``i`` blocks
depends only on the partial sum ``s``. Each sub-function is cached with the *interval* of partial sums
for which it is the same function (:mod:`kcxai.compilers._intervals`), so two different partial sums that
no completion can tell apart share one node; a partial sum that the remaining blocks cannot move across
the threshold is a constant. The class functions are conjunctions of the pairwise tests (one test per
pair of classes), ties going to the class listed first in the description's ``priority``.

Examples
--------
A builder of Python predicates over points is enough to see the compiled functions (the compilers pass
builders of diagrams):

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

References
----------
H. Chan and A. Darwiche. Reasoning about Bayesian Network Classifiers. UAI 2003.
A. Shih, A. Choi and A. Darwiche. A Symbolic Approach to Explaining Bayesian Network Classifiers. IJCAI 2018.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Protocol, TypeVar, Union

from kcxai._errors import InvalidTypeError
from kcxai.compilers._intervals import IntervalCache, Sum
from kcxai.functions import AdditiveScores, AdditiveTrees, FunctionBuilder, TreeStructure
from kcxai.models._numbers import lcm_of_denominators
from kcxai.models._tree_data import preorder
from kcxai.models.classifier import Classifier

__all__ = ["Block", "FeatureBlock", "TreeBlock", "exclusive_branches", "threshold_function", "argmax_functions",
           "class_functions", "describes_scores"]

_INF = math.inf

#: A function handle of the builder (an SDD node, a BDD node, a bitset).
F = TypeVar("F")
#: The exact numbers of a threshold test: ints (sums scaled to integers) or positive Fractions (products).
Exact = Union[int, Fraction]


class Block(Protocol):
    """A part of an additive score: it splits feature space into outcomes, numbered from 0."""

    def assemble(self, builder: FunctionBuilder[F], children: Sequence[F]) -> F:
        """``OR_o (outcome = o and children[o])``."""
        ...


def exclusive_branches(builder: FunctionBuilder[F], feature: int, branches: Sequence[tuple[int, F]]) -> F:
    """``OR_j (x_feature in E_j and f_j)`` for disjoint value sets ``E_j``, as an if-then-else chain.

    ``branches`` is a sequence of ``(mask, function)``; branches holding the same function object are merged
    first. The chain ``E_1 ? f_1 : (E_2 ? f_2 : ... f_m)`` equals the disjunction on feature space, and it
    also never mixes two branches *outside* it: the SDD and OBDD compilers leave the validity of a
    feature's Boolean encoding out of their diagrams, and there a disjunction over branches whose literals
    overlap on invalid encodings builds disjunctions of the branches' functions (sizes in
    ``docs/results.md``).
    """
    groups: dict[int, tuple[int, F]] = {}
    for mask, f in branches:
        g = groups.get(id(f))
        groups[id(f)] = (mask, f) if g is None else (g[0] | mask, f)
    items = [g for g in groups.values() if g[0]]
    if not items:
        return builder.false()
    out: F = items[-1][1]
    for mask, f in reversed(items[:-1]):
        lit = builder.value_in(feature, mask)
        out = builder.disj(builder.conj(lit, f), builder.conj(builder.neg(lit), out))
    return out


class FeatureBlock:
    """A feature as a block: one outcome per value, assembled as an if-then-else chain."""

    __slots__ = ("feature",)

    def __init__(self, feature: int) -> None:
        self.feature = feature

    def assemble(self, builder: FunctionBuilder[F], children: Sequence[F]) -> F:
        """``OR_k (x_feature = k and children[k])``, an if-then-else chain (:func:`exclusive_branches`)."""
        return exclusive_branches(builder, self.feature, [(1 << k, c) for k, c in enumerate(children)])


class TreeBlock:
    """A decision tree as a block: one outcome per reachable leaf, in ``tree.leaves`` order."""

    __slots__ = ("tree", "index")

    def __init__(self, tree: TreeStructure) -> None:
        self.tree = tree
        self.index = {leaf: k for k, leaf in enumerate(tree.leaves)}

    def assemble(self, builder: FunctionBuilder[F], children: Sequence[F]) -> F:
        """The tree with leaf ``k`` replaced by ``children[k]`` (unreachable leaves by false)."""
        a = self.tree.arrays
        memo: dict[int, F] = {}
        for nid in reversed(preorder(a.root, a.branches)):
            f = a.feature[nid]
            if f < 0:
                k = self.index.get(nid)
                memo[nid] = builder.false() if k is None else children[k]
                continue
            branches = [(mask, memo.pop(child)) for mask, child in a.branches[nid]]
            memo[nid] = exclusive_branches(builder, f, branches)
        return memo[a.root]


def threshold_function(builder: FunctionBuilder[F], blocks: Sequence[Block], deltas: Sequence[Sequence[Exact]],
                       start: Exact, *, mult: bool = False) -> F:
    """The function ``start (+) sum_b deltas[b][outcome_b(x)] >= unit``.

    With ``mult=False`` the numbers are ``int`` (or ``Fraction``), ``(+)`` is ``+`` and ``unit`` is 0; with
    ``mult=True`` they are positive ``Fraction``, ``(+)`` is ``*`` and ``unit`` is 1. Blocks are taken in
    the given order; see the module docstring for the interval cache.
    """
    op: Callable[[Exact, Exact], Exact]
    inv: Callable[[Exact, Exact], Exact]
    if mult:
        unit: Exact = Fraction(1)
        op, inv = (lambda a, b: a * b), (lambda a, b: Fraction(a) / b)
    else:
        unit = 0
        op, inv = (lambda a, b: a + b), (lambda a, b: a - b)
    # fold constant blocks into the start
    kept_blocks: list[Block] = []
    kept: list[tuple[Exact, ...]] = []
    for blk, ds in zip(blocks, deltas):
        if len(set(ds)) == 1:
            start = op(start, ds[0])
        else:
            kept_blocks.append(blk)
            kept.append(tuple(ds))
    n = len(kept)
    lo_rem: list[Exact] = [unit] * (n + 1)
    hi_rem: list[Exact] = [unit] * (n + 1)
    for b in range(n - 1, -1, -1):
        lo_rem[b] = op(lo_rem[b + 1], min(kept[b]))
        hi_rem[b] = op(hi_rem[b + 1], max(kept[b]))
    true_from = [inv(unit, lo_rem[b]) for b in range(n + 1)]  # s >= true_from[b]: true whatever follows
    false_below = [inv(unit, hi_rem[b]) for b in range(n + 1)]  # s < false_below[b]: false whatever follows
    cache: IntervalCache[int, F] = IntervalCache()  # per block position, the nodes by partial sums
    caches = [cache.of(b) for b in range(n)]
    t_node, f_node = builder.true(), builder.false()

    def shift(bound: Sum, a: Exact) -> Sum:
        if isinstance(bound, float):  # only the infinities are floats here
            return bound
        return inv(bound, a)

    def rec(b: int, s: Exact) -> tuple[F, Sum, Sum]:
        if s >= true_from[b]:
            return t_node, true_from[b], _INF
        if s < false_below[b]:
            return f_node, -_INF, false_below[b]
        intervals = caches[b]
        k = intervals.locate(s)
        hit = intervals.at(k, s)
        if hit is not None:
            return hit
        lo: Sum = -_INF
        hi: Sum = _INF
        seen: dict[Exact, F] = {}
        children = []
        for a in kept[b]:
            if a not in seen:
                child, clo, chi = rec(b + 1, op(s, a))
                seen[a] = child
                lo = max(lo, shift(clo, a))
                hi = min(hi, shift(chi, a))
            children.append(seen[a])
        node = kept_blocks[b].assemble(builder, children)
        intervals.insert(k, lo, hi, node)  # the children only touched deeper blocks' intervals: ``k`` holds
        return node, lo, hi

    limit = sys.getrecursionlimit()
    if limit < n + 200:
        sys.setrecursionlimit(n + 200)
    try:
        return rec(0, start)[0]
    finally:
        sys.setrecursionlimit(limit)


def _pair_deltas(base: Sequence[Fraction], terms: Sequence[Sequence[Sequence[Fraction]]], c: int, d: int,
                 mult: bool) -> tuple[Exact, list[list[Exact]]]:
    """The start and per-block deltas of ``score_c >= score_d``: exact ratios for products, else differences
    scaled to integers by one common factor."""
    if mult:
        return base[c] / base[d], [[t[c] / t[d] for t in blk] for blk in terms]
    diffs = [[t[c] - t[d] for t in blk] for blk in terms]
    scale = lcm_of_denominators([base[c] - base[d], *(x for row in diffs for x in row)])
    return int((base[c] - base[d]) * scale), [[int(x * scale) for x in row] for row in diffs]


def argmax_functions(builder: FunctionBuilder[F], blocks: Sequence[Block], base: Sequence[Fraction],
                     terms: Sequence[Sequence[Sequence[Fraction]]], *, mult: bool = False,
                     priority: Sequence[int] | None = None) -> list[F]:
    """One function per class ``c``: ``c`` is the first class (in ``priority``, default the class order) of
    highest score.

    ``score_c(x) = base[c] (+) sum_b terms[b][outcome_b(x)][c]`` with ``(+)`` a sum (exact rationals) or,
    with ``mult=True``, a product (positive rationals). Class ``c`` is predicted iff it beats every class
    before it in ``priority`` strictly and ties or beats every later one; each pair is one
    :func:`threshold_function`.
    """
    k_classes = len(base)
    if k_classes == 1:
        return [builder.true()]
    order = list(range(k_classes)) if priority is None else list(priority)
    rank = {c: i for i, c in enumerate(order)}
    tests: dict[tuple[int, int], F] = {}  # (c, d), c before d: score_c >= score_d
    for i, c in enumerate(order):
        for d in order[i + 1:]:
            start, deltas = _pair_deltas(base, terms, c, d, mult)
            tests[c, d] = threshold_function(builder, blocks, deltas, start, mult=mult)
    if k_classes == 2:
        first, second = order
        test = tests[first, second]
        out = [test, test]
        out[second] = builder.neg(test)
        return out
    result = []
    for c in range(k_classes):
        f = builder.true()
        for d in range(k_classes):
            if d == c:
                continue
            f = builder.conj(f, tests[c, d] if rank[d] > rank[c] else builder.neg(tests[d, c]))
        result.append(f)
    return result


def describes_scores(model: Classifier) -> AdditiveScores | AdditiveTrees | None:
    """The model's scores as data (its ``additive_scores()`` or ``additive_trees()``), or ``None`` when it
    describes its class functions itself (``build``)."""
    for method in ("additive_scores", "additive_trees"):
        describe = getattr(model, method, None)
        if callable(describe):
            spec = describe()
            if not isinstance(spec, (AdditiveScores, AdditiveTrees)):
                raise InvalidTypeError(
                    f"{type(model).__name__}.{method}() must return a kcxai.functions."
                    f"{'AdditiveScores' if method == 'additive_scores' else 'AdditiveTrees'}. "
                    f"Got {type(spec).__name__} instead.")
            return spec
    return None


def class_functions(model: Classifier, builder: FunctionBuilder[F]) -> list[F]:
    """One function per class, ``kappa(x) = c``, built with ``builder``: by the threshold construction for a
    model that describes its scores as data (:func:`describes_scores`), else by the model's own
    ``build(builder)``.

    Examples
    --------
    >>> from fractions import Fraction
    >>> import kcxai
    >>> from kcxai.compilers._truth_table import TruthTableBuilder
    >>> from kcxai.models import LinearClassifier
    >>> space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "abc"])
    >>> clf = LinearClassifier.from_coefficients(space, [1, 1, 1], Fraction(-3, 2))
    >>> b = TruthTableBuilder(space)
    >>> no, yes = class_functions(clf, b)
    >>> [p for p in b.points if b.holds(yes, p)]
    [(0, 1, 1), (1, 0, 1), (1, 1, 0), (1, 1, 1)]
    """
    spec = describes_scores(model)
    if spec is None:
        return model.build(builder)
    if isinstance(spec, AdditiveScores):
        blocks: list[Block] = [FeatureBlock(i) for i in range(spec.space.n_features)]
        return argmax_functions(builder, blocks, spec.base, spec.terms, mult=spec.product, priority=spec.priority)
    return argmax_functions(builder, [TreeBlock(t) for t in spec.trees], spec.base, spec.scores,
                            priority=spec.priority)
