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
(:class:`~kcxai.engines._box_bounds.BoxBounds`) within :data:`SCORE_BOXES` boxes and :data:`SCORE_ROWS` leaf
rows read: the coverage is exact
(it does not depend on the model), the precision a proven interval (:attr:`RuleScore.precision_bounds`,
:attr:`RuleScore.decided` ``"proven"``), exact where the search ends.

Rules are read from a mapping (column -> condition) or from the text kcxai's rules print
(:meth:`kcxai.Explanation.rule`, :attr:`kcxai.Condition.literal`); see :func:`parse_rule`. A printed bound
is read as the split it denotes for the values the feature reads (``petal width <= 0.7`` is a scikit-learn
threshold at 0.7000000029802322: no float32 value lies between the two). A numeric feature's distribution
weighs whole cells (the intervals between its thresholds), so a bound must fall on a cut: ``age >= 38`` on
a feature cut at 37.5 and 45.5 is refused, naming the cell it would cut, rather than scored inexactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.compilers._ensemble import is_additive
from kcxai.compilers.compiled import CompiledModel
from kcxai._rule_parse import parse_rule
from kcxai.arithmetic import Probability
from kcxai.data import DataLike
from kcxai.evaluation import DataMetrics, _measure_boxes
from kcxai.explain._proven import box_bounds_of
from kcxai.explain._query import describe
from kcxai.explain.explanation import Condition, format_probability, under
from kcxai.explain.inflate import _box_oracle, conditions_of
from kcxai.space import FeatureSpace
from kcxai.typing import Explainable

__all__ = ["RuleScore", "score_rule", "score_rule_bounds", "parse_rule", "SCORE_BOXES", "SCORE_ROWS"]

#: Boxes the branch and bound may evaluate to bound a rule's precision on a tree ensemble with no exact form.
SCORE_BOXES = 100_000
#: The leaf rows (a box's trees' leaves read) the branch and bound may read scoring one rule: a forest's box
#: reads hundreds, so boxes alone do not bound the time.
SCORE_ROWS = 40_000_000


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
            prec = (f"in [{float(lo):.6g}, {float(hi):.6g}] (proven bounds: the branch and bound stopped at its "
                    f"{SCORE_BOXES:,} boxes or {SCORE_ROWS:,} leaf rows; an exact form counts it: a larger "
                    "probe=ProbeBudget(max_seconds=...), or language='obdd')")
        else:
            prec = format_probability(self.precision)
        how = "exact" if self.decided == "exact" else "proven; the coverage exact"
        text = (f"{self.rule()}{which}\n  precision {prec}, coverage "
                f"{format_probability(self.coverage)} ({how}, {under(self.distribution)})")
        return text + (f"\n  {self.data}" if self.data is not None else "")


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
    space: FeatureSpace = model.space
    classes = list(model.classes)
    box, label = parse_rule(space, classes, rule)
    engine = box_bounds_of(model)
    consistent = engine.box_weight(box)
    source_of_class = "rule"
    if label is None:  # the class most of the rule's points get, by proven lower bounds on their weight
        source_of_class = "majority"
        share = len(classes)
        agree = [consistent - engine.bounds(box, c, max_boxes=max(1, SCORE_BOXES // share),
                                            max_rows=max(1, SCORE_ROWS // share)).upper
                 for c in range(len(classes))]
        label = max(range(len(classes)), key=lambda c: (agree[c], -c))
    got = engine.bounds(box, label, max_boxes=SCORE_BOXES, max_rows=SCORE_ROWS)
    arith = space.arith
    lo_p, hi_p = arith.complement(got.upper, consistent), arith.complement(got.lower, consistent)
    exact = got.lower == got.upper
    data = None
    if rows is not None:
        data = _measure_boxes(model, [(box, label)], rows)[0]
    return RuleScore(conditions=conditions_of(space, box), prediction=classes[label], class_source=source_of_class,
                     precision=lo_p if exact else None, coverage=space.probability(consistent),
                     error=space.probability(got.lower) if exact else None,
                     distribution=describe(space.distribution), language="box_bounds", data=data,
                     decided="exact" if exact else "proven", precision_bounds=(lo_p, hi_p),
                     error_bounds=(space.probability(got.lower), space.probability(got.upper)))
