"""Import of fitted scikit-learn estimators."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.space import Feature, FeatureSpace

__all__ = ["tree_from_sklearn", "sklearn_feature_names", "check_domains"]


def sklearn_feature_names(est: Any, n: int, feature_names: Sequence[str] | None) -> list[str]:
    """Feature names from the argument, the estimator's ``feature_names_in_``, or ``x0, x1, ...``."""
    if feature_names is None:
        names = getattr(est, "feature_names_in_", None)
        return [str(x) for x in names] if names is not None else [f"x{i}" for i in range(n)]
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


def tree_from_sklearn(clf: Any, *, feature_names: Sequence[str] | None = None,
                      domains: Sequence[Any] | None = None, distribution: Any = None,
                      classes: Sequence[Any] | None = None) -> Any:
    """See :meth:`kcxai.DecisionTree.from_sklearn`. ``classes`` overrides ``clf.classes_``
    (forests store class indices in their trees)."""
    import numpy as np

    from kcxai.models.tree import DecisionTree

    t = _fitted_tree(clf)
    n = int(clf.n_features_in_)
    names = sklearn_feature_names(clf, n, feature_names)
    doms = check_domains(domains, n)
    left, right, feat, thr = t.children_left, t.children_right, t.feature, t.threshold
    internal = [k for k in range(t.node_count) if left[k] != -1]
    cuts: list[set[float]] = [set() for _ in range(n)]
    for k in internal:
        cuts[feat[k]].add(float(thr[k]))
    features = []
    for i in range(n):
        if doms[i] is None:
            features.append(Feature.numeric(names[i], sorted(cuts[i])))
        else:
            features.append(Feature.categorical(names[i], doms[i]))
    space = FeatureSpace(features, distribution=distribution)
    # sklearn compares float32(x) <= threshold; do the same for explicit domains.
    f32 = [None if d is None else [float(np.float32(v)) for v in d] for d in doms]
    labels = list(clf.classes_) if classes is None else list(classes)
    fl: list[int] = []
    lab: list[int] = []
    br: list[tuple[tuple[int, int], ...]] = []
    arg = np.argmax(t.value[:, 0, :], axis=1)
    for k in range(t.node_count):
        if left[k] == -1:
            fl.append(-1)
            lab.append(int(arg[k]))
            br.append(())
            continue
        i, th = int(feat[k]), float(thr[k])
        if f32[i] is None:
            vals = features[i].values
            lm = sum(1 << j for j, iv in enumerate(vals) if iv.high <= th)
        else:
            lm = sum(1 << j for j, v in enumerate(f32[i]) if v <= th)
        full = (1 << features[i].size) - 1
        fl.append(i)
        lab.append(-1)
        br.append(((lm, int(left[k])), (full & ~lm, int(right[k]))))
    tree = object.__new__(DecisionTree)
    tree.space = space
    tree._init_classes(labels)
    tree._set_arrays(fl, lab, br, names=None)
    return tree
