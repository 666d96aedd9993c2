"""Ground truth by enumeration, written independently of kcxai's oracles.

Probabilities come from the weights as the user gave them (``space.distribution``),
normalised here, so these functions also check the integer weight scaling the oracles use.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any


def _product_probability(dist: Any, x: tuple[int, ...], exact: bool) -> Any:
    """Pr(x) under a Uniform or Product, from its parameters as given (``raw``), normalised here."""
    p: Any = Fraction(1) if exact else 1.0
    if dist.kind == "uniform":
        for size in dist.sizes:
            p *= Fraction(1, size) if exact else 1.0 / size
        return p
    for ws, k in zip(dist.raw, x):
        p *= (Fraction(ws[k]) / sum(Fraction(w) for w in ws)) if exact else float(ws[k]) / sum(float(w) for w in ws)
    return p


def point_probability(space: Any, x: tuple[int, ...]) -> Any:
    """Pr(x) from the distribution's parameters as the user gave them (not kcxai's integer scaling):
    uniform, product, or a mixture sum_k pi_k P_k(x) with pi normalised here."""
    dist, exact = space.distribution, space.is_exact
    if dist.kind != "mixture":
        return _product_probability(dist, x, exact)
    pis = [Fraction(p) for p in dist.mixing] if exact else [float(p) for p in dist.mixing]
    z = sum(pis)
    return sum(p / z * _product_probability(c, x, exact) for p, c in zip(pis, dist.parts))


def value_probability(space: Any, f: int, k: int) -> Any:
    """Pr(x_f = value k), the marginal, by summing points."""
    return sum(point_probability(space, x) for x in all_points(space) if x[f] == k)


def all_points(space: Any) -> list[tuple[int, ...]]:
    return list(itertools.product(*(range(s) for s in space.domain_sizes)))


def error(model: Any, point: tuple[int, ...], fixed: Any) -> Any:
    """Pr(kappa(x) != kappa(v) and x_S = v_S) by enumeration."""
    c = model.predict_point(point)
    total: Any = 0
    for x in all_points(model.space):
        if model.predict_point(x) != c and all(x[i] == point[i] for i in fixed):
            total += point_probability(model.space, x)
    return total


def precision(model: Any, point: tuple[int, ...], fixed: Any) -> Any:
    """Pr(kappa(x) = kappa(v) | x_S = v_S) by enumeration."""
    c = model.predict_point(point)
    agree: Any = 0
    cons: Any = 0
    for x in all_points(model.space):
        if all(x[i] == point[i] for i in fixed):
            p = point_probability(model.space, x)
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
