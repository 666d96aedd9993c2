"""Import of fitted scikit-learn estimators."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.models._import_trees import RawTree, gc_paused, mask_table, numeric_space, tree_over_space
from kcxai.space import Feature, FeatureSpace

__all__ = ["from_sklearn", "tree_from_sklearn", "forest_from_sklearn", "naive_bayes_from_sklearn",
           "linear_from_sklearn", "sklearn_feature_names", "check_domains", "SUPPORTED"]


def sklearn_feature_names(est: Any, n: int, feature_names: Sequence[str] | None) -> list[str]:
    """Feature names from the argument, the estimator's ``feature_names_in_``, or ``x0, x1, ...``."""
    if feature_names is None:
        names = getattr(est, "feature_names_in_", None)
        return [str(x) for x in names] if names is not None else [f"x{i}" for i in range(n)]
    if isinstance(feature_names, (str, bytes)):
        raise InvalidTypeError(f"'feature_names' must be a sequence of names. Got the string {feature_names!r}.")
    names = list(feature_names)
    if len(names) != n:
        raise InvalidInputError(f"'feature_names' must have {n} names (one per feature). Got {len(names)} instead.")
    return [str(x) for x in names]


def check_domains(domains: Sequence[Any] | None, n: int) -> list[list[float] | None]:
    """Validate a ``domains`` argument: ``None``, or one list of real values (or ``None``) per feature."""
    if domains is None:
        return [None] * n
    domains = list(domains)
    if len(domains) != n:
        raise InvalidInputError(f"'domains' must have {n} entries (one per feature). Got {len(domains)} instead.")
    out: list[list[float] | None] = []
    for i, dom in enumerate(domains):
        if dom is None:
            out.append(None)
            continue
        if isinstance(dom, (str, bytes)) or not hasattr(dom, "__iter__"):
            raise InvalidTypeError(f"'domains[{i}]' must be a list of values or None. Got {dom!r} instead.")
        vals = [v.item() if hasattr(v, "item") else v for v in dom]
        for v in vals:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise InvalidInputError(
                    f"'domains[{i}]' must contain finite real numbers (the values the estimator sees). "
                    f"Got {v!r} instead.")
        if not vals:
            raise InvalidInputError(f"'domains[{i}]' must not be empty.")
        out.append(vals)
    return out


def _fitted_tree(clf: Any) -> Any:
    try:
        from sklearn.tree import DecisionTreeClassifier
    except ImportError as e:  # pragma: no cover - scikit-learn is a core dependency
        raise InvalidTypeError("Importing scikit-learn trees needs scikit-learn installed.") from e
    if not isinstance(clf, DecisionTreeClassifier):
        raise InvalidTypeError(
            f"'clf' must be a fitted sklearn.tree.DecisionTreeClassifier. Got {type(clf).__name__} instead.")
    if not hasattr(clf, "tree_"):
        raise InvalidInputError("'clf' is not fitted: call fit() first.")
    if clf.n_outputs_ != 1:
        raise InvalidInputError(f"'clf' must have a single output. Got {clf.n_outputs_} outputs.")
    return clf.tree_


def raw_tree(t: Any) -> RawTree:
    """The arrays of a fitted sklearn ``tree_`` (sklearn compares ``float32(x) <= threshold``)."""
    return RawTree(np.asarray(t.children_left, dtype=np.int64), np.asarray(t.children_right, dtype=np.int64),
                   np.asarray(t.feature, dtype=np.int64), np.asarray(t.threshold, dtype=np.float64))


def _trees_over_space(structures: Sequence[Any], n: int, names: list[str], doms: list[list[float] | None],
                      labels: Sequence[Any], distribution: Any) -> list[Any]:
    """kcxai trees (node ids = sklearn's) for sklearn tree structures, over one space cut by all their thresholds."""
    raws = [raw_tree(t) for t in structures]
    space = numeric_space(names, doms, raws, distribution, float32=True)
    table = mask_table(space, doms, float32=True)
    out = []
    for t, raw in zip(structures, raws):
        arg = np.argmax(t.value[:, 0, :], axis=1)
        out.append(tree_over_space(raw, space, doms, labels, arg, float32=True, table=table))
    return out


def tree_from_sklearn(clf: Any, *, feature_names: Sequence[str] | None = None,
                      domains: Sequence[Any] | None = None, distribution: Any = None,
                      classes: Sequence[Any] | None = None) -> Any:
    """See :meth:`kcxai.DecisionTree.from_sklearn`. ``classes`` overrides ``clf.classes_``
    (forests store class indices in their trees)."""
    t = _fitted_tree(clf)
    n = int(clf.n_features_in_)
    names = sklearn_feature_names(clf, n, feature_names)
    doms = check_domains(domains, n)
    labels = list(clf.classes_) if classes is None else list(classes)
    return _trees_over_space([t], n, names, doms, labels, distribution)[0]


# -- forests -------------------------------------------------------------------

def forest_from_sklearn(clf: Any, *, domains: Sequence[Any] | None = None,
                        feature_names: Sequence[str] | None = None, distribution: Any = None,
                        voting: str = "soft") -> Any:
    """See :meth:`kcxai.models.RandomForest.from_sklearn`."""
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

    from kcxai.models.forest import VOTINGS

    if not isinstance(clf, (RandomForestClassifier, ExtraTreesClassifier)):
        raise InvalidTypeError(
            "'clf' must be a fitted sklearn.ensemble.RandomForestClassifier or ExtraTreesClassifier. "
            f"Got {type(clf).__name__} instead.")
    if not hasattr(clf, "estimators_"):
        raise InvalidInputError("'clf' is not fitted: call fit() first.")
    if clf.n_outputs_ != 1:
        raise InvalidInputError(f"'clf' must have a single output. Got {clf.n_outputs_} outputs.")
    if voting not in VOTINGS:
        raise InvalidInputError(f"'voting' must be one of {list(VOTINGS)}. Got {voting!r} instead.")
    n = int(clf.n_features_in_)
    names = sklearn_feature_names(clf, n, feature_names)
    doms = check_domains(domains, n)
    structures = [e.tree_ for e in clf.estimators_]
    labels = list(clf.classes_)
    k = len(labels)
    with gc_paused():
        return _forest(structures, n, names, doms, labels, distribution, voting, k)


def _forest(structures: Sequence[Any], n: int, names: list[str], doms: list[list[float] | None],
            labels: list[Any], distribution: Any, voting: str, k: int) -> Any:
    from kcxai.models.forest import RandomForest

    trees = _trees_over_space(structures, n, names, doms, labels, distribution)
    space = trees[0].space
    scores = None
    if voting == "soft":
        # DecisionTreeClassifier.predict_proba returns tree_.value[leaf, 0, :n_classes] (fractions).
        scores = []
        for t, tree in zip(structures, trees):
            values = t.value[:, 0, :k].tolist()
            scores.append({p.leaf: values[p.leaf] for p in tree.paths})
    return RandomForest(space, labels, trees, voting=voting, leaf_scores=scores)


# -- naive Bayes -----------------------------------------------------------------

def naive_bayes_from_sklearn(clf: Any, *, domains: Sequence[Any] | None = None,
                             feature_names: Sequence[str] | None = None, distribution: Any = None) -> Any:
    """See :meth:`kcxai.models.NaiveBayes.from_sklearn`.

    ``CategoricalNB``: value ``v`` of feature ``i`` has the log-likelihoods
    ``feature_log_prob_[i][:, v]``; the default domain is ``0 .. n_categories_[i] - 1``.
    ``BernoulliNB``: value ``v`` is first binarised (``v > binarize``, unless
    ``binarize`` is None); a value ``b`` contributes ``neg + b * (flp - neg)``
    with ``flp = feature_log_prob_`` and ``neg = log(1 - exp(flp))`` computed as
    sklearn computes it; the default domain is ``[0, 1]``.
    """
    import numpy as np
    from sklearn.naive_bayes import BernoulliNB, CategoricalNB

    from kcxai.models._numbers import exact_number
    from kcxai.models.linear import NaiveBayes

    if not isinstance(clf, (CategoricalNB, BernoulliNB)):
        raise InvalidTypeError(
            f"'clf' must be a fitted sklearn CategoricalNB or BernoulliNB. Got {type(clf).__name__} instead.")
    if not hasattr(clf, "feature_log_prob_"):
        raise InvalidInputError("'clf' is not fitted: call fit() first.")
    n = int(clf.n_features_in_)
    names = sklearn_feature_names(clf, n, feature_names)
    doms = check_domains(domains, n)
    labels = list(clf.classes_)
    k = len(labels)
    tables: list[list[list[Any]]] = []
    if isinstance(clf, CategoricalNB):
        for i in range(n):
            flp = clf.feature_log_prob_[i]
            n_cat = flp.shape[1]
            dom = doms[i]
            if dom is None:
                dom = doms[i] = list(range(n_cat))
            for v in dom:
                if not float(v).is_integer() or not 0 <= v < n_cat:
                    raise InvalidInputError(
                        f"'domains[{i}]': CategoricalNB feature {i} has categories 0..{n_cat - 1}; "
                        f"every domain value must be one of them. Got {v!r}.")
            tables.append([[float(flp[c, int(v)]) for v in dom] for c in range(k)])
    else:
        flp = np.asarray(clf.feature_log_prob_)
        neg = np.log(1 - np.exp(flp))  # as BernoulliNB._joint_log_likelihood computes it
        thr = clf.binarize
        for i in range(n):
            dom = doms[i]
            if dom is None:
                dom = doms[i] = [0, 1]
            bits = []
            for v in dom:
                bits.append(Fraction(int(v > thr)) if thr is not None else exact_number(float(v), "value")[0])
            tables.append([[Fraction(float(neg[c, i])) + b * (Fraction(float(flp[c, i])) - Fraction(float(neg[c, i])))
                            for b in bits] for c in range(k)])
    features = [Feature.categorical(names[i], doms[i] or []) for i in range(n)]
    space = FeatureSpace(features, distribution=distribution)
    priors = [float(x) for x in clf.class_log_prior_]
    nb = NaiveBayes(space, labels, priors, tables, log=True)
    nb.weights_from_floats = True
    return nb


# -- linear models -----------------------------------------------------------------

def linear_from_sklearn(clf: Any, *, domains: Sequence[Any] | None = None,
                        feature_names: Sequence[str] | None = None, distribution: Any = None) -> Any:
    """See :meth:`kcxai.models.LinearClassifier.from_sklearn`."""
    import numpy as np
    from sklearn.linear_model._base import LinearClassifierMixin

    from kcxai.models.linear import LinearClassifier

    if not isinstance(clf, LinearClassifierMixin):
        raise InvalidTypeError(
            "'clf' must be a fitted scikit-learn linear classifier (LogisticRegression, LinearSVC, "
            f"RidgeClassifier, SGDClassifier, Perceptron). Got {type(clf).__name__} instead.")
    if not hasattr(clf, "coef_"):
        raise InvalidInputError("'clf' is not fitted: call fit() first.")
    n = int(clf.n_features_in_)
    names = sklearn_feature_names(clf, n, feature_names)
    if domains is None:
        raise InvalidInputError(
            f"'domains' is required for {type(clf).__name__}: a linear model over real numbers has no finite "
            "feature space; give one list of values per feature (e.g. [0, 1] for one-hot features).")
    doms = check_domains(domains, n)
    missing = [i for i, d in enumerate(doms) if d is None]
    if missing:
        raise InvalidInputError(
            f"'domains' must give values for every feature of a linear model. Got None for features {missing}.")
    full = [d for d in doms if d is not None]  # every feature has one (checked above)
    features = [Feature.categorical(names[i], full[i]) for i in range(n)]
    space = FeatureSpace(features, distribution=distribution)
    # sklearn computes X @ coef_.T + intercept_ on float64 inputs: take each value as that float, exactly.
    values = [[Fraction(float(v)) for v in full[i]] for i in range(n)]
    coef = [[Fraction(float(x)) for x in row] for row in np.atleast_2d(clf.coef_)]
    intercepts = [Fraction(float(x)) for x in np.atleast_1d(clf.intercept_)]
    labels = list(clf.classes_)
    if len(coef) == 1:  # two classes: the second iff coef . x + intercept > 0
        weights = [[[Fraction(0)] * len(values[i]), [coef[0][i] * v for v in values[i]]] for i in range(n)]
        intercepts = [Fraction(0), intercepts[0]]
    else:
        weights = [[[coef[c][i] * v for v in values[i]] for c in range(len(coef))] for i in range(n)]
    out = LinearClassifier(space, labels, weights, intercepts)
    out.weights_from_floats = True
    return out


# -- the one import door -------------------------------------------------------------

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
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier

    from kcxai.models import _import_boosted as boosted

    kw = {"domains": domains, "feature_names": feature_names, "distribution": distribution}
    if isinstance(estimator, GradientBoostingClassifier):
        return boosted.gradient_boosting_from_sklearn(estimator, **kw)
    if isinstance(estimator, HistGradientBoostingClassifier):
        return boosted.hist_gradient_boosting_from_sklearn(estimator, **kw)
    if boosted.is_xgboost(estimator):
        return boosted.boosted_from_xgboost(estimator, **kw)
    if boosted.is_lightgbm(estimator):
        return boosted.boosted_from_lightgbm(estimator, **kw)
    if isinstance(estimator, DecisionTreeClassifier):
        return tree_from_sklearn(estimator, **kw)
    if isinstance(estimator, (RandomForestClassifier, ExtraTreesClassifier)):
        return forest_from_sklearn(estimator, **kw)
    if isinstance(estimator, (CategoricalNB, BernoulliNB)):
        return naive_bayes_from_sklearn(estimator, **kw)
    if isinstance(estimator, LinearClassifierMixin):
        return linear_from_sklearn(estimator, **kw)
    raise InvalidTypeError(
        f"from_sklearn() does not support {type(estimator).__name__}. Supported estimators: "
        f"{', '.join(SUPPORTED)}.")
