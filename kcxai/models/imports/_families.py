"""The estimators kcxai imports, as one registry: :func:`~kcxai.models.imports.sklearn.from_sklearn` and
:func:`~kcxai.models.imports.pipeline.from_pipeline` dispatch on it and name it in their errors."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kcxai._errors import InvalidTypeError

__all__ = ["Family", "FAMILIES", "SUPPORTED", "family_of"]


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
