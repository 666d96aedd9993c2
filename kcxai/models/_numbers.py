"""Exact numbers: rationals from user input and model files, common denominators, exact rounding.

Model weights are kept as :class:`~fractions.Fraction` (a ``float`` as the
exact binary rational it stores), so scores are summed and compared exactly;
these helpers read, scale and round them. Used by the additive-score models
(:mod:`kcxai.models.linear`) and the forests (:mod:`kcxai.models.forest`).

Examples
--------
>>> from fractions import Fraction
>>> xs = [exact_number(x, "'w'")[0] for x in (Fraction(1, 3), 0.25, 2)]
>>> xs, scaled_ints(xs)
([Fraction(1, 3), Fraction(1, 4), Fraction(2, 1)], (4, 3, 24))
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Union

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai._untrusted import parse_exact

__all__ = ["Exact", "Number", "exact_number", "lcm_of_denominators", "scaled_ints", "parse_fraction", "check_step",
           "round_to", "rounding_margin"]

#: An exact rational: a Python ``int`` or a :class:`~fractions.Fraction`.
Exact = Union[int, Fraction]

#: A real number as users give it: ``int``, ``Fraction`` or ``float`` (a float is taken as the rational it stores).
Number = Union[int, Fraction, float]


def exact_number(x: object, what: str) -> tuple[Fraction, bool]:
    """``x`` as an exact ``Fraction`` and whether it was a float.

    Accepts ``int``, ``Fraction`` (any ``numbers.Rational``), finite ``float``
    and numpy scalars of those kinds; a float becomes the rational it stores.

    Examples
    --------
    >>> exact_number(0.5, "'w'"), exact_number(Fraction(1, 3), "'w'")
    ((Fraction(1, 2), True), (Fraction(1, 3), False))
    >>> exact_number(0.1, "'w'")[0] == Fraction(1, 10)
    False
    """
    if hasattr(x, "item") and callable(x.item) and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise InvalidTypeError(f"{what} must be a real number (int, Fraction or float). Got {x!r} instead.")
    if isinstance(x, numbers.Rational):
        return Fraction(int(x.numerator), int(x.denominator)), False
    f = float(x)
    if not math.isfinite(f):
        raise InvalidInputError(f"{what} must be finite. Got {x!r} instead.")
    return Fraction(f), True


def lcm_of_denominators(values: Iterable[Exact]) -> int:
    """The least common multiple of the denominators: multiplied by it, every value is an ``int``.

    Examples
    --------
    >>> lcm_of_denominators([Fraction(1, 4), Fraction(5, 6), 3])
    12
    """
    lcm = 1
    for v in values:
        d = v.denominator
        if lcm % d:
            lcm = lcm * d // math.gcd(lcm, d)
    return lcm


def parse_fraction(s: object, where: str) -> Fraction:
    """An exact number read from a model file, written as a string like ``'3/4'`` (``where``: for errors).

    Examples
    --------
    >>> parse_fraction("-3/4", "'weights'")
    Fraction(-3, 4)
    """
    return parse_exact(s, where)  # bounded: "1e100000000" is refused before it is computed


def check_step(step: Number) -> Fraction:
    """A positive rounding step; a float is read as the decimal it prints as (``0.001`` is ``1/1000``).

    Examples
    --------
    >>> check_step(0.001), check_step(Fraction(1, 3))
    (Fraction(1, 1000), Fraction(1, 3))
    """
    if isinstance(step, bool) or not isinstance(step, numbers.Real):
        raise InvalidTypeError(f"'step' must be a positive real number. Got {step!r} instead.")
    if isinstance(step, numbers.Rational):
        value = Fraction(int(step.numerator), int(step.denominator))
    else:
        if not math.isfinite(float(step)):
            raise InvalidInputError(f"'step' must be finite. Got {step!r} instead.")
        value = Fraction(repr(float(step)))
    if value <= 0:
        raise InvalidInputError(f"'step' must be positive. Got {step!r} instead.")
    return value


def round_to(x: Fraction, step: Fraction) -> Fraction:
    """``x`` rounded to the nearest multiple of ``step`` (ties to the even multiple), exactly.

    Examples
    --------
    >>> round_to(Fraction(31, 100), Fraction(1, 10)), round_to(Fraction(1, 4), Fraction(1, 2))
    (Fraction(3, 10), Fraction(0, 1))
    """
    return round(x / step) * step


def rounding_margin(old: Sequence[Sequence[Sequence[Fraction]]], new: Sequence[Sequence[Sequence[Fraction]]],
                    base_old: Sequence[Fraction], base_new: Sequence[Fraction]) -> Fraction:
    """The most any pairwise score difference ``score_c - score_d`` can move from ``old`` to ``new`` terms.

    ``old[b][o][c]``: block ``b``, outcome ``o``, class ``c``. Exact: the base's
    change plus, per block, the largest change over its outcomes.
    """
    k = len(base_old)
    worst = Fraction(0)
    for c in range(k):
        for d in range(c + 1, k):
            m = abs((base_new[c] - base_old[c]) - (base_new[d] - base_old[d]))
            for blk_old, blk_new in zip(old, new):
                m += max(abs((n[c] - o[c]) - (n[d] - o[d])) for o, n in zip(blk_old, blk_new))
            worst = max(worst, m)
    return worst



def scaled_ints(xs: Sequence[Fraction]) -> tuple[int, ...]:
    """The rationals times :func:`lcm_of_denominators`: integers in the same ratios and order.

    Examples
    --------
    >>> scaled_ints([Fraction(1, 2), Fraction(-1, 3)])
    (3, -2)
    """
    scale = lcm_of_denominators(xs)
    return tuple(int(x * scale) for x in xs)
