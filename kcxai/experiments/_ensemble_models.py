"""The ensembles of ``kcxai experiment ensembles``: which estimators, trained how, imported how.

A *kind* names an estimator and a voting: ``rf-soft`` and ``rf-hard`` are the
same scikit-learn ``RandomForestClassifier`` imported with soft voting (as its
``predict``) and with hard voting (majority of the trees' votes, PyXAI's
semantics); ``gb`` and ``hgb`` are scikit-learn's ``GradientBoostingClassifier``
and ``HistGradientBoostingClassifier``; ``xgb`` and ``lgbm`` are XGBoost's and
LightGBM's classifiers (the ``[boost]`` extra). Every kind is trained with
``trees`` trees (per class for multi-class boosting) of depth at most ``depth``
on the coded training rows of a bundled dataset, and imported with
:func:`kcxai.from_sklearn` over exactly the data's codes (``domains``), so
that every language explains the same finite model.
"""

from __future__ import annotations

import importlib.util
import time
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kcxai._errors import MissingDependencyError
from kcxai.experiments._data import PreparedData
from kcxai.models import BoostedTrees, Classifier, RandomForest, from_sklearn

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.data import DataLike

__all__ = ["MODEL_KINDS", "default_kinds", "require_kind", "TrainedEnsemble", "train_ensemble", "import_ensemble",
           "front_door_estimators"]

#: kind -> (family trained once for all its kinds, the package it needs, description).
MODEL_KINDS: dict[str, tuple[str, str, str]] = {
    "rf-soft": ("rf", "sklearn", "scikit-learn RandomForestClassifier, soft voting (its predict)"),
    "rf-hard": ("rf", "sklearn", "the same forest, hard voting (majority of the trees' votes)"),
    "gb": ("gb", "sklearn", "scikit-learn GradientBoostingClassifier"),
    "hgb": ("hgb", "sklearn", "scikit-learn HistGradientBoostingClassifier (no early stopping)"),
    "xgb": ("xgb", "xgboost", "xgboost XGBClassifier"),
    "lgbm": ("lgbm", "lightgbm", "lightgbm LGBMClassifier (num_leaves = 2**depth)"),
}


def _installed(package: str) -> bool:
    return importlib.util.find_spec(package) is not None


def default_kinds() -> tuple[str, ...]:
    """Every kind whose package is installed, in :data:`MODEL_KINDS` order."""
    return tuple(k for k, (_, pkg, _) in MODEL_KINDS.items() if _installed(pkg))


def require_kind(kind: str) -> None:
    """A :class:`~kcxai.MissingDependencyError` saying how to install a kind's package, if missing."""
    pkg = MODEL_KINDS[kind][1]
    if not _installed(pkg):
        raise MissingDependencyError(
            f"Model kind {kind!r} needs the {pkg!r} package: pip install 'kcxai[boost]' (or pip install {pkg}).")


@dataclass(frozen=True)
class TrainedEnsemble:
    """A fitted estimator of one family and size.

    Attributes
    ----------
    family : str
    clf : the fitted estimator
    trees, depth : int
        The grid's settings.
    train_seconds : float
        Wall-clock seconds of ``fit``.
    """

    family: str
    clf: Any
    trees: int
    depth: int
    train_seconds: float


def _estimator(family: str, trees: int, depth: int, seed: int) -> Any:
    if family == "rf":
        # scikit-learn (heavy) loads only when a model is trained, not at the command line's start
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=seed, n_jobs=1)
    if family == "gb":
        # scikit-learn (heavy) loads only when a model is trained, not at the command line's start
        from sklearn.ensemble import GradientBoostingClassifier

        return GradientBoostingClassifier(n_estimators=trees, max_depth=depth, random_state=seed)
    if family == "hgb":
        # scikit-learn (heavy) loads only when a model is trained, not at the command line's start
        from sklearn.ensemble import HistGradientBoostingClassifier

        # early stopping is on by default above 10,000 rows: it would train fewer trees than asked
        return HistGradientBoostingClassifier(max_iter=trees, max_depth=depth, max_leaf_nodes=None,
                                              early_stopping=False, random_state=seed)
    if family == "xgb":
        # xgboost / lightgbm (optional extra 'boost', heavy) load only for their family
        import xgboost

        return xgboost.XGBClassifier(n_estimators=trees, max_depth=depth, n_jobs=1, random_state=seed)
    # xgboost / lightgbm (optional extra 'boost', heavy) load only for their family
    import lightgbm

    return lightgbm.LGBMClassifier(n_estimators=trees, max_depth=depth, num_leaves=max(2, 2 ** depth), n_jobs=1,
                                   random_state=seed, verbose=-1)


def train_ensemble(data: PreparedData, family: str, trees: int, depth: int, *, seed: int = 0) -> TrainedEnsemble:
    """Fit ``family``'s estimator on ``data``'s training rows (the class labels encoded ``0 .. K-1``).

    Examples
    --------
    >>> from kcxai.experiments import prepare_data
    >>> t = train_ensemble(prepare_data("allhyper"), "rf", 2, 3)
    >>> len(t.clf.estimators_), t.clf.max_depth
    (2, 3)
    """
    X, y = data.X[data.train], data.y[data.train]
    # XGBoost wants classes 0 .. K-1; every family gets the same encoding
    y = np.searchsorted(np.unique(data.y), y)
    clf = _estimator(family, trees, depth, seed)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. LightGBM on a split with no gain; the fit is what it is
        clf.fit(X, y)
    return TrainedEnsemble(family, clf, trees, depth, time.perf_counter() - t0)


def _hard_votes(clf: Any, X: DataLike) -> Any:
    """A random forest's majority vote (the first class of most votes), as kcxai's hard voting."""
    votes = np.stack([np.asarray(e.predict(np.asarray(X, dtype=np.float32)), dtype=np.int64)
                      for e in clf.estimators_])
    counts = np.stack([(votes == k).sum(axis=0) for k in range(len(clf.classes_))])
    return clf.classes_[np.argmax(counts, axis=0)]


def library_predict(kind: str, clf: Any, X: DataLike) -> Any:
    """The source library's predictions (for ``rf-hard``: the trees' majority vote)."""
    X = np.asarray(X)
    return _hard_votes(clf, X) if kind == "rf-hard" else np.asarray(clf.predict(X))


def import_ensemble(kind: str, trained: TrainedEnsemble, data: PreparedData) -> tuple[Any, float]:
    """The kcxai model of ``trained`` for ``kind`` over the data's codes, and the import's wall-clock seconds."""
    names = list(data.feature_names)
    t0 = time.perf_counter()
    model: Classifier
    if kind == "rf-hard":
        model = RandomForest.from_sklearn(trained.clf, voting="hard", domains=data.domains, feature_names=names)
    else:
        model = from_sklearn(trained.clf, domains=data.domains, feature_names=names)
    return model, time.perf_counter() - t0


def n_nodes(model: RandomForest | BoostedTrees) -> int:
    """Nodes of the imported trees (splits and leaves)."""
    return int(sum(t.n_nodes for t in model.trees))


def front_door_estimators(smoke: bool) -> list[tuple[str, Any]]:
    """The scikit-learn estimators of the front-door benchmarks, named: the default RandomForest,
    GradientBoosting 100x3, HistGradientBoosting and (when installed) XGBoost 100x6; two tiny ones for
    ``smoke``."""
    from sklearn.ensemble import (  # scikit-learn: loaded when a benchmark trains
        GradientBoostingClassifier,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
    )

    if smoke:
        return [("RandomForest 5x3", RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0)),
                ("GradientBoosting 5x2", GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0))]
    out: list[tuple[str, Any]] = [
        ("RandomForest default", RandomForestClassifier(random_state=0, n_jobs=1)),
        ("GradientBoosting 100x3", GradientBoostingClassifier(n_estimators=100, max_depth=3, random_state=0)),
        ("HistGradientBoosting default", HistGradientBoostingClassifier(random_state=0))]
    if _installed("xgboost"):
        from xgboost import XGBClassifier  # optional: the boost extra

        out.append(("XGBoost 100x6", XGBClassifier(n_estimators=100, max_depth=6, random_state=0, n_jobs=1)))
    else:
        print("XGBoost is not installed (pip install -e '.[boost]'): its row is left out")
    return out
