"""Subset-minimal I-delta-relevant sets: the paper's Algorithm 1 and its measures."""

from __future__ import annotations

from typing import Any

from kcxai._errors import NotRelevantError
from kcxai.explain._common import check_delta, check_features, check_order, check_start, prepare
from kcxai.explain._result import Explanation, format_probability
from kcxai.space import Probability

__all__ = ["min_idrs", "idrs_error", "is_idrs", "precision", "is_min_idrs"]


def min_idrs(obj: Any, instance: Any, delta: Any, *, order: Any = None, start: Any = None) -> Explanation:
    """A subset-minimal I-delta-relevant set (the paper's Algorithm 1).

    ``S`` is I-delta-relevant when ``Pr(kappa(x) != c and x_S = v_S) <= delta``
    (eq. idr), with ``c = kappa(v)``. Starting from a relevant set, the
    deletion loop tries to free each feature in turn and keeps it only if
    freeing it breaks relevance; by monotonicity (Proposition "imono") the
    result is subset-minimal. It needs one counting query per feature tried.

    Parameters
    ----------
    obj : Classifier, CompiledModel or CountingOracle
        A model (answered by its native oracle: a tree's paths), or a model
        compiled with :func:`kcxai.compile_model` to any language.
    instance : sequence or mapping
        The instance, in the model's user values.
    delta : int, Fraction or float in [0, 1]
        The bound on the error. ``0`` gives an abductive explanation (AXp).
        A float is read as the decimal it prints as (``0.03`` is ``3/100``).
    order : sequence of features, optional
        The order in which features are tried (indices or names); default is
        feature order, as in the paper.
    start : collection of features or "path", optional
        The relevant set to start from (checked); default all features.
        ``"path"`` starts a decision tree from the features on the instance's path.

    Returns
    -------
    Explanation
        With the exact ``error`` and ``precision`` of the set found.

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
    """
    q = prepare(obj, instance)
    delta_v = q.delta(delta)
    bound = q.within(delta_v)
    s0 = check_start(q, start)
    fixed = set(range(q.space.n_features)) if s0 is None else set(s0)
    tries = check_order(q, order, fixed)
    session = q.session(fixed)
    weight = 0 if s0 is None else session.weight()  # error(F) = 0: v is the only point matching F
    if not bound.holds(weight):
        raise NotRelevantError(
            f"'start' must be an I-delta-relevant set: its error is {format_probability(q.error_of(weight))}, "
            f"above delta = {format_probability(delta_v)}.")
    freed = False
    for i in tries:
        if session.holds_if_freed(i, bound):
            session.free(i)
            fixed.discard(i)
            freed = True
    if freed:
        weight = session.weight()
    return q.explanation(fixed, weight=weight, delta=delta_v, method="min_idrs")


def idrs_error(obj: Any, instance: Any, features: Any) -> Probability:
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

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> kcxai.idrs_error(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), ["x1", "x9"])
    Fraction(7, 512)
    """
    q = prepare(obj, instance)
    return q.error_of(q.disagree_weight(check_features(q, features)))


def is_idrs(obj: Any, instance: Any, features: Any, delta: Any) -> bool:
    """Whether ``features`` is an I-delta-relevant set (eq. idr holds), decided exactly.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
    >>> kcxai.is_idrs(tree, v, ["x1", "x9"], 0.03), kcxai.is_idrs(tree, v, ["x1"], 0.03)
    (True, False)
    """
    q = prepare(obj, instance)
    bound = q.within(q.delta(delta))
    return bound.holds(q.disagree_weight(check_features(q, features)))


def is_min_idrs(obj: Any, instance: Any, features: Any, delta: Any) -> bool:
    """Whether ``features`` is a subset-minimal I-delta-relevant set.

    By monotonicity it suffices that the set is relevant and that dropping any
    single feature breaks relevance.

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
    q = prepare(obj, instance)
    bound = q.within(q.delta(delta))
    s = check_features(q, features)
    if not bound.holds(q.disagree_weight(s)):
        return False
    return all(not bound.holds(q.disagree_weight(s - {i})) for i in s)


def precision(obj: Any, instance: Any, features: Any) -> Probability:
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

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> kcxai.precision(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), ["x1", "x9"])
    Fraction(121, 128)
    """
    q = prepare(obj, instance)
    s = check_features(q, features)
    return q.precision_of(s, q.disagree_weight(s))
