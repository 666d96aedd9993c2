"""Any rule scored exactly: the precision and coverage of a user's rule under the model's distribution.

A rule is a conjunction of conditions, one set of values per feature (a box), and optionally a class:
``IF age > 37.5 AND workclass in {Private, Self-emp} THEN class = >50K``. Its *coverage* is the
probability of its points, ``Pr(x meets the rule)``, and its *precision* the share of them the model
gives the rule's class, ``Pr(kappa(x) = c | x meets the rule)``: Anchor's two measures, here counted
exactly by the oracle (:class:`~kcxai.oracle.BoxOracle`) under the model's distribution, and, given rows,
measured on them too.

Which class? The rule's own (``THEN class = c``) when it names one; otherwise the class the model gives
most of the rule's points (the majority under the distribution; ties go to the class listed first in
``model.classes``), reported as such (:attr:`RuleScore.class_source` ``"majority"``).

A tree ensemble that has no exact form (it does not compile within the probe budget, or it was compiled
to the ``bounded`` language) is scored by the branch and bound over boxes
(:class:`~kcxai.engines._box_bounds.BoxBounds`) within :data:`SCORE_BOXES` boxes: the coverage is exact
(it does not depend on the model), the precision a proven interval (:attr:`RuleScore.precision_bounds`,
:attr:`RuleScore.decided` ``"proven"``), exact where the search ends.

Rules are read from a mapping (column -> condition) or from the text kcxai's rules print
(:meth:`kcxai.Explanation.rule`); see :func:`parse_rule`. A numeric feature's distribution weighs whole
cells (the intervals between its thresholds), so a bound must fall on a threshold: ``age >= 38`` on a
feature cut at 37.5 and 45.5 is refused, naming the cell it would cut, rather than scored inexactly.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.compilers._ensemble import is_additive
from kcxai.compilers.compiled import CompiledModel
from kcxai._feature import Feature, Interval
from kcxai.arithmetic import Probability
from kcxai.data import DataLike
from kcxai.evaluation import DataMetrics
from kcxai.explain.explanation import Condition, format_probability
from kcxai.oracle import Box, full_box
from kcxai.space import FeatureSpace
from kcxai.typing import Explainable

__all__ = ["RuleScore", "score_rule", "score_rule_bounds", "parse_rule", "SCORE_BOXES"]

#: Boxes the branch and bound may evaluate to bound a rule's precision on a tree ensemble with no exact form.
SCORE_BOXES = 100_000


@dataclass(frozen=True)
class RuleScore:
    """The exact measures of one rule.

    Attributes
    ----------
    conditions : tuple of Condition
        The rule's conditions, one per constrained feature, in feature order.
    prediction : object
        The class scored.
    class_source : {"rule", "majority"}
        ``"rule"``: the rule's ``THEN`` class; ``"majority"``: the rule names none, and this is the
        class the model gives most of the rule's points under the distribution.
    precision : Fraction or float or None
        ``Pr(kappa(x) = prediction | x meets the rule)`` under the distribution; ``None`` where only
        bounds on it are proven (:attr:`precision_bounds`).
    coverage : Fraction or float
        ``Pr(x meets the rule)`` under the distribution.
    error : Fraction or float or None
        ``Pr(kappa(x) != prediction and x meets the rule)`` (``None`` where only bounded).
    distribution : str
        ``"uniform"``, ``"product"`` or ``"mixture of K"``.
    language : str
        The language whose oracle counted.
    data : DataMetrics or None
        The same rule on rows, when rows were given (measured on the sample, not guaranteed).
    decided : {"exact", "proven"}
        ``"proven"``: a tree ensemble with no exact form, scored by the branch and bound; the precision
        lies in :attr:`precision_bounds` (and the error in :attr:`error_bounds`).
    precision_bounds, error_bounds : tuple of two probabilities or None
        Proven lower and upper bounds (equal to the exact value where the search ended).
    """

    conditions: tuple[Condition, ...]
    prediction: Any
    class_source: str
    precision: Probability | None
    coverage: Probability
    error: Probability | None
    distribution: str
    language: str
    data: DataMetrics | None = None
    decided: str = "exact"
    precision_bounds: tuple[Probability, Probability] | None = None
    error_bounds: tuple[Probability, Probability] | None = None

    def rule(self) -> str:
        """``IF lit AND lit THEN class = c`` (the form :func:`parse_rule` reads back)."""
        body = " AND ".join(c.literal for c in self.conditions) if self.conditions else "TRUE"
        return f"IF {body} THEN class = {self.prediction}"

    def to_dict(self) -> dict[str, Any]:
        """A flat, JSON-ready dict: floats, and exact strings (``"7/512"``) where exact."""
        d: dict[str, Any] = {"rule": self.rule(), "prediction": self.prediction, "class_source": self.class_source,
                             "precision": None if self.precision is None else float(self.precision),
                             "coverage": float(self.coverage),
                             "error": None if self.error is None else float(self.error),
                             "distribution": self.distribution, "language": self.language,
                             "conditions": [c.to_dict() for c in self.conditions], "decided": self.decided}
        low, high = self.precision_bounds if self.precision_bounds is not None else (None, None)
        d["precision_low"] = None if low is None else float(low)
        d["precision_high"] = None if high is None else float(high)
        for key in ("precision", "coverage", "error"):
            v = getattr(self, key)
            if isinstance(v, Fraction):
                d[key + "_exact"] = str(v)
        if self.data is not None:
            d.update(self.data.to_dict())
        return d

    def __str__(self) -> str:
        which = "" if self.class_source == "rule" else " (the majority class: the rule names none)"
        if self.precision is None and self.precision_bounds is not None:
            lo, hi = self.precision_bounds
            prec = f"in [{float(lo):.6g}, {float(hi):.6g}] (proven bounds, by branch and bound)"
        else:
            prec = format_probability(self.precision)
        how = "exact" if self.decided == "exact" else "proven; the coverage exact"
        text = (f"{self.rule()}{which}\n  precision {prec}, coverage "
                f"{format_probability(self.coverage)} (under the {self.distribution} distribution, {how})")
        return text + (f"\n  {self.data}" if self.data is not None else "")


# -- parsing ------------------------------------------------------------------------------------------

_NUMBER = r"[-+]?(?:inf|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
_INTERVAL = re.compile(rf"^([\(\[])\s*({_NUMBER})\s*,\s*({_NUMBER})\s*([\)\]])$")


def _mask(ks: Iterable[int]) -> int:
    return sum(1 << k for k in set(ks))


def _number(text: str, where: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InvalidInputError(f"{where}: {text!r} is not a number.") from None


def _cells(feat: Feature, low: float, low_closed: bool, high: float, high_closed: bool, where: str) -> int:
    """The cells (intervals ``(a, b]``) of a numeric feature making up a real interval; an error naming the
    cell it would cut when its ends are not the feature's thresholds."""
    if low > high or (low == high and not (low_closed and high_closed)):
        raise InvalidInputError(f"{where}: the interval is empty.")
    ks = []
    for k, iv in enumerate(feat.values):
        inside_low = iv.low >= low  # the cell excludes its low end
        inside_high = iv.high < high or (iv.high == high and (high_closed or math.isinf(high)))
        outside = iv.high < low or (iv.high == low and not low_closed) or iv.low >= high
        if inside_low and inside_high:
            ks.append(k)
        elif not outside:
            ts = ", ".join(_fmt_threshold(t) for t in feat.thresholds or ())
            raise InvalidInputError(
                f"{where}: the condition cuts the interval {iv} of {feat.name!r}; the distribution weighs whole "
                f"intervals, so a bound must be one of {feat.name!r}'s thresholds ({ts}), as '> t' or '<= t'.")
    if not ks:
        raise InvalidInputError(f"{where}: no value of {feat.name!r} meets it (empty).")
    return _mask(ks)


def _fmt_threshold(t: float) -> str:
    return str(Interval(-math.inf, t)).removeprefix("<= ")


def _category(feat: Feature, value: Any, where: str) -> int:
    """The value number of a category given as a domain value or, in text, as its label."""
    if isinstance(value, str):
        for k in range(feat.size):
            if feat.label(k) == value or str(feat.values[k]) == value:
                return k
        shown = [feat.label(k) for k in range(min(feat.size, 10))] + (["..."] if feat.size > 10 else [])
        raise InvalidInputError(f"{where}: {value!r} is not a value of {feat.name!r}; its values are {shown}.")
    try:
        return feat.index(value)
    except (InvalidInputError, InvalidTypeError) as e:
        raise InvalidInputError(f"{where}: {e}") from None


def _categories(feat: Feature, text: str, where: str) -> int:
    """``{a, b, c}``: labels may themselves hold ", ", so pieces are joined until they name a value."""
    if not (text.startswith("{") and text.endswith("}")):
        raise InvalidInputError(f"{where}: expected a set of values in braces, like {{a, b}}. Got {text!r}.")
    pieces = [p.strip() for p in text[1:-1].split(",")]
    ks, run = [], ""
    for p in pieces:
        run = p if not run else f"{run}, {p}"
        try:
            ks.append(_category(feat, run, where))
            run = ""
        except InvalidInputError:
            continue
    if run or not ks:
        bad = run or text
        raise InvalidInputError(f"{where}: {bad!r} is not a value of {feat.name!r} (values: "
                                f"{[feat.label(k) for k in range(min(feat.size, 10))]}).")
    return _mask(ks)


def _numeric_text(feat: Feature, op: str, rest: str, where: str) -> int:
    if op == "in" and rest.startswith("{"):  # intervals by their printed form, as set_literal writes them
        return _categories(feat, rest, where)
    if op in ("in", "=") and _INTERVAL.match(rest):
        lb, a, b, rb = _INTERVAL.match(rest).groups()  # type: ignore[union-attr]
        return _cells(feat, _number(a, where), lb == "[", _number(b, where), rb == "]", where)
    if op == "in":
        raise InvalidInputError(f"{where}: expected an interval like (30, 52.5] or [30, 52]. Got {rest!r}.")
    x = _number(rest, where)
    if op == "=":
        return 1 << feat.index(x)
    if op == "!=":
        raise InvalidInputError(f"{where}: '!=' applies to categorical features; {feat.name!r} is numeric.")
    inf = math.inf
    low, lc, high, hc = {"<=": (-inf, False, x, True), "<": (-inf, False, x, False),
                         ">": (x, False, inf, False), ">=": (x, True, inf, False)}[op]
    return _cells(feat, low, lc, high, hc, where)


_OP = re.compile(r"^(?:(<=|>=|!=|=|<|>)\s*|(in)\s*(?=[\(\[\{]))(.*)$")


def _literal(space: FeatureSpace, text: str) -> tuple[int, int]:
    """``(feature, mask)`` of one literal of a rule's text."""
    where = f"condition {text!r}"
    for name in sorted(space.names, key=len, reverse=True):  # the longest name that starts the literal
        if not text.startswith(name):
            continue
        after = text[len(name):]
        m = _OP.match(after.lstrip())
        if m is None or (m.group(2) and not after[:1].isspace()):
            continue
        op = m.group(1) or m.group(2)
        value = m.group(3).strip()
        if not value:
            raise InvalidInputError(f"{where}: nothing after {op!r}.")
        f = space.feature_index(name)
        feat = space.features[f]
        if feat.is_numeric:
            return f, _numeric_text(feat, op, value, where)
        if op == "=":
            return f, 1 << _category(feat, value, where)
        if op == "!=":
            return f, ((1 << feat.size) - 1) & ~(1 << _category(feat, value, where))
        if op == "in":
            return f, _categories(feat, value, where)
        raise InvalidInputError(f"{where}: {op!r} compares numbers; {feat.name!r} is categorical.")
    head = re.split(r"\s*(?:<=|>=|!=|=|<|>|\bin\b)", text, maxsplit=1)[0].strip()
    if head and head != text and head not in space.names:
        raise InvalidInputError(f"{where}: unknown column {head!r}; the columns are {list(space.names)}.")
    raise InvalidInputError(
        f"{where}: unparsable; expected 'NAME = value', 'NAME in {{a, b}}', 'NAME <= t', 'NAME > t' or "
        "'NAME in (a, b]'.")


def _value_mask(feat: Feature, value: Any, where: str) -> int:
    """The mask of one mapping entry's condition."""
    if isinstance(value, Interval):
        if not feat.is_numeric:
            raise InvalidInputError(f"{where}: an Interval applies to numeric features; {feat.name!r} is categorical.")
        return _cells(feat, value.low, False, value.high, True, where)
    if isinstance(value, (set, frozenset, list, tuple)):
        if not value:
            raise InvalidInputError(f"{where}: the set of values is empty.")
        return _mask(feat.index(v) if feat.is_numeric else _category(feat, v, where) for v in value)
    if isinstance(value, str) and feat.is_numeric:
        m = re.match(r"^(<=|>=|!=|=|<|>|in\b)\s*(.*)$", value.strip())
        if not m:
            raise InvalidInputError(
                f"{where}: a numeric condition as text is like '> 37.5', '<= 40' or 'in (30, 52.5]'. Got {value!r}.")
        return _numeric_text(feat, m.group(1), m.group(2).strip(), where)
    if feat.is_numeric:
        try:
            return 1 << feat.index(value)
        except (InvalidInputError, InvalidTypeError) as e:
            raise InvalidInputError(f"{where}: {e}") from None
    return 1 << _category(feat, value, where)


def parse_rule(space: FeatureSpace, classes: Any, rule: Any) -> tuple[Box, int | None]:
    """A rule's box and class index (``None`` when it names no class).

    Parameters
    ----------
    space : FeatureSpace
    classes : sequence
        The model's classes (a ``THEN`` class is matched against them, also by its printed form).
    rule : mapping or str
        ``{column: condition}``, a condition being a value (a numeric value stands for its interval),
        an :class:`~kcxai.Interval`, a set/list of values, or for a numeric column a text like
        ``"> 37.5"`` / ``"in (30, 52.5]"``; or the text of a rule, ``IF lit AND ... [THEN class = c]``,
        with literals as kcxai prints them (``x = v``, ``x in {a, b}``, ``x <= t``, ``x > t``,
        ``x in (a, b]``; also ``>=``, ``<``, ``[a, b]`` and ``!=`` for categories). Several conditions on
        one column are intersected.

    Raises
    ------
    InvalidInputError
        Naming the part at fault: an unknown column, a value outside the column's domain, an empty
        condition, a bound that cuts an interval of a numeric feature, an unknown class, unparsable text.

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace
    >>> space = FeatureSpace([Feature.numeric("age", [30, 40, 50]), Feature.categorical("job", ["a", "b", "c"])])
    >>> parse_rule(space, [0, 1], "IF age in (30, 50] AND job in {a, c} THEN class = 1")
    ((6, 5), 1)
    >>> parse_rule(space, [0, 1], {"age": "> 40"})
    ((12, 7), None)
    """
    box = list(full_box(space))
    label: int | None = None
    if isinstance(rule, Mapping):
        for key, value in rule.items():
            where = f"condition on {key!r}"
            if not isinstance(key, str) or key not in space.names:
                raise InvalidInputError(f"{where}: unknown column {key!r}; the columns are {list(space.names)}.")
            f = space.feature_index(key)
            box[f] &= _value_mask(space.features[f], value, where)
            if not box[f]:
                raise InvalidInputError(f"{where}: no value of {key!r} meets it (empty).")
        return tuple(box), None
    if not isinstance(rule, str):
        raise InvalidTypeError(f"'rule' must be a mapping {{column: condition}} or a rule's text. Got "
                               f"{type(rule).__name__} instead.")
    text = " ".join(rule.split())
    if text.upper().startswith("IF "):
        text = text[3:]
    then = re.match(r"^(.*?)(?:^|\s)THEN\s+(.*)$", text)
    body = text
    if then is not None:
        body = then.group(1)
        label = _class_of(classes, then.group(2).strip())
    body = body.strip()
    if not body:
        raise InvalidInputError(f"'rule' {rule!r} is unparsable: it has no conditions (write TRUE for none).")
    if body.upper() != "TRUE":
        for lit in body.split(" AND "):
            f, m = _literal(space, lit.strip())
            box[f] &= m
            if not box[f]:
                raise InvalidInputError(f"condition {lit.strip()!r}: with the rule's other conditions on "
                                        f"{space.names[f]!r}, no value meets it (empty).")
    return tuple(box), label


def _class_of(classes: Any, head: str) -> int:
    m = re.match(r"^(?:class\s*=\s*)?(.+)$", head)
    name = m.group(1).strip() if m else head
    for k, c in enumerate(classes):
        if str(c) == name:
            return k
    raise InvalidInputError(f"the rule's class {name!r} is not a class of the model; its classes are "
                            f"{[str(c) for c in classes]}.")


# -- scoring -----------------------------------------------------------------------------------------

def score_rule(model: Explainable, rule: Mapping[str, Any] | str, *,
               rows: DataLike | None = None) -> RuleScore:
    """The exact precision and coverage of a rule under the model's distribution, and on rows if given.

    Parameters
    ----------
    model : Classifier, CompiledModel or BoxOracle
        The model (its native oracle counts), or a compiled form in an exact language.
    rule : mapping or str
        ``{column: condition}`` or the text of a rule (see :func:`parse_rule`), e.g.
        ``"IF age > 37.5 AND workclass in {Private, Self-emp} THEN class = >50K"``.
    rows : 2-D array, DataFrame or sequence of rows, optional
        Rows (typically held out) to measure the rule on as well, read as for
        :func:`kcxai.evaluate_on_data`.

    Returns
    -------
    RuleScore
        Precision and coverage (exact ``Fraction`` under exact distributions) for the rule's class, or
        for the majority class of its points when it names none (``class_source``); ``data`` holds the
        on-rows figures.

    Raises
    ------
    InvalidInputError
        For a rule that cannot be read (see :func:`parse_rule`; the message names the part at fault).
    InvalidTypeError
        For a model whose oracle cannot count over sets of values (the ``"sampling"`` language).

    References
    ----------
    Ribeiro, Singh, Guestrin, "Anchors: High-Precision Model-Agnostic Explanations", AAAI 2018 (the
    precision and coverage of a rule, there estimated by sampling).

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> s = kcxai.score_rule(tree, "IF x1 = 1 AND x9 = 1 THEN class = 1")
    >>> s.precision, s.coverage, s.class_source
    (Fraction(121, 128), Fraction(1, 4), 'rule')
    >>> kcxai.score_rule(tree, {"x1": 0}).prediction
    0
    """
    from kcxai.explain._query import describe
    from kcxai.explain.inflate import _box_oracle, conditions_of

    try:
        oracle, source = _box_oracle(model)
    except (InvalidInputError, InvalidTypeError):
        ensemble = _ensemble_of(model)
        if ensemble is None:
            raise
        return score_rule_bounds(ensemble, rule, rows=rows)
    space: FeatureSpace = oracle.space
    classes = list(getattr(source, "classes", range(oracle.n_classes)))
    box, label = parse_rule(space, classes, rule)
    source_of_class = "rule"
    if label is None:
        source_of_class = "majority"
        best = None
        for c in range(oracle.n_classes):
            d, w = oracle.box_weights(box, c)
            if best is None or w - d > best[0]:
                best = (w - d, c)
        assert best is not None  # a model has at least one class
        label = best[1]
    disagree, consistent = oracle.box_weights(box, label)
    data = None
    if rows is not None:
        from kcxai.evaluation import _measure_boxes

        data = _measure_boxes(model, [(box, label)], rows)[0]
    return RuleScore(conditions=conditions_of(space, box), prediction=classes[label], class_source=source_of_class,
                     precision=space.arith.complement(disagree, consistent), coverage=space.probability(consistent),
                     error=space.probability(disagree), distribution=describe(space.distribution),
                     language=oracle.language, data=data)


def _ensemble_of(obj: object) -> Any:
    """The tree ensemble (additive trees) behind ``obj``, or ``None``."""
    model = obj.model if isinstance(obj, CompiledModel) else obj
    return model if model is not None and is_additive(model) else None


def score_rule_bounds(model: Any, rule: Mapping[str, Any] | str, *, rows: DataLike | None = None) -> RuleScore:
    """A rule on a tree ensemble, without compiling it: the exact coverage and a proven interval on the precision
    (:attr:`RuleScore.precision_bounds`), by the branch and bound over boxes within :data:`SCORE_BOXES` boxes
    (exact where it ends). What :func:`score_rule` falls back to for an ensemble with no exact form.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> forest = kcxai.models.RandomForest(tree.space, tree.classes, [tree])
    >>> s = score_rule_bounds(forest, "IF x1 = 1 AND x9 = 1 THEN class = 1")
    >>> s.precision_bounds, s.decided
    ((Fraction(121, 128), Fraction(121, 128)), 'exact')
    """
    from kcxai.explain._proven import box_bounds_of  # cycle: the explainers import this module's RuleScore
    from kcxai.explain._query import describe
    from kcxai.explain.inflate import conditions_of

    space: FeatureSpace = model.space
    classes = list(model.classes)
    box, label = parse_rule(space, classes, rule)
    engine = box_bounds_of(model)
    consistent = engine.box_weight(box)
    source_of_class = "rule"
    if label is None:  # the class most of the rule's points get, by proven lower bounds on their weight
        source_of_class = "majority"
        agree = [consistent - engine.bounds(box, c, max_boxes=max(1, SCORE_BOXES // len(classes))).upper
                 for c in range(len(classes))]
        label = max(range(len(classes)), key=lambda c: (agree[c], -c))
    got = engine.bounds(box, label, max_boxes=SCORE_BOXES)
    arith = space.arith
    lo_p, hi_p = arith.complement(got.upper, consistent), arith.complement(got.lower, consistent)
    exact = got.lower == got.upper
    data = None
    if rows is not None:
        from kcxai.evaluation import _measure_boxes

        data = _measure_boxes(model, [(box, label)], rows)[0]
    return RuleScore(conditions=conditions_of(space, box), prediction=classes[label], class_source=source_of_class,
                     precision=lo_p if exact else None, coverage=space.probability(consistent),
                     error=space.probability(got.lower) if exact else None,
                     distribution=describe(space.distribution), language="box_bounds", data=data,
                     decided="exact" if exact else "proven", precision_bounds=(lo_p, hi_p),
                     error_bounds=(space.probability(got.lower), space.probability(got.upper)))
