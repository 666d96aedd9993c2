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

from kcxai._rule_parse import parse_rule
from kcxai.arithmetic import Probability
from kcxai.data import DataLike
from kcxai.evaluation import DataMetrics, _measure_boxes
from kcxai.explain._query import describe
from kcxai.explain.explanation import Condition, format_probability, under
from kcxai.explain.inflate import _box_oracle, conditions_of
from kcxai.space import FeatureSpace
from kcxai.typing import Explainable

__all__ = ["RuleScore", "score_rule", "parse_rule"]


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
    precision : Fraction or float
        ``Pr(kappa(x) = prediction | x meets the rule)`` under the distribution.
    coverage : Fraction or float
        ``Pr(x meets the rule)`` under the distribution.
    error : Fraction or float
        ``Pr(kappa(x) != prediction and x meets the rule)``.
    distribution : str
        ``"uniform"``, ``"product"`` or ``"mixture of K"``.
    language : str
        The language whose oracle counted.
    data : DataMetrics or None
        The same rule on rows, when rows were given (measured on the sample, not guaranteed).
    """

    conditions: tuple[Condition, ...]
    prediction: Any
    class_source: str
    precision: Probability
    coverage: Probability
    error: Probability
    distribution: str
    language: str
    data: DataMetrics | None = None

    def rule(self) -> str:
        """``IF lit AND lit THEN class = c`` (the form :func:`parse_rule` reads back)."""
        body = " AND ".join(c.literal for c in self.conditions) if self.conditions else "TRUE"
        return f"IF {body} THEN class = {self.prediction}"

    def to_dict(self) -> dict[str, Any]:
        """A flat, JSON-ready dict: floats, and exact strings (``"7/512"``) where exact."""
        d: dict[str, Any] = {"rule": self.rule(), "prediction": self.prediction, "class_source": self.class_source,
                             "precision": float(self.precision), "coverage": float(self.coverage),
                             "error": float(self.error), "distribution": self.distribution, "language": self.language,
                             "conditions": [c.to_dict() for c in self.conditions]}
        for key in ("precision", "coverage", "error"):
            v = getattr(self, key)
            if isinstance(v, Fraction):
                d[key + "_exact"] = str(v)
        if self.data is not None:
            d.update(self.data.to_dict())
        return d

    def __str__(self) -> str:
        which = "" if self.class_source == "rule" else " (the majority class: the rule names none)"
        text = (f"{self.rule()}{which}\n  precision {format_probability(self.precision)}, coverage "
                f"{format_probability(self.coverage)} (exact, {under(self.distribution)})")
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
    oracle, source = _box_oracle(model)
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
