"""Import of fitted scikit-learn estimators."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.models.imports._trees import EnsembleParts, RawEnsemble, RawTree, plain_parts
from kcxai.models._numbers import exact_number
from kcxai.models._tree_data import TreeParts
from kcxai.space import Feature, FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike

__all__ = ["tree_parts", "forest_parts", "raw_tree", "raw_sklearn_trees", "nan_rule", "raw_decision_tree", "raw_forest",
           "leaf_probabilities", "MAX_SCALE", "as_tree_parts", "naive_bayes_parts", "linear_parts",
           "sklearn_feature_names", "check_domains", "NaiveBayesParts", "LinearParts"]


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
        # scikit-learn (heavy) loads on first import of an estimator, not with kcxai
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


def raw_tree(t: Any, missing: bool = False) -> RawTree:
    """The arrays of a fitted sklearn ``tree_`` (sklearn compares ``float32(x) <= threshold``; with ``missing``,
    NaN goes left where ``missing_go_to_left``)."""
    ml = np.asarray(t.missing_go_to_left, dtype=bool) if missing else None
    return RawTree(np.asarray(t.children_left, dtype=np.int64), np.asarray(t.children_right, dtype=np.int64),
                   np.asarray(t.feature, dtype=np.int64), np.asarray(t.threshold, dtype=np.float64), ml)


def nan_rule(est: Any, how: str) -> str:
    """``how`` when the estimator accepts NaN at predict time (its ``allow_nan`` tag), else ``""``."""
    try:
        allow = bool(est.__sklearn_tags__().input_tags.allow_nan)
    except AttributeError:  # pragma: no cover - scikit-learn < 1.6 has no tags; not a supported version
        allow = False
    return how if allow else ""


def raw_sklearn_trees(clf: Any, structures: Sequence[Any], *, soft: bool) -> RawEnsemble:
    """The :class:`RawEnsemble` of fitted sklearn tree structures (one tree, or a forest's)."""
    labels = list(clf.classes_)
    rule = nan_rule(clf, "NaN follows each node's missing_go_to_left")
    raws = [raw_tree(t, missing=bool(rule)) for t in structures]
    values = None
    if soft:
        values = leaf_probabilities(structures, len(labels))
    return RawEnsemble(labels, raws, [np.argmax(t.value[:, 0, :], axis=1) for t in structures], values,
                       float32=True, n_features=int(clf.n_features_in_), nan_rule=rule)


#: The largest leaf weight whose class counts :func:`leaf_probabilities` recovers (float64 holds every integer up
#: to it exactly).
_EXACT_INTEGERS = 2**53

#: The largest least common multiple of the denominators that :func:`leaf_probabilities` keeps as ratios. A
#: forest's integer scale is the lcm of all its leaves' denominators, and the engines' encodings grow with its
#: bits (float64 leaves give about ``2**60``). Unbounded, a 30-tree forest of depth 8 on adult (20,000 rows)
#: needed a 1,190-bit scale (518 distinct denominators) and 18 times the clauses of the float leaves' SAT
#: encoding. ``lcm(1..32) < 2**48``: every denominator up to 32 is always kept.
MAX_SCALE = 2**48


def leaf_probabilities(trees: Sequence[Any], n_classes: int, *,
                       max_scale: int | None = MAX_SCALE) -> list[list[tuple[Fraction | float, ...] | None]]:
    """Per fitted scikit-learn ``tree_`` of a forest, per node, the class probabilities of a leaf (``None`` at
    internal nodes): what a soft-voting forest sums.

    ``DecisionTreeClassifier.predict_proba`` returns ``tree_.value[leaf, 0]`` (scikit-learn >= 1.4): class
    fractions ``c / w`` of the leaf's weighted training counts, rounded to float64. A leaf's counts are
    *recovered* when its weight ``w = weighted_n_node_samples`` is an integer (integer sample weights:
    bootstrap counts, none) and the counts ``c = round(value * w)`` sum to ``w`` and give back every stored
    float (``float(c / w) == value``); its *denominator* is ``w`` over the gcd of ``w`` and the counts. The
    recovered leaves are taken in increasing order of denominator, and a leaf's probabilities are the exact
    rationals ``c / w`` when the lcm of the denominators kept so far, its own included, is at most
    ``max_scale`` (``None``: always); the other leaves give the stored floats, which the forest takes as the
    rationals they hold (fractional sample or class weights; large denominators of forests with big leaves).

    The rationals keep the ties of the counts: ``1/3 + 1/6 = 1/2`` (scikit-learn's float64 sum is ``0.5``
    too), where the float64 values taken exactly sum to ``1/2 - 2**-55``. Ties are frequent with small
    denominators, which are always kept (``lcm(1..32) <= max_scale``).

    Examples
    --------
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> clf = DecisionTreeClassifier(max_depth=1).fit([[0], [0], [0], [1]], [0, 0, 1, 1])
    >>> [row for row in leaf_probabilities([clf.tree_], 2)[0] if row is not None]
    [(Fraction(2, 3), Fraction(1, 3)), (Fraction(0, 1), Fraction(1, 1))]
    """
    read = [_leaf_counts(t, n_classes) for t in trees]
    kept = _kept_denominators(sorted({d for r in read for d in r.denominator[r.exact].tolist()}), max_scale)
    cache: dict[tuple[int, int], Fraction] = {}  # equal Fractions shared between trees
    out = []
    for r in read:
        ratio = r.exact & np.isin(r.denominator, np.asarray(kept, dtype=np.int64))
        # one tuple per distinct row: (counts, weight) where kept, else the floats
        keys = np.concatenate([np.where(ratio[:, None], r.counts, r.value),
                               np.where(ratio, r.weight, -1.0)[:, None]], axis=1)
        uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
        rows: list[tuple[Fraction | float, ...]] = []
        for key in uniq.tolist():
            total = key[-1]
            if total > 0:
                rows.append(tuple(_ratio(int(c), int(total), cache) for c in key[:-1]))
            else:  # floats, which the forest takes as the rationals they store (and says so: weights_from_floats)
                rows.append(tuple(key[:-1]))
        per_node: list[tuple[Fraction | float, ...] | None] = [None] * r.n_nodes
        for leaf, k in zip(r.leaves.tolist(), np.asarray(inverse).ravel().tolist()):
            per_node[leaf] = rows[k]
        out.append(per_node)
    return out


class _LeafCounts(NamedTuple):
    """A tree's leaves (node ids), their float64 class fractions, weights, recovered counts, whether the
    counts were recovered, and their denominators (1 where not)."""

    n_nodes: int
    leaves: np.ndarray
    value: np.ndarray
    weight: np.ndarray
    counts: np.ndarray
    exact: np.ndarray
    denominator: np.ndarray


def _leaf_counts(t: Any, n_classes: int) -> _LeafCounts:
    value = np.asarray(t.value[:, 0, :n_classes], dtype=np.float64)
    leaves = np.flatnonzero(np.asarray(t.children_left) == -1)
    v, w = value[leaves], np.asarray(t.weighted_n_node_samples, dtype=np.float64)[leaves]
    integral = (w == np.rint(w)) & (w >= 1) & (w <= _EXACT_INTEGERS)
    w = np.where(integral, w, 1.0)
    counts = np.rint(v * w[:, None])
    with np.errstate(invalid="ignore"):
        exact = integral & (counts.sum(axis=1) == w) & np.all(counts / w[:, None] == v, axis=1)
    ints = np.concatenate([counts, w[:, None]], axis=1).astype(np.int64)
    den = np.where(exact, ints[:, -1] // np.maximum(np.gcd.reduce(ints, axis=1), 1), 1)
    return _LeafCounts(len(value), leaves, v, w, counts, exact, den)


def _kept_denominators(denominators: Sequence[int], max_scale: int | None) -> list[int]:
    """The denominators kept, smallest first, while the lcm of those kept stays at most ``max_scale``."""
    kept, scale = [], 1
    for d in denominators:
        grown = math.lcm(scale, d)
        if max_scale is None or grown <= max_scale:
            kept.append(d)
            scale = grown
    return kept


def _ratio(count: int, total: int, cache: dict[tuple[int, int], Fraction]) -> Fraction:
    key = (count, total)
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = Fraction(count, total)
    return hit


def tree_parts(clf: Any, *, feature_names: Sequence[str] | None = None,
               domains: Sequence[Any] | None = None, distribution: DistributionLike = None) -> TreeParts:
    """The parts of :meth:`kcxai.DecisionTree.from_sklearn`."""
    raw = raw_decision_tree(clf)
    names = sklearn_feature_names(clf, raw.n_features, feature_names)
    doms = check_domains(domains, raw.n_features)
    return as_tree_parts(plain_parts(raw, names, doms, distribution))


def raw_decision_tree(clf: Any) -> RawEnsemble:
    """The :class:`RawEnsemble` (one tree) of a fitted ``DecisionTreeClassifier``."""
    return raw_sklearn_trees(clf, [_fitted_tree(clf)], soft=False)


def as_tree_parts(parts: EnsembleParts) -> TreeParts:
    """The one tree of ``parts`` as :class:`TreeParts`."""
    return TreeParts(parts.space, parts.classes, parts.trees[0], leaves=parts.leaves[0] if parts.leaves else None)


# -- forests -------------------------------------------------------------------

def check_forest(clf: Any) -> None:
    """A fitted single-output ``RandomForestClassifier`` / ``ExtraTreesClassifier``, or an error."""
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

    if not isinstance(clf, (RandomForestClassifier, ExtraTreesClassifier)):
        raise InvalidTypeError(
            "'clf' must be a fitted sklearn.ensemble.RandomForestClassifier or ExtraTreesClassifier. "
            f"Got {type(clf).__name__} instead.")
    if not hasattr(clf, "estimators_"):
        raise InvalidInputError("'clf' is not fitted: call fit() first.")
    if clf.n_outputs_ != 1:
        raise InvalidInputError(f"'clf' must have a single output. Got {clf.n_outputs_} outputs.")


def forest_parts(clf: Any, *, domains: Sequence[Any] | None = None, feature_names: Sequence[str] | None = None,
                 distribution: DistributionLike = None, soft: bool = True) -> EnsembleParts:
    """The parts of :meth:`kcxai.models.RandomForest.from_sklearn`; with ``soft``, each node's class scores.

    Call it with the garbage collector paused (:func:`~kcxai._gc.gc_paused`): it builds millions of tuples.
    """
    raw = raw_forest(clf, soft=soft)
    names = sklearn_feature_names(clf, raw.n_features, feature_names)
    return plain_parts(raw, names, check_domains(domains, raw.n_features), distribution)


def raw_forest(clf: Any, *, soft: bool = True) -> RawEnsemble:
    """The :class:`RawEnsemble` of a fitted ``RandomForestClassifier`` / ``ExtraTreesClassifier``."""
    check_forest(clf)
    return raw_sklearn_trees(clf, [e.tree_ for e in clf.estimators_], soft=soft)


# -- naive Bayes -----------------------------------------------------------------

class NaiveBayesParts(NamedTuple):
    """The arguments of :class:`~kcxai.models.NaiveBayes` (log-probabilities) for an sklearn naive Bayes."""

    space: FeatureSpace
    classes: list[Any]
    log_priors: list[float]
    tables: list[list[list[Any]]]


def naive_bayes_parts(clf: Any, *, domains: Sequence[Any] | None = None,
                      feature_names: Sequence[str] | None = None,
                      distribution: DistributionLike = None) -> NaiveBayesParts:
    """The parts of :meth:`kcxai.models.NaiveBayes.from_sklearn`.

    ``CategoricalNB``: value ``v`` of feature ``i`` has the log-likelihoods
    ``feature_log_prob_[i][:, v]``; the default domain is ``0 .. n_categories_[i] - 1``.
    ``BernoulliNB``: value ``v`` is first binarised (``v > binarize``, unless
    ``binarize`` is None); a value ``b`` contributes ``neg + b * (flp - neg)``
    with ``flp = feature_log_prob_`` and ``neg = log(1 - exp(flp))`` computed as
    sklearn computes it; the default domain is ``[0, 1]``.
    """
    # scikit-learn (heavy) loads on first import of an estimator, not with kcxai
    from sklearn.naive_bayes import BernoulliNB, CategoricalNB

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
    return NaiveBayesParts(space, labels, [float(x) for x in clf.class_log_prior_], tables)


# -- linear models -----------------------------------------------------------------

class LinearParts(NamedTuple):
    """The arguments of :class:`~kcxai.models.LinearClassifier` for an sklearn linear classifier."""

    space: FeatureSpace
    classes: list[Any]
    weights: list[list[list[Fraction]]]
    intercepts: list[Fraction]


def linear_parts(clf: Any, *, domains: Sequence[Any] | None = None,
                 feature_names: Sequence[str] | None = None, distribution: DistributionLike = None) -> LinearParts:
    """The parts of :meth:`kcxai.models.LinearClassifier.from_sklearn`."""
    # scikit-learn (heavy) loads on first import of an estimator, not with kcxai
    from sklearn.linear_model._base import LinearClassifierMixin

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
    return LinearParts(space, labels, weights, intercepts)
