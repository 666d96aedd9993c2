"""Additive-score classifiers compiled exactly: linear threshold classifiers and naive Bayes.

Both families score every class by a sum over features (naive Bayes with
probabilities: a product) and predict the class with the highest score, the
first one in :attr:`~kcxai.models.Classifier.classes` on ties, as numpy's
``argmax`` and scikit-learn do.

Exact arithmetic
----------------
Weights are kept as exact rationals: ``int`` and ``Fraction`` as given, and a
``float`` as the exact binary value it stores (``Fraction(0.1)`` is
``3602879701896397/36028797018963968``; every finite float is a rational).
Scores are therefore summed and compared *exactly*; no tie is ever decided by
rounding. When a model comes from floats (every scikit-learn model does), the
kcxai model is the exact-arithmetic version of the float one: it agrees with
scikit-learn on every point except where scikit-learn's own float sums round
two nearly equal scores differently. :attr:`weights_from_floats` says which case
a model is in, and ``docs/models.md`` gives the disagreements measured.

Compilation
-----------
:meth:`build` compiles the class functions with the threshold compiler of
:mod:`kcxai.models._threshold` (Chan and Darwiche's symbolic compilation of
naive Bayes classifiers, as used by Shih, Choi and Darwiche, IJCAI 2018), each
feature a block.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeVar

from kcxai._errors import InvalidInputError, InvalidTypeError, ModelFormatError
from kcxai.models._base import Classifier
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
from kcxai.models._threshold import FeatureBlock, argmax_first, argmax_functions
from kcxai.space import FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.functions import FunctionBuilder

__all__ = ["LinearClassifier", "NaiveBayes"]

_M = TypeVar("_M", bound="_FeatureScoreModel")


# -- shared base -------------------------------------------------------------

class _FeatureScoreModel(Classifier):
    """A classifier scoring each class by a sum (or product) of per-feature, per-value terms."""

    _mult: bool = False
    weights_from_floats: bool
    _base: tuple[Fraction, ...]
    _terms: tuple[tuple[tuple[Fraction, ...], ...], ...]  # [feature][value][class]

    def _setup(self, space: FeatureSpace, classes: Sequence[Any], base: Sequence[Any],
               tables: Sequence[Any], *, what_base: str, what_tables: str, positive: bool) -> None:
        if not isinstance(space, FeatureSpace):
            raise InvalidTypeError(f"'space' must be a FeatureSpace. Got {type(space).__name__} instead.")
        self.space = space
        self._init_classes(classes)
        k = len(self.classes)
        floats = False
        base = _as_list(base, what_base)
        if len(base) != k:
            raise InvalidInputError(f"'{what_base}' must have one entry per class ({k}). Got {len(base)} instead.")
        b: list[Fraction] = []
        for c, x in enumerate(base):
            v, fl = exact_number(x, f"'{what_base}[{c}]'")
            floats |= fl
            b.append(self._check_positive(v, f"'{what_base}[{c}]'", positive))
        tables = _as_list(tables, what_tables)
        if len(tables) != space.n_features:
            raise InvalidInputError(
                f"'{what_tables}' must have one table per feature ({space.n_features}). Got {len(tables)} instead.")
        terms = []
        for i, (feat, table) in enumerate(zip(space.features, tables)):
            rows = _as_list(table, f"{what_tables}[{i}]")
            if len(rows) != k:
                raise InvalidInputError(
                    f"'{what_tables}[{i}]' (feature {feat.name!r}) must have one row per class ({k}). "
                    f"Got {len(rows)} rows instead.")
            cols: list[list[Fraction]] = [[] for _ in range(feat.size)]
            for c, row in enumerate(rows):
                row = _as_list(row, f"{what_tables}[{i}][{c}]")
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

    def scores_point(self, point: Sequence[int]) -> tuple[Fraction, ...]:
        """The exact score of every class at a point (value indices)."""
        s = list(self._base)
        for t, v in zip(self._terms, point):
            for c, x in enumerate(t[v]):
                s[c] = s[c] * x if self._mult else s[c] + x
        return tuple(s)

    def scores(self, instance: Any) -> tuple[Fraction, ...]:
        """The exact score of every class for an instance in user values."""
        return self.scores_point(self.space.encode(instance))

    def build(self, builder: "FunctionBuilder[Any]") -> list[Any]:
        """One function per class, compiled exactly (see the module docstring)."""
        blocks = [FeatureBlock(i) for i in range(self.space.n_features)]
        return argmax_functions(builder, blocks, self._base, self._terms, mult=self._mult)

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
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
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

    def _copy_with_space(self: _M, space: FeatureSpace) -> _M:
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.space = space
        return out

    def with_distribution(self: _M, distribution: Any) -> _M:
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


def _as_list(x: Any, what: str) -> list[Any]:
    if hasattr(x, "tolist") and callable(x.tolist):
        x = x.tolist()
    if isinstance(x, (str, bytes)) or not isinstance(x, Sequence):
        raise InvalidTypeError(f"'{what}' must be a sequence. Got {type(x).__name__} instead.")
    return list(x)


def _scale_table(t: Sequence[Sequence[Fraction]]) -> tuple[tuple[int, ...], ...]:
    # one scale per feature (all values and classes): every class's product is scaled alike
    scale = lcm_of_denominators([x for col in t for x in col])
    return tuple(tuple(int(x * scale) for x in col) for col in t)


def _json_list(body: Any, key: str) -> list[Any]:
    if not isinstance(body.get(key), list):
        raise ModelFormatError(f"'{key}' must be a list. Got {type(body.get(key)).__name__}.")
    return list(body[key])


def _tables_from_json(body: Any, key: str, n_features: int) -> list[list[list[Fraction]]]:
    tables = body[key]
    if not isinstance(tables, list) or len(tables) != n_features:
        raise ModelFormatError(f"'{key}' must be a list with one table per feature ({n_features}).")
    for i, t in enumerate(tables):
        if not isinstance(t, list) or not all(isinstance(row, list) for row in t):
            raise ModelFormatError(f"'{key}[{i}]' must be a list of rows (one per class) of exact numbers.")
    return [[[parse_fraction(x, f"{key}[{i}]") for x in row] for row in t] for i, t in enumerate(tables)]


# -- linear threshold classifiers -------------------------------------------------

class LinearClassifier(_FeatureScoreModel):
    """A linear classifier over discrete features: the class of highest exact score.

    ``score_c(x) = intercepts[c] + sum_i weights[i][c][x_i]``: each feature
    contributes one number per class and value (a one-hot linear model; a
    linear model over numeric values uses ``weight * value``, see
    :meth:`from_coefficients`). The prediction is the first class of highest
    score. Scores are exact rationals (see the module docstring).

    Parameters
    ----------
    space : FeatureSpace
    classes : sequence
        The class labels.
    weights : sequence
        One table per feature, of shape ``(n_classes, n_values)``.
    intercepts : sequence, optional
        One number per class (default zeros).

    Examples
    --------
    A 2-of-3 majority as a linear threshold test on Boolean features,
    ``yes`` iff ``a + b + c - 3/2 > 0``:

    >>> from fractions import Fraction
    >>> from kcxai import Feature, FeatureSpace
    >>> from kcxai.models import LinearClassifier
    >>> space = FeatureSpace([Feature.categorical(n, [0, 1]) for n in ("a", "b", "c")])
    >>> clf = LinearClassifier.from_coefficients(space, [1, 1, 1], Fraction(-3, 2), classes=["no", "yes"])
    >>> clf.predict([1, 0, 1]), clf.predict([1, 0, 0]), clf.predict([0, 1, 1])
    ('yes', 'no', 'yes')
    >>> clf.scores([1, 0, 1]), clf.weights_from_floats
    ((Fraction(0, 1), Fraction(1, 2)), False)

    With intercept ``-2``, ``[1, 0, 1]`` scores ``0 > 0``: false, a tie, and
    the first class wins, as in scikit-learn:

    >>> LinearClassifier.from_coefficients(space, [1, 1, 1], -2, classes=["no", "yes"]).predict([1, 0, 1])
    'no'
    """

    model_type = "linear"

    def __init__(self, space: FeatureSpace, classes: Sequence[Any], weights: Sequence[Any],
                 intercepts: Sequence[Any] | None = None) -> None:
        classes = _as_list(classes, "classes")
        if intercepts is None:
            intercepts = [0] * len(classes)
        self._setup(space, classes, intercepts, weights, what_base="intercepts", what_tables="weights",
                    positive=False)

    @classmethod
    def from_coefficients(cls, space: FeatureSpace, coef: Sequence[Any], intercept: Any = 0, *,
                          classes: Sequence[Any] = (0, 1)) -> "LinearClassifier":
        """A linear classifier over the numeric values of categorical features.

        Parameters
        ----------
        space : FeatureSpace
            Categorical features whose values are real numbers.
        coef : sequence
            Shape ``(n_features,)`` or ``(1, n_features)`` for two classes:
            ``z = coef . x + intercept`` and the second class is predicted iff
            ``z > 0`` (scikit-learn's rule). Shape ``(n_classes, n_features)``
            for three or more classes: the first class of highest
            ``coef[c] . x + intercept[c]``.
        intercept : number or sequence
            A number for two classes, one per class otherwise.
        classes : sequence
            The class labels (default ``(0, 1)``).
        """
        if not isinstance(space, FeatureSpace):
            raise InvalidTypeError(f"'space' must be a FeatureSpace. Got {type(space).__name__} instead.")
        classes = _as_list(classes, "classes")
        k = len(classes)
        rows = _as_list(coef, "coef")
        if rows and not isinstance(rows[0], (list, tuple)) and not hasattr(rows[0], "tolist"):
            rows = [rows]
        rows = [_as_list(r, "coef") for r in rows]
        binary = len(rows) == 1 and k == 2
        if not binary and len(rows) != k:
            raise InvalidInputError(
                f"'coef' must have 1 row (two classes) or one row per class ({k}). Got {len(rows)} rows instead.")
        values = _numeric_domains(space)
        for r in rows:
            if len(r) != space.n_features:
                raise InvalidInputError(
                    f"'coef' rows must have one coefficient per feature ({space.n_features}). Got {len(r)} instead.")
        ex = [[exact_number(x, "'coef' entries") for x in r] for r in rows]
        floats = any(fl for r in ex for _, fl in r)
        if binary:
            b, fl = exact_number(_single(intercept), "'intercept'")
            floats |= fl
            intercepts = [Fraction(0), b]
            weights = [[[Fraction(0)] * len(values[i]), [ex[0][i][0] * v for v in values[i]]]
                       for i in range(space.n_features)]
        else:
            ints = _as_list(intercept, "intercept") if not isinstance(intercept, numbers.Real) else [intercept] * k
            if len(ints) != k:
                raise InvalidInputError(f"'intercept' must have one entry per class ({k}). Got {len(ints)} instead.")
            exi = [exact_number(x, "'intercept' entries") for x in ints]
            floats |= any(fl for _, fl in exi)
            intercepts = [x for x, _ in exi]
            weights = [[[ex[c][i][0] * v for v in values[i]] for c in range(k)] for i in range(space.n_features)]
        out = cls(space, classes, weights, intercepts)
        out.weights_from_floats = out.weights_from_floats or floats
        return out

    @classmethod
    def from_sklearn(cls, clf: Any, *, domains: Sequence[Any] | None = None,
                     feature_names: Sequence[str] | None = None, distribution: Any = None) -> "LinearClassifier":
        """Import a fitted scikit-learn linear classifier (``LogisticRegression``, ``LinearSVC``, ...).

        The features are categorical with the given ``domains`` (required: one
        list of real values per feature); a value contributes
        ``coef_[c, i] * value`` exactly. See :func:`kcxai.models.from_sklearn`.
        """
        from kcxai.models._sklearn import linear_from_sklearn

        return linear_from_sklearn(clf, domains=domains, feature_names=feature_names, distribution=distribution)

    @property
    def intercepts(self) -> tuple[Fraction, ...]:
        """The exact intercept of each class."""
        return self._base

    def weight(self, feature: int | str, value: Any) -> tuple[Fraction, ...]:
        """The exact contribution of ``feature = value`` to each class's score."""
        i = self.space.feature_index(feature)
        return self._terms[i][self.space.features[i].index(value)]

    def _body_to_dict(self) -> dict[str, Any]:
        return {"intercepts": [str(x) for x in self._base], "weights": self._tables_to_json(),
                "weights_from_floats": self.weights_from_floats, **self._rounding_json()}

    @classmethod
    def _from_body(cls, space: FeatureSpace, classes: list[Any], body: dict[str, Any]) -> "LinearClassifier":
        ints = [parse_fraction(x, "intercepts") for x in _json_list(body, "intercepts")]
        out = cls(space, classes, _tables_from_json(body, "weights", space.n_features), ints)
        out.weights_from_floats = bool(body.get("weights_from_floats", False))
        out._rounding_from_json(body)
        return out

    def __repr__(self) -> str:
        return f"LinearClassifier({self.space.n_features} features, {len(self.classes)} classes)"


def _single(x: Any) -> Any:
    if isinstance(x, numbers.Real) or (hasattr(x, "ndim") and x.ndim == 0):
        return x
    xs = _as_list(x, "intercept")
    if len(xs) != 1:
        raise InvalidInputError(f"'intercept' must be one number for two classes. Got {len(xs)} numbers.")
    return xs[0]


def _numeric_domains(space: FeatureSpace) -> list[list[Fraction]]:
    out = []
    for f in space.features:
        if f.is_numeric:
            raise InvalidInputError(
                f"Feature {f.name!r} is numeric (intervals); a linear model needs categorical features whose "
                "values are real numbers (the values the model multiplies).")
        out.append([exact_number(v, f"Values of feature {f.name!r}")[0] for v in f.values])
    return out


# -- naive Bayes -------------------------------------------------------------

class NaiveBayes(_FeatureScoreModel):
    """A naive Bayes classifier over discrete features, compiled exactly.

    Predicts the first class of highest ``P(c) * prod_i P(x_i | c)``.

    Parameters
    ----------
    space : FeatureSpace
    classes : sequence
    priors : sequence
        ``P(c)``, one per class (or ``log P(c)`` with ``log=True``).
    likelihoods : sequence
        One table per feature of shape ``(n_classes, n_values)``:
        ``P(x_i = value | c)`` (or its logarithm with ``log=True``).
    log : bool, default False
        ``False``: exact probabilities (positive ``int``/``Fraction``, or floats
        taken exactly); scores are exact products. ``True``: log-probabilities
        (what scikit-learn stores); scores are their exact sums. Probabilities
        need not be normalised: only their comparisons matter.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from kcxai import Feature, FeatureSpace
    >>> from kcxai.models import NaiveBayes
    >>> space = FeatureSpace([Feature.categorical("fever", [0, 1]), Feature.categorical("cough", [0, 1])])
    >>> nb = NaiveBayes(space, ["flu", "cold"], [F(1, 3), F(2, 3)],
    ...                 [[[F(1, 5), F(4, 5)], [F(3, 4), F(1, 4)]],
    ...                  [[F(1, 2), F(1, 2)], [F(1, 4), F(3, 4)]]])
    >>> nb.predict([1, 0]), nb.predict([0, 1])
    ('flu', 'cold')
    >>> nb.scores([1, 0])  # P(c, x): 1/3 * 4/5 * 1/2 against 2/3 * 1/4 * 1/4
    (Fraction(2, 15), Fraction(1, 24))
    """

    model_type = "naive_bayes"

    def __init__(self, space: FeatureSpace, classes: Sequence[Any], priors: Sequence[Any],
                 likelihoods: Sequence[Any], *, log: bool = False) -> None:
        if not isinstance(log, bool):
            raise InvalidTypeError(f"'log' must be a bool. Got {log!r} instead.")
        self.log = log
        self._mult = not log
        self._setup(space, classes, priors, likelihoods, what_base="priors", what_tables="likelihoods",
                    positive=not log)

    @classmethod
    def from_sklearn(cls, clf: Any, *, domains: Sequence[Any] | None = None,
                     feature_names: Sequence[str] | None = None, distribution: Any = None) -> "NaiveBayes":
        """Import a fitted scikit-learn ``CategoricalNB`` or ``BernoulliNB`` (log-probabilities, taken exactly).

        See :func:`kcxai.models.from_sklearn`.
        """
        from kcxai.models._sklearn import naive_bayes_from_sklearn

        return naive_bayes_from_sklearn(clf, domains=domains, feature_names=feature_names,
                                        distribution=distribution)

    @property
    def priors(self) -> tuple[Fraction, ...]:
        """The exact ``P(c)`` (or ``log P(c)``) of each class."""
        return self._base

    def likelihood(self, feature: int | str, value: Any) -> tuple[Fraction, ...]:
        """The exact ``P(feature = value | c)`` (or its log) for each class."""
        i = self.space.feature_index(feature)
        return self._terms[i][self.space.features[i].index(value)]

    def _body_to_dict(self) -> dict[str, Any]:
        return {"log": self.log, "priors": [str(x) for x in self._base],
                "likelihoods": self._tables_to_json(), "weights_from_floats": self.weights_from_floats,
                **self._rounding_json()}

    @classmethod
    def _from_body(cls, space: FeatureSpace, classes: list[Any], body: dict[str, Any]) -> "NaiveBayes":
        priors = [parse_fraction(x, "priors") for x in _json_list(body, "priors")]
        log = body["log"]
        if not isinstance(log, bool):
            raise ModelFormatError(f"'log' must be true or false. Got {log!r}.")
        out = cls(space, classes, priors, _tables_from_json(body, "likelihoods", space.n_features), log=log)
        out.weights_from_floats = bool(body.get("weights_from_floats", False))
        out._rounding_from_json(body)
        return out

    def __repr__(self) -> str:
        kind = "log-probabilities" if self.log else "probabilities"
        return f"NaiveBayes({self.space.n_features} features, {len(self.classes)} classes, {kind})"
