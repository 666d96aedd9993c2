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

import bisect
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Union

from kcxai._errors import InvalidInputError, InvalidTypeError, ModelFormatError
from kcxai.arithmetic import Arithmetic, Probability, Weight
from kcxai.distribution import Distribution, Product, ProductWeights, Uniform, distribution_from_dict

__all__ = ["Interval", "Feature", "FeatureSpace", "Weight", "Probability"]



def _fmt_number(x: float) -> str:
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return repr(x) if isinstance(x, float) else str(x)


@dataclass(frozen=True)
class Interval:
    """The interval ``(low, high]`` of a numeric feature's domain.

    Thresholds follow scikit-learn's convention: a test ``x <= t`` sends the
    interval ``(low, t]`` left. ``low`` may be ``-inf`` and ``high`` ``inf``.

    Examples
    --------
    >>> from kcxai import Interval
    >>> iv = Interval(30.0, 40.5)
    >>> 35 in iv, 30 in iv, str(iv)
    (True, False, '(30, 40.5]')
    """

    low: float
    high: float

    def __contains__(self, x: object) -> bool:
        return isinstance(x, (int, float)) and self.low < x <= self.high  # type: ignore[operator]

    def __str__(self) -> str:
        if self.low == -math.inf and self.high == math.inf:
            return "(-inf, inf)"
        if self.low == -math.inf:
            return f"<= {_fmt_number(self.high)}"
        if self.high == math.inf:
            return f"> {_fmt_number(self.low)}"
        return f"({_fmt_number(self.low)}, {_fmt_number(self.high)}]"


def _is_real(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


class Feature:
    """A feature with a finite domain.

    Use :meth:`categorical` for a feature whose domain is a list of values and
    :meth:`numeric` for a real-valued feature cut into intervals by thresholds.

    Parameters
    ----------
    name : str
        The feature's name.
    values : sequence
        The domain, in order. For numeric features, the :class:`Interval` objects.
    thresholds : sequence of float, optional
        For numeric features, the sorted cut points.
    labels : sequence of str, optional
        Display labels of the values (e.g. the original values a tree file maps
        its codes to). Only used to print literals.

    Examples
    --------
    >>> from kcxai import Feature
    >>> colour = Feature.categorical("colour", ["red", "green", "blue"])
    >>> colour.index("green"), colour.literal(1), colour.set_literal([0, 2])
    (1, 'colour = green', 'colour in {red, blue}')
    >>> age = Feature.numeric("age", [30, 50])
    >>> age.size, age.index(42), age.literal(1), age.literal(2)
    (3, 1, 'age in (30, 50]', 'age > 50')
    """

    __slots__ = ("name", "values", "thresholds", "labels", "float32", "_index")

    def __init__(self, name: str, values: Sequence[Any], *,
                 thresholds: Sequence[float] | None = None,
                 labels: Sequence[str] | None = None, float32: bool = False) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidTypeError(f"Feature 'name' must be a non-empty str. Got {name!r} instead.")
        values = tuple(values)
        if not values:
            raise InvalidInputError(f"Feature {name!r} must have at least one value. Got an empty domain.")
        self.name = name
        self.values = values
        self.thresholds = None if thresholds is None else tuple(float(t) for t in thresholds)
        if self.thresholds is not None:
            bounds = [-math.inf, *self.thresholds, math.inf]
            if values != tuple(Interval(a, b) for a, b in zip(bounds, bounds[1:])):
                raise InvalidInputError(
                    f"Feature {name!r}: with 'thresholds', 'values' must be the intervals they cut; "
                    "use Feature.numeric(name, thresholds) to build a numeric feature.")
        elif float32:
            raise InvalidInputError(f"Feature {name!r}: 'float32' only applies to numeric features.")
        self.float32 = bool(float32)
        if labels is not None:
            labels = tuple(str(lab) for lab in labels)
            if len(labels) != len(values):
                raise InvalidInputError(
                    f"Feature {name!r}: 'labels' must have one label per value ({len(values)}). "
                    f"Got {len(labels)} instead.")
        self.labels = labels
        index: dict[Any, int] = {}
        if self.thresholds is None:
            for k, v in enumerate(values):
                try:
                    hash(v)
                except TypeError:
                    raise InvalidTypeError(
                        f"Feature {name!r}: domain values must be hashable. Got {v!r} instead.") from None
                if v in index:
                    raise InvalidInputError(f"Feature {name!r}: the value {v!r} appears twice in the domain.")
                index[v] = k
        self._index = index

    @classmethod
    def categorical(cls, name: str, values: Sequence[Any], *,
                    labels: Sequence[str] | None = None) -> "Feature":
        """A feature whose domain is the given values (compared by equality)."""
        return cls(name, values, labels=labels)

    @classmethod
    def numeric(cls, name: str, thresholds: Sequence[float] = (), *, float32: bool = False) -> "Feature":
        """A real-valued feature cut into ``len(thresholds) + 1`` intervals.

        Parameters
        ----------
        name : str
        thresholds : sequence of float
            Strictly increasing finite cut points; the domain is
            ``(-inf, t1], (t1, t2], ..., (tk, inf)``.
        float32 : bool, default False
            Round a value to float32 before placing it in an interval, as
            scikit-learn's trees do (set by ``DecisionTree.from_sklearn``).
        """
        ts = []
        for t in thresholds:
            if not _is_real(t) or not math.isfinite(float(t)):
                raise InvalidInputError(
                    f"Feature {name!r}: thresholds must be finite real numbers. Got {t!r} instead.")
            ts.append(float(t))
        if any(a >= b for a, b in zip(ts, ts[1:])):
            raise InvalidInputError(
                f"Feature {name!r}: thresholds must be strictly increasing. Got {ts!r} instead.")
        bounds = [-math.inf, *ts, math.inf]
        return cls(name, [Interval(a, b) for a, b in zip(bounds, bounds[1:])], thresholds=ts, float32=float32)

    @property
    def is_numeric(self) -> bool:
        """Whether the feature is real-valued (its domain is intervals)."""
        return self.thresholds is not None

    @property
    def size(self) -> int:
        """Number of values in the domain."""
        return len(self.values)

    def index(self, value: Any) -> int:
        """The index in the domain of a user value (a number, for numeric features)."""
        if self.thresholds is not None:
            if isinstance(value, Interval):
                if value in self.values:
                    return self.values.index(value)
            elif _is_real(value) and not math.isnan(float(value)):
                x = float(value)
                if self.float32:
                    import numpy as np

                    x = float(np.float32(x))
                return bisect.bisect_left(self.thresholds, x)
            raise InvalidInputError(
                f"Feature {self.name!r} is numeric: its value must be a real number "
                f"(or one of its intervals). Got {value!r} instead.")
        try:
            k = self._index[value]
            if isinstance(value, bool) != isinstance(self.values[k], bool):
                raise KeyError(value)  # True is not the value 1, nor 1 the value True
            return k
        except (KeyError, TypeError):
            shown = list(self.values[:10]) + (["..."] if len(self.values) > 10 else [])
            raise InvalidInputError(
                f"Feature {self.name!r} must take one of the values {shown}. Got {value!r} instead.") from None

    def label(self, k: int) -> str:
        """How value number ``k`` is printed."""
        if self.labels is not None:
            return self.labels[k]
        return str(self.values[k])

    def literal(self, k: int) -> str:
        """The literal ``x_i = v`` for value number ``k``, readably."""
        if self.thresholds is not None:
            iv = self.values[k]
            if iv.low == -math.inf or iv.high == math.inf:
                return f"{self.name} {iv}"
            return f"{self.name} in {iv}"
        return f"{self.name} = {self.label(k)}"

    def set_literal(self, ks: Iterable[int]) -> str:
        """A literal ``x_i in E`` for a set of value numbers."""
        ks = sorted(ks)
        if len(ks) == 1:
            return self.literal(ks[0])
        if self.thresholds is not None and ks == list(range(ks[0], ks[-1] + 1)):
            return self.literal_range(ks[0], ks[-1])
        return f"{self.name} in {{{', '.join(self.label(k) for k in ks)}}}"

    def literal_range(self, a: int, b: int) -> str:
        """The literal for the union of intervals number ``a`` to ``b`` of a numeric feature."""
        iv = Interval(self.values[a].low, self.values[b].high)
        if iv.low == -math.inf or iv.high == math.inf:
            return f"{self.name} {iv}"
        return f"{self.name} in {iv}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description."""
        if self.thresholds is not None:
            num: dict[str, Any] = {"name": self.name, "kind": "numeric", "thresholds": list(self.thresholds)}
            if self.float32:
                num["float32"] = True
            return num
        for v in self.values:
            if not isinstance(v, (str, int, float)) or isinstance(v, bool):
                raise InvalidTypeError(
                    f"Feature {self.name!r}: only str, int and float values can be saved to JSON. "
                    f"Got {v!r} ({type(v).__name__}) instead.")
        d: dict[str, Any] = {"name": self.name, "kind": "categorical", "values": list(self.values)}
        if self.labels is not None:
            d["labels"] = list(self.labels)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Feature":
        """Inverse of :meth:`to_dict`."""
        try:
            kind = d["kind"]
            if kind == "numeric":
                return cls.numeric(d["name"], d["thresholds"], float32=bool(d.get("float32", False)))
            if kind == "categorical":
                return cls.categorical(d["name"], d["values"], labels=d.get("labels"))
        except (KeyError, TypeError) as e:
            raise ModelFormatError(f"Malformed feature description {d!r}: {e!r}") from None
        raise ModelFormatError(f"Feature 'kind' must be 'categorical' or 'numeric'. Got {kind!r} instead.")

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Feature) and self.name == other.name and self.values == other.values
                and self.thresholds == other.thresholds and self.labels == other.labels
                and self.float32 == other.float32)

    def __hash__(self) -> int:
        return hash((self.name, self.values))

    def __repr__(self) -> str:
        if self.thresholds is not None:
            return f"Feature.numeric({self.name!r}, {list(self.thresholds)!r})"
        return f"Feature.categorical({self.name!r}, {list(self.values)!r})"


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

    def __init__(self, features: Sequence[Feature], *, distribution: Any = None) -> None:
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

    def _normalise_distribution(self, distribution: Any) -> tuple[tuple[Any, ...], ...] | None:
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

    def encode(self, instance: Any, *, argument: str = "instance") -> tuple[int, ...]:
        """Convert an instance in user values to a point (a tuple of value indices)."""
        if not isinstance(instance, Mapping) and hasattr(instance, "keys") and hasattr(instance, "tolist"):
            keys = list(instance.keys())  # a pandas Series: read it by label when it is labelled by feature
            if all(isinstance(k, str) for k in keys):
                instance = {k: instance[k] for k in keys}
        if isinstance(instance, Mapping):
            missing = [n for n in self._names if n not in instance]
            extra = [k for k in instance if k not in self._names]
            if missing or extra:
                raise InvalidInputError(
                    f"'{argument}' as a mapping must give exactly the features {list(self._names)}. "
                    f"Missing {missing}, unknown {extra}.")
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

    def decode(self, point: Sequence[int]) -> tuple[Any, ...]:
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

    def with_distribution(self, distribution: Any) -> "FeatureSpace":
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
