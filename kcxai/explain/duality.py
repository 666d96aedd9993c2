"""Dual (probabilistic contrastive) sets and the enumeration of relevant and dual sets.

The paper's section "Duality Results": with ``C(S)`` the I-delta relevance
predicate ``Pr(kappa(x) != c and x_S = v_S) <= delta`` (eq. idr), the dual
predicate is ``D(T) = not C(F \\ T)``: freeing the features of ``T`` (fixing
the others to ``v``) changes the class with probability ``> delta``. Both are
monotone, and (Proposition "dual") the minimal relevant sets are exactly the
minimal hitting sets of the dual sets, and vice versa. With ``delta = 0``
they are the abductive (AXp) and contrastive (CXp) explanations.

For a dual set ``T`` an :class:`~kcxai.Explanation` has ``kind="dual"``, and
its measures are those of the complement ``F \\ T`` being fixed: ``error`` is
``Pr(kappa(x) != c and x_{F \\ T} = v_{F \\ T})`` (``> delta``) and
``precision`` is ``Pr(kappa(x) = c | x_{F \\ T} = v_{F \\ T})``.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Iterator
from typing import cast

from pysat.solvers import Solver

from kcxai._deadline import DEFAULT_SEARCH_SECONDS, Deadline, check_max_seconds
from kcxai._errors import InvalidInputError, InvalidTypeError, NotRelevantError, SearchLimitError
from kcxai._params import NONE, Range, check
from kcxai.arithmetic import Probability, Weight
from kcxai.explain._door import explain_with
from kcxai.explain._query import Bound, Query, check_features, check_order, prepare, zero_bound
from kcxai.explain._hitting import MinimumHittingSets
from kcxai.explain._methods import METHODS
from kcxai.explain.explanation import Explanation, format_probability
from kcxai.typing import Explainable, FeaturesLike, InstanceLike, ProbabilityLike

__all__ = ["min_dual_idrs", "is_dual_idrs", "is_min_dual_idrs", "smallest_dual_idrs", "enumerate_idrs"]


def _complement(q: Query, features: Iterable[int]) -> frozenset[int]:
    return frozenset(range(q.space.n_features)).difference(features)


def _answers(delta: ProbabilityLike) -> tuple[str, ...]:
    """What answers a dual-set method at ``delta``: counts, or decisions at delta = 0."""
    return METHODS["min_dual_idrs"].answers(zero_bound(delta))


def _no_dual_set(q: Query, delta: Probability, weight: Weight | None) -> InvalidInputError:
    if delta == 0:
        return InvalidInputError(
            f"No dual set exists (no contrastive explanation): every point is classified {q.prediction!r}.")
    shown = format_probability(q.error_of(weight)) if weight is not None else "not above delta"
    return InvalidInputError(
        f"No dual set exists for 'delta' = {format_probability(delta)}: Pr(kappa(x) != c) is {shown}, so even "
        "freeing every feature changes the class with probability <= delta (the empty set is already "
        "I-delta-relevant).")


def min_dual_idrs(obj: Explainable, instance: InstanceLike, delta: ProbabilityLike, *,
                  order: FeaturesLike | None = None, start: FeaturesLike | None = None,
                  max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> Explanation:
    """A subset-minimal dual set of I-delta-relevant sets (a probabilistic contrastive explanation).

    ``T`` is a dual set when ``Pr(kappa(x) != c and x_{F \\ T} = v_{F \\ T}) > delta``:
    letting the features of ``T`` vary, the others fixed to ``v``, yields
    another class with probability above ``delta``. The predicate is
    monotone, so the deletion loop gives a subset-minimal set: each feature
    of ``T`` is fixed back to ``v`` if the rest is still a dual set. With
    ``delta = 0`` it is a contrastive explanation (CXp). One counting query
    per feature tried.

    Parameters
    ----------
    obj : Classifier, CompiledModel or CountingOracle
    instance : sequence or mapping
    delta : int, Fraction or float in [0, 1]
    order : sequence of features, optional
        The order in which features are tried (default: feature order).
    start : collection of features, optional
        A dual set to start from (checked); default all features.
    max_seconds : float or None, default 60
        Wall-clock limit of the call (:class:`~kcxai.SearchLimitError`); ``None``: none.

    Returns
    -------
    Explanation
        With ``kind="dual"``; ``error`` and ``precision`` are those of the
        complement ``F \\ T`` (see the module notes); ``None`` when a decision
        engine found the set (delta = 0: proved dual, the probability not counted).

    Raises
    ------
    InvalidInputError
        If no dual set exists: ``Pr(kappa(x) != c) <= delta``, so the empty
        set is already I-delta-relevant and nothing can change the class often enough.

    References
    ----------
    Y. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient Explanations
    With Relevant Sets", 2021: section "Duality Results"; A. Ignatiev, N. Narodytska, N. Asher
    and J. Marques-Silva, "From Contrastive to Abductive Explanations and Back Again", AIxIA 2020.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> e = kcxai.min_dual_idrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0)
    >>> e.names, e.kind
    (('x9',), 'dual')
    """
    return explain_with(METHODS["min_dual_idrs"], obj, instance, delta, order=order, start=start,
                        max_seconds=max_seconds)


def dual_deletion(q: Query, delta: Probability, *, order: FeaturesLike | None = None,
                  start: FeaturesLike | None = None) -> Explanation:
    """The deletion loop of dual sets on a query (the ``min_dual_idrs`` and ``cxp`` methods): see
    :func:`min_dual_idrs`."""
    bound = q.within(delta)
    n = q.space.n_features
    if start is not None and isinstance(start, str):
        raise InvalidTypeError(f"'start' must be a collection of features. Got {start!r} instead.")
    free = set(range(n)) if start is None else set(check_features(q, start, argument="start"))
    if not q.counts:
        free = _dual_by_decisions(q, free, order, delta, start is None)
        return q.explanation(free, weight=None, delta=delta, kind="dual")
    holds, weight = q.relevant_weight(_complement(q, free), bound)
    if holds:
        if start is None:
            raise _no_dual_set(q, delta, weight)
        raise NotRelevantError(
            f"'start' must be a dual set: fixing the other features gives error "
            f"{'not above delta' if weight is None else format_probability(q.error_of(weight))}, not above "
            f"delta = {format_probability(delta)}.")
    changed = False
    for i in check_order(q, order, free):
        holds, w = q.relevant_weight(_complement(q, free - {i}), bound)
        if not holds:
            free.discard(i)
            weight, changed = w, True
    if weight is None or (changed and q.prover is not None):
        weight = q.final_weight(_complement(q, free))
    return q.explanation(free, weight=weight, delta=delta, kind="dual")


def _dual_by_decisions(q: Query, free: set[int], order: FeaturesLike | None, delta: Probability,
                       whole: bool) -> set[int]:
    """The dual deletion loop over sufficiency decisions (delta = 0): a counterexample shrinks the set
    at once to the features where it differs from ``v`` (freeing only those already changes the class)."""
    d = q.decide(_complement(q, free))
    if d.sufficient:
        if whole:
            raise _no_dual_set(q, delta, None)
        raise NotRelevantError("'start' must be a dual set: fixing the other features, every point gets the "
                               "predicted class.")
    free = set(d.features)
    for i in check_order(q, order, free):
        if i in free:
            d = q.decide(_complement(q, free - {i}))
            if not d.sufficient:
                free = set(d.features)
    return free


def is_dual_idrs(obj: Explainable, instance: InstanceLike, features: FeaturesLike, delta: ProbabilityLike, *,
                 max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> bool:
    """Whether ``features`` is a dual set: ``Pr(kappa(x) != c and x_{F \\ T} = v_{F \\ T}) > delta``.

    References
    ----------
    Y. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient Explanations
    With Relevant Sets", 2021: section "Duality Results".

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> kcxai.is_dual_idrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), ["x9"], 0)
    True
    """
    with prepare(obj, instance, what="is_dual_idrs", answers=_answers(delta), max_seconds=max_seconds) as q:
        return not q.relevant(_complement(q, check_features(q, features)), q.within(q.delta(delta)))


def is_min_dual_idrs(obj: Explainable, instance: InstanceLike, features: FeaturesLike, delta: ProbabilityLike, *,
                     max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> bool:
    """Whether ``features`` is a subset-minimal dual set.

    The dual predicate is monotone, so it suffices that the set is dual and
    that removing any single feature makes it not dual.

    References
    ----------
    Y. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient Explanations
    With Relevant Sets", 2021: section "Duality Results".

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> kcxai.is_min_dual_idrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), ["x4", "x8"], 0)
    True
    """
    with prepare(obj, instance, what="is_min_dual_idrs", answers=_answers(delta), max_seconds=max_seconds) as q:
        bound = q.within(q.delta(delta))
        t = check_features(q, features)
        if q.relevant(_complement(q, t), bound):
            return False
        return all(q.relevant(_complement(q, t - {i}), bound) for i in t)


def smallest_dual_idrs(obj: Explainable, instance: InstanceLike, delta: ProbabilityLike, *,
                       max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> Explanation:
    """A dual set of the fewest features (with ``delta = 0``, a cardinality-minimal contrastive explanation).

    By the paper's Proposition "dual", dual sets are exactly the hitting sets of the
    I-delta-relevant sets. The search is by implicit hitting sets: a minimum hitting set ``H`` of the
    minimal relevant sets found so far (:mod:`kcxai.explain._hitting`) is either a dual set, hence a
    smallest one, or fixing its complement keeps the class often enough, and the complement shrinks
    (deletion loop) to one more minimal relevant set to hit. Worst case exponential in the number of
    features.

    Parameters
    ----------
    obj : Classifier, CompiledModel or oracle
    instance : sequence or mapping
    delta : int, Fraction or float in [0, 1]
    max_seconds : float or None, default 60
        Wall-clock limit of the search (:class:`~kcxai.SearchLimitError`); ``None``: none.

    Returns
    -------
    Explanation
        ``kind="dual"``, measures as in :func:`min_dual_idrs`.

    Raises
    ------
    InvalidInputError
        If no dual set exists (the empty set is already relevant).

    References
    ----------
    Izza et al., "Efficient Explanations With Relevant Sets" (2021), Proposition "dual"; Ignatiev,
    Previti, Liffiton and Marques-Silva, "Smallest MUS Extraction with Minimal Hitting Set Dualization",
    CP 2015 (implicit hitting sets).

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> kcxai.smallest_dual_idrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0).names in [('x1',), ('x2',), ('x3',), ('x9',)]
    True
    """
    return explain_with(METHODS["smallest_dual_idrs"], obj, instance, delta, max_seconds=max_seconds)


def fewest_dual(q: Query, delta: Probability) -> Explanation:
    """The implicit-hitting-set search of a smallest dual set on a query (the ``smallest_dual_idrs`` and
    ``smallest_cxp`` methods): see :func:`smallest_dual_idrs`."""
    bound = q.within(delta)
    n = q.space.n_features
    everything = frozenset(range(n))
    if q.relevant((), bound):
        raise _no_dual_set(q, delta, q.disagree_weight(()) if q.counts else None)
    with MinimumHittingSets(n, q.deadline) as hitman:
        while True:
            hs = frozenset(hitman.get() or ())
            q.deadline.examined += 1
            d = q.decide(everything - hs) if not q.counts else None
            weight = q.disagree_weight(everything - hs) if q.counts else None
            if (d is not None and not d.sufficient) or (weight is not None and not bound.holds(weight)):
                return q.explanation(hs, weight=weight, delta=delta, kind="dual")
            start = d.features if d is not None else everything - hs
            session = q.session(start)
            for i in sorted(start):  # shrink to a minimal relevant set (monotone: one pass)
                if session.holds_if_freed(i, bound):
                    session.free(i)
            hitman.hit(sorted(session.fixed))


def _check_limit(limit: object) -> int | None:
    check("limit", limit, (NONE, Range(numbers.Integral, 0)))
    return None if limit is None else int(cast(numbers.Integral, limit))


def enumerate_idrs(obj: Explainable, instance: InstanceLike, delta: ProbabilityLike, *, limit: int | None = None,
                   max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> Iterator[Explanation]:
    """All subset-minimal I-delta-relevant sets and all minimal dual sets, one at a time.

    MARCO-style enumeration over the lattice of feature sets, based on the
    paper's Proposition "dual" (each side is the minimal hitting sets of the
    other). A SAT solver (python-sat) holds the sets not yet explored; each
    round takes an unexplored set, biased towards large ones, and

    * if it is I-delta-relevant, shrinks it by the deletion loop to a minimal
      relevant set ``S`` (yielded with ``kind="relevant"``) and blocks every
      superset of ``S``;
    * otherwise grows it to a maximal irrelevant set whose complement ``T``
      is a minimal dual set (yielded with ``kind="dual"``) and blocks every
      set disjoint from ``T``.

    Every round yields a new set, and the enumeration stops when nothing is
    left unexplored. With ``delta = 0`` it lists the AXps and the CXps.

    Parameters
    ----------
    obj : Classifier, CompiledModel or CountingOracle
    instance : sequence or mapping
    delta : int, Fraction or float in [0, 1]
    limit : int, optional
        Stop after this many sets (both kinds together). Default: all.
    max_seconds : float or None, default 60
        Limit on the seconds spent computing the enumeration (the time the caller spends between
        two sets is not counted); ``None``: none. SAT calls are interrupted and the loops check the
        clock. Hitting it raises :class:`~kcxai.SearchLimitError` after the sets found so far
        have been yielded; they are also in the error's ``partial`` (so that ``list(...)`` loses
        nothing): an enumeration cut short never ends as if it were complete.

    Yields
    ------
    Explanation
        ``kind`` is ``"relevant"`` or ``"dual"`` (for duals, ``error`` and
        ``precision`` are those of the complement, see :func:`min_dual_idrs`);
        ``oracle_calls`` and ``seconds`` count from the start of the enumeration.

    References
    ----------
    Y. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient Explanations
    With Relevant Sets", 2021: Proposition "dual"; M. H. Liffiton, A. Previti, A. Malik and
    J. Marques-Silva, "Fast, Flexible MUS Enumeration", Constraints 21(2), 2016 (MARCO).

    Examples
    --------
    The running example has two AXps and five CXps:

    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> for e in kcxai.enumerate_idrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0):
    ...     print(e.kind, e.names)
    relevant ('x1', 'x2', 'x3', 'x8', 'x9')
    dual ('x2',)
    dual ('x1',)
    dual ('x3',)
    relevant ('x1', 'x2', 'x3', 'x4', 'x9')
    dual ('x9',)
    dual ('x4', 'x8')
    """
    q = prepare(obj, instance, what="enumerate_idrs", answers=_answers(delta))
    delta_v = q.delta(delta)
    return _marco(q, q.within(delta_v), delta_v, _check_limit(limit), check_max_seconds(max_seconds))


#: What to try when the enumeration hits its time limit (appended to the message).
_ADVICE = ", or a 'limit' on the number of sets; min_idrs and min_dual_idrs give one set of each kind quickly"


def _marco(q: Query, bound: Bound, delta: Probability, limit: int | None, max_seconds: float | None
           ) -> Iterator[Explanation]:
    if limit == 0:
        return
    n = q.space.n_features
    found: list[Explanation] = []
    deadline = Deadline(max_seconds, what="enumerate_idrs", advice=_ADVICE, queries=lambda: q.calls)
    q.deadline = deadline  # the queries run under the enumeration's clock, paused between two sets
    if q.prover is not None:
        q.prover.deadline = deadline
    try:
        with Solver(name="mgh") as solver:
            if n:
                solver.set_phases(list(range(1, n + 1)))  # prefer large seeds
            while deadline.solve(solver):
                true = {lit for lit in solver.get_model() if lit > 0}  # a variable in no clause yet: false
                seed = {i for i in range(n) if i + 1 in true}
                first = q.disagree_weight(seed) if q.counts else None
                if (first is not None and bound.holds(first)) or (first is None and q.decide(seed).sufficient):
                    session = q.session(seed)
                    for i in sorted(seed):  # shrink to a minimal relevant set (monotone: one pass)
                        deadline.check()
                        if session.holds_if_freed(i, bound):
                            session.free(i)
                            seed.discard(i)
                    weight: Weight | None = q.final_weight(seed, session)
                    solver.add_clause([-(i + 1) for i in sorted(seed)])
                    e = q.explanation(seed, weight=weight, delta=delta)
                else:
                    seed, weight = _grow(q, seed, bound, first)
                    dual = [i for i in range(n) if i not in seed]
                    solver.add_clause([i + 1 for i in dual])
                    e = q.explanation(dual, weight=weight, delta=delta, kind="dual")
                found.append(e)
                deadline.examined = len(found)
                deadline.pause()  # the caller's time between two sets is not the search's
                yield e
                deadline.resume()
                if limit is not None and len(found) >= limit:
                    return
    except SearchLimitError as err:
        if err.limit != "max_seconds" or err.partial:
            raise
        raise deadline.error(found) from None
    finally:
        deadline.close()


def _grow(q: Query, seed: set[int], bound: Bound, weight: Weight | None) -> tuple[set[int], Weight | None]:
    """Grow an irrelevant set to a maximal one (its complement is a minimal dual set), with its weight
    (``None`` from decisions, which jump to the complement of each counterexample's differences)."""
    n = q.space.n_features
    everything = frozenset(range(n))
    if not q.counts:
        seed = set(everything - q.decide(seed).features)
        for i in range(n):
            if i not in seed:
                d = q.decide(seed | {i})
                if not d.sufficient:
                    seed = set(everything - d.features)
        return seed, None
    for i in range(n):  # grow to a maximal irrelevant set
        q.deadline.check()
        if i not in seed:
            holds, w = q.relevant_weight(seed | {i}, bound)
            if not holds:
                seed.add(i)
                weight = w
    return seed, weight
