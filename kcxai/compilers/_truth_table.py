"""The truth-table builder: the reference every model's ``build`` and every backend's builder is tested against.

:class:`TruthTableBuilder` implements :class:`~kcxai.functions.FunctionBuilder`
on explicit sets of points (bitsets over the whole, small, feature space).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from kcxai._errors import ProblemTooLargeError
from kcxai._types import Point
from kcxai.compilers.builder import check_literal, check_switch
from kcxai.space import FeatureSpace

__all__ = ["TruthTableBuilder"]


class TruthTableBuilder:
    """Functions as Python ``int`` bitsets over all points of a small space (bit ``p`` is point number ``p``)."""

    def __init__(self, space: FeatureSpace, *, max_points: int = 1 << 16) -> None:
        if space.size > max_points:
            raise ProblemTooLargeError(
                f"TruthTableBuilder enumerates feature space, which has {space.size} points; "
                f"the limit is {max_points}.")
        self.space = space
        self.points = list(itertools.product(*(range(s) for s in space.domain_sizes)))
        self._all = (1 << len(self.points)) - 1
        self._lit: dict[tuple[int, int], int] = {}
        for f, size in enumerate(space.domain_sizes):
            for k in range(size):
                self._lit[f, k] = sum(1 << p for p, x in enumerate(self.points) if x[f] == k)

    def true(self) -> int:
        return self._all

    def false(self) -> int:
        return 0

    def value_in(self, feature: int, mask: int) -> int:
        """The points whose value of ``feature`` is in ``mask`` (by definition, not through an encoding: the
        reference the encoded literals are tested against; checked as every builder checks it)."""
        check_literal(self.space, feature, mask)
        out = 0
        for k in range(self.space.features[feature].size):
            if mask >> k & 1:
                out |= self._lit[feature, k]
        return out

    def conj(self, a: int, b: int) -> int:
        return a & b

    def disj(self, a: int, b: int) -> int:
        return a | b

    def neg(self, a: int) -> int:
        return self._all & ~a

    def switch(self, feature: int, cases: Sequence[int]) -> int:
        check_switch(self.space, feature, cases)
        out = 0
        for k, c in enumerate(cases):
            out |= self._lit[feature, k] & c
        return out

    def holds(self, f: int, point: Sequence[int]) -> bool:
        """Whether function ``f`` is true at ``point``."""
        return bool(f >> self.points.index(tuple(point)) & 1)

    def check_partition(self, functions: Sequence[int], predict: Callable[[Point], int]) -> None:
        """Raise ``AssertionError`` unless ``functions[c]`` holds exactly where ``predict`` gives ``c``."""
        for p, x in enumerate(self.points):
            got = [c for c, f in enumerate(functions) if f >> p & 1]
            if got != [predict(x)]:
                raise AssertionError(f"at point {x}: functions hold for classes {got}, predict gives {predict(x)}")
