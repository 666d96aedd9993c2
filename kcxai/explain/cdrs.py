"""C-delta-relevant sets (the paper's "Complementary Definitions"): precision-based, not monotone.

``S`` is C-delta-relevant for ``kappa`` and ``(v, c)`` when
``precision(S) = Pr(kappa(x) = c | x_S = v_S) >= delta`` (eq. drs). Fixing one
more feature can lower the precision as well as raise it, so the deletion
loop only gives a locally minimal set (:func:`local_cdrs`); a subset-minimal
one (a Min-C-delta-relevant set, :func:`min_cdrs`) needs a search over subsets.
"""

from __future__ import annotations

from kcxai._deadline import DEFAULT_SEARCH_SECONDS, Deadline
from kcxai._errors import NotRelevantError
from kcxai.arithmetic import Probability
from kcxai.explain._door import explain_with
from kcxai.explain._query import Query, check_features, check_start, prepare
from kcxai.explain._methods import METHODS
from kcxai.explain.explanation import Explanation, format_probability
from kcxai.explain._search import (
    DEFAULT_MAX_SUBSETS,
    PrecisionTest,
    check_max_subsets,
    first_relevant,
    tree_precision,
)
from kcxai.explain._treesat import TreePrecision, TreeSearch
from kcxai.typing import Explainable, FeaturesLike, InstanceLike, ProbabilityLike

__all__ = ["local_cdrs", "min_cdrs", "is_cdrs", "is_min_cdrs"]

def _start(q: Query, test: PrecisionTest, start: FeaturesLike | str | None) -> set[int]:
    """The checked C-delta-relevant start set (all features by default)."""
    s0 = check_start(q, start)
    if s0 is None:
        return set(range(q.space.n_features))  # precision(F) = 1: v is the only point matching F
    if not q.counts:  # precision 1 (decisions) is sufficiency; an estimating oracle checks no start set
        if q.answers == "decisions" and q.decide(s0).sufficient:
            return set(s0)
        raise NotRelevantError(
            f"'start' must be a C-delta-relevant set; the {q.oracle.language!r} oracle "
            + ("finds a point agreeing with it that gets another class." if q.answers == "decisions" else
               "cannot check one exactly: omit 'start'."))
    weight = q.disagree_weight(s0)
    if not test.holds(s0, weight):
        raise NotRelevantError(
            f"'start' must be a C-delta-relevant set: its precision is "
            f"{format_probability(q.precision_of(s0, weight))}, below precision = {format_probability(test.delta)}.")
    return set(s0)


def _local(q: Query, test: PrecisionTest, fixed: set[int], order: FeaturesLike | None) -> set[int]:
    """Deletion passes with the precision test until no single feature can be dropped."""
    tries = q.deletion_order(order, fixed)
    session = q.session(fixed)
    changed = True
    while changed:
        changed = False
        for i in tries:
            if i in fixed and q.precision_holds_if_freed(session, i, test):
                session.free(i)
                fixed.discard(i)
                changed = True
    return fixed


def _local_tree(engine: TreePrecision, fixed: frozenset[int], deadline: Deadline) -> frozenset[int]:
    """:func:`_local` answered by the path engine (same test, no oracle calls)."""
    out = set(fixed)
    changed = True
    while changed:
        changed = False
        for i in sorted(out):
            deadline.check()
            if engine.relevant(out - {i}):
                out.discard(i)
                changed = True
    return frozenset(out)


def local_cdrs(obj: Explainable, instance: InstanceLike, precision: ProbabilityLike, *,
               order: FeaturesLike | None = None, start: FeaturesLike | None = None,
               max_seconds: float | None = DEFAULT_SEARCH_SECONDS, inflate: bool = False) -> Explanation:
    """A locally minimal C-delta-relevant set: the deletion loop with the precision test.

    ``S`` is C-delta-relevant when ``Pr(kappa(x) = c | x_S = v_S) >= precision``
    (the paper's eq. drs with delta the precision bound; Anchor's precision), with
    ``c = kappa(v)``. Starting from a relevant set, each feature is dropped if the
    set stays relevant; as precision is not monotone, passes are repeated until
    one drops nothing. The result is *locally* minimal (dropping any single
    feature breaks relevance), but a smaller subset may still be relevant: see
    :func:`min_cdrs`. One counting query per feature tried. With the ``sampling``
    language each decision is certified (Clopper-Pearson, a union bound over at
    most ``n (n + 1)`` decisions) and the result is marked approximate; with a
    decision engine (``sat``, ``search``) only ``precision = 1`` is answered.

    Parameters
    ----------
    obj : Classifier, CompiledModel or oracle
    instance : sequence or mapping
        The instance, in the model's user values.
    precision : int, Fraction or float in [0, 1]
        The lower bound on precision (e.g. ``0.95``). A float is read as the
        decimal it prints as.
    order : sequence of features, optional
        The order in which features are tried in each pass (default: feature order).
    start : collection of features or "path", optional
        The C-delta-relevant set to start from (checked); default all features.
    max_seconds : float or None, default 60
        Wall-clock limit of the call (:class:`~kcxai.SearchLimitError`); ``None``: none.
    inflate : bool, default False
        Widen each condition to a maximal set of values that keeps the precision at least the bound
        (:func:`kcxai.inflate`; exact oracles only: a sampled set is refused).

    Returns
    -------
    Explanation
        ``precision_bound`` is the bound; ``precision`` is the set's exact
        precision (``>=`` the bound) and ``error`` its I-delta error
        ``Pr(kappa(x) != c and x_S = v_S)``.

    References
    ----------
    Izza et al., "Efficient Explanations With Relevant Sets" (2021), eq. drs and its complementary
    definitions; Ribeiro, Singh and Guestrin, "Anchors: High-Precision Model-Agnostic Explanations",
    AAAI 2018 (precision).

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> e = kcxai.local_cdrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0.95, start="path")
    >>> e.names, e.precision
    (('x1', 'x2', 'x9'), Fraction(61, 64))
    """
    return explain_with(METHODS["local_cdrs"], obj, instance, precision, order=order, start=start,
                        max_seconds=max_seconds, inflate=inflate)


def local_deletion(q: Query, precision: Probability, *, order: FeaturesLike | None = None,
                   start: FeaturesLike | str | None = None) -> Explanation:
    """Deletion passes with the precision test on a query (the ``local_cdrs`` method): see :func:`local_cdrs`."""
    test = PrecisionTest(q, precision)
    fixed = _local(q, test, _start(q, test, start), order)
    return q.explanation(fixed, weight=q.final_weight(fixed), precision_bound=test.delta)


def min_cdrs(obj: Explainable, instance: InstanceLike, precision: ProbabilityLike, *,
             start: FeaturesLike | None = None, max_subsets: int = DEFAULT_MAX_SUBSETS,
             max_seconds: float | None = DEFAULT_SEARCH_SECONDS, inflate: bool = False) -> Explanation:
    """A subset-minimal C-delta-relevant set (the paper's Min-C-delta-relevant set).

    No proper subset of the result, of any size, has precision ``>= precision``.
    The search starts from a locally minimal set (:func:`local_cdrs`) and
    looks for a relevant proper subset until there is none:

    * a :class:`~kcxai.DecisionTree` answered by its own oracle (``"dt"``) is
      searched with a SAT solver (python-sat) over feature selectors, each
      candidate checked exactly on the tree's paths and refuted ones cut off
      with clauses from exact path-weight bounds (see
      ``kcxai/explain/_treesat.py``): no limit on the sets examined;
    * any other oracle is searched over the subsets of the locally minimal
      set, smallest first, one counting query each, at most ``max_subsets``
      of them.

    Parameters
    ----------
    obj : Classifier, CompiledModel or CountingOracle
    instance : sequence or mapping
    precision : int, Fraction or float in [0, 1]
        The lower bound on precision.
    start : collection of features or "path", optional
        A C-delta-relevant set; the result is a subset of it. Default all features.
    max_subsets : int, default 65536
        For non-tree oracles: the most candidate sets to examine before
        raising :class:`~kcxai.SearchLimitError` (a :class:`~kcxai.ProblemTooLargeError`).
    max_seconds : float or None, default 60
        Wall-clock limit of the search (after any compilation, which has its own limits); ``None``:
        none. SAT calls are interrupted and the loops check the clock; hitting it raises
        :class:`~kcxai.SearchLimitError`. One counting query of a compiled oracle cannot be
        interrupted.
    inflate : bool, default False
        Widen the conditions of the set found while its precision stays at least the bound
        (:func:`kcxai.inflate`).

    Returns
    -------
    Explanation

    References
    ----------
    Y. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient Explanations
    With Relevant Sets", 2021: Min-C-delta-relevant sets and their complexity for decision
    trees.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> e = kcxai.min_cdrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0.97)
    >>> e.names, e.precision
    (('x1', 'x2', 'x3', 'x8', 'x9'), Fraction(1, 1))
    """
    return explain_with(METHODS["min_cdrs"], obj, instance, precision, start=start, max_subsets=max_subsets,
                        max_seconds=max_seconds, inflate=inflate)


def subset_minimal(q: Query, precision: Probability, *, start: FeaturesLike | str | None = None,
                   max_subsets: int = DEFAULT_MAX_SUBSETS) -> Explanation:
    """The search for a subset-minimal C-delta-relevant set on a query (the ``min_cdrs`` method): see
    :func:`min_cdrs`."""
    limit = check_max_subsets(max_subsets)
    test = PrecisionTest(q, precision)
    deadline = q.deadline
    fixed = frozenset(_local(q, test, _start(q, test, start), None))
    engine = tree_precision(q, precision)
    if engine is not None:
        with TreeSearch(engine, deadline) as search:
            while True:
                smaller = search.proper_subset(fixed)
                if smaller is None:
                    break
                fixed = _local_tree(engine, smaller, deadline)
    else:  # sets of size |S| - 1 already failed in the local search
        found = first_relevant(test, sorted(fixed), range(len(fixed) - 1), max_subsets=limit, what=q.what,
                               deadline=deadline)
        if found is not None:  # smallest relevant subset of a relevant set: subset-minimal
            fixed = found
    return q.explanation(fixed, weight=q.disagree_weight(fixed), precision_bound=precision)


def is_cdrs(obj: Explainable, instance: InstanceLike, features: FeaturesLike, precision: ProbabilityLike) -> bool:
    """Whether ``features`` is C-delta-relevant: its precision is ``>= precision``, decided exactly.

    References
    ----------
    Y. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient Explanations
    With Relevant Sets", 2021: eq. drs.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> kcxai.is_cdrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), ["x1", "x9"], 0.95)
    False
    """
    with prepare(obj, instance, what="is_cdrs") as q:
        test = PrecisionTest(q, q.delta(precision, argument="precision"))
        return test.relevant(check_features(q, features))


def is_min_cdrs(obj: Explainable, instance: InstanceLike, features: FeaturesLike, precision: ProbabilityLike, *,
                max_subsets: int = DEFAULT_MAX_SUBSETS,
                max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> bool:
    """Whether ``features`` is a subset-minimal C-delta-relevant set.

    Precision is not monotone, so every proper subset is ruled out, not only
    those one feature smaller: by the SAT search for a tree's own oracle, by
    enumeration (at most ``max_subsets`` sets) otherwise; within ``max_seconds``
    (default 60, ``None``: none) as in :func:`min_cdrs`.

    References
    ----------
    Y. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient Explanations
    With Relevant Sets", 2021: Min-C-delta-relevant sets.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
    >>> kcxai.is_min_cdrs(tree, v, ["x1", "x2", "x9"], 0.95), kcxai.is_min_cdrs(tree, v, ["x1", "x2", "x3", "x9"], 0.95)
    (True, False)
    """
    limit = check_max_subsets(max_subsets)
    with prepare(obj, instance, method=METHODS["min_cdrs"], what="is_min_cdrs", max_seconds=max_seconds) as q:
        delta_v = q.delta(precision, argument="precision")
        test = PrecisionTest(q, delta_v)
        s = check_features(q, features)
        if not test.relevant(s):
            return False
        engine = tree_precision(q, delta_v)
        if engine is not None:
            with TreeSearch(engine, q.deadline) as search:
                return search.proper_subset(s) is None
        return first_relevant(test, sorted(s), range(len(s)), max_subsets=limit, what="is_min_cdrs",
                              deadline=q.deadline) is None
