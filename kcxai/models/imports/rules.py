"""Importers of rule models fitted by third-party learners (optional extra ``kcxai[rules]``).

* ``wittgenstein``'s RIPPER and IREP -> :class:`~kcxai.models.RuleSet`
  (:meth:`~kcxai.models.RuleSet.from_wittgenstein`);
* ``imodels``' ``GreedyRuleListClassifier`` -> :class:`~kcxai.models.DecisionList`
  (:meth:`~kcxai.models.DecisionList.from_imodels`).

Each importer reads the fitted object into :class:`RuleModelParts`, the
arguments of the kcxai class's constructor, which the class method then calls;
this module needs neither learner installed to import, and does not import the
rule classes.

Examples
--------
>>> rule_set_from_wittgenstein(object(), {"a": [0, 1]}, (0, 1))
Traceback (most recent call last):
...
kcxai._errors.InvalidTypeError: 'clf' must be a fitted wittgenstein RIPPER or IREP classifier. Got object instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Union

import numpy as np

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.models._rule_conditions import ConditionsLike
from kcxai.models.imports._sklearn import check_domains, sklearn_feature_names
from kcxai.space import Feature, FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike

__all__ = ["RuleModelParts", "SpaceLike", "rule_set_from_wittgenstein", "decision_list_from_imodels"]

#: A feature space, or ``{name: domain values}`` in feature order (categorical features).
SpaceLike = Union[FeatureSpace, Mapping[str, Sequence[Any]]]


class RuleModelParts(NamedTuple):
    """The constructor arguments of a rule model read from another library's object."""

    space: FeatureSpace
    classes: list[Any]
    rules: list[tuple[ConditionsLike, Any]]
    default: Any
    label: Any = None  # a RuleSet's class (rule sets only)


def rule_set_from_wittgenstein(clf: Any, space: SpaceLike, classes: Sequence[object]) -> RuleModelParts:
    """The parts of a :class:`~kcxai.models.RuleSet` for a fitted wittgenstein RIPPER or IREP classifier.

    See :meth:`kcxai.models.RuleSet.from_wittgenstein`.
    """
    ruleset = getattr(clf, "ruleset_", None)
    if ruleset is None or not hasattr(ruleset, "rules"):
        raise InvalidTypeError(
            f"'clf' must be a fitted wittgenstein RIPPER or IREP classifier. Got {type(clf).__name__} instead.")
    if isinstance(space, Mapping):
        space = FeatureSpace([Feature.categorical(str(n), list(vs)) for n, vs in space.items()])
    if not isinstance(space, FeatureSpace):
        raise InvalidTypeError(f"'space' must be a FeatureSpace or a mapping name -> values. Got {space!r}.")
    classes = list(classes)
    if len(classes) != 2:
        raise InvalidInputError(f"'classes' must be a pair (not positive, positive). Got {classes!r}.")
    binned = getattr(getattr(clf, "bin_transformer_", None), "bins_", None) or {}
    rules: list[tuple[ConditionsLike, Any]] = []
    for r, rule in enumerate(ruleset.rules):
        conds = []
        for cond in rule.conds:
            name = str(cond.feature)
            if name in binned:
                raise InvalidInputError(
                    f"Rule {r} tests the discretised feature {name!r} ({cond}); kcxai imports equality "
                    "conditions only: fit with n_discretize_bins=None on discrete features, or discretise first.")
            val = cond.val.item() if hasattr(cond.val, "item") else cond.val
            conds.append((name, val))
        rules.append((conds, classes[1]))
    return RuleModelParts(space, classes, rules, classes[0], classes[1])


def decision_list_from_imodels(clf: Any, domains: Sequence[Sequence[Any]], feature_names: Sequence[str] | None,
                               distribution: DistributionLike) -> RuleModelParts:
    """The parts of a :class:`~kcxai.models.DecisionList` for a fitted imodels ``GreedyRuleListClassifier``.

    See :meth:`kcxai.models.DecisionList.from_imodels`.
    """
    rules = getattr(clf, "rules_", None)
    if type(clf).__name__ != "GreedyRuleListClassifier" or not isinstance(rules, list) or not rules:
        raise InvalidTypeError(
            f"'clf' must be a fitted imodels GreedyRuleListClassifier. Got {type(clf).__name__} instead.")
    n = int(clf.n_features_in_)
    if feature_names is None and getattr(clf, "feature_names_", None) is not None:
        feature_names = [str(x) for x in clf.feature_names_]
    names = sklearn_feature_names(clf, n, feature_names)
    doms = [d for d in check_domains(domains, n) if d is not None]
    if len(doms) != n:
        raise InvalidInputError("'domains' must give the values of every feature (the rules compare them "
                                "with cutoffs). Got None for some.")
    space = FeatureSpace([Feature.categorical(names[i], doms[i]) for i in range(n)], distribution=distribution)
    classes = list(clf.classes_)
    if len(classes) != 2:
        raise InvalidInputError(f"A greedy rule list has two classes. Got {classes!r}.")

    def label(p: Any) -> Any:  # imodels: argmax of the row (1 - p, p) in float64; ties to the first
        return classes[int(np.argmax(np.array([1.0 - float(p), float(p)])))]

    out: list[tuple[ConditionsLike, Any]] = []
    for rule in rules[:-1]:
        i, cut = int(rule["index_col"]), float(rule["cutoff"])
        values = [v for v in doms[i] if ((float(v) < cut) if rule["flip"] else (float(v) >= cut))]
        out.append(([(i, values)], label(rule["val_right"])))
    return RuleModelParts(space, classes, out, label(rules[-1]["val"]))
