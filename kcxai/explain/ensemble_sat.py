"""Abductive and contrastive explanations (delta = 0) of tree ensembles, named as the field names them.

Each is an alias of a general explainer at delta = 0, run through the same door
(:func:`kcxai.explain._door.explain_with`) as the method it is, on the tree ensemble's decision engine
(the ``sat`` and ``search`` languages, :mod:`kcxai.engines.sat`, :mod:`kcxai.engines.search`):

* :func:`ensemble_axp` is the method ``axp``: :func:`kcxai.min_idrs` at delta = 0 (a subset-minimal
  sufficient reason, PyXAI's "minimal sufficient reason");
* :func:`ensemble_cxp` is ``cxp``: :func:`kcxai.min_dual_idrs` at delta = 0;
* :func:`smallest_ensemble_axp` / :func:`smallest_ensemble_cxp` are ``smallest_axp`` / ``smallest_cxp``:
  :func:`kcxai.smallest_idrs` / :func:`kcxai.smallest_dual_idrs` at delta = 0 (implicit hitting sets);
* :func:`is_ensemble_axp` / :func:`is_ensemble_cxp` are the checkers :func:`kcxai.is_min_idrs` /
  :func:`kcxai.is_min_dual_idrs` at delta = 0.

Their errors and results name the method (``"axp"``, ...). Each takes a model, whose engine the chooser
picks (``engine="auto"``: :func:`kcxai.engines.choose.decision_compiled`) or the one named, built once
and kept by the model (so a loop over rows builds it once); or a compiled engine
(``compile_model(model, "sat" | "search")``), or an engine made by hand (``EnsembleCnf``,
``EnsembleBox``, ``EnsemblePortfolio``). A decision engine decides sufficiency with one SAT call (or one
branch and bound) per query, so these scale to forests and boosted models whose compiled forms do not
fit in memory. An AXp's ``error`` is 0 and its ``precision`` 1 (proved); a CXp's measures are not
counted (``None``). The default deletion order of ``axp`` over a decision engine is fewer values first,
whichever name calls it (:data:`kcxai.explain._methods.DEFAULT_ORDER`).
"""

from __future__ import annotations

from kcxai._deadline import DEFAULT_SEARCH_SECONDS
from kcxai._params import Options, check
from kcxai.engines.choose import DECISION_ENGINES, decision_compiled
from kcxai.explain._door import explain_with
from kcxai.explain._methods import METHODS
from kcxai.explain.duality import is_min_dual_idrs
from kcxai.explain.explanation import Explanation
from kcxai.explain.idrs import is_min_idrs
from kcxai.models.classifier import Classifier
from kcxai.typing import Explainable, FeaturesLike, InstanceLike

__all__ = ["ensemble_axp", "ensemble_cxp", "smallest_ensemble_axp", "smallest_ensemble_cxp", "is_ensemble_axp",
           "is_ensemble_cxp", "ENGINES"]

#: The engines that decide "can the class change?": SAT, branch and bound over value boxes, or the
#: chooser's for the model (:func:`kcxai.engines.choose.decision_compiled`).
ENGINES = DECISION_ENGINES


def _decided(obj: Explainable, engine: str) -> Explainable:
    """``obj``, a model replaced by its decision engine (``engine``, checked; kept by the model)."""
    check("engine", engine, Options(ENGINES))
    return decision_compiled(obj, engine) if isinstance(obj, Classifier) else obj


def ensemble_axp(obj: Explainable, instance: InstanceLike, *, order: FeaturesLike | None = None, engine: str = "auto",
                 max_seconds: float | None = DEFAULT_SEARCH_SECONDS, inflate: bool | None = None) -> Explanation:
    """A subset-minimal sufficient reason (abductive explanation, AXp) of a tree ensemble's prediction.

    :func:`kcxai.min_idrs` at delta = 0 on the ensemble's decision engine: each feature is tried for
    deletion once, and a proof's core drops the features it did not use without a query (as pysat's
    MUSX does).

    Parameters
    ----------
    obj : RandomForest, BoostedTrees, CompiledModel or engine
        A model, or its engine (``compile_model(model, "sat" | "search")``, or an ``EnsembleCnf`` /
        ``EnsembleBox`` / ``EnsemblePortfolio`` made by hand).
    instance : sequence or mapping
        In user values.
    order : sequence of features, optional
        The order in which features are tried for deletion (default: features with fewer values first,
        :func:`~kcxai.explain._progression.deletion_order`, the rule of ``axp`` over any decision engine).
    engine : {"auto", "sat", "search"}
        For a model: how to decide class changes (``"auto"``: the chooser's engine, SAT for small
        hard-voting forests and the branch and bound otherwise). The engine is built on the first call
        (under its own limit, :class:`~kcxai.engines._decision.EngineOptions`) and kept by the model.
    max_seconds : float or None, default 60
        Wall-clock limit of the explanation (its widening included); ``None``: none. Hitting it raises
        :class:`~kcxai.SearchLimitError`.
    inflate : bool or None, default None
        Widen each condition to the farthest values at which the box still forces the prediction
        (:func:`kcxai.inflate`, proved by the branch and bound, within its budget of boxes
        :data:`~kcxai.explain.inflate.WIDEN_BOXES`). ``None`` (the default) and ``True`` widen; ``False``
        gives the AXp with each feature fixed to the instance's cell.

    Returns
    -------
    Explanation
        ``method="axp"``, ``kind="relevant"``, ``error`` 0, ``precision`` 1, ``language`` the engine's;
        widened, :attr:`~kcxai.Explanation.conditions` and ``coverage`` are the widened rule's (exact, under
        the model's distribution), and :attr:`~kcxai.Explanation.widening` says whether the widening is
        maximal or stopped at its budget.

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
    >>> e = kcxai.ensemble_axp(forest, [1, 1, 0], inflate=False)
    >>> e.names, e.error, e.language
    (('a', 'b'), Fraction(0, 1), 'sat')
    """
    return explain_with(METHODS["axp"], _decided(obj, engine), instance, order=order, max_seconds=max_seconds,
                        inflate=inflate)


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
    return explain_with(METHODS["cxp"], _decided(obj, engine), instance, order=order, max_seconds=max_seconds)


def smallest_ensemble_axp(obj: Explainable, instance: InstanceLike, *, engine: str = "auto",
                          max_seconds: float | None = DEFAULT_SEARCH_SECONDS, inflate: bool | None = None
                          ) -> Explanation:
    """A cardinality-minimal sufficient reason (smallest AXp): :func:`kcxai.smallest_idrs` at delta = 0.

    Hitting-set duality with the CXps; worst case exponential in the number of features.
    ``max_seconds`` (default 60, ``None``: none) limits the call (:class:`~kcxai.SearchLimitError`).
    ``inflate`` as in :func:`ensemble_axp` (widened by default, ``False``: the instance's cells).

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
    return explain_with(METHODS["smallest_axp"], _decided(obj, engine), instance, max_seconds=max_seconds,
                        inflate=inflate)


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
    return explain_with(METHODS["smallest_cxp"], _decided(obj, engine), instance, max_seconds=max_seconds)


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
    return is_min_idrs(_decided(obj, engine), instance, features, 0, max_seconds=max_seconds)


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
    return is_min_dual_idrs(_decided(obj, engine), instance, features, 0, max_seconds=max_seconds)
