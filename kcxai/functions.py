"""What a model describes itself with: the :class:`FunctionBuilder` protocol.

A model says "kappa(x) = c" once, as Boolean functions built from literals
``x_f in E``, and every compiler (:mod:`kcxai.compilers`) implements this
protocol on its own backend. The protocol lives here, below both, so that
models depend on it and never on a compiler.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar, runtime_checkable

from kcxai.space import FeatureSpace

__all__ = ["FunctionBuilder"]

F = TypeVar("F")


@runtime_checkable
class FunctionBuilder(Protocol[F]):
    """Boolean functions over the points of ``space``: what a model may use to describe itself.

    Functions are opaque handles of the backend (SDD nodes, BDD nodes, bitsets,
    ...); a model combines them only through these methods. A function need only
    be right on the points of feature space (valid encodings of values).

    Attributes
    ----------
    space : FeatureSpace
        The feature space the functions are over.
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
