"""How a model describes itself to a compiler: Boolean functions over feature values.

A model implements ``Classifier.build(builder)`` and returns one function per
class, ``kappa(x) = c``, using only the operations of :class:`FunctionBuilder`.
The builder owns the Boolean encoding of multi-valued features (the SDD and
OBDD compilers use one-hot variables with an exactly-one constraint), so a
model never sees variables, only literals ``x_f in E``.

:class:`TruthTableBuilder` implements the same operations on explicit sets of
points (bitsets over the whole, small, feature space). It is the reference the
tests hold every model's ``build`` and every backend's builder to.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from kcxai._errors import ProblemTooLargeError
from kcxai.space import FeatureSpace

__all__ = ["FunctionBuilder", "TruthTableBuilder"]

F = TypeVar("F")


@runtime_checkable
class FunctionBuilder(Protocol[F]):
    """Boolean functions over the points of ``space``.

    Functions are opaque handles of the backend (SDD nodes, BDD nodes, bitsets).
    """

    space: FeatureSpace

    def true(self) -> F:
        """The function true on every point."""
        ...

    def false(self) -> F:
        """The function true on no point."""
        ...

    def value_in(self, feature: int, mask: int) -> F:
        """``x_feature in E`` where bit ``k`` of ``mask`` is value number ``k``."""
        ...

    def conj(self, a: F, b: F) -> F:
        """``a and b``."""
        ...

    def disj(self, a: F, b: F) -> F:
        """``a or b``."""
        ...

    def neg(self, a: F) -> F:
        """``not a`` (within feature space: valid points only)."""
        ...

    def switch(self, feature: int, cases: Sequence[F]) -> F:
        """``OR_k (x_feature = k and cases[k])``: branch on a feature's value."""
        ...


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
        out = 0
        for k, c in enumerate(cases):
            out |= self._lit[feature, k] & c
        return out

    def holds(self, f: int, point: Sequence[int]) -> bool:
        """Whether function ``f`` is true at ``point``."""
        return bool(f >> self.points.index(tuple(point)) & 1)

    def check_partition(self, functions: Sequence[Any], predict: Any) -> None:
        """Raise ``AssertionError`` unless ``functions[c]`` holds exactly where ``predict`` gives ``c``."""
        for p, x in enumerate(self.points):
            got = [c for c, f in enumerate(functions) if f >> p & 1]
            if got != [predict(x)]:
                raise AssertionError(f"at point {x}: functions hold for classes {got}, predict gives {predict(x)}")
