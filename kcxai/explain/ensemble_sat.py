"""Abductive and contrastive explanations (delta = 0) of tree ensembles, named as the field names them.

These are the general explainers answered by a tree ensemble's decision engine (the ``sat`` and
``search`` languages, :mod:`kcxai.engines.sat`, :mod:`kcxai.engines.search`):

* :func:`ensemble_axp` is :func:`kcxai.min_idrs` at delta = 0 (a subset-minimal sufficient reason,
  PyXAI's "minimal sufficient reason");
* :func:`ensemble_cxp` is :func:`kcxai.min_dual_idrs` at delta = 0;
* :func:`smallest_ensemble_axp` / :func:`smallest_ensemble_cxp` are :func:`kcxai.smallest_idrs` /
  :func:`kcxai.smallest_dual_idrs` at delta = 0 (implicit hitting sets);
* :func:`is_ensemble_axp` / :func:`is_ensemble_cxp` are the checkers :func:`kcxai.is_min_idrs` /
  :func:`kcxai.is_min_dual_idrs` at delta = 0.

Each takes a model (the engine is built for the call, under its ``max_seconds``) or an engine
prepared once with :func:`prepare_ensemble` (``compile_model(model, "sat" | "search")``). A decision
engine decides sufficiency with one SAT call (or one branch and bound) per query, so these scale to
forests and boosted models whose compiled forms do not fit in memory. An AXp's ``error`` is 0 and
its ``precision`` 1 (proved); a CXp's measures are not counted (``None``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kcxai._deadline import DEFAULT_SEARCH_SECONDS, check_max_seconds
from kcxai._params import Options, check
from kcxai.engines._ensemble_box import EnsembleBox
from kcxai.engines._ensemble_cnf import EnsembleCnf
from kcxai.engines._portfolio import EnsemblePortfolio
from kcxai.explain._progression import deletion_order
from kcxai.explain.explanation import Explanation
from kcxai.typing import Explainable, FeaturesLike, InstanceLike

__all__ = ["ensemble_axp", "ensemble_cxp", "smallest_ensemble_axp", "smallest_ensemble_cxp", "is_ensemble_axp",
           "is_ensemble_cxp", "EnsembleCnf", "EnsembleBox", "prepare_ensemble", "ENGINES"]

#: The engines that decide "can the class change?": SAT, branch and bound over value boxes, or the
#: registry's choice for the model (:func:`kcxai.engines._registry.decision_engine`).
ENGINES = ("auto", "sat", "search")

#: What to try when an ensemble search hits its time limit (appended to the message).
_ADVICE = (", try the other engine ('sat' or 'search'), or use delta > 0 with a compiled oracle "
           "(kcxai.min_idrs(kcxai.compile_model(model, 'obdd'), x, delta)) or certified estimates from the "
           "'sampling' language")


def prepare_ensemble(model: Any, *, engine: str = "auto", max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> Any:
    """The decision engine of a tree ensemble, compiled once: ``compile_model(model, engine)``.

    ``"sat"``: the CNF in an incremental SAT solver; ``"search"``: branch and bound over value
    boxes, exact as well, and much faster when leaf values are floats (boosted trees, soft voting);
    ``"auto"``: the registry's choice (SAT for hard voting, search otherwise). ``max_seconds``
    (default 60, ``None``: no limit) limits the construction; each later query has its own limit.

    Returns
    -------
    CompiledModel
        Pass it to any explainer instead of the model (``language`` ``"sat"`` or ``"search"``).

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
    from kcxai.engines.choose import compile_model
    from kcxai.engines._registry import decision_engine

    check("engine", engine, Options(ENGINES))
    if engine == "auto":
        engine = decision_engine(model) or "sat"  # compile_model names the model if no engine takes it
    return compile_model(model, engine, max_seconds=check_max_seconds(max_seconds))


def _engine(model: Any, engine: str, limit: float | None, what: str) -> Any:
    """The engine of ``model`` built for one call, its time limit named after the call."""
    from kcxai.engines.choose import get_language
    from kcxai.engines._decision import compile_engine
    from kcxai.engines._registry import decision_engine

    check("engine", engine, Options(ENGINES))
    name = (decision_engine(model) or "sat") if engine == "auto" else engine
    lang = get_language(name)
    from kcxai.models.classifier import Classifier

    if not isinstance(model, Classifier) or not lang.takes(model):
        from kcxai._errors import InvalidTypeError

        raise InvalidTypeError(
            f"{what} explains tree ensembles (RandomForest, BoostedTrees) with the {name!r} engine. "
            f"Got {type(model).__name__} instead.")
    return compile_engine(model, name, lang.options.from_kwargs(max_seconds=limit), what=what, advice=_ADVICE)


def _run(obj: Any, engine: str, max_seconds: Any, what: str,
         call: Callable[[Any, float | None, float | None], Any]) -> Any:
    """``call(engine, max_seconds, started)`` on a prepared engine, or on one built for this call (the
    time limit then counts from the start of the building)."""
    from kcxai.compilers.compiled import CompiledModel, CompileStats

    limit = check_max_seconds(max_seconds)
    if isinstance(obj, (EnsembleCnf, EnsembleBox, EnsemblePortfolio)):  # an engine made by hand: answer through it
        from kcxai.engines._decision import EngineOracle

        obj = CompiledModel(model=obj.model, oracle=EngineOracle(obj), language=obj.language, backend="kcxai",
                            stats=CompileStats(size=0, size_unit="engine", variables=obj.space.n_features,
                                               compile_seconds=0.0))
    if isinstance(obj, CompiledModel):
        return call(obj, limit, None)
    t0 = time.perf_counter()
    compiled = _engine(obj, engine, limit, what)
    try:
        return call(compiled, limit, t0)
    finally:
        compiled.close()


def ensemble_axp(obj: Explainable, instance: InstanceLike, *, order: FeaturesLike | None = None, engine: str = "auto",
                 max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> Explanation:
    """A subset-minimal sufficient reason (abductive explanation, AXp) of a tree ensemble's prediction.

    :func:`kcxai.min_idrs` at delta = 0 on the ensemble's decision engine: each feature is tried for
    deletion once, and a proof's core drops the features it did not use without a query (as pysat's
    MUSX does).

    Parameters
    ----------
    obj : RandomForest, BoostedTrees, CompiledModel or engine
        A model, or its engine from :func:`prepare_ensemble` (or an ``EnsembleCnf`` / ``EnsembleBox``).
    instance : sequence or mapping
        In user values.
    order : sequence of features, optional
        The order in which features are tried for deletion (default: features with fewer values first,
        :func:`~kcxai.explain._progression.deletion_order`).
    engine : {"auto", "sat", "search"}
        For a model: how to decide class changes (see :func:`prepare_ensemble`).
    max_seconds : float or None, default 60
        Wall-clock limit of the call (building the engine for a model included); ``None``: none.
        Hitting it raises :class:`~kcxai.SearchLimitError`.

    Returns
    -------
    Explanation
        ``kind="relevant"``, ``error`` 0, ``precision`` 1, ``language`` the engine's.

    References
    ----------
    Y. Izza and J. Marques-Silva, "On Explaining Random Forests with SAT", IJCAI 2021;
    A. Ignatiev, Y. Izza, P. J. Stuckey and J. Marques-Silva, "Using MaxSAT for Efficient Explanations of
    Tree Ensembles", AAAI 2022.

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace, DecisionTree, Leaf, Split
    >>> from kcxai.models import RandomForest
    >>> import kcxai
    >>> space = FeatureSpace([Feature.categorical(n, [0, 1]) for n in ("a", "b", "c")])
    >>> trees = [DecisionTree(space, [0, 1], Split(n, {0: Leaf(0), 1: Leaf(1)})) for n in ("a", "b", "c")]
    >>> forest = RandomForest(space, [0, 1], trees, voting="hard")
    >>> e = kcxai.ensemble_axp(forest, [1, 1, 0])
    >>> e.names, e.error, e.language
    (('a', 'b'), Fraction(0, 1), 'sat')
    """
    from kcxai.explain.idrs import run_min_idrs

    what = "ensemble_axp"
    return _run(obj, engine, max_seconds, what, lambda c, s, t0: run_min_idrs(
        c, instance, 0, order=order if order is not None else deletion_order(c.model.space.domain_sizes),
        max_seconds=s, started=t0, what=what, advice=_ADVICE, method=what))


def ensemble_cxp(obj: Explainable, instance: InstanceLike, *, order: FeaturesLike | None = None, engine: str = "auto",
                 max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> Explanation:
    """A subset-minimal contrastive explanation (CXp): freeing these features can change the class.

    :func:`kcxai.min_dual_idrs` at delta = 0 on the decision engine; a counterexample shrinks the set
    at once to the features where it differs from the instance. ``max_seconds`` as in :func:`ensemble_axp`.

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
    from kcxai.explain.duality import run_min_dual_idrs

    what = "ensemble_cxp"
    return _run(obj, engine, max_seconds, what, lambda c, s, t0: run_min_dual_idrs(
        c, instance, 0, order=order, max_seconds=s, started=t0, what=what, advice=_ADVICE, method=what))


def smallest_ensemble_axp(obj: Explainable, instance: InstanceLike, *, engine: str = "auto",
                          max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> Explanation:
    """A cardinality-minimal sufficient reason (smallest AXp): :func:`kcxai.smallest_idrs` at delta = 0.

    Hitting-set duality with the CXps; worst case exponential in the number of features.
    ``max_seconds`` (default 60, ``None``: none) limits the call (:class:`~kcxai.SearchLimitError`).

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
    from kcxai.explain.smallest import run_smallest_idrs

    what = "smallest_ensemble_axp"
    return _run(obj, engine, max_seconds, what, lambda c, s, t0: run_smallest_idrs(
        c, instance, 0, max_seconds=s, started=t0, what=what, advice=_ADVICE, method=what))


def smallest_ensemble_cxp(obj: Explainable, instance: InstanceLike, *, engine: str = "auto",
                          max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> Explanation:
    """A cardinality-minimal contrastive explanation (smallest CXp): :func:`kcxai.smallest_dual_idrs` at delta = 0.

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
    from kcxai.explain.duality import run_smallest_dual_idrs

    what = "smallest_ensemble_cxp"
    return _run(obj, engine, max_seconds, what, lambda c, s, t0: run_smallest_dual_idrs(
        c, instance, 0, max_seconds=s, started=t0, what=what, advice=_ADVICE, method=what))


def is_ensemble_axp(obj: Explainable, instance: InstanceLike, features: FeaturesLike, *, engine: str = "auto",
                    max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> bool:
    """Whether ``features`` is a subset-minimal sufficient reason (AXp): :func:`kcxai.is_min_idrs` at delta = 0.

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
    from kcxai.explain.idrs import run_is_min_idrs

    what = "is_ensemble_axp"
    return bool(_run(obj, engine, max_seconds, what, lambda c, s, t0: run_is_min_idrs(
        c, instance, features, 0, max_seconds=s, started=t0, what=what, advice=_ADVICE)))


def is_ensemble_cxp(obj: Explainable, instance: InstanceLike, features: FeaturesLike, *, engine: str = "auto",
                    max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> bool:
    """Whether freeing ``features`` can change the class and no smaller subset of them can (a CXp):
    :func:`kcxai.is_min_dual_idrs` at delta = 0.

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
    from kcxai.explain.duality import run_is_min_dual_idrs

    what = "is_ensemble_cxp"
    return bool(_run(obj, engine, max_seconds, what, lambda c, s, t0: run_is_min_dual_idrs(
        c, instance, features, 0, max_seconds=s, started=t0, what=what, advice=_ADVICE)))
