"""Brute-force ground truth over every subset of features, independent of kcxai's oracles.

One pass over feature space per instance: each point adds its probability to
the mask of features on which it agrees with the instance, and a sum over
supermasks gives, for every set ``S``, ``Pr(x_S = v_S)`` and
``Pr(kappa(x) != c and x_S = v_S)``. Point probabilities come from
:func:`reference.point_probability`, from the distribution's parameters as
given (uniform, product or mixture; Fractions, or floats in float spaces).
"""

from __future__ import annotations

import itertools
from typing import Any

from tests._support.reference import all_points, point_probability


class SubsetTable:
    """Exact error and precision of every feature set for one model and instance."""

    def __init__(self, model: Any, point: tuple[int, ...]) -> None:
        space = model.space
        n = space.n_features
        self.n = n
        self.exact = space.is_exact
        zero: Any = 0 if space.is_exact else 0.0
        cons = [zero] * (1 << n)
        dis = [zero] * (1 << n)
        c = model.predict_point(point)
        for x in all_points(space):
            p = point_probability(space, x)
            m = sum(1 << i for i in range(n) if x[i] == point[i])
            cons[m] += p
            if model.predict_point(x) != c:
                dis[m] += p
        for i in range(n):
            bit = 1 << i
            for m in range(1 << n):
                if not m & bit:
                    cons[m] += cons[m | bit]
                    dis[m] += dis[m | bit]
        self._cons = cons
        self._dis = dis
        self.sets = [frozenset(s) for r in range(n + 1) for s in itertools.combinations(range(n), r)]

    @staticmethod
    def _mask(s: Any) -> int:
        return sum(1 << i for i in s)

    def error(self, s: Any) -> Any:
        """``Pr(kappa(x) != c and x_S = v_S)``."""
        return self._dis[self._mask(s)]

    def precision(self, s: Any) -> Any:
        """``Pr(kappa(x) = c | x_S = v_S)``."""
        m = self._mask(s)
        return 1 - self._dis[m] / self._cons[m]

    def complement(self, s: Any) -> frozenset[int]:
        return frozenset(range(self.n)) - frozenset(s)

    def cdrs(self, delta: Any) -> list[frozenset[int]]:
        """All C-delta-relevant sets."""
        return [s for s in self.sets if self.precision(s) >= delta]

    def idrs(self, delta: Any) -> list[frozenset[int]]:
        """All I-delta-relevant sets."""
        return [s for s in self.sets if self.error(s) <= delta]

    def duals(self, delta: Any) -> list[frozenset[int]]:
        """All dual sets: ``error(F \\ T) > delta``."""
        return [t for t in self.sets if self.error(self.complement(t)) > delta]


def minimal(family: list[frozenset[int]]) -> set[frozenset[int]]:
    """The subset-minimal members of a family of sets."""
    return {s for s in family if not any(t < s for t in family)}


def minimal_hitting_sets(family: Any, n: int) -> set[frozenset[int]]:
    """All minimal sets over ``range(n)`` meeting every member of ``family``."""
    family = list(family)
    hits = [frozenset(s) for r in range(n + 1) for s in itertools.combinations(range(n), r)
            if all(frozenset(s) & t for t in family)]
    return minimal(hits)


def near(a: Any, b: Any, tol: float = 1e-9) -> bool:
    """Whether a float comparison against ``b`` could go either way."""
    return isinstance(a, float) and abs(a - float(b)) <= tol
