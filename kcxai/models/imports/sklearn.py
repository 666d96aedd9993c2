"""The one import door: the kcxai model of any supported fitted scikit-learn-API classifier.

It sits above the model classes and dispatches to their ``from_sklearn``
class methods, which take their parts from the importer modules
(:mod:`kcxai.models.imports._sklearn`, :mod:`kcxai.models.imports._boosted`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kcxai._errors import InvalidInputError
from kcxai._table import TableReader
from kcxai.models.boosted import BoostedTrees
from kcxai.models.classifier import Classifier
from kcxai.models.forest import RandomForest
from kcxai.models.imports._families import FAMILIES, SUPPORTED, Family, family_of
from kcxai.models.imports._sklearn import sklearn_feature_names
from kcxai.models.imports._training import Imported, domains_from, missing_columns, with_distribution
from kcxai.models.imports.pipeline import import_pipeline
from kcxai.models.linear import LinearClassifier, NaiveBayes
from kcxai.models.tree import DecisionTree

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike
    from kcxai.data import DataLike

__all__ = ["from_sklearn", "import_estimator", "SUPPORTED", "FAMILIES", "Family", "family_of"]


def _build(estimator: Any, domains: Sequence[Any] | None, feature_names: Sequence[str] | None) -> Classifier:
    """The kcxai model of a fitted estimator of :data:`FAMILIES`, under the uniform distribution."""
    kw: dict[str, Any] = {"domains": domains, "feature_names": feature_names}
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


def import_estimator(estimator: Any, X_train: DataLike = None, *, domains: Sequence[Any] | None = None,
                     feature_names: Sequence[str] | None = None) -> Imported:
    """The kcxai model of a fitted estimator and the reader of its input tables, as the training rows ask:
    a tree ensemble whose rows have missing values is imported with a missing value in those columns (routed
    by its own rule for NaN, as :func:`~kcxai.models.from_pipeline` does); a linear model without ``domains``
    ranges over the values each column of ``X_train`` takes. Under the uniform distribution."""
    n = getattr(estimator, "n_features_in_", None)
    family = family_of(estimator, where=f"from_sklearn() does not support {type(estimator).__name__}")
    if n is None:
        raise InvalidInputError(f"'estimator' ({type(estimator).__name__}) is not fitted: call fit() first.")
    missing = missing_columns(X_train)
    if missing and family.kind in ("tree", "forest", "boosted"):  # missing values: the pipeline import routes them
        from sklearn.pipeline import Pipeline  # scikit-learn loads on first import of an estimator, not with kcxai

        if domains is not None or feature_names is not None:
            raise InvalidInputError(
                f"'X_train' has missing values (columns {missing[:10]}), which kcxai routes as the model does "
                "over the estimator's own columns: give no 'domains' or 'feature_names' with them.")
        imported = import_pipeline(Pipeline([("model", estimator)]), distribution=None, missing_columns=(),
                                   seen_missing=missing)
        return Imported(imported.model, imported.reader)
    if feature_names is None:
        feature_names = _renamed_columns(estimator, X_train)
    if domains is None and family.kind == "linear":
        if X_train is None:
            raise InvalidInputError(
                f"'domains' is required for {type(estimator).__name__} without 'X_train': a linear model over real "
                "numbers has no finite feature space of its own; pass 'X_train' (the values each column takes are "
                "its domain), 'domains' (one list of values per feature), or a Pipeline that encodes the columns.")
        domains = domains_from(X_train, sklearn_feature_names(estimator, int(n), feature_names))
    model = _build(estimator, domains, feature_names)
    return Imported(model, TableReader.for_space(model.space))


def _renamed_columns(estimator: Any, X_train: DataLike) -> list[str] | None:
    """The training rows' own column names where the estimator renamed them (LightGBM writes ``mean radius`` as
    ``mean_radius``), so that tables with the original columns read; else ``None`` (the estimator's names)."""
    names = getattr(estimator, "feature_names_in_", None)
    columns = getattr(X_train, "columns", None)
    if names is None or columns is None or len(columns) != len(names):
        return None
    columns = [str(c) for c in columns]
    if columns == [str(n) for n in names]:
        return None
    same = all(re.sub(r"\W", "_", c) == re.sub(r"\W", "_", str(n)) for c, n in zip(columns, names))
    return columns if same else None


def from_sklearn(estimator: Any, X_train: DataLike = None, *, domains: Sequence[Any] | None = None,
                 feature_names: Sequence[str] | None = None, distribution: str | DistributionLike = "auto",
                 distribution_options: Mapping[str, Any] | None = None) -> Classifier:
    """The kcxai model of a fitted scikit-learn classifier, under the distribution of its training rows.

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
    X_train : table, optional
        Training rows (a DataFrame with the estimator's input columns, or an array): with the default
        ``distribution="auto"``, every count is under the product distribution fitted on them, as the
        :class:`~kcxai.Explainer` fits it; they also give a linear model its domains (the values each column
        takes) and a tree ensemble a missing value in the columns they miss. Without them the model is
        uniform over its cells: the paper's setting, which explanations then name.
    domains : sequence, optional
        One list of values per feature (``None`` for a feature keeps its
        default): the finite domain the feature ranges over, in the values the
        estimator sees. Trees and forests default to numeric features cut into
        intervals by their thresholds; ``CategoricalNB`` to ``0 .. n - 1``;
        ``BernoulliNB`` to ``[0, 1]``; linear models to the values of ``X_train``.
    feature_names : sequence of str, optional
        Defaults to ``estimator.feature_names_in_`` if present, else ``x0, x1, ...``.
    distribution : "auto", None, "product", "mixture", "uniform", Distribution or weights
        As the :class:`~kcxai.Explainer` takes it: ``"auto"`` (default) fits a product distribution on
        ``X_train`` when given, else keeps the uniform one; a kind is fitted on ``X_train`` with
        :func:`kcxai.fit_distribution`; a :class:`~kcxai.Distribution` or per-feature weights are used as given.
    distribution_options : mapping, optional
        Passed to :func:`kcxai.fit_distribution` (``n_components``, ``smoothing``, ``random_state``, ...).

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
    >>> nb.space.distribution.kind, from_sklearn(CategoricalNB().fit(X, y), X).space.distribution.kind
    ('uniform', 'product')
    """
    imported = import_estimator(estimator, X_train, domains=domains, feature_names=feature_names)
    return with_distribution(imported.model, distribution, X_train, imported.reader, distribution_options)
