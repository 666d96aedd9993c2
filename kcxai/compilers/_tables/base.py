"""The node table both diagram languages export to, and what its two forms share.

See :mod:`kcxai.compilers._tables.wmc`.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from kcxai.arithmetic import Weight
from kcxai.distribution import ProductWeights
from kcxai.space import FeatureSpace

__all__ = ["Table", "FALSE", "TRUE", "recursion"]

FALSE = 0
TRUE = 1


@contextmanager
def recursion(depth: int) -> Iterator[None]:
    """Allow at least ``depth`` nested Python calls (restored afterwards)."""
    old = sys.getrecursionlimit()
    need = depth + 200
    if need > old:
        sys.setrecursionlimit(need)
    try:
        yield
    finally:
        if need > old:
            sys.setrecursionlimit(old)


class Table:
    """What both tables share: factors, units, evaluation with a split memo."""

    space: FeatureSpace
    roots: list[int]
    n_units: int
    #: per feature, the units whose values depend on it
    units_of: list[tuple[int, ...]]
    #: recursion depth a traversal may need
    depth: int

    #: the product distribution the weights are taken from
    pw: ProductWeights

    def factors(self, point: Sequence[int], fixed: Any) -> list[Weight]:
        ws, totals = self.pw.weights, self.pw.totals
        return [ws[f][point[f]] if f in fixed else totals[f] for f in range(self.space.n_features)]

    def _weigh(self) -> None:  # pragma: no cover - abstract
        """Compute the weight arrays from ``self.pw`` (the structure is shared)."""
        raise NotImplementedError

    def reweighted(self, pw: ProductWeights) -> "Table":
        """The same diagram counting under another product distribution (structure shared)."""
        other = copy.copy(self)
        other.pw = pw
        other._weigh()
        return other

    def evaluate(self, labels: Sequence[int], point: Sequence[int], fixed: Any, fac: list[Weight],
                 memo: list[dict[int, Weight]], tmp: list[dict[int, Weight]] | None,
                 affected: Sequence[bool] | None) -> Weight:  # pragma: no cover - abstract
        """``count(labels, point, fixed)`` with ``fac`` given; ``memo[u]`` holds the values of unit ``u``
        for this ``fixed`` set, except for the ``affected`` units, whose values go to ``tmp``."""
        raise NotImplementedError

    def count(self, labels: Sequence[int], point: Sequence[int], fixed: Any) -> Weight:
        """Weight of ``{x : kappa(x) in labels, x_fixed = point_fixed}``."""
        fac = self.factors(point, fixed)
        memo: list[dict[int, Weight]] = [{} for _ in range(self.n_units)]
        with recursion(self.depth):
            return self.evaluate(labels, point, fixed, fac, memo, None, None)
