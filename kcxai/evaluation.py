"""Explanations held against data: on-data precision and coverage (Anchor's metrics).

The exact error, precision and coverage of an :class:`~kcxai.Explanation` are
probabilities under the model's distribution. This module measures the same
rule on a set of rows (typically held out): among the rows that match the
instance on the explanation's features, the share the model gives the same
class. The figures are exact ratios of row counts (``Fraction``), but they are
measured *on the sample*, not guaranteed for the distribution: the
distribution's numbers are the guarantee; these show whether it tracks the data.

Measure on rows that were not explained: a rule always matches its own row, which the model gives the
explained class, so evaluating rules on the rows they explain flatters them (50 rules on their own 50
rows: precision 0.768, against 0.516 on disjoint rows). :meth:`kcxai.Explainer.evaluate` leaves the
explained rows out itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.data import DataLike, encode_rows
from kcxai.explain.explanation import Explanation
from kcxai.explain.inflate import box_of
from kcxai.oracle import Box

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.compilers.compiled import CompiledModel
    from kcxai.models.classifier import Classifier

__all__ = ["DataMetrics", "evaluate_on_data"]

Model = Union["Classifier", "CompiledModel"]


@dataclass(frozen=True)
class DataMetrics:
    """How one explanation's rule fares on rows of data.

    Attributes
    ----------
    rows : int
        Rows evaluated.
    matching : int
        Rows meeting the rule's conditions (``x_S = v_S``, or the widened conditions).
    agreeing : int
        Of those, the rows the model gives the explained class.
    coverage : Fraction
        ``matching / rows``.
    precision : Fraction or None
        ``agreeing / matching``; ``None`` when no row matches.
    excluded : int
        Rows left out because they were themselves explained (not counted in ``rows``; set by
        :meth:`kcxai.Explainer.evaluate`).
    """

    rows: int
    matching: int
    agreeing: int
    excluded: int = 0

    @property
    def coverage(self) -> Fraction:
        return Fraction(self.matching, self.rows) if self.rows else Fraction(0)

    @property
    def precision(self) -> Fraction | None:
        return None if self.matching == 0 else Fraction(self.agreeing, self.matching)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready figures (floats), prefixed ``data_``."""
        return {"data_rows": self.rows, "data_matching": self.matching,
                "data_coverage": float(self.coverage) if self.rows else None,
                "data_precision": None if self.precision is None else float(self.precision),
                "data_excluded": self.excluded}

    def __str__(self) -> str:
        prec = "no matching row" if self.precision is None else f"{float(self.precision):.4g}"
        left = f"; {self.excluded} explained rows left out" if self.excluded else ""
        return (f"on data: precision {prec} ({self.agreeing}/{self.matching} matching rows), "
                f"coverage {float(self.coverage):.4g} ({self.matching}/{self.rows} rows){left}")


def evaluate_on_data(model: Model, explanations: Explanation | Iterable[Explanation], X: DataLike
                     ) -> DataMetrics | list[DataMetrics]:
    """On-data precision and coverage of explanations over the rows ``X``.

    Parameters
    ----------
    model : Classifier or CompiledModel
        The model explained (it classifies the rows).
    explanations : Explanation or iterable of Explanation
        Relevant sets (``kind == "relevant"``) of that model.
    X : 2-D array, DataFrame or sequence of rows
        The rows, read as for :func:`kcxai.fit_distribution`: held-out rows that were not explained
        (see the module docstring).

    Returns
    -------
    DataMetrics, or a list of them for an iterable of explanations.

    References
    ----------
    M. T. Ribeiro, S. Singh and C. Guestrin, "Anchors: High-Precision Model-Agnostic Explanations",
    AAAI 2018 (precision and coverage of a rule, there on samples).

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> e = kcxai.min_idrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0.03, start="path")
    >>> rows = [[1, 0, 0, 0, 0, 0, 0, 0, 1], [1, 1, 1, 1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0, 0, 0, 1]]
    >>> m = kcxai.evaluate_on_data(tree, e, rows)
    >>> m.matching, m.agreeing, m.precision
    (2, 2, Fraction(1, 1))
    """
    space = getattr(model, "space", None)
    if space is None or not hasattr(model, "predict"):
        raise InvalidTypeError(f"'model' must be a kcxai model or CompiledModel. Got {type(model).__name__}.")
    single = isinstance(explanations, Explanation)
    items: Sequence[Explanation] = [explanations] if single else list(explanations)  # type: ignore[list-item]
    for e in items:
        if not isinstance(e, Explanation):
            raise InvalidTypeError(f"'explanations' must hold Explanation objects. Got {type(e).__name__}.")
        if e.kind != "relevant":
            raise InvalidInputError(
                f"'explanations' must be relevant sets (a rule IF x_S = v_S); got a {e.kind!r} set ({e.method}).")
    return _measure_boxes(model, [(box_of(space, e), _class_index(model, e.prediction)) for e in items], X,
                          single=single)


def _class_index(model: object, prediction: object) -> int:
    source: Any = getattr(model, "model", model)  # a CompiledModel's classes are its model's
    return list(source.classes).index(prediction)


def _measure_boxes(model: Any, boxes: Sequence[tuple[Box, int]], X: DataLike, *, single: bool = False) -> Any:
    """:class:`DataMetrics` of rules given as ``(box, class index)`` over the rows ``X``."""
    space = model.space
    codes = encode_rows(space, X)
    source: Any = getattr(model, "model", None) or model  # a CompiledModel's predictions are its model's
    if not len(codes):
        labels = np.zeros(0, dtype=np.int64)
    elif callable(getattr(source, "predict_points", None)):
        labels = source.predict_points(codes)  # exact, vectorised
    else:  # an oracle without its model
        labels = np.fromiter((model.predict_point(tuple(int(v) for v in row)) for row in codes), dtype=np.int64,
                             count=len(codes))
    out = []
    for box, cls in boxes:
        mask = np.ones(len(codes), dtype=bool)
        for f, allowed in enumerate(box):
            if allowed != (1 << space.features[f].size) - 1:
                mask &= np.isin(codes[:, f], [k for k in range(space.features[f].size) if allowed >> k & 1])
        matching = int(mask.sum())
        agreeing = int((labels[mask] == cls).sum())
        out.append(DataMetrics(rows=len(codes), matching=matching, agreeing=agreeing))
    return out[0] if single else out
