"""Ground truth by enumeration, written independently of kcxai's oracles.

Probabilities come from the weights as the user gave them (``space.distribution``),
normalised here, so these functions also check the integer weight scaling the oracles use.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any


def value_probability(space: Any, f: int, k: int) -> Any:
    """Pr(x_f = value k) from the weights as the user gave them (not kcxai's integer scaling)."""
    raw = space.distribution
    size = space.features[f].size
    if raw is None:
        return Fraction(1, size)
    ws = raw[f]
    if space.is_exact:
        return Fraction(ws[k]) / sum(Fraction(w) for w in ws)
    return float(ws[k]) / sum(float(w) for w in ws)


def _prob(space: Any, x: tuple[int, ...]) -> Any:
    p: Any = Fraction(1) if space.is_exact else 1.0
    for i, k in enumerate(x):
        p *= value_probability(space, i, k)
    return p


def all_points(space: Any) -> list[tuple[int, ...]]:
    return list(itertools.product(*(range(s) for s in space.domain_sizes)))


def error(model: Any, point: tuple[int, ...], fixed: Any) -> Any:
    """Pr(kappa(x) != kappa(v) and x_S = v_S) by enumeration."""
    c = model.predict_point(point)
    total: Any = 0
    for x in all_points(model.space):
        if model.predict_point(x) != c and all(x[i] == point[i] for i in fixed):
            total += _prob(model.space, x)
    return total


def precision(model: Any, point: tuple[int, ...], fixed: Any) -> Any:
    """Pr(kappa(x) = kappa(v) | x_S = v_S) by enumeration."""
    c = model.predict_point(point)
    agree: Any = 0
    cons: Any = 0
    for x in all_points(model.space):
        if all(x[i] == point[i] for i in fixed):
            p = _prob(model.space, x)
            cons += p
            if model.predict_point(x) == c:
                agree += p
    return agree / cons


def minimal_sets(pred: Any, n: int) -> set[frozenset[int]]:
    """All subset-minimal sets satisfying a monotone predicate over range(n)."""
    sat = [frozenset(s) for r in range(n + 1) for s in itertools.combinations(range(n), r) if pred(frozenset(s))]
    return {s for s in sat if not any(t < s for t in sat)}


def close(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return abs(float(a) - float(b)) <= 1e-9
    return a == b


def deletion(model: Any, point: tuple[int, ...], delta: Any, order: Any, start: Any) -> frozenset[int]:
    """Algorithm 1 written out with ``error``: try the features of ``start`` in ``order``."""
    s = set(start)
    for i in order:
        if i in s and error(model, point, s - {i}) <= delta:
            s.discard(i)
    return frozenset(s)
