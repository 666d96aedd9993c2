"""The one import door: the kcxai model of any supported fitted scikit-learn-API classifier.

It sits above the model classes and dispatches to their ``from_sklearn``
class methods, which take their parts from the importer modules
(:mod:`kcxai.models._sklearn`, :mod:`kcxai.models._import_boosted`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kcxai._errors import InvalidTypeError
from kcxai.models._import_boosted import is_boosted
from kcxai.models.boosted import BoostedTrees
from kcxai.models.forest import RandomForest
from kcxai.models.linear import LinearClassifier, NaiveBayes
from kcxai.models.tree import DecisionTree

__all__ = ["from_sklearn", "SUPPORTED"]

#: What :func:`from_sklearn` accepts.
SUPPORTED = ("DecisionTreeClassifier", "RandomForestClassifier", "ExtraTreesClassifier",
             "GradientBoostingClassifier", "HistGradientBoostingClassifier", "xgboost.XGBClassifier",
             "lightgbm.LGBMClassifier", "CategoricalNB",
             "BernoulliNB", "LogisticRegression (and other linear classifiers: LinearSVC, RidgeClassifier, "
             "SGDClassifier, Perceptron)")


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
    try:
        from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
        from sklearn.linear_model._base import LinearClassifierMixin
        from sklearn.naive_bayes import BernoulliNB, CategoricalNB
        from sklearn.tree import DecisionTreeClassifier
    except ImportError as e:  # pragma: no cover - scikit-learn is a core dependency
        raise InvalidTypeError("Importing scikit-learn models needs scikit-learn installed.") from e
    kw: dict[str, Any] = {"domains": domains, "feature_names": feature_names, "distribution": distribution}
    if is_boosted(estimator):
        return BoostedTrees.from_sklearn(estimator, **kw)
    if isinstance(estimator, DecisionTreeClassifier):
        return DecisionTree.from_sklearn(estimator, **kw)
    if isinstance(estimator, (RandomForestClassifier, ExtraTreesClassifier)):
        return RandomForest.from_sklearn(estimator, **kw)
    if isinstance(estimator, (CategoricalNB, BernoulliNB)):
        return NaiveBayes.from_sklearn(estimator, **kw)
    if isinstance(estimator, LinearClassifierMixin):
        return LinearClassifier.from_sklearn(estimator, **kw)
    raise InvalidTypeError(
        f"from_sklearn() does not support {type(estimator).__name__}. Supported estimators: "
        f"{', '.join(SUPPORTED)}.")
