"""The counting oracle: the one interface every explanation algorithm talks to.

Every probability the paper's definitions need is a ratio of weighted model
counts. For an instance ``v`` (a *point*: a tuple of value indices), a class
index ``c`` and a set ``S`` of fixed features, the oracle answers

    disagree_weight(v, c, S) = weight of { x : kappa(x) != c and x_S = v_S }

where the weight of a set of points is the sum of their weights under the
space's product distribution (in exact spaces an ``int``, relative to
``space.total_weight``). Everything else follows without the classifier:

* ``error(S) = disagree_weight / total_weight`` (the paper's eq. idr),
* ``Pr(x_S = v_S) = space.consistent_weight(v, S) / total_weight``,
* ``precision(S) = 1 - disagree_weight / consistent_weight`` (eq. drs).

In a knowledge-compilation language this is "condition on ``v_S``, then count
the models of ``kappa != c``". An oracle also opens a :class:`OracleSession`,
which supports the deletion loop of Algorithm 1 incrementally: ask what the
weight would be if one feature were freed, and commit. Oracles that have
nothing better use :class:`GenericSession`.

A new language is one new module implementing :class:`CountingOracle`; the
algorithms in :mod:`kcxai.explain` never import a backend.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Protocol, runtime_checkable

from kcxai.space import FeatureSpace, Probability, Weight

__all__ = ["CountingOracle", "OracleSession", "SessionBase", "GenericSession", "Bound"]


class Bound:
    """The test ``weight <= delta * total_weight``, decided exactly for ``Fraction`` deltas.

    Attributes
    ----------
    delta : Fraction or float
        The probability bound.
    """

    __slots__ = ("delta", "_num", "_den", "_float")

    def __init__(self, delta: Probability, total: Weight) -> None:
        self.delta = delta
        if isinstance(delta, Fraction) and isinstance(total, int):
            self._num, self._den, self._float = delta.numerator * total, delta.denominator, None
        else:
            self._num, self._den, self._float = 0, 1, float(delta) * float(total)

    def holds(self, weight: Weight) -> bool:
        """Whether ``weight <= delta * total``."""
        if self._float is None:
            return weight * self._den <= self._num
        return weight <= self._float


@runtime_checkable
class OracleSession(Protocol):
    """An oracle bound to one instance and class, with a current fixed set ``S``.

    Used by deletion loops: ``weight_if_freed(i)`` is
    ``disagree_weight(v, c, S \\ {i})`` without changing ``S``; ``free(i)``
    commits the removal. ``S`` only shrinks.
    """

    @property
    def fixed(self) -> frozenset[int]:
        """The current fixed set ``S``."""
        ...

    def weight(self) -> Weight:
        """``disagree_weight(v, c, S)`` for the current ``S``."""
        ...

    def weight_if_freed(self, feature: int) -> Weight:
        """``disagree_weight(v, c, S \\ {feature})``; ``S`` is unchanged."""
        ...

    def holds_if_freed(self, feature: int, bound: Bound) -> bool:
        """Whether ``bound.holds(weight_if_freed(feature))``.

        The deletion loop only needs this decision; an oracle may decide it
        without the exact weight (e.g. by a float computation with a proven
        error bound), but the answer must be exactly right.
        """
        ...

    def free(self, feature: int) -> None:
        """Remove ``feature`` from ``S``."""
        ...


@runtime_checkable
class CountingOracle(Protocol):
    """Conditioning and (weighted) model counting on a compiled classifier.

    Attributes
    ----------
    language : str
        The knowledge-compilation language answering (``"dt"``, ``"sdd"``,
        ``"obdd"``, ``"brute"``, ...). It is recorded in every explanation.
    space : FeatureSpace
        The feature space and distribution the weights refer to.
    n_classes : int
        Number of classes; class indices are ``0 .. n_classes - 1``.
    """

    language: str
    space: FeatureSpace
    n_classes: int

    def predict_point(self, point: tuple[int, ...]) -> int:
        """The class index the compiled classifier gives a point."""
        ...

    def disagree_weight(self, point: tuple[int, ...], label: int, fixed: frozenset[int]) -> Weight:
        """Weight of ``{x : kappa(x) != label and x_fixed = point_fixed}``."""
        ...

    def session(self, point: tuple[int, ...], label: int, fixed: frozenset[int]) -> OracleSession:
        """A deletion-loop session starting from ``fixed``."""
        ...


class SessionBase:
    """Default :meth:`OracleSession.holds_if_freed` from ``weight_if_freed``; sessions may subclass it."""

    __slots__ = ()

    def weight_if_freed(self, feature: int) -> Weight:  # pragma: no cover - abstract
        raise NotImplementedError

    def holds_if_freed(self, feature: int, bound: Bound) -> bool:
        return bound.holds(self.weight_if_freed(feature))


class GenericSession(SessionBase):
    """An :class:`OracleSession` that asks ``oracle.disagree_weight`` for every query."""

    __slots__ = ("_oracle", "_point", "_label", "_fixed")

    def __init__(self, oracle: CountingOracle, point: tuple[int, ...], label: int,
                 fixed: Iterable[int]) -> None:
        self._oracle = oracle
        self._point = point
        self._label = label
        self._fixed = frozenset(fixed)

    @property
    def fixed(self) -> frozenset[int]:
        return self._fixed

    def weight(self) -> Weight:
        return self._oracle.disagree_weight(self._point, self._label, self._fixed)

    def weight_if_freed(self, feature: int) -> Weight:
        return self._oracle.disagree_weight(self._point, self._label, self._fixed - {feature})

    def free(self, feature: int) -> None:
        self._fixed = self._fixed - {feature}
