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
Both describe their scores to the compilers as data (``additive_scores()``, a
:class:`~kcxai.functions.AdditiveScores`); the threshold compiler
(:mod:`kcxai.compilers._threshold`: Chan and Darwiche's symbolic compilation of
naive Bayes classifiers, as used by Shih, Choi and Darwiche, IJCAI 2018) builds
their class functions, each feature a block.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kcxai._errors import InvalidInputError, ModelFormatError
from kcxai._params import BOOL, check
from kcxai._types import Label
from kcxai.models.imports import _sklearn
from kcxai.models._feature_scores import FeatureScoreModel, as_list, json_list, tables_from_json
from kcxai.models._numbers import exact_number, parse_fraction
from kcxai.space import SPACE, FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike

__all__ = ["LinearClassifier", "NaiveBayes"]

class LinearClassifier(FeatureScoreModel):
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

    def __init__(self, space: FeatureSpace, classes: Sequence[object], weights: Sequence[Any],
                 intercepts: Sequence[Any] | None = None) -> None:
        classes = as_list(classes, "classes")
        if intercepts is None:
            intercepts = [0] * len(classes)
        self._setup(space, classes, intercepts, weights, what_base="intercepts", what_tables="weights",
                    positive=False)

    @classmethod
    def from_coefficients(cls, space: FeatureSpace, coef: Sequence[Any], intercept: Any = 0, *,
                          classes: Sequence[object] = (0, 1)) -> "LinearClassifier":
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
        check("space", space, SPACE)
        classes = as_list(classes, "classes")
        k = len(classes)
        rows = as_list(coef, "coef")
        if rows and not isinstance(rows[0], (list, tuple)) and not hasattr(rows[0], "tolist"):
            rows = [rows]
        rows = [as_list(r, "coef") for r in rows]
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
            ints = as_list(intercept, "intercept") if not isinstance(intercept, numbers.Real) else [intercept] * k
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
                     feature_names: Sequence[str] | None = None,
                     distribution: DistributionLike = None) -> "LinearClassifier":
        """Import a fitted scikit-learn linear classifier (``LogisticRegression``, ``LinearSVC``, ...).

        The features are categorical with the given ``domains`` (required: one
        list of real values per feature); a value contributes
        ``coef_[c, i] * value`` exactly. See :func:`kcxai.models.from_sklearn`.
        """
        parts = _sklearn.linear_parts(clf, domains=domains, feature_names=feature_names, distribution=distribution)
        out = cls(parts.space, parts.classes, parts.weights, parts.intercepts)
        out.weights_from_floats = True
        return out

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
    def _from_body(cls, space: FeatureSpace, classes: list[Label], body: dict[str, Any]) -> "LinearClassifier":
        ints = [parse_fraction(x, "intercepts") for x in json_list(body, "intercepts")]
        out = cls(space, classes, tables_from_json(body, "weights", space.n_features), ints)
        out.weights_from_floats = bool(body.get("weights_from_floats", False))
        out._rounding_from_json(body)
        return out

    def __repr__(self) -> str:
        return f"LinearClassifier({self.space.n_features} features, {len(self.classes)} classes)"


def _single(x: object) -> object:
    if isinstance(x, numbers.Real) or (hasattr(x, "ndim") and x.ndim == 0):
        return x
    xs = as_list(x, "intercept")
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

class NaiveBayes(FeatureScoreModel):
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

    def __init__(self, space: FeatureSpace, classes: Sequence[object], priors: Sequence[Any],
                 likelihoods: Sequence[Any], *, log: bool = False) -> None:
        check("log", log, BOOL)
        self.log = log
        self._mult = not log
        self._setup(space, classes, priors, likelihoods, what_base="priors", what_tables="likelihoods",
                    positive=not log)

    @classmethod
    def from_sklearn(cls, clf: Any, *, domains: Sequence[Any] | None = None,
                     feature_names: Sequence[str] | None = None,
                     distribution: DistributionLike = None) -> "NaiveBayes":
        """Import a fitted scikit-learn ``CategoricalNB`` or ``BernoulliNB`` (log-probabilities, taken exactly).

        See :func:`kcxai.models.from_sklearn`.
        """
        parts = _sklearn.naive_bayes_parts(clf, domains=domains, feature_names=feature_names,
                                           distribution=distribution)
        out = cls(parts.space, parts.classes, parts.log_priors, parts.tables, log=True)
        out.weights_from_floats = True
        return out

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
    def _from_body(cls, space: FeatureSpace, classes: list[Label], body: dict[str, Any]) -> "NaiveBayes":
        priors = [parse_fraction(x, "priors") for x in json_list(body, "priors")]
        log = body["log"]
        if not isinstance(log, bool):
            raise ModelFormatError(f"'log' must be true or false. Got {log!r}.")
        out = cls(space, classes, priors, tables_from_json(body, "likelihoods", space.n_features), log=log)
        out.weights_from_floats = bool(body.get("weights_from_floats", False))
        out._rounding_from_json(body)
        return out

    def __repr__(self) -> str:
        kind = "log-probabilities" if self.log else "probabilities"
        return f"NaiveBayes({self.space.n_features} features, {len(self.classes)} classes, {kind})"
