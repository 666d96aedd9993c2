"""The one import door: the kcxai model of any supported fitted scikit-learn-API classifier.

It sits above the model classes and dispatches to their ``from_sklearn``
class methods, which take their parts from the importer modules
(:mod:`kcxai.models.imports._sklearn`, :mod:`kcxai.models.imports._boosted`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kcxai._errors import InvalidTypeError
from kcxai.models.boosted import BoostedTrees
from kcxai.models.forest import RandomForest
from kcxai.models.linear import LinearClassifier, NaiveBayes
from kcxai.models.tree import DecisionTree

__all__ = ["from_sklearn", "SUPPORTED", "FAMILIES", "Family", "family_of"]


@dataclass(frozen=True)
class Family:
    """A family of estimators kcxai imports: its printed name, its kind (which model class it becomes) and a
    test of an estimator's type (without importing optional libraries)."""

    name: str
    kind: str  # "tree", "forest", "boosted", "naive_bayes" or "linear"
    matches: Callable[[Any], bool]


def _is(*path: str) -> Callable[[Any], bool]:
    """A test ``isinstance(est, module.Class)`` for scikit-learn classes named ``module.Class``."""
    def test(est: Any) -> bool:
        import importlib

        for p in path:
            module, _, name = p.rpartition(".")
            if isinstance(est, getattr(importlib.import_module(module), name)):
                return True
        return False
    return test


def _by_name(library: str, name: str) -> Callable[[Any], bool]:
    return lambda est: type(est).__module__.split(".")[0] == library and type(est).__name__ == name


#: The estimators :func:`from_sklearn` and :func:`~kcxai.models.from_pipeline` import: the one registry their
#: dispatch and their error messages read.
FAMILIES = (
    Family("DecisionTreeClassifier", "tree", _is("sklearn.tree.DecisionTreeClassifier")),
    Family("RandomForestClassifier", "forest", _is("sklearn.ensemble.RandomForestClassifier")),
    Family("ExtraTreesClassifier", "forest", _is("sklearn.ensemble.ExtraTreesClassifier")),
    Family("GradientBoostingClassifier", "boosted", _is("sklearn.ensemble.GradientBoostingClassifier")),
    Family("HistGradientBoostingClassifier", "boosted", _is("sklearn.ensemble.HistGradientBoostingClassifier")),
    Family("xgboost.XGBClassifier", "boosted", _by_name("xgboost", "XGBClassifier")),
    Family("lightgbm.LGBMClassifier", "boosted", _by_name("lightgbm", "LGBMClassifier")),
    Family("CategoricalNB", "naive_bayes", _is("sklearn.naive_bayes.CategoricalNB")),
    Family("BernoulliNB", "naive_bayes", _is("sklearn.naive_bayes.BernoulliNB")),
    Family("LogisticRegression (and other linear classifiers: LinearSVC, RidgeClassifier, SGDClassifier, "
           "Perceptron)", "linear", _is("sklearn.linear_model._base.LinearClassifierMixin")),
)

#: What :func:`from_sklearn` accepts (read from :data:`FAMILIES`).
SUPPORTED = tuple(f.name for f in FAMILIES)


def family_of(estimator: Any, *, where: str) -> Family:
    """The :class:`Family` of ``estimator``, or the error ``"{where}. Supported estimators: ..."``."""
    for family in FAMILIES:
        if family.matches(estimator):
            return family
    raise InvalidTypeError(f"{where}. Supported estimators: {', '.join(SUPPORTED)}.")


def from_sklearn(estimator: Any, *, domains: Sequence[Any] | None = None,
                 feature_names: Sequence[str] | None = None, distribution: Any = None) -> Any:
    """The kcxai model of a fitted scikit-learn classifier.

    Parameters
    ----------
    estimator
        A fitted ``DecisionTreeClassifier``, ``RandomForestClassifier`` (or
        ``ExtraTreesClassifier``; soft voting, as its ``predict``),
        ``GradientBoostingClassifier``, ``HistGradientBoostingClassifier``,
        ``xgboost.XGBClassifier`` or ``lightgbm.LGBMClassifier`` (the last two
        with the ``[boost]`` extra; all as :class:`~kcxai.models.BoostedTrees`),
        ``CategoricalNB``, ``BernoulliNB`` or ``LogisticRegression`` (or
        another linear classifier: ``LinearSVC``, ``RidgeClassifier``,
        ``SGDClassifier``, ``Perceptron``).
    domains : sequence, optional
        One list of values per feature (``None`` for a feature keeps its
        default): the finite domain the feature ranges over, in the values the
        estimator sees. Trees and forests default to numeric features cut into
        intervals by their thresholds; ``CategoricalNB`` to ``0 .. n - 1``;
        ``BernoulliNB`` to ``[0, 1]``; linear models need it for every feature.
    feature_names : sequence of str, optional
        Defaults to ``estimator.feature_names_in_`` if present, else ``x0, x1, ...``.
    distribution : optional
        Passed to :class:`~kcxai.FeatureSpace`.

    Returns
    -------
    DecisionTree, RandomForest, BoostedTrees, NaiveBayes or LinearClassifier
        Its predictions equal the estimator's; float parameters are taken as
        the exact rationals they store (see ``docs/models.md``).

    Examples
    --------
    >>> from sklearn.naive_bayes import CategoricalNB
    >>> from kcxai.models import from_sklearn
    >>> X = [[0, 1], [1, 1], [2, 0], [1, 0], [0, 0]]
    >>> y = ["a", "b", "b", "a", "a"]
    >>> nb = from_sklearn(CategoricalNB().fit(X, y))
    >>> nb.space.domain_sizes, nb.predict([2, 1]) == CategoricalNB().fit(X, y).predict([[2, 1]])[0]
    ((3, 2), True)
    """
    kw: dict[str, Any] = {"domains": domains, "feature_names": feature_names, "distribution": distribution}
    kind = family_of(estimator, where=f"from_sklearn() does not support {type(estimator).__name__}").kind
    if kind == "boosted":
        return BoostedTrees.from_sklearn(estimator, **kw)
    if kind == "tree":
        return DecisionTree.from_sklearn(estimator, **kw)
    if kind == "forest":
        return RandomForest.from_sklearn(estimator, **kw)
    if kind == "naive_bayes":
        return NaiveBayes.from_sklearn(estimator, **kw)
    return LinearClassifier.from_sklearn(estimator, **kw)
