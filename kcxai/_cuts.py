"""Cut points of numeric features: the shortest decimal that denotes a cut, and a printed bound read back.

A numeric feature's values are read as its model reads an input: as a float64 number, or rounded on to
float32 (scikit-learn's trees and XGBoost); these are its *representable* values. A threshold ``t``
splits them into those at or below it and the rest, so the cut lies between two adjacent representable
values: ``low``, the last one at or below ``t``, and ``high``, the next one (:func:`cut_gap`).

A printed bound is read as the model reads the same decimal in an input row (:func:`read_value`:
``float32(float(d))`` for a float32 feature), so that a rule and a data row mean the same by the same
number. ``x <= d`` then denotes the cut when ``d`` reads as ``low``, and ``x < d`` when it reads as
``high``: :func:`cut_text` prints the shortest decimal of either kind, ``<= d`` (the scikit-learn
convention, also for every interval ``(a, b]``) unless ``< d`` is shorter. The brackets always say which
end belongs: XGBoost's ``x < 1`` on float32 values prints ``< 1`` (``>= 1``, ``[1, 2)``), not
``<= 0.99999994``. :func:`read_cut` is the inverse.

Examples
--------
>>> cut_text(0.7000000029802322, float32=True)   # a scikit-learn threshold between two float32 values
('0.7', False)
>>> cut_text(0.6000000014901161, float32=True)   # float32(0.6) lies above the threshold
('0.6', True)
>>> cut_text(0.9999999403953552, float32=True)   # XGBoost's x < 1: the float32 below 1
('1', True)
>>> cut_text(2.4499999999999997), cut_text(11.315000000000003)   # float64: repr of the cut or of the next
(('2.45', True), ('11.315000000000003', False))
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["float32_cut", "float32_cuts", "cut_gap", "cut_text", "read_cut", "read_value", "representable",
           "largest_finite", "shortest_text"]

_F32_MAX = float(np.finfo(np.float32).max)
_F64_MAX = float(np.finfo(np.float64).max)


def float32_cut(t: float) -> float:
    """The largest float32 at or below ``t`` (as a float): the cut ``x <= t`` on values rounded to float32.

    A float32 value ``v`` satisfies ``v <= t`` exactly when ``v <= float32_cut(t)``; ``-inf`` when no
    finite float32 is at or below ``t``.

    Examples
    --------
    >>> float32_cut(952.8999938964844), float32_cut(0.5)
    (952.8999633789062, 0.5)
    """
    t = float(t)
    if math.isnan(t) or math.isinf(t):
        return t
    with np.errstate(over="ignore"):  # beyond float32: +-inf, then stepped back below t
        v = np.float32(t)
        if float(v) > t:
            v = np.nextafter(v, np.float32(-np.inf))
    return float(v)


def float32_cuts(thresholds: Any) -> np.ndarray:
    """:func:`float32_cut` of every threshold at once (a float64 array; infinities kept)."""
    t = np.asarray(thresholds, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        v = t.astype(np.float32)
        v = np.where(v.astype(np.float64) > t, np.nextafter(v, np.float32(-np.inf)), v)
    return np.where(np.isfinite(t), v.astype(np.float64), t)


def largest_finite(float32: bool) -> float:
    """The largest finite representable value."""
    return _F32_MAX if float32 else _F64_MAX


def _step(v: float, up: bool, float32: bool) -> float:
    """The next representable value above (``up``) or below ``v``."""
    if float32:
        with np.errstate(over="ignore"):  # the largest float32 steps to infinity
            return float(np.nextafter(np.float32(v), np.float32(np.inf if up else -np.inf)))
    return math.nextafter(v, math.inf if up else -math.inf)


def representable(t: float, float32: bool) -> float:
    """The last representable value at or below ``t`` (``t`` itself for float64)."""
    return float32_cut(t) if float32 else float(t)


def read_value(x: float, float32: bool) -> float:
    """A float64 number as the feature reads an input: rounded to the nearest float32 (past the largest,
    infinity) for a float32 feature, else itself."""
    if not float32:
        return float(x)
    with np.errstate(over="ignore"):
        return float(np.float32(x))


def cut_gap(t: float, *, float32: bool = False) -> tuple[float, float]:
    """``(low, high)``: the last representable value at or below the threshold ``t`` and the next one above.

    Examples
    --------
    >>> cut_gap(0.5), cut_gap(0.7000000029802322, float32=True)
    ((0.5, 0.5000000000000001), (0.699999988079071, 0.7000000476837158))
    """
    low = representable(t, float32)
    return low, _step(low, True, float32)


def shortest_text(v: float, float32: bool) -> str:
    """The shortest decimal that reads as the representable value ``v`` (:func:`read_value` of ``float(text)``),
    as Python prints floats: ``30``, ``0.7``, ``1e+20``, ``-inf``.

    Examples
    --------
    >>> shortest_text(30.0, False), shortest_text(0.699999988079071, True), shortest_text(1e20, True)
    ('30', '0.7', '1e+20')
    """
    if math.isinf(v) or math.isnan(v) or v == 0:
        return repr(v) if v != 0 else "0"
    text = repr(v)
    if float32:
        if 1e-4 <= abs(v) < 1e16:  # where Python's repr writes positional digits
            text = np.format_float_positional(np.float32(v), unique=True, trim="-")
        else:
            text = np.format_float_scientific(np.float32(v), unique=True, trim="-", exp_digits=2)
        if read_value(float(text), True) != v:  # a decimal within 2**-53 of a rounding boundary: read in full
            text = repr(v)
    return text[:-2] if text.endswith(".0") else text


def cut_text(t: float, *, float32: bool = False) -> tuple[str, bool]:
    """The shortest decimal ``d`` denoting the cut at threshold ``t``, and whether it is strict.

    Not strict: ``d`` reads as the last representable value at or below ``t`` (``x <= d`` and ``x > d``
    split as ``t`` does). Strict: ``d`` reads as the first one above, and is shorter (``x < d``,
    ``x >= d``). Infinite thresholds print ``inf`` / ``-inf`` (the ends of the line), as does a float32
    cut below every finite float32.

    Examples
    --------
    >>> cut_text(30.0), cut_text(1e20), cut_text(0.1, float32=True), cut_text(-float("inf"))
    (('30', False), ('1e+20', False), ('0.1', True), ('-inf', False))
    """
    low, high = cut_gap(t, float32=float32)
    text = shortest_text(low, float32)
    if math.isinf(low) or math.isinf(high):
        return text, False
    above = shortest_text(high, float32)
    return (above, True) if _digits(above) < _digits(text) else (text, False)


def _digits(text: str) -> int:
    """Significant digits of a printed decimal."""
    mantissa = text.lstrip("-").split("e")[0].replace(".", "").strip("0")
    return len(mantissa)


def read_cut(x: float, strict: bool, *, float32: bool = False) -> float:
    """Where the bound ``x <= d`` (``x < d`` when ``strict``) cuts, given ``x = float(d)``: the last
    representable value on its lower side (:func:`cut_gap`'s ``low``), ``-inf`` when none is, ``inf`` when
    every value is.

    Examples
    --------
    >>> read_cut(0.7, False, float32=True), read_cut(1.0, True, float32=True)
    (0.699999988079071, 0.9999999403953552)
    """
    v = read_value(x, float32)
    if math.isnan(v):
        raise ValueError("a bound cannot be NaN")
    if not strict or v == -math.inf:
        return v
    return largest_finite(float32) if v == math.inf else _step(v, False, float32)
