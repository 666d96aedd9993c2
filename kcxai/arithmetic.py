"""The number system of a distribution: exact (``int`` / ``Fraction``) or floating point.

Every probability kcxai computes is a ratio of two *weights* (sums of point
weights). Under an exact distribution weights are Python ``int`` and
probabilities ``Fraction``; under a distribution with ``float`` parameters both
are ``float``. :class:`Arithmetic` is the one place that decides how to divide,
how to turn a weight into a probability and how to test a bound, so that the
oracles' inner loops and the explainers carry no ``is_exact`` branches. Oracles
bind its operations to locals once per query (``div = arith.div``), which costs
a C call per use and nothing per branch.

:class:`Bound` is the one test every algorithm needs: ``x <= delta * y``,
decided exactly for a ``Fraction`` delta and integer weights. The I-delta
condition is ``disagree <= delta * total``; the C-delta one,
``precision >= delta``, is ``disagree <= (1 - delta) * consistent``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from fractions import Fraction
from typing import Union

__all__ = ["Weight", "Probability", "Arithmetic", "EXACT", "FLOAT", "Bound"]

#: A weight of a set of points: an ``int`` under exact distributions, a ``float`` otherwise.
Weight = Union[int, float]
#: A probability: a ``Fraction`` under exact distributions, a ``float`` otherwise.
Probability = Union[Fraction, float]


class Arithmetic:
    """Exact or float arithmetic on weights.

    Attributes
    ----------
    exact : bool
        ``True`` for Python ``int`` weights and ``Fraction`` probabilities.
    zero, one : int or float
        The weights 0 and 1.
    div : callable
        ``div(a, b)``: ``a // b`` (exact; callers only divide where ``b`` divides
        ``a``) or ``a / b``.

    Examples
    --------
    >>> from kcxai.arithmetic import EXACT, FLOAT
    >>> EXACT.probability(3, 12), FLOAT.probability(3.0, 12.0)
    (Fraction(1, 4), 0.25)
    >>> EXACT.bound(Fraction(1, 4)).holds(3, 12), EXACT.bound(Fraction(1, 4)).holds(4, 12)
    (True, False)
    """

    __slots__ = ("exact", "zero", "one", "div")

    def __init__(self, exact: bool) -> None:
        self.exact = exact
        self.zero: Weight = 0 if exact else 0.0
        self.one: Weight = 1 if exact else 1.0
        self.div: Callable[[Weight, Weight], Weight] = operator.floordiv if exact else operator.truediv

    def weight(self, x: Weight) -> Weight:
        """``x`` in this number system (``int`` or ``float``)."""
        return int(x) if self.exact else float(x)

    def probability(self, weight: Weight, total: Weight) -> Probability:
        """``weight / total`` as a ``Fraction`` (exact) or ``float``."""
        if self.exact:
            return Fraction(int(weight), int(total))
        return float(weight) / float(total)

    def complement(self, weight: Weight, total: Weight) -> Probability:
        """``1 - weight / total``."""
        if self.exact:
            return 1 - Fraction(int(weight), int(total))
        return 1.0 - float(weight) / float(total)

    def bound(self, delta: Probability, total: Weight | None = None) -> "Bound":
        """The test ``x <= delta * y`` (``y = total`` when given once for all)."""
        return Bound(delta, total, exact=self.exact)

    def __repr__(self) -> str:
        return "EXACT" if self.exact else "FLOAT"


#: Python ints and Fractions.
EXACT = Arithmetic(True)
#: Floats.
FLOAT = Arithmetic(False)


class Bound:
    """The test ``x <= delta * y``, decided exactly for a ``Fraction`` delta and ``int`` weights.

    Parameters
    ----------
    delta : Fraction or float
        The ratio bound.
    total : int or float, optional
        A fixed ``y``: then :meth:`holds` takes ``x`` alone.
    exact : bool
        Whether the weights are exact ints.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from kcxai.arithmetic import Bound
    >>> b = Bound(Fraction(3, 100), 512)
    >>> b.holds(15), b.holds(16)
    (True, False)
    >>> Bound(Fraction(1, 2)).holds(1, 2), Bound(Fraction(1, 2)).holds(2, 3)
    (True, False)
    """

    __slots__ = ("delta", "_num", "_den", "_fdelta", "_total", "_rhs", "_exact")

    def __init__(self, delta: Probability, total: Weight | None = None, *, exact: bool = True) -> None:
        self.delta = delta
        self._exact = exact and isinstance(delta, Fraction)
        if self._exact:
            self._num, self._den = delta.numerator, delta.denominator  # type: ignore[union-attr]
        else:
            self._num, self._den = 0, 1
        self._fdelta = float(delta)
        self._total = total
        self._rhs: Weight | None = None
        if total is not None:
            self._rhs = self._num * total if self._exact and isinstance(total, int) else self._fdelta * float(total)
            if not (self._exact and isinstance(total, int)):
                self._exact = False

    @property
    def total(self) -> Weight | None:
        """The fixed ``y`` the bound was made with, or ``None``."""
        return self._total

    def holds(self, x: Weight, y: Weight | None = None) -> bool:
        """Whether ``x <= delta * y`` (``y`` defaults to the fixed total)."""
        if y is None:
            if self._rhs is None:
                raise TypeError("Bound.holds needs 'y' when the bound was made without a total")
            if self._exact:
                return x * self._den <= self._rhs
            return x <= self._rhs
        if self._exact and isinstance(x, int) and isinstance(y, int):
            return x * self._den <= self._num * y
        return float(x) <= self._fdelta * float(y)

    def holds_from_below(self, x: Weight, y: Weight | None = None) -> bool:
        """Whether ``x >= delta * y`` (the C-delta test: ``agree >= delta * consistent``; ``y`` defaults to the
        fixed total)."""
        if y is None:
            if self._rhs is None:
                raise TypeError("Bound.holds_from_below needs 'y' when the bound was made without a total")
            return x * self._den >= self._rhs if self._exact else x >= self._rhs
        if self._exact and isinstance(x, int) and isinstance(y, int):
            return x * self._den >= self._num * y
        return float(x) >= self._fdelta * float(y)
