"""One feature of a feature space: its finite domain of values (categories, or the intervals cut
by thresholds on a numeric feature), how a user's value maps to its index, and how values print.
"""

from __future__ import annotations

import bisect
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kcxai._cuts import cut_text, float32_cut, float32_cuts, largest_finite, read_cut, representable, shortest_text
from kcxai._errors import InvalidInputError, InvalidTypeError, ModelFormatError

__all__ = ["Interval", "Feature", "MISSING", "is_missing_cell", "format_bound", "format_interval", "float32_cut"]


class _Missing:
    """The missing value of a feature: what a NaN or ``None`` cell reads as, printed ``missing``.

    One object (:data:`MISSING`); a feature that has it holds it as its last value.
    """

    __slots__ = ()
    _one: "_Missing | None" = None

    def __new__(cls) -> "_Missing":
        if cls._one is None:
            cls._one = object.__new__(cls)
        return cls._one

    def __repr__(self) -> str:
        return "MISSING"

    def __str__(self) -> str:
        return "missing"

    def __reduce__(self) -> str:
        return "MISSING"


#: The missing value (a NaN or ``None`` cell) of a feature that has one (see :meth:`Feature.numeric`).
MISSING = _Missing()


def is_missing_cell(x: object) -> bool:
    """Whether ``x`` reads as the missing value: :data:`MISSING`, ``None`` or a float NaN."""
    return x is MISSING or x is None or (isinstance(x, float) and math.isnan(x))


def format_bound(t: float, *, float32: bool = False, lower: bool = False) -> str:
    """A bound at threshold ``t`` as printed: ``<= d`` (``> d`` for the ``lower`` bound of what lies above),
    or ``< d`` (``>= d``) where the shortest decimal of the cut is the first value above it
    (:func:`kcxai._cuts.cut_text`); ``d`` denotes the same split of the values the feature reads (float32 or
    float64) as ``t`` does.

    Examples
    --------
    >>> format_bound(0.7000000029802322, float32=True), format_bound(0.9999999403953552, float32=True, lower=True)
    ('<= 0.7', '>= 1')
    """
    text, strict = cut_text(t, float32=float32)
    if lower:
        return f">= {text}" if strict else f"> {text}"
    return f"< {text}" if strict else f"<= {text}"


def _interval_text(low: tuple[str, bool] | None, high: tuple[str, bool] | None) -> str:
    """``(a, b]``, ``<= b``, ``> a`` or ``(-inf, inf)`` from the bounds' ``(text, strict)`` (``None``: no bound);
    a strict bound prints ``[a`` / ``b)``."""
    if low is None and high is None:
        return "(-inf, inf)"
    if low is None:
        return f"{'<' if high[1] else '<='} {high[0]}"  # type: ignore[index]
    if high is None:
        return f"{'>=' if low[1] else '>'} {low[0]}"
    return f"{'[' if low[1] else '('}{low[0]}, {high[0]}{')' if high[1] else ']'}"


def format_interval(low: float, high: float, *, float32: bool = False) -> str:
    """The interval ``(low, high]`` of a feature's values as printed: ``<= high``, ``> low``, ``(low, high]`` or
    ``(-inf, inf)``, each bound by :func:`format_bound` (``[a`` / ``b)`` for a strict one).

    Examples
    --------
    >>> format_interval(-float("inf"), 952.8999938964844, float32=True), format_interval(30.0, 40.5)
    ('< 952.9', '(30, 40.5]')
    >>> format_interval(0.9999999403953552, 2.0, float32=True)   # XGBoost's x >= 1 (x < 1 on float32)
    '[1, 2]'
    """
    lo = None if low == -math.inf else cut_text(low, float32=float32)
    hi = None if high == math.inf else cut_text(high, float32=float32)
    return _interval_text(lo, hi)


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
    #: Print the bounds as float32 cuts (:func:`format_interval`); set by a float32 feature. Not compared.
    float32: bool = field(default=False, compare=False, repr=False)

    def __contains__(self, x: object) -> bool:
        return isinstance(x, (int, float)) and self.low < x <= self.high

    def __str__(self) -> str:
        return format_interval(self.low, self.high, float32=self.float32)


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

    __slots__ = ("name", "values", "thresholds", "labels", "float32", "_index", "_keys")

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
        if any(v is MISSING for v in values[:-1]):
            raise InvalidInputError(f"Feature {name!r}: MISSING, if a value, must be the last one.")
        if self.thresholds is not None:
            bounds = [-math.inf, *self.thresholds, math.inf]
            intervals = values[:-1] if values[-1] is MISSING else values
            if intervals != tuple(Interval(a, b) for a, b in zip(bounds, bounds[1:])):
                raise InvalidInputError(
                    f"Feature {name!r}: with 'thresholds', 'values' must be the intervals they cut; "
                    "use Feature.numeric(name, thresholds) to build a numeric feature.")
            self.values = tuple(Interval(iv.low, iv.high, bool(float32)) for iv in intervals)  # print as read
            self.values += values[len(intervals):]  # the missing value, if any
        elif float32:
            raise InvalidInputError(f"Feature {name!r}: 'float32' only applies to numeric features.")
        self.float32 = bool(float32)
        self._keys: tuple[float, ...] | None = None
        if self.float32 and self.thresholds:
            keys = float32_cuts(self.thresholds)
            same = np.flatnonzero(keys[1:] == keys[:-1])
            if same.size:
                a, b = self.thresholds[int(same[0])], self.thresholds[int(same[0]) + 1]
                raise InvalidInputError(
                    f"Feature {name!r}: the thresholds {a!r} and {b!r} split float32 values alike (no float32 lies "
                    "between them), so the interval between them would hold no value; keep one of them.")
            self._keys = tuple(keys.tolist())
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
                    labels: Sequence[str] | None = None, missing: bool = False) -> "Feature":
        """A feature whose domain is the given values (compared by equality); with ``missing``, the
        value :data:`MISSING` after them (what NaN / ``None`` reads as)."""
        return cls(name, (*values, MISSING) if missing else values, labels=labels)

    @classmethod
    def numeric(cls, name: str, thresholds: Sequence[float] = (), *, float32: bool = False,
                missing: bool = False) -> "Feature":
        """A real-valued feature cut into ``len(thresholds) + 1`` intervals (and its missing value).

        Parameters
        ----------
        name : str
        thresholds : sequence of float
            Strictly increasing finite cut points; the domain is
            ``(-inf, t1], (t1, t2], ..., (tk, inf)``. With ``float32``, some float32 value must lie
            between any two of them (else the interval between holds no value: an error).
        float32 : bool, default False
            Round a value to float32 before placing it in an interval, as
            scikit-learn's trees do (set by ``DecisionTree.from_sklearn``).
        missing : bool, default False
            Add the value :data:`MISSING` after the intervals: a NaN or ``None``
            reads as it (a model that routes missing values, see ``docs/models.md``).
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
        values: list[Any] = [Interval(a, b) for a, b in zip(bounds, bounds[1:])]
        return cls(name, values + [MISSING] if missing else values, thresholds=ts, float32=float32)

    @property
    def missing_index(self) -> int | None:
        """The number of the value :data:`MISSING`, or ``None`` when the feature has none."""
        return len(self.values) - 1 if self.values[-1] is MISSING else None

    @property
    def is_numeric(self) -> bool:
        """Whether the feature is real-valued (its domain is intervals)."""
        return self.thresholds is not None

    @property
    def size(self) -> int:
        """Number of values in the domain."""
        return len(self.values)

    def index(self, value: Any) -> int:
        """The index in the domain of a user value (a number, for numeric features; NaN or ``None`` for
        the missing value, when the feature has one)."""
        if is_missing_cell(value) and self.values[-1] is MISSING:
            return len(self.values) - 1
        if self.thresholds is not None:
            if isinstance(value, Interval):
                if value in self.values:
                    return self.values.index(value)
            elif _is_real(value):
                try:
                    x = float(value)
                except OverflowError:  # 10**400: no float can hold it, so no interval can place it exactly
                    raise InvalidInputError(
                        f"Feature {self.name!r} is numeric: its value must be within the range of a float "
                        f"(about 1.8e308 in absolute value). Got a number of about "
                        f"{round(int(value).bit_length() * 0.30103)} digits instead.") from None
                if math.isnan(x):
                    raise InvalidInputError(
                        f"Feature {self.name!r} is numeric and has no missing value: its value must be a real "
                        f"number (or one of its intervals). Got {value!r} instead.")
                if self.float32:
                    with np.errstate(over="ignore"):  # beyond float32: +-inf, as scikit-learn's cast gives
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
            try:
                got = repr(value)
            except ValueError:  # an int too long to print (Python's 4,300-digit limit)
                got = f"an integer of about {round(int(value).bit_length() * 0.30103)} digits"
            got = got if len(got) <= 80 else got[:60] + f"... ({len(got)} characters)"
            raise InvalidInputError(
                f"Feature {self.name!r} must take one of the values {shown}. Got {got} instead.") from None

    def label(self, k: int) -> str:
        """How value number ``k`` is printed (an interval as :meth:`interval_text` prints it)."""
        if self.labels is not None:
            return self.labels[k]
        if self.thresholds is not None and self.values[k] is not MISSING:
            return self.interval_text(k, k)
        return str(self.values[k])

    def cut_keys(self) -> tuple[float, ...]:
        """Per threshold, the last value the feature reads at or below it: the threshold itself for float64
        values, the float32 at or below it for float32 values (strictly increasing: every interval holds a
        value)."""
        if self._keys is None:
            self._keys = tuple(representable(t, self.float32) for t in self.thresholds or ())
        return self._keys

    def _cut(self, j: int) -> tuple[str, bool]:
        """How threshold number ``j`` prints: the shortest decimal of its cut and whether it is strict
        (:func:`kcxai._cuts.cut_text`); in full below every finite float32 (where the cut is ``-inf``)."""
        t = (self.thresholds or ())[j]
        if math.isinf(self.cut_keys()[j]):
            return repr(t), False
        return cut_text(t, float32=self.float32)

    def interval_text(self, a: int, b: int) -> str:
        """The union of intervals number ``a`` to ``b`` of a numeric feature as printed: ``(x, y]``, ``<= y``,
        ``> x`` or ``(-inf, inf)``, each bound the shortest decimal that splits the values the feature reads
        as the stored threshold does; a bound that prints as the first value above its cut is strict
        (``[x`` / ``y)``, ``>= x`` / ``< y``).

        Examples
        --------
        >>> from kcxai import Feature
        >>> area = Feature.numeric("area", [0.7000000029802322, 952.8999938964844], float32=True)
        >>> area.interval_text(0, 0), area.interval_text(1, 1), area.interval_text(1, 2)
        ('<= 0.7', '(0.7, 952.9)', '> 0.7')
        """
        n = len(self.thresholds or ())
        return _interval_text(self._cut(a - 1) if a > 0 else None, self._cut(b) if b < n else None)

    def bound_position(self, x: float, strict: bool) -> int:
        """Where the bound ``x <= d`` (``x < d`` when ``strict``), with ``x = float(d)``, cuts this numeric
        feature: the number ``p`` of its intervals on the lower side (``0 .. len(thresholds) + 1``). The
        decimal is read as the feature reads an input (:func:`kcxai._cuts.read_value`); this is the inverse
        of :meth:`interval_text`. A bound past the largest finite value holds every interval.

        Raises
        ------
        InvalidInputError
            When the bound splits the values of one interval, naming it and the feature's cuts.

        Examples
        --------
        >>> from kcxai import Feature
        >>> area = Feature.numeric("area", [0.6000000014901161, 952.8999938964844], float32=True)
        >>> area.bound_position(0.6, True), area.bound_position(952.9, True), area.bound_position(1e39, False)
        (1, 2, 3)
        """
        keys = self.cut_keys()
        n = len(keys)
        if math.isinf(x):  # the ends of the line
            return 0 if x < 0 else n + 1
        low = read_cut(x, strict, float32=self.float32)
        first = bisect.bisect_left(keys, low)
        last = bisect.bisect_right(keys, low)
        if last > first:
            return first + 1
        if low == -math.inf:  # no value on the lower side
            return 0
        if low == math.inf or (first == n and low == largest_finite(self.float32)):
            return n + 1  # every finite value on the lower side
        shown = [self.interval_text(j + 1, n).replace("> ", "<= ").replace(">= ", "< ") for j in range(min(n, 12))]
        more = f", ... ({n} in all)" if n > 12 else ""
        raise InvalidInputError(
            f"the bound {shortest_text(x, False)} cuts the interval {self.interval_text(first, first)} of "
            f"{self.name!r}; the distribution weighs whole intervals, so a bound must be one of {self.name!r}'s "
            f"cuts, as printed ({', '.join(shown)}{more}), or their complements ('>', '>=').")

    def literal(self, k: int) -> str:
        """The literal ``x_i = v`` for value number ``k``, readably."""
        if self.thresholds is not None and self.values[k] is not MISSING:
            return self.literal_range(k, k)
        return f"{self.name} = {self.label(k)}"

    def set_literal(self, ks: Iterable[int]) -> str:
        """A literal ``x_i in E`` for a set of value numbers."""
        ks = sorted(ks)
        if len(ks) == 1:
            return self.literal(ks[0])
        if self.thresholds is not None and self.values[ks[-1]] is MISSING:  # intervals, or missing
            return f"{self.set_literal(ks[:-1])} or {self.name} = missing"
        if self.thresholds is not None and ks == list(range(ks[0], ks[-1] + 1)):
            return self.literal_range(ks[0], ks[-1])
        return f"{self.name} in {{{', '.join(self.label(k) for k in ks)}}}"

    def literal_range(self, a: int, b: int) -> str:
        """The literal for the union of intervals number ``a`` to ``b`` of a numeric feature."""
        text = self.interval_text(a, b)
        return f"{self.name} in {text}" if text[0] in "([" else f"{self.name} {text}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description."""
        missing = self.values[-1] is MISSING
        if self.thresholds is not None:
            num: dict[str, Any] = {"name": self.name, "kind": "numeric", "thresholds": list(self.thresholds)}
            if self.float32:
                num["float32"] = True
            if missing:
                num["missing"] = True
            return num
        values = self.values[:-1] if missing else self.values
        for v in values:
            if not isinstance(v, (str, int, float)) or isinstance(v, bool):
                raise InvalidTypeError(
                    f"Feature {self.name!r}: only str, int and float values can be saved to JSON. "
                    f"Got {v!r} ({type(v).__name__}) instead.")
        d: dict[str, Any] = {"name": self.name, "kind": "categorical", "values": list(values)}
        if self.labels is not None:
            d["labels"] = list(self.labels)
        if missing:
            d["missing"] = True
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Feature":
        """Inverse of :meth:`to_dict`."""
        try:
            kind = d["kind"]
            missing = d.get("missing", False)
            if not isinstance(missing, bool):
                raise ModelFormatError(f"Feature 'missing' must be true or false. Got {missing!r} instead.")
            if kind == "numeric":
                return cls.numeric(d["name"], d["thresholds"], float32=bool(d.get("float32", False)), missing=missing)
            if kind == "categorical":
                return cls.categorical(d["name"], d["values"], labels=d.get("labels"), missing=missing)
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
            more = ", missing=True" if self.values[-1] is MISSING else ""
            return f"Feature.numeric({self.name!r}, {list(self.thresholds)!r}{more})"
        return f"Feature.categorical({self.name!r}, {list(self.values)!r})"
