"""Feature space: finite feature domains and a distribution over them.

A point of feature space gives one value to each feature. Internally kcxai
works on *points*, tuples of value indices (``point[i]`` indexes
``space.features[i].values``); the public API takes *instances* in the user's
own values and converts them with :meth:`FeatureSpace.encode`.

The distribution (:mod:`kcxai.distribution`) is uniform by default, as in the
paper; it may be a product distribution (positive weights per value, the
probability of a value being its weight over the feature's total) or a mixture
of product distributions. With ``int`` or :class:`fractions.Fraction`
parameters everything is exact: every count is a Python ``int`` and every
probability a ``Fraction``. With ``float`` parameters everything is computed in
floating point and probabilities are ``float``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kcxai._errors import InvalidInputError, InvalidTypeError, ModelFormatError, name_mismatch
from kcxai._feature import MISSING, Feature, Interval
from kcxai._params import Instance
from kcxai.arithmetic import Arithmetic, Probability, Weight
from kcxai.distribution import Distribution, Product, ProductWeights, Uniform, distribution_from_dict
from kcxai._types import InstanceLike, Point, Values

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike

__all__ = ["Interval", "Feature", "MISSING", "FeatureSpace", "Weight", "Probability"]



class FeatureSpace:
    """The features of a classifier and a product distribution over them.

    Parameters
    ----------
    features : sequence of Feature
    distribution : None, Distribution, sequence or mapping, optional
        ``None`` (default) is the uniform distribution over each domain, as in
        the paper. A :class:`~kcxai.distribution.Distribution` (e.g. a fitted
        mixture) is used as it is. Otherwise a product distribution: one entry per feature (a sequence in feature
        order, or a mapping from feature name), each entry ``None`` (uniform)
        or a sequence of positive weights, one per value, which need not sum
        to 1. ``int``/``Fraction`` weights keep every result exact; if any
        weight is a ``float``, all results are floats.

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace
    >>> space = FeatureSpace([Feature.categorical("colour", ["red", "green"]),
    ...                       Feature.numeric("age", [30, 40])])
    >>> space.encode(["green", 35])
    (1, 1)
    >>> space.size
    6
    """

    __slots__ = ("features", "distribution", "_names")

    def __init__(self, features: Sequence[Feature], *, distribution: DistributionLike = None) -> None:
        features = tuple(features)
        for f in features:
            if not isinstance(f, Feature):
                raise InvalidTypeError(f"'features' must contain Feature objects. Got {f!r} instead.")
        names = {}
        for i, f in enumerate(features):
            if f.name in names:
                raise InvalidInputError(f"Feature names must be unique: {f.name!r} is used twice.")
            names[f.name] = i
        self.features = features
        self._names = names
        sizes = tuple(f.size for f in features)
        dist: Distribution
        if distribution is None:
            dist = Uniform(sizes)
        elif isinstance(distribution, Distribution):
            distribution.check_sizes(sizes)
            dist = distribution
        else:
            raw = self._normalise_distribution(distribution)
            dist = Product(raw) if raw is not None else Uniform(sizes)
        #: The distribution over the space (:mod:`kcxai.distribution`).
        self.distribution: Distribution = dist

    def _normalise_distribution(self, distribution: DistributionLike) -> tuple[tuple[Any, ...], ...] | None:
        if distribution is None:
            return None
        n = len(self.features)
        if isinstance(distribution, Mapping):
            unknown = [k for k in distribution if k not in self._names]
            if unknown:
                raise InvalidInputError(
                    f"'distribution' names unknown features {unknown}; the features are {list(self._names)}.")
            entries = [distribution.get(f.name) for f in self.features]
        elif isinstance(distribution, Sequence) and not isinstance(distribution, str):
            if len(distribution) != n:
                raise InvalidInputError(
                    f"'distribution' must have one entry per feature ({n}). Got {len(distribution)} instead.")
            entries = list(distribution)
        else:
            raise InvalidTypeError(
                "'distribution' must be None, a sequence with one entry per feature or a mapping "
                f"from feature name. Got {type(distribution).__name__} instead.")
        any_float = False
        out = []
        for f, ws in zip(self.features, entries):
            if ws is None:
                out.append((Fraction(1),) * f.size)
                continue
            try:
                ws = list(ws)
            except TypeError:
                raise InvalidTypeError(
                    f"'distribution' entry of feature {f.name!r} must be a sequence of weights. "
                    f"Got {ws!r} instead.") from None
            if len(ws) != f.size:
                raise InvalidInputError(
                    f"'distribution' entry of feature {f.name!r} must have one weight per value "
                    f"({f.size}). Got {len(ws)} instead.")
            row = []
            for w in ws:
                if isinstance(w, bool) or not isinstance(w, numbers.Real):
                    raise InvalidTypeError(
                        f"'distribution' weights of feature {f.name!r} must be int, Fraction or float. "
                        f"Got {w!r} instead.")
                if isinstance(w, numbers.Rational):
                    w = Fraction(int(w.numerator), int(w.denominator))
                else:
                    w = float(w)
                    any_float = True
                if not (w > 0) or (isinstance(w, float) and not math.isfinite(w)):
                    raise InvalidInputError(
                        f"'distribution' weights of feature {f.name!r} must be positive and finite "
                        f"(drop a value from the domain instead of giving it weight 0). Got {w!r} instead.")
                row.append(w)
            out.append(tuple(row))
        if any_float:
            return tuple(tuple(float(w) for w in ws) for ws in out)
        return tuple(out)

    # -- basic facts -------------------------------------------------------

    @property
    def n_features(self) -> int:
        """Number of features."""
        return len(self.features)

    @property
    def names(self) -> tuple[str, ...]:
        """Feature names in order."""
        return tuple(f.name for f in self.features)

    @property
    def domain_sizes(self) -> tuple[int, ...]:
        """Number of values of each feature."""
        return tuple(f.size for f in self.features)

    @property
    def size(self) -> int:
        """Number of points in feature space."""
        return math.prod(f.size for f in self.features)

    @property
    def is_uniform(self) -> bool:
        """Whether the distribution is uniform over each domain."""
        d = self.distribution
        return d.kind == "uniform" or (d.kind == "product" and all(len(set(ws)) == 1 for ws in self.weights))

    @property
    def is_exact(self) -> bool:
        """Whether weights are Python ints and probabilities Fractions."""
        return self.distribution.arith.exact

    @property
    def arith(self) -> Arithmetic:
        """The number system of the distribution (exact or float)."""
        return self.distribution.arith

    @property
    def total_weight(self) -> Weight:
        """The weight of the whole space."""
        return self.distribution.total_weight

    def _product(self) -> ProductWeights:
        comps = self.distribution.components
        if len(comps) != 1:
            raise InvalidInputError(
                f"This feature space has a mixture of {len(comps)} product distributions: there are no single "
                "per-value weights; read 'space.distribution.components' instead.")
        return comps[0][1]

    @property
    def weights(self) -> tuple[tuple[Weight, ...], ...]:
        """Per feature, the (scaled) weight of each value. Uniform and product distributions only."""
        return self._product().weights

    @property
    def totals(self) -> tuple[Weight, ...]:
        """Per feature, the sum of its weights. Uniform and product distributions only."""
        return self._product().totals

    def feature_index(self, feature: int | str) -> int:
        """The index of a feature given by index or name."""
        if isinstance(feature, str):
            try:
                return self._names[feature]
            except KeyError:
                raise InvalidInputError(
                    f"Unknown feature {feature!r}; the features are {list(self._names)}.") from None
        if isinstance(feature, numbers.Integral) and not isinstance(feature, bool):
            k = int(feature)
            if 0 <= k < len(self.features):
                return k
            raise InvalidInputError(
                f"Feature index must be in [0, {len(self.features) - 1}]. Got {feature!r} instead.")
        raise InvalidTypeError(f"A feature must be given by index (int) or name (str). Got {feature!r} instead.")

    def feature_set(self, features: Iterable[int | str], *, argument: str = "features") -> frozenset[int]:
        """A validated set of feature indices from indices or names."""
        if isinstance(features, (str, bytes)) or not isinstance(features, Iterable):
            raise InvalidTypeError(
                f"'{argument}' must be a collection of feature indices or names. Got {features!r} instead.")
        return frozenset(self.feature_index(f) for f in features)

    # -- instances -----------------------------------------------------------

    def encode(self, instance: InstanceLike, *, argument: str = "instance") -> Point:
        """Convert an instance in user values to a point (a tuple of value indices).

        ``instance`` is a sequence in feature order, a mapping from every feature
        name, or a pandas Series: read by name when its labels are strings (they
        must be exactly the feature names, in any order), by position when its
        labels are ``0, 1, ..., n - 1`` in order (``pd.Series(values)``, a row of a
        frame without column names); any other labelling is an error.

        Examples
        --------
        >>> from kcxai import Feature, FeatureSpace
        >>> space = FeatureSpace([Feature.categorical("a", [0, 1]), Feature.categorical("b", ["x", "y"])])
        >>> space.encode({"b": "y", "a": 0}), space.encode([1, "x"])
        ((0, 1), (1, 0))
        """
        if not isinstance(instance, Mapping) and hasattr(instance, "keys") and hasattr(instance, "tolist"):
            # a pandas Series: by name when its labels are strings (exactly the feature names), by
            # position when they are 0, 1, ..., n - 1 in order (pd.Series(list), a row of an unnamed frame)
            series: Any = instance
            keys = list(series.keys())
            if keys and all(isinstance(k, str) for k in keys):
                instance = {k: series[k] for k in keys}
            elif keys == list(range(len(keys))) and all(not isinstance(k, bool) for k in keys):
                instance = instance.tolist()
            else:
                shown = [str(k) for k in keys[:5]] + (["..."] if len(keys) > 5 else [])
                raise InvalidInputError(
                    f"'{argument}' is a pandas Series labelled [{', '.join(shown)}]: label it by feature name "
                    f"({list(self._names)[:10]}) or by position 0..{len(keys) - 1}, in order.")
        if isinstance(instance, Mapping):
            wrong = name_mismatch(instance, self._names)
            if wrong:
                raise InvalidInputError(
                    f"'{argument}' as a mapping must give exactly the features {list(self._names)}. {wrong}")
            instance = [instance[n] for n in self._names]
        elif hasattr(instance, "tolist") and callable(instance.tolist):
            instance = instance.tolist()
        if isinstance(instance, (str, bytes)) or not isinstance(instance, Iterable):
            raise InvalidTypeError(
                f"'{argument}' must be a sequence with one value per feature. Got {type(instance).__name__}.")
        values = list(instance)
        if len(values) != len(self.features):
            raise InvalidInputError(
                f"'{argument}' must have {len(self.features)} values (one per feature). "
                f"Got {len(values)} instead.")
        out = []
        for f, v in zip(self.features, values):
            try:
                out.append(f.index(v))
            except InvalidInputError as e:
                raise InvalidInputError(f"'{argument}': {e}") from None
        return tuple(out)

    def decode(self, point: Sequence[int]) -> Values:
        """The domain values of a point (intervals for numeric features)."""
        return tuple(f.values[k] for f, k in zip(self.features, point))

    # -- weights ---------------------------------------------------------

    def consistent_weight(self, point: Sequence[int], fixed: Iterable[int]) -> Weight:
        """Weight of the points ``x`` with ``x_S = point_S``."""
        return self.distribution.consistent_weight(point, set(fixed))

    def point_weight(self, point: Sequence[int]) -> Weight:
        """Weight of a single point."""
        return self.distribution.point_weight(point)

    def probability(self, weight: Weight) -> Probability:
        """A weight as a probability (exact ``Fraction`` in exact spaces)."""
        return self.distribution.probability(weight)

    def value_probability(self, feature: int, k: int) -> Probability:
        """``Pr(x_feature = value k)`` (the marginal, under a mixture)."""
        return self.distribution.value_probability(feature, k)

    def with_distribution(self, distribution: DistributionLike) -> "FeatureSpace":
        """The same features with another distribution (``None``, weights, or a :class:`Distribution`)."""
        return FeatureSpace(self.features, distribution=distribution)

    def literal(self, i: int, point: Sequence[int]) -> str:
        """The literal ``x_i = v_i`` of a point, readably."""
        return self.features[i].literal(point[i])

    # -- JSON ------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description; exact weights are written as strings like ``"1/3"``."""
        return {"features": [f.to_dict() for f in self.features], "distribution": self.distribution.to_dict()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "FeatureSpace":
        """Inverse of :meth:`to_dict`."""
        if not isinstance(d, Mapping) or "features" not in d:
            raise ModelFormatError(f"A feature space description needs a 'features' list. Got {d!r}.")
        feats = [Feature.from_dict(f) for f in d["features"]]
        dist = distribution_from_dict(d.get("distribution"), [f.size for f in feats])
        return cls(feats, distribution=dist)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, FeatureSpace) and self.features == other.features
                and self.distribution == other.distribution)

    def __hash__(self) -> int:
        return hash(self.features)

    def __repr__(self) -> str:
        d = self.distribution
        kind = d.kind if d.kind != "product" else ("exact weights" if self.is_exact else "float weights")
        return f"FeatureSpace({len(self.features)} features, {self.size} points, {kind})"


#: The rule of a ``space`` argument (:func:`kcxai._params.check`): ``'space' must be a FeatureSpace. Got dict instead.``
SPACE = Instance(FeatureSpace, name="a FeatureSpace")
