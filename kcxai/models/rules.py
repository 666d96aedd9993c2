"""Rule-based classifiers: decision lists and rule sets.

A *rule* is ``IF x_i in E_i AND ... THEN class``: a conjunction of feature
literals (a feature tested twice means the intersection of its value sets).

* A :class:`DecisionList` is an ordered list of rules and a default class;
  the first rule that matches decides (``IF .. THEN .. ELSE IF .. ELSE ..``).
* A :class:`RuleSet` is an unordered set of rules for one class and a default
  class: the class is predicted iff some rule matches (a DNF; what RIPPER-style
  learners produce).

Both read and write a readable text form::

    IF age in (30, 40] AND sex = F THEN 1
    ELSE IF sex = M THEN 0
    ELSE 1

Conditions are ``name = v``, ``name != v``, ``name in {v1, v2}``,
``name not in {...}``, ``name < t`` (also ``<=``, ``>``, ``>=``) and
``name in [a, b)`` (any of ``[ ( ] )``; ``inf`` and ``-inf`` allowed). On a
numeric feature (intervals ``(t_k, t_k+1]``) a condition must be a union of the
feature's intervals: ``age <= 30`` works with a threshold at 30, ``age < 30``
does not (it cuts the interval ending at 30) and raises an error saying so.
On a categorical feature with numeric values, comparisons and ranges select
the values they contain. Names and values that are not plain words are written
in double quotes. ``#`` starts a comment.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, Union

from kcxai._errors import InvalidInputError, InvalidTypeError, ModelFormatError
from kcxai._params import check
from kcxai._types import Label
from kcxai.models.classifier import Classifier
from kcxai.models._rule_conditions import Conds, ConditionsLike, conditions_from, conds_from_masks, full_mask, matches
from kcxai.models.imports.rules import SpaceLike, decision_list_from_imodels, rule_set_from_wittgenstein
from kcxai.models._rule_text import format_conditions, format_value, parse_rules, resolve_labels
from kcxai.space import SPACE, FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.functions import FunctionBuilder
    from kcxai.distribution import DistributionLike
    from kcxai._types import InstanceLike

__all__ = ["Rule", "RuleLike", "DecisionList", "RuleSet"]

#: A function handle of the builder a model describes itself with.
F = TypeVar("F")

_M = TypeVar("_M", bound="_RuleModel")


@dataclass(frozen=True)
class Rule:
    """``IF conditions THEN label``.

    Parameters
    ----------
    conditions : mapping or sequence of pairs
        ``{feature: values}`` or ``[(feature, values), ...]``; a feature is a
        name or index; ``values`` is one domain value or a collection of them
        (for a numeric feature, :class:`~kcxai.Interval` objects, each a union
        of the feature's intervals). An empty mapping matches every point.
    label
        The class the rule concludes.

    Examples
    --------
    >>> from kcxai.models import Rule
    >>> Rule({"sex": "F", "age": [30, 40]}, 1)
    Rule(conditions={'sex': 'F', 'age': [30, 40]}, label=1)
    """

    conditions: ConditionsLike
    label: Any


#: What the rule models accept as a rule: a :class:`Rule` or a ``(conditions, label)`` pair.
RuleLike = Union[Rule, tuple[ConditionsLike, Any]]


class _RuleModel(Classifier):
    _rules: tuple[tuple[Conds, int], ...]
    default: Any
    _default: int

    def _rule_conditions(self, rule: Any, where: str) -> tuple[Conds, Any]:
        if isinstance(rule, Rule):
            return conditions_from(self.space, rule.conditions, where), rule.label
        if isinstance(rule, Sequence) and not isinstance(rule, (str, bytes)) and len(rule) == 2:
            return conditions_from(self.space, rule[0], where), rule[1]
        raise InvalidTypeError(f"{where} must be a Rule or a (conditions, label) pair. Got {rule!r} instead.")

    @property
    def n_rules(self) -> int:
        """Number of rules (the default not counted)."""
        return len(self._rules)

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The rules, with conditions as ``{feature name: tuple of domain values}``."""
        out = []
        for conds, c in self._rules:
            d = {self.space.features[i].name: tuple(self.space.features[i].values[k]
                                                   for k in range(self.space.features[i].size) if m >> k & 1)
                 for i, m in conds}
            out.append(Rule(d, self.classes[c]))
        return tuple(out)

    def _conds_text(self, conds: Conds) -> str:
        return format_conditions(self.space, conds)

    def _conj(self, builder: "FunctionBuilder[F]", conds: Conds) -> F:
        f = builder.true()
        for i, m in conds:
            f = builder.conj(f, builder.value_in(i, m))
        return f

    def _conds_json(self, conds: Conds) -> list[list[Any]]:
        return [[i, [k for k in range(self.space.features[i].size) if m >> k & 1]] for i, m in conds]

    @staticmethod
    def _conds_from_json(space: FeatureSpace, raw: Any, where: str) -> Conds:
        if not isinstance(raw, list):
            raise ModelFormatError(f"{where}: 'conditions' must be a list of [feature, [value indices]].")
        masks: dict[int, int] = {}
        for item in raw:
            if not isinstance(item, list) or len(item) != 2 or not isinstance(item[1], list):
                raise ModelFormatError(f"{where}: a condition must be [feature index, [value indices]]. "
                                       f"Got {str(item)[:80]}.")
            i, ks = item
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < space.n_features:
                raise ModelFormatError(f"{where}: {i!r} is not a feature index.")
            m = 0
            for k in ks:
                if not isinstance(k, int) or not 0 <= k < space.features[i].size:
                    raise ModelFormatError(f"{where}: value index {k!r} is outside feature {i}'s domain.")
                m |= 1 << k
            masks[i] = masks.get(i, full_mask(space.features[i].size)) & m
        return conds_from_masks(space, masks)

    def with_distribution(self: _M, distribution: DistributionLike) -> _M:
        return self._copy_with_space(self.space.with_distribution(distribution))

    @classmethod
    def _blank(cls: type[_M], space: FeatureSpace, classes: list[Any]) -> _M:
        """A model over ``space`` and ``classes`` whose rules the caller sets from a checked dict."""
        m = object.__new__(cls)
        m.space = space
        m._init_classes(classes)
        return m

    def _checked_class(self, v: Any, what: str) -> int:
        """``v`` when it is the index of one of the classes, else a :class:`~kcxai.ModelFormatError`."""
        if not isinstance(v, int) or not 0 <= v < len(self.classes):
            raise ModelFormatError(f"{what} must be a class index. Got {v!r}.")
        return v

    def __str__(self) -> str:
        return self.to_text()

    def to_text(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError


class DecisionList(_RuleModel):
    """An ordered list of rules and a default class: the first matching rule decides.

    Parameters
    ----------
    space : FeatureSpace
    classes : sequence
        The class labels.
    rules : sequence of Rule or (conditions, label) pairs
        In order; see :class:`Rule` for conditions.
    default
        The class when no rule matches.

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace
    >>> from kcxai.models import DecisionList
    >>> space = FeatureSpace([Feature.numeric("age", [30, 40]), Feature.categorical("sex", ["F", "M"])])
    >>> dl = DecisionList.from_text('''
    ...     IF age in (30, 40] AND sex = F THEN 1
    ...     ELSE IF sex = M THEN 0
    ...     ELSE 1''', space)
    >>> dl.predict([35, "F"]), dl.predict([35, "M"]), dl.predict([50, "F"])
    (1, 0, 1)
    >>> print(dl)
    IF age in (30, 40] AND sex = F THEN 1
    ELSE IF sex = M THEN 0
    ELSE 1
    """

    model_type = "decision_list"

    def __init__(self, space: FeatureSpace, classes: Sequence[object], rules: Sequence[RuleLike], default: Any) -> None:
        check("space", space, SPACE)
        self.space = space
        self._init_classes(classes)
        if isinstance(rules, (str, bytes)) or not isinstance(rules, Sequence):
            raise InvalidTypeError(f"'rules' must be a sequence of rules. Got {type(rules).__name__} instead.")
        out = []
        for r, rule in enumerate(rules):
            conds, label = self._rule_conditions(rule, f"'rules[{r}]'")
            out.append((conds, self.class_index(label)))
        self._rules = tuple(out)
        self._default = self.class_index(default)
        self.default = self.classes[self._default]

    @classmethod
    def from_text(cls, text: str, space: FeatureSpace, *, classes: Sequence[object] | None = None) -> "DecisionList":
        """Read a decision list from its text form (see the module docstring).

        Lines are ``IF ... THEN c``, then ``ELSE IF ... THEN c``, and a last
        ``ELSE c`` (the default, required). Without ``classes`` the classes are
        the labels used, sorted (numbers as numbers).
        """
        rules, default = parse_rules(text, space)
        if default is None:
            raise InvalidInputError("A decision list needs a default: end it with a line 'ELSE <class>'.")
        classes, idx = resolve_labels([t for _, t in rules] + [default], classes)
        dl = object.__new__(cls)
        dl.space = space
        dl._init_classes(classes)
        dl._rules = tuple((conds, k) for (conds, _), k in zip(rules, idx))
        dl._default = idx[-1]
        dl.default = dl.classes[dl._default]
        return dl

    @classmethod
    def from_imodels(cls, clf: Any, *, domains: Sequence[Sequence[Any]], feature_names: Sequence[str] | None = None,
                     distribution: DistributionLike = None) -> "DecisionList":
        """Import a fitted ``imodels.GreedyRuleListClassifier`` (optional extra ``kcxai[rules]``).

        Each of its rules tests one feature, ``x >= cutoff`` (or ``x < cutoff``
        when flipped), and gives a probability ``p`` of the second class; the
        rule's class is ``argmax([1 - p, p])`` computed as imodels does, in
        float64. ``domains`` (required) gives each feature's values; a rule
        becomes the set of values that satisfy its test.

        Parameters
        ----------
        clf : imodels.GreedyRuleListClassifier
        domains : sequence
            One list of real values per feature.
        feature_names : sequence of str, optional
            Defaults to the names imodels recorded (``clf.feature_names_``).
        distribution : optional
            Passed to :class:`~kcxai.FeatureSpace`.
        """
        parts = decision_list_from_imodels(clf, domains, feature_names, distribution)
        return cls(parts.space, parts.classes, parts.rules, parts.default)

    def predict_point(self, point: Sequence[int]) -> int:
        for conds, c in self._rules:
            if matches(conds, point):
                return c
        return self._default

    def rule_of(self, instance: InstanceLike) -> int | None:
        """The index of the rule that decides an instance (``None``: the default)."""
        point = self.space.encode(instance)
        for r, (conds, _) in enumerate(self._rules):
            if matches(conds, point):
                return r
        return None

    def build(self, builder: "FunctionBuilder[F]") -> list[F]:
        """One function per class, from the last rule up: ``rule_r ? [c = c_r] : rest``."""
        k = len(self.classes)
        out = [builder.true() if c == self._default else builder.false() for c in range(k)]
        for conds, label in reversed(self._rules):
            cond = self._conj(builder, conds)
            not_cond = builder.neg(cond)
            for c in range(k):
                rest = builder.conj(not_cond, out[c])
                out[c] = builder.disj(cond, rest) if c == label else rest
        return out

    def to_text(self) -> str:
        """The readable form, which :meth:`from_text` reads back."""
        lines = []
        for r, (conds, c) in enumerate(self._rules):
            head = "IF" if r == 0 else "ELSE IF"
            lines.append(f"{head} {self._conds_text(conds)} THEN {format_value(self.classes[c])}")
        lines.append(f"ELSE {format_value(self.default)}" if self._rules else f"DEFAULT {format_value(self.default)}")
        return "\n".join(lines)

    def _body_to_dict(self) -> dict[str, Any]:
        return {"rules": [{"conditions": self._conds_json(conds), "class": c} for conds, c in self._rules],
                "default": self._default}

    @classmethod
    def _from_body(cls, space: FeatureSpace, classes: list[Label], body: dict[str, Any]) -> "DecisionList":
        dl = cls._blank(space, classes)
        rules = []
        for r, rule in enumerate(body["rules"]):
            c = dl._checked_class(rule["class"], f"rules[{r}]: 'class'")
            rules.append((cls._conds_from_json(space, rule["conditions"], f"rules[{r}]"), c))
        d = dl._checked_class(body["default"], "'default'")
        dl._rules = tuple(rules)
        dl._default = d
        dl.default = dl.classes[d]
        return dl

    def __repr__(self) -> str:
        return f"DecisionList({len(self._rules)} rules, {self.space.n_features} features, {len(self.classes)} classes)"


class RuleSet(_RuleModel):
    """Unordered rules for one class and a default: the class iff some rule matches.

    Parameters
    ----------
    space : FeatureSpace
    classes : sequence
        The class labels.
    rules : sequence of Rule or (conditions, label) pairs
        All with the same label (the rule set's :attr:`label`).
    default
        The class when no rule matches.
    label : optional
        The class of the rules; required when ``rules`` is empty, checked otherwise.

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace
    >>> from kcxai.models import RuleSet
    >>> space = FeatureSpace([Feature.categorical(n, [0, 1, 2]) for n in ("a", "b")])
    >>> rs = RuleSet.from_text('''
    ...     IF a = 2 THEN yes
    ...     IF a = 1 AND b != 0 THEN yes
    ...     ELSE no''', space)
    >>> rs.predict([1, 2]), rs.predict([1, 0]), rs.classes
    ('yes', 'no', ('no', 'yes'))
    """

    model_type = "rule_set"

    def __init__(self, space: FeatureSpace, classes: Sequence[object], rules: Sequence[RuleLike], default: Any, *,
                 label: Any = None) -> None:
        check("space", space, SPACE)
        self.space = space
        self._init_classes(classes)
        if isinstance(rules, (str, bytes)) or not isinstance(rules, Sequence):
            raise InvalidTypeError(f"'rules' must be a sequence of rules. Got {type(rules).__name__} instead.")
        conds_list = []
        labels = set()
        for r, rule in enumerate(rules):
            conds, lab = self._rule_conditions(rule, f"'rules[{r}]'")
            conds_list.append(conds)
            labels.add(self.class_index(lab))
        if label is not None:
            labels.add(self.class_index(label))
        if len(labels) != 1:
            raise InvalidInputError(
                "A RuleSet's rules must all conclude one class (give 'label' when there are no rules). "
                f"Got the classes {[self.classes[c] for c in sorted(labels)]}.")
        (lab_index,) = labels
        self._set(tuple(conds_list), lab_index, self.class_index(default))

    def _set(self, conds: tuple[Conds, ...], label: int, default: int) -> None:
        self._rules = tuple((c, label) for c in conds)
        self._label = label
        self.label = self.classes[label]
        self._default = default
        self.default = self.classes[default]

    @classmethod
    def from_text(cls, text: str, space: FeatureSpace, *, classes: Sequence[object] | None = None) -> "RuleSet":
        """Read a rule set: lines ``IF ... THEN c`` (one class ``c``) and ``ELSE d`` (the default, required)."""
        rules, default = parse_rules(text, space)
        if default is None:
            raise InvalidInputError("A rule set needs a default: end it with a line 'ELSE <class>'.")
        classes, idx = resolve_labels([t for _, t in rules] + [default], classes)
        if len(set(idx[:-1])) > 1:
            raise InvalidInputError(
                "A rule set's rules must all conclude one class. "
                f"Got {sorted({classes[k] for k in idx[:-1]}, key=str)}; "
                "use a DecisionList for rules with different classes.")
        if not rules:
            raise InvalidInputError("A rule set read from text needs at least one rule (IF ... THEN c).")
        rs = object.__new__(cls)
        rs.space = space
        rs._init_classes(classes)
        rs._set(tuple(c for c, _ in rules), idx[0], idx[-1])
        return rs

    @classmethod
    def from_wittgenstein(cls, clf: Any, space: SpaceLike, *,
                          classes: Sequence[object] = (0, 1)) -> "RuleSet":
        """Import a fitted ``wittgenstein`` RIPPER or IREP classifier (optional extra ``kcxai[rules]``).

        Parameters
        ----------
        clf : wittgenstein.RIPPER or wittgenstein.IREP
            Fitted on discrete features (``n_discretize_bins=None`` or features
            with few values): conditions must be ``feature = value``.
        space : FeatureSpace or mapping
            The features (names as in the training data), or a mapping
            ``{name: domain values}`` in feature order.
        classes : pair, default (0, 1)
            Labels for "not positive" and "positive": wittgenstein predicts
            ``True`` for the positive class, and ``clf.classes_`` is ``[0, 1]``.
        """
        parts = rule_set_from_wittgenstein(clf, space, classes)
        return cls(parts.space, parts.classes, parts.rules, parts.default, label=parts.label)

    def predict_point(self, point: Sequence[int]) -> int:
        for conds, _ in self._rules:
            if matches(conds, point):
                return self._label
        return self._default

    def build(self, builder: "FunctionBuilder[F]") -> list[F]:
        """The class function is the disjunction of the rules; the default its negation."""
        k = len(self.classes)
        pos = builder.false()
        for conds, _ in self._rules:
            pos = builder.disj(pos, self._conj(builder, conds))
        out = [builder.false()] * k
        if self._label == self._default:
            out[self._label] = builder.true()
            return out
        out[self._label] = pos
        out[self._default] = builder.neg(pos)
        return out

    def to_text(self) -> str:
        """The readable form, which :meth:`from_text` reads back."""
        lines = [f"IF {self._conds_text(conds)} THEN {format_value(self.label)}" for conds, _ in self._rules]
        lines.append(f"ELSE {format_value(self.default)}")
        return "\n".join(lines)

    def _body_to_dict(self) -> dict[str, Any]:
        return {"rules": [self._conds_json(conds) for conds, _ in self._rules], "label": self._label,
                "default": self._default}

    @classmethod
    def _from_body(cls, space: FeatureSpace, classes: list[Label], body: dict[str, Any]) -> "RuleSet":
        rs = cls._blank(space, classes)
        label, default = (rs._checked_class(body[key], f"'{key}'") for key in ("label", "default"))
        conds = tuple(cls._conds_from_json(space, r, f"rules[{k}]") for k, r in enumerate(body["rules"]))
        rs._set(conds, label, default)
        return rs

    def __repr__(self) -> str:
        return (f"RuleSet({len(self._rules)} rules for class {self.label!r}, default {self.default!r}, "
                f"{self.space.n_features} features)")
