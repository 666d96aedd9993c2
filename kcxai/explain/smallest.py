"""Cardinality-minimum relevant sets: Min-delta-relevant sets (precision) and minimum I-delta-relevant sets."""

from __future__ import annotations

from kcxai._deadline import DEFAULT_SEARCH_SECONDS
from kcxai.arithmetic import Probability
from kcxai.explain._door import explain_with
from kcxai.explain._query import Bound, Query, check_features, prepare, zero_bound
from kcxai.explain._hitting import MinimumHittingSets
from kcxai.explain._methods import METHODS
from kcxai.explain.explanation import Explanation
from kcxai.explain._search import (
    DEFAULT_MAX_SUBSETS,
    PrecisionTest,
    check_max_subsets,
    first_relevant,
    tree_precision,
)
from kcxai.explain._treesat import TreeSearch
from kcxai.space import Weight
from kcxai.typing import Explainable, FeaturesLike, InstanceLike, ProbabilityLike

__all__ = ["smallest_drs", "is_smallest_drs", "smallest_idrs", "is_smallest_idrs"]

def _smallest_drs(q: Query, test: PrecisionTest, *, below: int | None, max_subsets: int, what: str
                  ) -> frozenset[int] | None:
    """A minimum-size C-delta-relevant set (of size ``< below`` if given), or ``None``."""
    engine = tree_precision(q, test.delta)
    if engine is not None:
        with TreeSearch(engine, q.deadline) as search:
            return search.smallest(below=below)
    n = q.space.n_features
    sizes = range(n + 1 if below is None else min(n + 1, below))
    return first_relevant(test, range(n), sizes, max_subsets=max_subsets, what=what, deadline=q.deadline)


def smallest_drs(obj: Explainable, instance: InstanceLike, precision: ProbabilityLike, *,
                 max_subsets: int = DEFAULT_MAX_SUBSETS,
                 max_seconds: float | None = DEFAULT_SEARCH_SECONDS, inflate: bool = False) -> Explanation:
    """A cardinality-minimal delta-relevant set (the paper's Min-delta-relevant set).

    Among all sets ``S`` with ``precision(S) = Pr(kappa(x) = c | x_S = v_S) >= precision``
    (eq. drs), one of the fewest features. The paper shows the decision
    problem is in NP for decision trees; a :class:`~kcxai.DecisionTree`
    answered by its own oracle (``"dt"``) is solved with a SAT solver
    (python-sat) over selectors ``s_i`` and an incremental totalizer bound
    ``sum s_i <= k`` for ``k = 0, 1, ...``; each model is checked exactly on
    the paths (integer path weights) and refuted ones are cut off with
    clauses from exact path-weight bounds (``kcxai/explain/_treesat.py``
    explains why the paper's linear inequality is only a bound). Other
    oracles are searched over all subsets by increasing size, one counting
    query each, at most ``max_subsets`` of them.

    Parameters
    ----------
    obj : Classifier, CompiledModel or CountingOracle
    instance : sequence or mapping
    precision : int, Fraction or float in [0, 1]
        The lower bound on precision.
    max_subsets : int, default 65536
        For non-tree oracles: the most candidate sets to examine before
        raising :class:`~kcxai.SearchLimitError` (a :class:`~kcxai.ProblemTooLargeError`).
    max_seconds : float or None, default 60
        Wall-clock limit of the search (after any compilation, which has its own limits); ``None``:
        none. SAT calls are interrupted and the loops check the clock; hitting it raises
        :class:`~kcxai.SearchLimitError`.
    inflate : bool, default False
        Widen the conditions of the set found while its precision stays at least the bound
        (:func:`kcxai.inflate`).

    Returns
    -------
    Explanation

    References
    ----------
    Y. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient Explanations
    With Relevant Sets", 2021: Min-delta-relevant sets (NP for decision trees).

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> e = kcxai.smallest_drs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0.9)
    >>> e.names, e.precision
    (('x1', 'x9'), Fraction(121, 128))
    """
    return explain_with(METHODS["smallest_drs"], obj, instance, precision, max_subsets=max_subsets,
                        max_seconds=max_seconds, inflate=inflate)


def fewest_drs(q: Query, precision: Probability, *, max_subsets: int = DEFAULT_MAX_SUBSETS) -> Explanation:
    """The search for a smallest C-delta-relevant set on a query (the ``smallest_drs`` method): see
    :func:`smallest_drs`."""
    limit = check_max_subsets(max_subsets)
    test = PrecisionTest(q, precision)
    found = _smallest_drs(q, test, below=None, max_subsets=limit, what=q.what)
    if found is None:  # pragma: no cover - all features always have precision 1
        raise AssertionError("unreachable: the set of all features is C-delta-relevant")
    return q.explanation(found, weight=q.disagree_weight(found), precision_bound=test.delta)


def is_smallest_drs(obj: Explainable, instance: InstanceLike, features: FeaturesLike, precision: ProbabilityLike, *,
                    max_subsets: int = DEFAULT_MAX_SUBSETS,
                    max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> bool:
    """Whether ``features`` is C-delta-relevant and no set with fewer features is.

    Useful to check a set found by another tool. Decided by the same search as
    :func:`smallest_drs` (with the same limits), limited to sizes below ``len(features)``.

    References
    ----------
    Y. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient Explanations
    With Relevant Sets", 2021: Min-delta-relevant sets.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> kcxai.is_smallest_drs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), ["x1", "x9"], 0.9)
    True
    """
    limit = check_max_subsets(max_subsets)
    with prepare(obj, instance, method=METHODS["smallest_drs"], what="is_smallest_drs", max_seconds=max_seconds) as q:
        test = PrecisionTest(q, q.delta(precision, argument="precision"))
        s = check_features(q, features)
        if not test.relevant(s):
            return False
        return _smallest_drs(q, test, below=len(s), max_subsets=limit, what="is_smallest_drs") is None


def _smallest_idrs(q: Query, bound: Bound) -> tuple[frozenset[int], Weight | None]:
    """Implicit hitting sets: a minimum hitting set of the minimal dual sets found so far is
    relevant, or its complement grows a new minimal dual set to hit. Over decisions (delta = 0) a
    counterexample grows the set at once to the features where it agrees with ``v``."""
    n = q.space.n_features
    everything = frozenset(range(n))
    if q.counts:
        holds, weight = q.relevant_weight((), bound)
        if holds:
            return frozenset(), q.final_weight(()) if weight is None else weight
    elif q.decide(()).sufficient:
        return frozenset(), 0
    with MinimumHittingSets(n, q.deadline) as hitman:
        while True:
            got = hitman.get()
            if got is None:  # pragma: no cover - all features always form a relevant set
                raise AssertionError("unreachable: the set of all features hits every dual set")
            hs = got
            q.deadline.examined += 1
            if q.counts:
                holds, weight = q.relevant_weight(hs, bound)
                if holds:
                    return hs, q.final_weight(hs) if weight is None else weight
                grown = set(hs)  # grow to a maximal irrelevant set: its complement is a minimal dual set
                for i in range(n):
                    q.deadline.check()
                    if i not in grown and not q.relevant_weight(grown | {i}, bound)[0]:
                        grown.add(i)
            else:
                d = q.decide(hs)
                if d.sufficient:
                    return hs, 0
                grown = set(everything - d.features)
                for i in range(n):
                    if i not in grown:
                        d = q.decide(grown | {i})
                        if not d.sufficient:
                            grown = set(everything - d.features)
            hitman.hit([i for i in range(n) if i not in grown])


def smallest_idrs(obj: Explainable, instance: InstanceLike, delta: ProbabilityLike, *,
                  max_seconds: float | None = DEFAULT_SEARCH_SECONDS, inflate: bool | None = None) -> Explanation:
    """A cardinality-minimum I-delta-relevant set, for any oracle model.

    Among all sets ``S`` with ``Pr(kappa(x) != c and x_S = v_S) <= delta``
    (eq. idr), one of the fewest features. By the paper's Proposition on
    duality, relevant sets are exactly the hitting sets of the dual sets
    (:func:`min_dual_idrs`); the search is by implicit hitting sets: a
    minimum hitting set of the minimal dual sets found so far (incremental
    SAT with a cardinality bound, :mod:`kcxai.explain._hitting`) is either
    relevant, hence a minimum relevant set, or its complement yields one more
    minimal dual set. Each round costs one counting query per feature.

    Parameters
    ----------
    obj : Classifier, CompiledModel or CountingOracle
    instance : sequence or mapping
    delta : int, Fraction or float in [0, 1]
        The bound on the error.
    max_seconds : float or None, default 60
        Wall-clock limit of the search (after any compilation, which has its own limits); ``None``:
        none. Hitting it raises :class:`~kcxai.SearchLimitError`.
    inflate : bool or None, default None
        Widen the conditions of the set found while its error stays within ``delta`` (:func:`kcxai.inflate`).
        ``None``: widen an AXp (``delta`` 0) where the engine can, as :func:`min_idrs` does.

    Returns
    -------
    Explanation

    References
    ----------
    Y. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient Explanations
    With Relevant Sets", 2021: Proposition "dual"; A. Ignatiev, A. Previti, M. Liffiton and
    J. Marques-Silva, "Smallest MUS Extraction with Minimal Hitting Set Dualization", CP 2015.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> e = kcxai.smallest_idrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0.03)
    >>> len(e), e.error <= 0.03  # {x1, x8} and {x1, x9} are the smallest
    (2, True)
    """
    return explain_with(METHODS["smallest_idrs"], obj, instance, delta, max_seconds=max_seconds, inflate=inflate)


def fewest_idrs(q: Query, delta: Probability) -> Explanation:
    """The implicit-hitting-set search of a smallest I-delta-relevant set on a query (the ``smallest_idrs``
    and ``smallest_axp`` methods): see :func:`smallest_idrs`."""
    found, weight = _smallest_idrs(q, q.within(delta))
    return q.explanation(found, weight=weight, delta=delta)


def is_smallest_idrs(obj: Explainable, instance: InstanceLike, features: FeaturesLike, delta: ProbabilityLike, *,
                     max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> bool:
    """Whether ``features`` is I-delta-relevant and no set with fewer features is.

    Decided by the search of :func:`smallest_idrs`, under the same ``max_seconds``.

    References
    ----------
    Y. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient Explanations
    With Relevant Sets", 2021: Proposition "dual".

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> kcxai.is_smallest_idrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), ["x1", "x2", "x3", "x4", "x9"], 0)
    True
    """
    answers = ("counts", "decisions") if zero_bound(delta) == 0 else ("counts",)
    with prepare(obj, instance, method=METHODS["smallest_idrs"], what="is_smallest_idrs", answers=answers,
                 max_seconds=max_seconds) as q:
        bound = q.within(q.delta(delta))
        s = check_features(q, features)
        if not q.relevant(s, bound):
            return False
        return len(_smallest_idrs(q, bound)[0]) == len(s)
