"""Import of fitted boosted-tree classifiers: scikit-learn's GradientBoosting and HistGradientBoosting,
XGBoost's ``XGBClassifier`` and LightGBM's ``LGBMClassifier``.

How each library decides (checked against its predictions in the tests):

* ``GradientBoostingClassifier``: ``raw = init + learning_rate * sum(tree values)``;
  trees compare ``float32(x) <= threshold``; two classes: the second iff ``raw >= 0``.
* ``HistGradientBoostingClassifier``: ``raw = baseline + sum(leaf values)`` (the
  learning rate is already in the values); ``x <= threshold`` on float64; two
  classes: the second iff ``raw > 0``. Private API (``_predictors``,
  ``_baseline_prediction``), read as scikit-learn 1.3 to 1.9 lay it out.
* XGBoost: ``float32(x) < threshold`` goes left ("yes"): that is
  ``float32(x) <= t'`` with ``t'`` the float32 just below the threshold.
  The margin is the base margin plus the leaves (float32 values); for
  ``binary:logistic`` the stored ``base_score`` is a probability and the base
  margin its logit; multi-class trees add to class ``tree_info[t]``.
* LightGBM: ``x <= threshold`` on float64 (``decision_type`` ``<=``), after
  reading every ``|x| <= 1e-35f`` as 0 (its ``kZeroThreshold``, a float32
  constant); a threshold in ``[-1e-35f, 1e-35f)`` is moved to the equivalent
  test on the raw value. The initial score is already in the first trees' leaves.

Missing values (NaN): each node's rule is kept on the raw trees
(:class:`~kcxai.models.imports._trees.RawTree`'s ``missing_left``), used when a
feature has a missing value (pipelines, :mod:`kcxai.models.imports._pipeline_trees`):
HistGradientBoosting's ``missing_go_to_left``, XGBoost's ``default_left``,
LightGBM's ``default_left`` for ``missing_type`` NaN and, for ``missing_type``
None, the side of 0 (LightGBM reads NaN as 0 there). ``GradientBoostingClassifier``
refuses NaN. Categorical splits, DART boosters, linear trees, ``zero_as_missing``
and non-classification objectives are refused with an error saying what is supported.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.models.imports._trees import EnsembleParts, RawEnsemble, RawTree, plain_parts
from kcxai.models.imports._sklearn import check_domains, nan_rule, raw_tree, sklearn_feature_names

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike

__all__ = ["boosted_parts", "raw_boosted", "is_xgboost", "is_lightgbm"]


def _assemble(raws: Sequence[RawTree], values: Sequence[Sequence[Any]], tree_class: Sequence[int] | None,
              init: Sequence[Any], classes: Sequence[object], n: int, *, float32: bool, ties: str,
              rule: str) -> RawEnsemble:
    """The :class:`RawEnsemble` of boosted trees (``values[t][k]``: the value of leaf ``k`` of tree ``t``)."""
    return RawEnsemble(list(classes), list(raws), [np.zeros(len(raw.left), dtype=np.int64) for raw in raws],
                       [list(v) for v in values], float32, n, rule, None if tree_class is None else list(tree_class),
                       list(init), ties)


def _check_classes(clf: Any) -> list[Any]:
    if not hasattr(clf, "classes_"):
        raise InvalidInputError("'clf' is not fitted: call fit() first.")
    labels = list(clf.classes_)
    if len(labels) < 2:
        raise InvalidInputError(f"'clf' must have at least two classes. Got {labels}.")
    return labels


# -- scikit-learn ------------------------------------------------------------------

def _raw_gradient_boosting(clf: Any) -> RawEnsemble:
    """The trees of a fitted ``sklearn.ensemble.GradientBoostingClassifier``."""
    # scikit-learn (heavy) loads on first import of an estimator, not with kcxai
    from sklearn.dummy import DummyClassifier  # scikit-learn: loaded on import, not with kcxai
    from sklearn.ensemble import GradientBoostingClassifier

    if not isinstance(clf, GradientBoostingClassifier):
        raise InvalidTypeError(f"'clf' must be a fitted GradientBoostingClassifier. Got {type(clf).__name__}.")
    labels = _check_classes(clf)
    n = int(clf.n_features_in_)
    if not (isinstance(clf.init_, str) and clf.init_ == "zero") and not isinstance(clf.init_, DummyClassifier):
        raise InvalidInputError(
            f"'clf' has the init estimator {type(clf.init_).__name__}, whose raw prediction depends on the "
            "instance; supported: init=None (the class prior) or init='zero'.")
    # the init estimator predicts a constant: read it at any point
    init_raw = clf._raw_predict_init(np.zeros((1, n), dtype=np.float32))[0]
    lr = Fraction(float(clf.learning_rate))
    est = clf.estimators_
    k = est.shape[1]
    raws, values, tree_class = [], [], []
    for stage in est:
        for c, reg in enumerate(stage):
            t = reg.tree_
            raws.append(raw_tree(t))
            values.append([lr * Fraction(v) for v in t.value[:, 0, 0].tolist()])
            tree_class.append(c)
    rule = nan_rule(clf, "NaN follows each node's missing_go_to_left")  # GradientBoosting refuses NaN
    return _assemble(raws, values, tree_class if k > 1 else None, [float(x) for x in init_raw], labels, n,
                     float32=True, ties="last" if k == 1 else "first", rule=rule)


def _raw_hist_gradient_boosting(clf: Any) -> RawEnsemble:
    """The trees of a fitted ``sklearn.ensemble.HistGradientBoostingClassifier``."""
    # scikit-learn (heavy) loads on first import of an estimator, not with kcxai
    from sklearn.ensemble import HistGradientBoostingClassifier

    if not isinstance(clf, HistGradientBoostingClassifier):
        raise InvalidTypeError(
            f"'clf' must be a fitted HistGradientBoostingClassifier. Got {type(clf).__name__}.")
    labels = _check_classes(clf)
    if getattr(clf, "_preprocessor", None) is not None or getattr(clf, "is_categorical_", None) is not None \
            and bool(np.any(clf.is_categorical_)):
        raise InvalidInputError(
            "'clf' has categorical features (categorical_features=...): their bitset splits are not supported; "
            "supported: numeric features (encode categories as numbers, e.g. ordinal codes).")
    n = int(clf.n_features_in_)
    raws, values, tree_class = [], [], []
    for stage in clf._predictors:
        for c, pred in enumerate(stage):
            nodes = pred.nodes
            if bool(np.any(nodes["is_categorical"])):
                raise InvalidInputError("'clf' has a categorical split: not supported (numeric features only).")
            leaf = nodes["is_leaf"].astype(bool)
            left = np.where(leaf, -1, nodes["left"].astype(np.int64))
            right = np.where(leaf, -1, nodes["right"].astype(np.int64))
            raws.append(RawTree(left, right, nodes["feature_idx"].astype(np.int64),
                                nodes["num_threshold"].astype(np.float64),
                                nodes["missing_go_to_left"].astype(bool)))
            values.append(nodes["value"].astype(np.float64).tolist())
            tree_class.append(c)
    k = len(clf._predictors[0]) if clf._predictors else 1
    init = [float(x) for x in np.asarray(clf._baseline_prediction, dtype=np.float64).ravel()]
    if not raws:
        raise InvalidInputError("'clf' has no trees.")
    return _assemble(raws, values, tree_class if k > 1 else None, init, labels, n, float32=False, ties="first",
                     rule="NaN follows each node's missing_go_to_left")


# -- XGBoost -------------------------------------------------------------------------

def is_xgboost(est: Any) -> bool:
    """Whether ``est`` is an XGBoost sklearn-API estimator (without importing xgboost)."""
    return type(est).__module__.split(".")[0] == "xgboost"


def is_lightgbm(est: Any) -> bool:
    """Whether ``est`` is a LightGBM sklearn-API estimator (without importing lightgbm)."""
    return type(est).__module__.split(".")[0] == "lightgbm"


def boosted_parts(clf: Any, *, domains: Sequence[Any] | None = None, feature_names: Sequence[str] | None = None,
                  distribution: DistributionLike = None) -> EnsembleParts:
    """The parts of :meth:`kcxai.models.BoostedTrees.from_sklearn`, for any supported boosted classifier.

    Call it with the garbage collector paused (:func:`~kcxai._gc.gc_paused`).
    """
    raw = raw_boosted(clf)
    names = sklearn_feature_names(clf, raw.n_features, feature_names)
    return plain_parts(raw, names, check_domains(domains, raw.n_features), distribution)


def raw_boosted(clf: Any) -> RawEnsemble:
    """The :class:`RawEnsemble` of any supported boosted classifier."""
    # scikit-learn (heavy) loads on first import of an estimator, not with kcxai
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier

    if isinstance(clf, GradientBoostingClassifier):
        return _raw_gradient_boosting(clf)
    if isinstance(clf, HistGradientBoostingClassifier):
        return _raw_hist_gradient_boosting(clf)
    if is_xgboost(clf):
        return _raw_xgboost(clf)
    if is_lightgbm(clf):
        return _raw_lightgbm(clf)
    raise InvalidTypeError(
        "'clf' must be a fitted GradientBoostingClassifier, HistGradientBoostingClassifier, "
        f"xgboost.XGBClassifier or lightgbm.LGBMClassifier. Got {type(clf).__name__} instead.")


def _float_list(text: str) -> list[float]:
    """XGBoost's ``base_score``: ``"5E-1"`` or, from 3.0, ``"[5E-1,2E-1]"``."""
    text = text.strip()
    if text.startswith("["):
        return [float(x) for x in text.strip("[]").split(",") if x.strip()]
    return [float(text)]


def _logit32(p: float) -> float:
    """``-log(1 / p - 1)`` in float32, as XGBoost turns a logistic base score into a margin."""
    one = np.float32(1.0)
    return float(np.float32(-np.log(one / np.float32(p) - one, dtype=np.float32)))


def _raw_xgboost(clf: Any) -> RawEnsemble:
    """The trees of a fitted ``xgboost.XGBClassifier``."""
    if not is_xgboost(clf) or not hasattr(clf, "get_booster"):
        raise InvalidTypeError(f"'clf' must be a fitted xgboost.XGBClassifier. Got {type(clf).__name__}.")
    if type(clf).__name__ != "XGBClassifier":
        raise InvalidTypeError(
            f"{type(clf).__name__} is not supported: only XGBClassifier (objectives binary:logistic, "
            "binary:logitraw, multi:softprob, multi:softmax).")
    labels = _check_classes(clf)
    booster = clf.get_booster()
    model = json.loads(bytes(booster.save_raw(raw_format="json")))
    learner = model["learner"]
    objective = learner["objective"]["name"]
    if objective not in ("binary:logistic", "binary:logitraw", "multi:softprob", "multi:softmax"):
        raise InvalidInputError(
            f"'clf' has the objective {objective!r}; supported: binary:logistic, binary:logitraw, "
            "multi:softprob, multi:softmax.")
    gb = learner["gradient_booster"]
    if gb.get("name") != "gbtree":
        raise InvalidInputError(f"'clf' uses the booster {gb.get('name')!r}; supported: gbtree.")
    n = int(learner["learner_model_param"]["num_feature"])
    k = len(labels)
    base = _float_list(learner["learner_model_param"]["base_score"])
    if objective == "binary:logistic":
        base = [_logit32(b) for b in base]
    init = base if k > 2 else base[:1]
    if len(init) == 1 and k > 2:
        init = init * k
    trees_json = gb["model"]["trees"]
    tree_info = [int(c) for c in gb["model"]["tree_info"]]
    best = getattr(clf, "best_iteration", None) if _has_best_iteration(clf) else None
    if best is not None:  # predict() stops at the best iteration after early stopping
        per_iter = max(1, int(gb["model"]["gbtree_model_param"].get("num_parallel_tree", 1))) * (k if k > 2 else 1)
        trees_json = trees_json[:(best + 1) * per_iter]
        tree_info = tree_info[:len(trees_json)]
    raws, values = [], []
    for t in trees_json:
        if any(int(x) != 0 for x in t.get("split_type", [])):
            raise InvalidInputError("'clf' has a categorical split: not supported (numeric features only).")
        left = np.asarray(t["left_children"], dtype=np.int64)
        right = np.asarray(t["right_children"], dtype=np.int64)
        cond = np.asarray(t["split_conditions"], dtype=np.float32)
        # x < t (float32)  <=>  x <= the float32 just below t
        below = np.nextafter(cond, np.float32(-np.inf)).astype(np.float64)
        raws.append(RawTree(left, right, np.asarray(t["split_indices"], dtype=np.int64), below,
                            np.asarray(t["default_left"], dtype=bool)))
        values.append(cond.astype(np.float64).tolist())  # a leaf's value is its split condition
    return _assemble(raws, values, tree_info if k > 2 else None, init, labels, n, float32=True, ties="first",
                     rule="NaN follows each node's default direction")


def _has_best_iteration(clf: Any) -> bool:
    try:
        return getattr(clf, "best_iteration", None) is not None
    except AttributeError:
        return False


# -- LightGBM -------------------------------------------------------------------------

def _raw_lightgbm(clf: Any) -> RawEnsemble:
    """The trees of a fitted ``lightgbm.LGBMClassifier``."""
    if not is_lightgbm(clf) or type(clf).__name__ != "LGBMClassifier":
        raise InvalidTypeError(f"'clf' must be a fitted lightgbm.LGBMClassifier. Got {type(clf).__name__}.")
    labels = _check_classes(clf)
    dump = clf.booster_.dump_model()
    objective = str(dump.get("objective", "")).split(" ")[0]
    if objective not in ("binary", "multiclass"):
        raise InvalidInputError(f"'clf' has the objective {objective!r}; supported: binary, multiclass (softmax).")
    n = int(dump["max_feature_idx"]) + 1
    k = len(labels)
    per_iter = int(dump["num_tree_per_iteration"])
    raws, values, tree_class = [], [], []
    for t, info in enumerate(dump["tree_info"]):
        raw, vals = _lightgbm_tree(info["tree_structure"])
        raws.append(raw)
        values.append(vals)
        tree_class.append(t % per_iter)
    return _assemble(raws, values, tree_class if k > 2 else None, [0] * (k if k > 2 else 1), labels, n,
                     float32=False, ties="first", rule="NaN follows each node's default direction (or is read as 0)")


#: LightGBM reads a value ``x`` with ``|x| <= _ZERO`` as 0 (``kZeroThreshold = 1e-35f``).
_ZERO = float(np.float32(1e-35))


def _raw_threshold(t: float) -> float:
    """The threshold ``t'`` with ``x <= t'`` iff LightGBM's ``read(x) <= t`` (``read`` snaps ``|x| <= Z`` to 0)."""
    if 0 <= t < _ZERO:  # read(x) <= t  <=>  x <= t or |x| <= Z  <=>  x <= Z
        return _ZERO
    if -_ZERO <= t < 0:  # read(x) <= t  <=>  x <= t and |x| > Z  <=>  x < -Z
        return float(np.nextafter(-_ZERO, -np.inf))
    return t


def _lightgbm_tree(root: dict[str, Any]) -> tuple[RawTree, list[float]]:
    """Flat arrays of a LightGBM JSON tree (node ids in pre-order)."""
    left: list[int] = []
    right: list[int] = []
    feat: list[int] = []
    thr: list[float] = []
    vals: list[float] = []
    miss: list[bool] = []
    stack: list[tuple[dict[str, Any], int, int]] = [(root, -1, 0)]  # node, parent, side
    while stack:
        node, parent, side = stack.pop()
        nid = len(left)
        if parent >= 0:
            (left if side == 0 else right)[parent] = nid
        if "leaf_value" in node:
            if "leaf_coeff" in node:
                raise InvalidInputError("'clf' has linear trees (linear_tree=True): not supported.")
            left.append(-1)
            right.append(-1)
            feat.append(-2)
            thr.append(0.0)
            vals.append(float(node["leaf_value"]))
            miss.append(False)
            continue
        if node.get("decision_type") != "<=":
            raise InvalidInputError(
                f"'clf' has a {node.get('decision_type')!r} split (categorical): not supported (numeric only).")
        if node.get("missing_type") == "Zero":
            raise InvalidInputError("'clf' treats zero as missing (zero_as_missing=True): not supported.")
        t = _raw_threshold(float(node["threshold"]))
        if not math.isfinite(t):
            raise InvalidInputError(f"'clf' has a non-finite threshold {t!r}.")
        left.append(-2)
        right.append(-2)
        feat.append(int(node["split_feature"]))
        thr.append(t)
        vals.append(0.0)
        # missing_type NaN: the default direction; None: NaN is read as 0 (LightGBM's NumericalDecision)
        miss.append(bool(node.get("default_left")) if node.get("missing_type") == "NaN" else 0.0 <= t)
        stack.append((node["right_child"], nid, 1))
        stack.append((node["left_child"], nid, 0))
    return (RawTree(np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64),
                    np.asarray(feat, dtype=np.int64), np.asarray(thr, dtype=np.float64),
                    np.asarray(miss, dtype=bool)), vals)
