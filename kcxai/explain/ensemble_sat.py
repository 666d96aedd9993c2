"""Abductive and contrastive explanations (delta = 0) of tree ensembles by incremental SAT.

For an instance ``v`` predicted ``c``, a set ``S`` of features is *sufficient*
when every point with ``x_S = v_S`` is predicted ``c``: the paper's
I-delta-relevant sets with ``delta = 0``, an abductive explanation (AXp) when
subset-minimal; PyXAI calls them sufficient reasons. A set ``T`` is
*contrastive* when freeing it (fixing the others to ``v``) can change the
class; subset-minimal, a contrastive explanation (CXp). Both predicates are
monotone, and each is decided by one query to an *engine*: a SAT call on the
ensemble's CNF (:class:`~kcxai.explain._ensemble_cnf.EnsembleCnf`, the fixed
features as assumptions) or an exact branch and bound over boxes of values
(:class:`~kcxai.explain._ensemble_box.EnsembleBox`), so these functions scale
to forests and boosted models whose compiled forms (OBDD, SDD) do not fit in
memory. ``engine="auto"`` takes the engine of
:func:`~kcxai.explain._portfolio.choose_engine`: SAT for small hard-voting
forests, the search otherwise (CDCL is slow on sums of float leaf values scaled
to 30-50-bit integers, and on the CNF of large forests); ``"portfolio"`` runs
both on every query (:class:`~kcxai.explain._portfolio.EnsemblePortfolio`).

* :func:`ensemble_axp`: the deletion loop (as pysat's MUSX,
  :func:`~kcxai.explain._progression.minimal_sufficient`): drop a feature
  when the rest stays sufficient, and shrink the set to the solver's
  unsatisfiable core at once; features with fewer values are tried first.
* :func:`ensemble_cxp`: the dual deletion loop; a model that changes the
  class shrinks the set to the features where it differs from ``v``.
* :func:`smallest_ensemble_axp` / :func:`smallest_ensemble_cxp`: hitting-set
  duality (minimal AXps are the minimal hitting sets of the CXps and vice
  versa), an incremental SAT solver (:mod:`kcxai.explain._hitting`) proposing minimum hitting sets of the
  explanations found so far until one is itself an explanation.

Every function takes the model or a prepared engine (:func:`prepare_ensemble`;
build it once to reuse it for many instances). Results are
:class:`~kcxai.Explanation` objects with ``delta = 0`` and ``language`` the
engine's (``"sat"`` or ``"search"``); for an AXp ``error`` is 0 and
``precision`` 1 (proved by the engine); a CXp's measures are not computed (``None``).

Every function runs under a time limit, ``max_seconds`` (default
:data:`~kcxai._deadline.DEFAULT_SEARCH_SECONDS`, ``None``: none): SAT calls are
interrupted and the search loops check the clock, and hitting it raises
:class:`~kcxai.SearchLimitError` (see :mod:`kcxai._deadline`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction
from typing import Any, Union

from kcxai._deadline import DEFAULT_SEARCH_SECONDS, Deadline, check_max_seconds
from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.explain._ensemble_box import EnsembleBox
from kcxai.explain._ensemble_cnf import EnsembleCnf
from kcxai.explain._hitting import MinimumHittingSets
from kcxai.explain._portfolio import EnsemblePortfolio, choose_engine
from kcxai.explain._progression import deletion_order, minimal_sufficient, moved_features
from kcxai.explain._result import Explanation

__all__ = ["ensemble_axp", "ensemble_cxp", "smallest_ensemble_axp", "smallest_ensemble_cxp", "is_ensemble_axp",
           "is_ensemble_cxp", "EnsembleCnf", "EnsembleBox", "prepare_ensemble", "ENGINES"]

#: What the functions accept: a RandomForest, a BoostedTrees, or a prepared engine (:func:`prepare_ensemble`).
EnsembleLike = Union[EnsembleCnf, EnsembleBox, Any]

#: The engines that decide "can the class change?": SAT, branch and bound over value boxes, both side by side.
ENGINES = ("auto", "sat", "search", "portfolio")


#: What to try when an ensemble search hits its time limit (appended to the message).
_ADVICE = (", try the other engine ('sat' or 'search'), or use delta > 0 with a compiled oracle "
           "(kcxai.min_idrs(kcxai.compile_model(model, 'obdd'), x, delta)) or certified estimates from the "
           "'sampling' language")


def prepare_ensemble(model: Any, *, engine: str = "auto",
                     max_seconds: float | None = DEFAULT_SEARCH_SECONDS
                     ) -> EnsembleCnf | EnsembleBox | EnsemblePortfolio:
    """The engine answering class-change queries for ``model``; pass it instead of the model to reuse it.

    ``"sat"``: the CNF in an incremental SAT solver (:class:`EnsembleCnf`);
    ``"search"``: branch and bound over value boxes (:class:`EnsembleBox`), exact
    as well, and much faster when leaf values are floats (boosted trees, soft
    voting) and on large forests; ``"portfolio"``: both on every query, the first
    answer winning (:class:`~kcxai.explain._portfolio.EnsemblePortfolio`);
    ``"auto"``: :func:`~kcxai.explain._portfolio.choose_engine` (SAT for hard-voting
    forests of at most 10,000 leaves, search otherwise). ``max_seconds``
    (default 60, ``None``: no limit) limits the construction (the CNF of every
    tree and the vote constraints of every class, the box of every leaf and the
    margins of every pair of classes); each later query has its own limit.

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace, DecisionTree, Leaf, Split
    >>> from kcxai.models import RandomForest
    >>> import kcxai
    >>> space = FeatureSpace([Feature.categorical(n, [0, 1]) for n in ("a", "b", "c")])
    >>> trees = [DecisionTree(space, [0, 1], Split(n, {0: Leaf(0), 1: Leaf(1)})) for n in ("a", "b", "c")]
    >>> engine = kcxai.explain.prepare_ensemble(RandomForest(space, [0, 1], trees), engine="search")
    >>> [kcxai.ensemble_axp(engine, x).names for x in ([1, 1, 0], [0, 0, 1])]
    [('a', 'b'), ('a', 'b')]
    """
    if engine not in ENGINES:
        raise InvalidInputError(f"'engine' must be one of {list(ENGINES)}. Got {engine!r} instead.")
    limit = check_max_seconds(max_seconds)
    if engine == "auto":
        engine = choose_engine(model)
    with Deadline(limit, what=f"prepare_ensemble (engine={engine!r})", advice=_ADVICE) as deadline:
        return _build(model, engine, deadline)


def _build(model: Any, engine: str, deadline: Deadline) -> EnsembleCnf | EnsembleBox | EnsemblePortfolio:
    if engine == "portfolio":
        return EnsemblePortfolio(model, deadline=deadline)
    return EnsembleCnf(model, deadline=deadline) if engine == "sat" else EnsembleBox(model, deadline=deadline)


class _Query:
    """One instance against one ensemble CNF under one time limit, counting the SAT calls."""

    def __init__(self, obj: EnsembleLike, instance: Any, engine: str, max_seconds: Any, what: str) -> None:
        self.t0 = time.perf_counter()
        limit = check_max_seconds(max_seconds)
        self.owned = not callable(getattr(obj, "changes", None))  # a prepared engine (any class)
        if engine not in ENGINES:
            raise InvalidInputError(f"'engine' must be one of {list(ENGINES)}. Got {engine!r} instead.")
        self.calls = 0
        self.deadline = Deadline(limit, what=what, advice=_ADVICE, queries=lambda: self.calls)
        if self.owned:
            if engine == "auto":
                engine = choose_engine(obj)
            self.cnf: Any = _build(obj, engine, self.deadline)
        else:
            self.cnf = obj
        try:
            self._read(instance)
        except BaseException:
            self.__exit__()
            raise

    def _read(self, instance: Any) -> None:
        self.model = self.cnf.model
        self.space = self.model.space
        if isinstance(instance, Iterator):
            instance = list(instance)
        self.point = self.space.encode(instance)
        if isinstance(instance, Mapping) or hasattr(instance, "keys"):
            self.instance = tuple(instance[n] for n in self.space.names)
        else:
            self.instance = tuple(instance.tolist() if hasattr(instance, "tolist") else instance)
        self.label = self.model.predict_point(self.point)
        self.n = self.space.n_features

    def __enter__(self) -> "_Query":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.deadline.close()
        if self.owned:  # a solver built for this call only
            self.cnf.close()

    def changes(self, fixed: Iterable[int]) -> bool:
        """Whether some point agreeing with ``v`` on ``fixed`` gets another class."""
        self.calls += 1
        return bool(self.cnf.changes(self.point, self.label, fixed, self.deadline))

    def features(self, features: Any, argument: str) -> frozenset[int]:
        if isinstance(features, (str, bytes)) or not isinstance(features, Iterable):
            raise InvalidTypeError(
                f"'{argument}' must be a collection of feature indices or names. Got {features!r} instead.")
        return self.space.feature_set(features, argument=argument)

    def order(self, order: Any) -> list[int]:
        if order is None:
            return list(range(self.n))
        if isinstance(order, (str, bytes, Mapping)) or not isinstance(order, Iterable):
            raise InvalidTypeError(f"'order' must be a sequence of feature indices or names. Got {order!r} instead.")
        seq = [self.space.feature_index(f) for f in (order.tolist() if hasattr(order, "tolist") else order)]
        if len(set(seq)) != len(seq):
            raise InvalidInputError(f"'order' must not repeat a feature. Got {list(order)!r} instead.")
        return seq + [i for i in range(self.n) if i not in set(seq)]

    def result(self, features: Iterable[int], *, kind: str, method: str) -> Explanation:
        feats = tuple(sorted(features))
        space, point = self.space, self.point
        exact = kind == "relevant"
        return Explanation(
            features=feats, names=tuple(space.features[i].name for i in feats),
            values=tuple(space.features[i].values[point[i]] for i in feats),
            literals=tuple(space.literal(i, point) for i in feats),
            prediction=self.model.classes[self.label], delta=Fraction(0),
            error=Fraction(0) if exact else None, precision=Fraction(1) if exact else None,
            language=self.cnf.language, oracle_calls=self.calls, seconds=time.perf_counter() - self.t0, kind=kind,
            method=method, instance=self.instance)


# -- subset-minimal -------------------------------------------------------------

def _shrink_axp(q: _Query, keep: set[int], order: list[int]) -> set[int]:
    """Delete features from a sufficient set while it stays sufficient (deletion in ``order``, with cores,
    chunks and counterexamples: :func:`~kcxai.explain._progression.minimal_sufficient`)."""
    return minimal_sufficient(
        lambda s: not q.changes(s), keep, order, core=lambda s: q.cnf.core_features(q.point, s), chunks=False,
        needed=lambda s, dropped: moved_features(q.model.predict_point, q.point, q.label, q.cnf.model_point(), dropped))


def _shrink_cxp(q: _Query, free: set[int], order: list[int]) -> set[int]:
    """Fix features of a contrastive set back to ``v`` while the class can still change."""
    for i in order:
        if i not in free:
            continue
        rest = free - {i}
        if q.changes(set(range(q.n)) - rest):
            free = q.cnf.differs(q.point, rest)
    return free


def ensemble_axp(obj: EnsembleLike, instance: Any, *, order: Any = None, engine: str = "auto",
                 max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> Explanation:
    """A subset-minimal sufficient reason (abductive explanation, AXp) of a tree ensemble's prediction.

    Parameters
    ----------
    obj : RandomForest, BoostedTrees or EnsembleCnf
    instance : sequence or mapping
        In user values.
    order : sequence of features, optional
        The order in which features are tried for deletion (default: fewer values first,
        :func:`~kcxai.explain._progression.deletion_order`).
    engine : {"auto", "sat", "search", "portfolio"}
        For a model: how to decide class changes (see :func:`prepare_ensemble`).
    max_seconds : float or None, default 60
        Wall-clock limit of the call (building the engine for a model included); ``None``: none.
        Hitting it raises :class:`~kcxai.SearchLimitError`.

    Returns
    -------
    Explanation
        ``kind="relevant"``, ``error`` 0, ``precision`` 1, ``language="sat"``.

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace, DecisionTree, Leaf, Split
    >>> from kcxai.models import RandomForest
    >>> import kcxai
    >>> space = FeatureSpace([Feature.categorical(n, [0, 1]) for n in ("a", "b", "c")])
    >>> trees = [DecisionTree(space, [0, 1], Split(n, {0: Leaf(0), 1: Leaf(1)})) for n in ("a", "b", "c")]
    >>> forest = RandomForest(space, [0, 1], trees)
    >>> e = kcxai.ensemble_axp(forest, [1, 1, 0])
    >>> e.names, e.error, e.language
    (('a', 'b'), Fraction(0, 1), 'sat')
    """
    with _Query(obj, instance, engine, max_seconds, "ensemble_axp") as q:
        keep = set(range(q.n))
        if q.changes(keep):  # pragma: no cover - the instance itself is classified by the model
            raise AssertionError("the encoding disagrees with the model's prediction")
        keep = _shrink_axp(q, keep & q.cnf.core_features(q.point, keep),
                           q.order(order) if order is not None else deletion_order(q.space.domain_sizes))
        return q.result(keep, kind="relevant", method="ensemble_axp")


def ensemble_cxp(obj: EnsembleLike, instance: Any, *, order: Any = None, engine: str = "auto",
                 max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> Explanation:
    """A subset-minimal contrastive explanation (CXp): freeing these features can change the class.

    ``max_seconds`` (default 60, ``None``: none) limits the call as in :func:`ensemble_axp`.

    Raises
    ------
    InvalidInputError
        If no point of feature space gets another class (the ensemble is constant).
    SearchLimitError
        If the time limit is hit.

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace, DecisionTree, Leaf, Split
    >>> from kcxai.models import RandomForest
    >>> import kcxai
    >>> space = FeatureSpace([Feature.categorical(n, [0, 1]) for n in ("a", "b", "c")])
    >>> trees = [DecisionTree(space, [0, 1], Split(n, {0: Leaf(0), 1: Leaf(1)})) for n in ("a", "b", "c")]
    >>> kcxai.ensemble_cxp(RandomForest(space, [0, 1], trees), [1, 1, 0]).names
    ('b',)
    """
    with _Query(obj, instance, engine, max_seconds, "ensemble_cxp") as q:
        if not q.changes(()):
            raise InvalidInputError(
                f"No contrastive explanation exists: every point is classified {q.model.classes[q.label]!r}.")
        free = q.cnf.differs(q.point, range(q.n))
        free = _shrink_cxp(q, free, q.order(order))
        return q.result(free, kind="dual", method="ensemble_cxp")


# -- cardinality-minimal --------------------------------------------------------------

def smallest_ensemble_axp(obj: EnsembleLike, instance: Any, *, engine: str = "auto",
                          max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> Explanation:
    """A cardinality-minimal sufficient reason (smallest AXp), by hitting-set duality with the CXps.

    Each round takes a minimum hitting set ``H`` of the contrastive sets
    found so far (:class:`~kcxai.explain._hitting.MinimumHittingSets`); if ``H`` is sufficient it is a smallest
    AXp (every AXp hits every CXp), otherwise the counterexample gives a new
    contrastive set outside ``H``, shrunk to a CXp. Worst case exponential in
    the number of features; ``oracle_calls`` reports the SAT calls. ``max_seconds``
    (default 60, ``None``: none) limits the call (:class:`~kcxai.SearchLimitError`).

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace, DecisionTree, Leaf, Split
    >>> from kcxai.models import RandomForest
    >>> import kcxai
    >>> space = FeatureSpace([Feature.categorical(n, [0, 1]) for n in ("a", "b", "c")])
    >>> trees = [DecisionTree(space, [0, 1], Split(n, {0: Leaf(0), 1: Leaf(1)})) for n in ("a", "b", "c")]
    >>> len(kcxai.smallest_ensemble_axp(RandomForest(space, [0, 1], trees), [1, 1, 1]))
    2
    """
    with _Query(obj, instance, engine, max_seconds, "smallest_ensemble_axp") as q:
        everything = set(range(q.n))
        with MinimumHittingSets(q.n, q.deadline) as hitman:
            while True:
                hs = set(hitman.get() or ())
                if not q.changes(hs):
                    return q.result(hs, kind="relevant", method="smallest_ensemble_axp")
                free = q.cnf.differs(q.point, everything - hs)
                free = _shrink_cxp(q, free, sorted(free))
                hitman.hit(sorted(free))


def smallest_ensemble_cxp(obj: EnsembleLike, instance: Any, *, engine: str = "auto",
                          max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> Explanation:
    """A cardinality-minimal contrastive explanation (smallest CXp), by hitting-set duality with the AXps.

    ``max_seconds`` (default 60, ``None``: none) limits the call (:class:`~kcxai.SearchLimitError`).

    Raises
    ------
    InvalidInputError
        If no point of feature space gets another class.

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace, DecisionTree, Leaf, Split
    >>> from kcxai.models import RandomForest
    >>> import kcxai
    >>> space = FeatureSpace([Feature.categorical(n, [0, 1]) for n in ("a", "b", "c")])
    >>> trees = [DecisionTree(space, [0, 1], Split(n, {0: Leaf(0), 1: Leaf(1)})) for n in ("a", "b", "c")]
    >>> len(kcxai.smallest_ensemble_cxp(RandomForest(space, [0, 1], trees), [1, 1, 1]))
    2
    """
    with _Query(obj, instance, engine, max_seconds, "smallest_ensemble_cxp") as q:
        everything = set(range(q.n))
        if not q.changes(()):
            raise InvalidInputError(
                f"No contrastive explanation exists: every point is classified {q.model.classes[q.label]!r}.")
        with MinimumHittingSets(q.n, q.deadline) as hitman:
            while True:
                hs = set(hitman.get() or ())
                fixed = everything - hs
                if q.changes(fixed):
                    return q.result(hs, kind="dual", method="smallest_ensemble_cxp")
                keep = fixed & q.cnf.core_features(q.point, fixed)
                keep = _shrink_axp(q, keep, sorted(keep))
                hitman.hit(sorted(keep))


# -- checkers ----------------------------------------------------------------------------

def is_ensemble_axp(obj: EnsembleLike, instance: Any, features: Any, *, engine: str = "auto",
                    max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> bool:
    """Whether ``features`` is a subset-minimal sufficient reason (AXp) for the instance.

    ``max_seconds`` (default 60, ``None``: none) limits the call (:class:`~kcxai.SearchLimitError`).

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace, DecisionTree, Leaf, Split
    >>> from kcxai.models import RandomForest
    >>> import kcxai
    >>> space = FeatureSpace([Feature.categorical(n, [0, 1]) for n in ("a", "b", "c")])
    >>> trees = [DecisionTree(space, [0, 1], Split(n, {0: Leaf(0), 1: Leaf(1)})) for n in ("a", "b", "c")]
    >>> forest = RandomForest(space, [0, 1], trees)
    >>> kcxai.is_ensemble_axp(forest, [1, 1, 0], ["a", "b"]), kcxai.is_ensemble_axp(forest, [1, 1, 0], ["a"])
    (True, False)
    """
    with _Query(obj, instance, engine, max_seconds, "is_ensemble_axp") as q:
        s = set(q.features(features, "features"))
        return not q.changes(s) and all(q.changes(s - {i}) for i in s)


def is_ensemble_cxp(obj: EnsembleLike, instance: Any, features: Any, *, engine: str = "auto",
                    max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> bool:
    """Whether freeing ``features`` can change the class and no smaller subset of them can (a CXp).

    ``max_seconds`` (default 60, ``None``: none) limits the call (:class:`~kcxai.SearchLimitError`).

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace, DecisionTree, Leaf, Split
    >>> from kcxai.models import RandomForest
    >>> import kcxai
    >>> space = FeatureSpace([Feature.categorical(n, [0, 1]) for n in ("a", "b", "c")])
    >>> trees = [DecisionTree(space, [0, 1], Split(n, {0: Leaf(0), 1: Leaf(1)})) for n in ("a", "b", "c")]
    >>> forest = RandomForest(space, [0, 1], trees)
    >>> kcxai.is_ensemble_cxp(forest, [1, 1, 0], ["b"]), kcxai.is_ensemble_cxp(forest, [1, 1, 0], ["b", "c"])
    (True, False)
    """
    with _Query(obj, instance, engine, max_seconds, "is_ensemble_cxp") as q:
        t = set(q.features(features, "features"))
        everything = set(range(q.n))
        return q.changes(everything - t) and all(not q.changes(everything - (t - {i})) for i in t)
