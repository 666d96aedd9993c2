"""Subset-minimal I-delta-relevant sets: the paper's Algorithm 1 and its measures."""

from __future__ import annotations

from kcxai.arithmetic import Probability
from kcxai.explain._door import explain_with
from kcxai.explain._methods import METHODS
from kcxai.explain._query import DEFAULT_SEARCH_SECONDS, Query, check_features, check_start, prepare, zero_bound
from kcxai.explain.explanation import Explanation
from kcxai.typing import Explainable, FeaturesLike, InstanceLike, ProbabilityLike

__all__ = ["min_idrs", "idrs_error", "is_idrs", "precision", "is_min_idrs"]


def min_idrs(obj: Explainable, instance: InstanceLike, delta: ProbabilityLike, *, order: FeaturesLike | None = None,
             start: FeaturesLike | None = None,
             max_seconds: float | None = DEFAULT_SEARCH_SECONDS, inflate: bool | None = None) -> Explanation:
    """A subset-minimal I-delta-relevant set (Algorithm 1 of Izza et al. 2021, see References).

    ``S`` is I-delta-relevant when ``Pr(kappa(x) != c and x_S = v_S) <= delta``
    (eq. idr), with ``c = kappa(v)``. Starting from a relevant set, the
    deletion loop tries to free each feature in turn and keeps it only if
    freeing it breaks relevance; by monotonicity (Proposition "imono") the
    result is subset-minimal. It needs one counting query per feature tried.

    Parameters
    ----------
    obj : Classifier, CompiledModel or oracle
        A model (answered by the engine :func:`kcxai.engines.choose.choose` picks and the model keeps: a
        tree's paths, an OBDD when it compiles within the probe budget, else for a tree ensemble the
        SAT or search engine at delta = 0 and certified sampling at delta > 0), or a model compiled
        with :func:`kcxai.compile_model` to any language.
    instance : sequence or mapping
        The instance, in the model's user values.
    delta : int, Fraction or float in [0, 1]
        The bound on the error. ``0`` gives an abductive explanation (AXp).
        A float is read as the decimal it prints as (``0.03`` is ``3/100``).
    order : sequence of features, optional
        The order in which features are tried (indices or names); default is
        feature order, as in the paper, over counts and estimates, and features with fewer values first
        over a decision engine's answers (the rule of :data:`~kcxai.explain._methods.DEFAULT_ORDER`).
    start : collection of features or "path", optional
        The relevant set to start from (checked); default all features.
        ``"path"`` starts a decision tree from the features on the instance's path.
    max_seconds : float or None, default 60
        Wall-clock limit of the call (each SAT call of a decision engine is interrupted at it); hitting
        it raises :class:`~kcxai.SearchLimitError`. ``None``: none.
    inflate : bool or None, default None
        Widen each condition of the set found to a maximal set of values that keeps the error within
        ``delta`` (:func:`kcxai.inflate`; exact oracles and the ensemble engines). ``None``: widen an AXp
        (``delta`` 0) where the engine that answered can (exact counts, or a decision engine), and no
        other set; ``False``: the paper's set, each feature fixed to the instance's cell.

    Returns
    -------
    Explanation
        With the exact ``error`` and ``precision`` of the set found (estimates, marked approximate,
        from the ``sampling`` language; ``0`` and ``1``, proved, from a decision engine).

    References
    ----------
    Y. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient Explanations
    With Relevant Sets", 2021: Definition of I-delta-relevant sets (eq. idr), Algorithm 1.

    Examples
    --------
    The paper's running example, Table 3:

    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
    >>> e = kcxai.min_idrs(tree, v, 0.03, start="path")
    >>> e.names, e.error
    (('x1', 'x9'), Fraction(7, 512))
    >>> print(e.rule())
    IF x1 = 1 AND x9 = 1 THEN class = 1

    An AXp (delta = 0) is widened by default; ``inflate=False`` gives the paper's set:

    >>> axp = kcxai.min_idrs(tree, v, 0)
    >>> axp.inflated, kcxai.min_idrs(tree, v, 0, inflate=False).inflated
    (True, False)
    """
    return explain_with(METHODS["min_idrs"], obj, instance, delta, order=order, start=start,
                        max_seconds=max_seconds, inflate=inflate)


def deletion(q: Query, delta: Probability, *, order: FeaturesLike | None = None,
             start: FeaturesLike | str | None = None) -> Explanation:
    """Algorithm 1 on a query (the ``min_idrs`` and ``axp`` methods): see :func:`min_idrs`."""
    bound = q.within(delta)
    s0 = check_start(q, start)
    fixed = set(range(q.space.n_features)) if s0 is None else set(s0)
    tries = q.deletion_order(order, fixed)
    session = q.session(fixed)
    weight = 0 if s0 is None else q.start_weight(session, bound, delta)  # error(F) = 0: only v matches F
    freed = False
    for i in tries:
        if session.holds_if_freed(i, bound):
            session.free(i)
            fixed.discard(i)
            freed = True
    final = q.final_weight(fixed, session) if freed else weight
    return q.explanation(fixed, weight=final, delta=delta)


def idrs_error(obj: Explainable, instance: InstanceLike, features: FeaturesLike) -> Probability:
    """``Pr(kappa(x) != c and x_S = v_S)``, the error of a set (the paper's eq. idr).

    Parameters
    ----------
    obj : Classifier, CompiledModel or CountingOracle
    instance : sequence or mapping
        The instance ``v``, in user values; ``c`` is its predicted class.
    features : collection of int or str
        The set ``S`` (indices or names).

    Returns
    -------
    Fraction or float
        Exact (a ``Fraction``) unless the distribution has float weights.

    References
    ----------
    Y. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient Explanations
    With Relevant Sets", 2021: eq. idr.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> kcxai.idrs_error(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), ["x1", "x9"])
    Fraction(7, 512)
    """
    with prepare(obj, instance, what="idrs_error") as q:
        return q.error_of(q.disagree_weight(check_features(q, features)))


def is_idrs(obj: Explainable, instance: InstanceLike, features: FeaturesLike, delta: ProbabilityLike, *,
            max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> bool:
    """Whether ``features`` is an I-delta-relevant set (eq. idr holds), decided exactly.

    References
    ----------
    Y. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient Explanations
    With Relevant Sets", 2021: Definition of I-delta-relevant sets.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
    >>> kcxai.is_idrs(tree, v, ["x1", "x9"], 0.03), kcxai.is_idrs(tree, v, ["x1"], 0.03)
    (True, False)
    """
    answers = ("counts", "decisions") if zero_bound(delta) == 0 else ("counts",)
    with prepare(obj, instance, what="is_idrs", answers=answers, max_seconds=max_seconds) as q:
        return q.relevant(check_features(q, features), q.within(q.delta(delta)))


def is_min_idrs(obj: Explainable, instance: InstanceLike, features: FeaturesLike, delta: ProbabilityLike, *,
                max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> bool:
    """Whether ``features`` is a subset-minimal I-delta-relevant set.

    By monotonicity it suffices that the set is relevant and that dropping any
    single feature breaks relevance.

    References
    ----------
    Y. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient Explanations
    With Relevant Sets", 2021: Proposition "imono" (monotonicity).

    Examples
    --------
    The running example's two AXps (delta 0) are subset-minimal; their union is not:

    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
    >>> [kcxai.is_min_idrs(tree, v, s, 0) for s in (["x1", "x2", "x3", "x4", "x9"],
    ...                                             ["x1", "x2", "x3", "x8", "x9"],
    ...                                             ["x1", "x2", "x3", "x4", "x8", "x9"])]
    [True, True, False]
    """
    answers = ("counts", "decisions") if zero_bound(delta) == 0 else ("counts",)
    with prepare(obj, instance, what="is_min_idrs", answers=answers, max_seconds=max_seconds) as q:
        bound = q.within(q.delta(delta))
        s = check_features(q, features)
        return q.relevant(s, bound) and all(not q.relevant(s - {i}, bound) for i in s)


def precision(obj: Explainable, instance: InstanceLike, features: FeaturesLike) -> Probability:
    """``Pr(kappa(x) = c | x_S = v_S)``, Anchor's precision (the paper's eq. drs), exactly.

    Parameters
    ----------
    obj : Classifier, CompiledModel or CountingOracle
    instance : sequence or mapping
        The instance ``v``, in user values; ``c`` is its predicted class.
    features : collection of int or str
        The set ``S`` (indices or names).

    Returns
    -------
    Fraction or float
        Exact (a ``Fraction``) unless the distribution has float weights.

    References
    ----------
    Y. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient Explanations
    With Relevant Sets", 2021: eq. drs; M. T. Ribeiro, S. Singh and C. Guestrin,
    "Anchors: High-Precision Model-Agnostic Explanations", AAAI 2018.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> kcxai.precision(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), ["x1", "x9"])
    Fraction(121, 128)
    """
    with prepare(obj, instance, what="precision") as q:
        s = check_features(q, features)
        return q.precision_of(s, q.disagree_weight(s))
