"""The shared base of the additive-score classifiers (:mod:`kcxai.models.linear`): one exact score
table per feature and class, prediction by integer sums, the scores described as data for the
compilers (:class:`~kcxai.functions.AdditiveScores`), rounding, and the JSON of the tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from kcxai._errors import InvalidInputError, InvalidTypeError, ModelFormatError
from kcxai._params import check
from kcxai.models.classifier import Classifier
from kcxai.functions import AdditiveScores
from kcxai.models._predict_batch import FeatureScores, argmax_first, argmax_first_rows
from kcxai.models._numbers import (
    Number,
    check_step,
    exact_number,
    lcm_of_denominators,
    parse_fraction,
    round_to,
    rounding_margin,
    scaled_ints,
)
from kcxai.space import SPACE, FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike
    from kcxai._types import InstanceLike

__all__ = ["FeatureScoreModel", "as_list", "json_list", "tables_from_json"]

_M = TypeVar("_M", bound="FeatureScoreModel")


# -- shared base -------------------------------------------------------------

class FeatureScoreModel(Classifier):
    """A classifier scoring each class by a sum (or product) of per-feature, per-value terms."""

    _mult: bool = False
    weights_from_floats: bool
    _base: tuple[Fraction, ...]
    _terms: tuple[tuple[tuple[Fraction, ...], ...], ...]  # [feature][value][class]

    def _setup(self, space: FeatureSpace, classes: Sequence[object], base: Sequence[Any],
               tables: Sequence[Any], *, what_base: str, what_tables: str, positive: bool) -> None:
        check("space", space, SPACE)
        self.space = space
        self._init_classes(classes)
        k = len(self.classes)
        floats = False
        base = as_list(base, what_base)
        if len(base) != k:
            raise InvalidInputError(f"'{what_base}' must have one entry per class ({k}). Got {len(base)} instead.")
        b: list[Fraction] = []
        for c, x in enumerate(base):
            v, fl = exact_number(x, f"'{what_base}[{c}]'")
            floats |= fl
            b.append(self._check_positive(v, f"'{what_base}[{c}]'", positive))
        tables = as_list(tables, what_tables)
        if len(tables) != space.n_features:
            raise InvalidInputError(
                f"'{what_tables}' must have one table per feature ({space.n_features}). Got {len(tables)} instead.")
        terms = []
        for i, (feat, table) in enumerate(zip(space.features, tables)):
            rows = as_list(table, f"{what_tables}[{i}]")
            if len(rows) != k:
                raise InvalidInputError(
                    f"'{what_tables}[{i}]' (feature {feat.name!r}) must have one row per class ({k}). "
                    f"Got {len(rows)} rows instead.")
            cols: list[list[Fraction]] = [[] for _ in range(feat.size)]
            for c, row in enumerate(rows):
                row = as_list(row, f"{what_tables}[{i}][{c}]")
                if len(row) != feat.size:
                    raise InvalidInputError(
                        f"'{what_tables}[{i}][{c}]' (feature {feat.name!r}) must have one entry per value "
                        f"({feat.size}). Got {len(row)} instead.")
                for j, x in enumerate(row):
                    where = f"'{what_tables}[{i}][{c}][{j}]'"
                    v, fl = exact_number(x, where)
                    floats |= fl
                    cols[j].append(self._check_positive(v, where, positive))
            terms.append(tuple(tuple(col) for col in cols))
        self._base = tuple(b)
        self._terms = tuple(terms)
        self.weights_from_floats = floats
        self._prepare_predict()

    @staticmethod
    def _check_positive(v: Fraction, where: str, positive: bool) -> Fraction:
        if positive and v <= 0:
            raise InvalidInputError(
                f"{where} must be a positive probability (exact products need no zeros; give "
                f"log-probabilities with log=True to allow any real number). Got {v} instead.")
        return v

    def _prepare_predict(self) -> None:
        # Scale to integers once: sums (or products) of ints compare as the exact rationals do.
        if self._mult:
            self._ibase = scaled_ints(self._base)
            self._iterms = tuple(_scale_table(t) for t in self._terms)
        else:
            scale = lcm_of_denominators([*self._base, *(x for t in self._terms for col in t for x in col)])
            self._ibase = tuple(int(x * scale) for x in self._base)
            self._iterms = tuple(tuple(tuple(int(x * scale) for x in col) for col in t) for t in self._terms)

    def _int_scores(self, point: Sequence[int]) -> list[int]:
        s = list(self._ibase)
        k = len(s)
        if self._mult:
            for t, v in zip(self._iterms, point):
                col = t[v]
                for c in range(k):
                    s[c] *= col[c]
        else:
            for t, v in zip(self._iterms, point):
                col = t[v]
                for c in range(k):
                    s[c] += col[c]
        return s

    def predict_point(self, point: Sequence[int]) -> int:
        return argmax_first(self._int_scores(point))

    def predict_points(self, points: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.int64]]":
        """The class indices of many encoded points: additive scores summed exactly with numpy (products,
        as naive Bayes without logs, loop over :meth:`predict_point`)."""
        if self._mult:
            return super().predict_points(points)
        batch = self.__dict__.get("_batch")
        if batch is None or batch[0] is not self._iterms:
            batch = self._batch = (self._iterms, FeatureScores(self._ibase, self._iterms))
        return argmax_first_rows(batch[1].totals(np.asarray(points)))

    def scores_point(self, point: Sequence[int]) -> tuple[Fraction, ...]:
        """The exact score of every class at a point (value indices)."""
        s = list(self._base)
        for t, v in zip(self._terms, point):
            for c, x in enumerate(t[v]):
                s[c] = s[c] * x if self._mult else s[c] + x
        return tuple(s)

    def scores(self, instance: InstanceLike) -> tuple[Fraction, ...]:
        """The exact score of every class for an instance in user values."""
        return self.scores_point(self.space.encode(instance))

    def additive_scores(self) -> AdditiveScores:
        """The exact scores as data: per feature and value one term per class, the first class winning ties
        (what the compilers build the class functions from, :mod:`kcxai.compilers._threshold`)."""
        return AdditiveScores(self.space, self._terms, self._base, tuple(range(len(self.classes))),
                              product=self._mult, name=type(self).__name__)

    #: ``None``, or ``(step, margin)`` when the weights were rounded by :meth:`rounded`.
    rounding: tuple[Fraction, Fraction] | None = None

    def rounded(self: _M, step: Number) -> _M:
        """A copy with every weight rounded to the nearest multiple of ``step`` (exactly).

        This is a *different classifier*, compiled exactly in its own right:
        use it when the exact model is too large to compile (the size of a
        threshold function's diagram grows with the number of distinct partial
        sums; rounding bounds them). Its :attr:`rounding` is ``(step, margin)``:
        every pairwise score difference moved by at most ``margin`` (exact), so
        its predictions can differ from this model's only at points where this
        model's two best class scores are within ``margin`` of each other.

        Parameters
        ----------
        step : int, Fraction or float
            Positive; a float is read as the decimal it prints as.

        Examples
        --------
        >>> from fractions import Fraction
        >>> from kcxai import Feature, FeatureSpace
        >>> from kcxai.models import LinearClassifier
        >>> space = FeatureSpace([Feature.categorical(n, [0, 1]) for n in "abc"])
        >>> clf = LinearClassifier.from_coefficients(
        ...     space, [Fraction(31, 100), Fraction(52, 100), Fraction(-27, 100)], Fraction(1, 10))
        >>> r = clf.rounded(0.1)
        >>> r.rounding  # 0.31, 0.52, -0.27 moved by 0.01, 0.02 and 0.03
        (Fraction(1, 10), Fraction(3, 50))
        >>> r.weight("b", 1), r.exactness.startswith("weights rounded to multiples of 1/10")
        ((Fraction(0, 1), Fraction(1, 2)), True)
        """
        if self._mult:
            raise InvalidInputError(
                "rounded() needs additive scores: this NaiveBayes multiplies exact probabilities "
                "(log=False); give log-probabilities (log=True) to round them.")
        q = check_step(step)
        out = self._shallow_copy()
        out._base = tuple(round_to(x, q) for x in self._base)
        out._terms = tuple(tuple(tuple(round_to(x, q) for x in col) for col in t) for t in self._terms)
        margin = rounding_margin(self._terms, out._terms, self._base, out._base)
        out.rounding = (q, margin + (self.rounding[1] if self.rounding else 0))
        out._prepare_predict()
        return out

    @property
    def exactness(self) -> str:
        """A sentence saying in what sense the model (and its compiled form) is exact."""
        if self.rounding is not None:
            step, margin = self.rounding
            return (f"weights rounded to multiples of {step} by rounded(): a different classifier, compiled "
                    f"exactly; its predictions can differ from the unrounded model's only where that model's "
                    f"two best class scores are within {margin} ({float(margin):.3g}) of each other")
        if self.weights_from_floats:
            return ("exact w.r.t. the given float weights: each float is taken as the rational it stores and "
                    "scores are compared exactly; a float-arithmetic implementation of the same weights may "
                    "round near-ties differently")
        return "exact: all weights are rationals and scores are compared exactly"

    def with_distribution(self: _M, distribution: DistributionLike) -> _M:
        return self._copy_with_space(self.space.with_distribution(distribution))

    def _rounding_json(self) -> dict[str, Any]:
        return {} if self.rounding is None else {"rounding": [str(x) for x in self.rounding]}

    def _rounding_from_json(self, body: dict[str, Any]) -> None:
        raw = body.get("rounding")
        if raw is not None:
            if not isinstance(raw, list) or len(raw) != 2:
                raise ModelFormatError(f"'rounding' must be [step, margin]. Got {raw!r}.")
            self.rounding = (parse_fraction(raw[0], "rounding"), parse_fraction(raw[1], "rounding"))

    def _tables_to_json(self) -> list[list[list[str]]]:
        k = len(self.classes)
        return [[[str(col[c]) for col in t] for c in range(k)] for t in self._terms]


def as_list(x: object, what: str) -> list[Any]:
    if hasattr(x, "tolist") and callable(x.tolist):
        x = x.tolist()
    if isinstance(x, (str, bytes)) or not isinstance(x, Sequence):
        raise InvalidTypeError(f"'{what}' must be a sequence. Got {type(x).__name__} instead.")
    return list(x)


def _scale_table(t: Sequence[Sequence[Fraction]]) -> tuple[tuple[int, ...], ...]:
    # one scale per feature (all values and classes): every class's product is scaled alike
    scale = lcm_of_denominators([x for col in t for x in col])
    return tuple(tuple(int(x * scale) for x in col) for col in t)


def json_list(body: Any, key: str) -> list[Any]:
    if not isinstance(body.get(key), list):
        raise ModelFormatError(f"'{key}' must be a list. Got {type(body.get(key)).__name__}.")
    return list(body[key])


def tables_from_json(body: Any, key: str, n_features: int) -> list[list[list[Fraction]]]:
    tables = body[key]
    if not isinstance(tables, list) or len(tables) != n_features:
        raise ModelFormatError(f"'{key}' must be a list with one table per feature ({n_features}).")
    for i, t in enumerate(tables):
        if not isinstance(t, list) or not all(isinstance(row, list) for row in t):
            raise ModelFormatError(f"'{key}[{i}]' must be a list of rows (one per class) of exact numbers.")
    return [[[parse_fraction(x, f"{key}[{i}]") for x in row] for row in t] for i, t in enumerate(tables)]


# -- linear threshold classifiers -------------------------------------------------
