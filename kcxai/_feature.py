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

from kcxai._errors import InvalidInputError, InvalidTypeError, ModelFormatError

__all__ = ["Interval", "Feature", "MISSING", "is_missing_cell", "format_cut", "format_interval", "float32_cut"]


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


def float32_cut(t: float) -> float:
    """The largest float32 at or below ``t`` (as a float): the cut ``x <= t`` on values rounded to float32.

    A float32 value ``v`` satisfies ``v <= t`` exactly when ``v <= float32_cut(t)``; ``-inf`` when no
    finite float32 is at or below ``t``.

    Examples
    --------
    >>> float32_cut(952.8999938964844), float32_cut(0.5)
    (952.8999633789062, 0.5)
    """
    import numpy as np

    t = float(t)
    if math.isnan(t) or math.isinf(t):
        return t
    with np.errstate(over="ignore"):  # beyond float32: +-inf, then stepped back below t
        v = np.float32(t)
    if float(v) > t:
        v = np.nextafter(v, np.float32(-np.inf))
    return float(v)


def format_cut(t: float, *, float32: bool = False) -> str:
    """A threshold ``t`` as the shortest decimal that denotes the same cut ``x <= t``.

    The text is only a label: thresholds and comparisons keep the stored float. For a feature whose
    values are read as float64 it is the shortest ``repr`` of ``t``; for one read as float32
    (``float32=True``, scikit-learn's trees) it is the shortest decimal that rounds to the float32
    :func:`float32_cut` of ``t``, so that reading the printed decimal as float32 gives the same split.
    Integral values print without ``.0`` (below 1e16); infinities as ``inf`` / ``-inf``.

    Parameters
    ----------
    t : float
        The stored threshold.
    float32 : bool, default False
        Whether the feature rounds values to float32 before comparing them with ``t``.

    Returns
    -------
    str

    Examples
    --------
    >>> format_cut(952.8999938964844), format_cut(952.8999938964844, float32=True)
    ('952.8999938964844', '952.89996')
    >>> format_cut(30.0), format_cut(1e20), format_cut(-float("inf")), format_cut(0.5, float32=True)
    ('30', '1e+20', '-inf', '0.5')

    A float32 value ``v`` is ``<= 0.1`` only up to the float32 below ``0.1`` (``float32(0.1)`` is
    0.10000000149...), and the label says so:

    >>> format_cut(0.1, float32=True)
    '0.099999994'
    """
    t = float(t)
    if float32:
        t = float32_cut(t)
    if math.isnan(t) or math.isinf(t):
        return repr(t)
    if t == 0:
        return "0"
    if not float32:
        text = repr(t)
        return text[:-2] if text.endswith(".0") else text
    import numpy as np

    if 1e-4 <= abs(t) < 1e16:  # where Python's repr writes positional digits
        return np.format_float_positional(np.float32(t), unique=True, trim="-")
    return np.format_float_scientific(np.float32(t), unique=True, trim="-")


def format_interval(low: float, high: float, *, float32: bool = False) -> str:
    """The interval ``(low, high]`` as printed: ``<= high``, ``> low``, ``(low, high]`` or ``(-inf, inf)``,
    each bound by :func:`format_cut`.

    Examples
    --------
    >>> format_interval(-float("inf"), 952.8999938964844, float32=True), format_interval(30.0, 40.5)
    ('<= 952.89996', '(30, 40.5]')
    """
    if low == -math.inf and high == math.inf:
        return "(-inf, inf)"
    if low == -math.inf:
        return f"<= {format_cut(high, float32=float32)}"
    if high == math.inf:
        return f"> {format_cut(low, float32=float32)}"
    return f"({format_cut(low, float32=float32)}, {format_cut(high, float32=float32)}]"


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
    #: Print the bounds as float32 cuts (:func:`format_cut`); set by a float32 feature. Not compared.
    float32: bool = field(default=False, compare=False, repr=False)

    def __contains__(self, x: object) -> bool:
        return isinstance(x, (int, float)) and self.low < x <= self.high  # type: ignore[operator]

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
            ``(-inf, t1], (t1, t2], ..., (tk, inf)``.
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
                    import numpy as np

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
        """How value number ``k`` is printed."""
        if self.labels is not None:
            return self.labels[k]
        return str(self.values[k])

    def format_cut(self, t: float) -> str:
        """A threshold of this feature as printed: the shortest decimal that denotes the same cut
        ``x <= t`` for values read as this feature reads them (float32 or float64; see
        :func:`format_cut`). Only a label: the stored threshold is unchanged.

        Examples
        --------
        >>> from kcxai import Feature
        >>> Feature.numeric("area", [952.8999938964844], float32=True).format_cut(952.8999938964844)
        '952.89996'
        """
        return format_cut(t, float32=self.float32)

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
        low, high = self.values[a].low, self.values[b].high
        text = format_interval(low, high, float32=self.float32)
        return f"{self.name} {text}" if low == -math.inf or high == math.inf else f"{self.name} in {text}"

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
