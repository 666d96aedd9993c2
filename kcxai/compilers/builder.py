"""How a model describes itself to a compiler: Boolean functions over feature values.

A model implements ``Classifier.build(builder)`` and returns one function per
class, ``kappa(x) = c``, using only the operations of :class:`FunctionBuilder`.
The builder owns the Boolean encoding of multi-valued features (see
:mod:`kcxai.compilers._encoding`), so a model never sees variables, only
literals ``x_f in E``. A new language implements :class:`FunctionBuilder`
(usually by subclassing :class:`DiagramBuilder`) and every model family
compiles to it.

Implementations: :class:`~kcxai.compilers.sdd.SddBuilder` (PySDD nodes),
:class:`~kcxai.compilers.obdd.BddBuilder` (dd BDD nodes), the feature-order
probe :class:`~kcxai.compilers._orders.ProbeBuilder`, and the test reference
:class:`~kcxai.compilers._truth_table.TruthTableBuilder` (bitsets over a small space).

Examples
--------
A builder-agnostic function ``x0 = 1 and x1 in {0, 2}``, built on truth tables:

>>> from kcxai.space import Feature, FeatureSpace
>>> from kcxai.compilers._truth_table import TruthTableBuilder
>>> space = FeatureSpace([Feature.categorical("x0", [0, 1]), Feature.categorical("x1", [0, 1, 2])])
>>> def f(b: FunctionBuilder) -> object:
...     return b.conj(b.value_in(0, 0b10), b.value_in(1, 0b101))
>>> b = TruthTableBuilder(space)
>>> [p for p in b.points if b.holds(f(b), p)]
[(1, 0), (1, 2)]
>>> isinstance(b, FunctionBuilder)
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, Protocol, TypeVar

from kcxai._errors import InvalidInputError
from kcxai.compilers._encoding import Encoding, Literal
from kcxai.compilers._limits import Guard
from kcxai.functions import FunctionBuilder
from kcxai.space import FeatureSpace

__all__ = ["FunctionBuilder", "DiagramBuilder", "BooleanHandle", "check_literal", "check_switch", "encoded_literal"]

F = TypeVar("F")
H = TypeVar("H", bound="BooleanHandle")


def check_literal(space: FeatureSpace, feature: object, mask: object) -> None:
    """A builder's ``value_in`` arguments, checked once per distinct literal (models are code, not users,
    but a wrong index must not become a wrong count)."""
    if isinstance(feature, bool) or not isinstance(feature, int) or not 0 <= feature < space.n_features:
        raise InvalidInputError(
            f"value_in: 'feature' must be a feature index in [0, {space.n_features - 1}]. Got {feature!r} instead.")
    if isinstance(mask, bool) or not isinstance(mask, int) or mask < 0:
        raise InvalidInputError(f"value_in: 'mask' must be a non-negative int bitmask. Got {mask!r} instead.")


def check_switch(space: FeatureSpace, feature: int, cases: Sequence[object]) -> None:
    """A builder's ``switch`` arguments: a feature index and one case per value."""
    check_literal(space, feature, 0)
    size = space.features[feature].size
    if len(cases) != size:
        raise InvalidInputError(
            f"switch: feature {space.names[feature]!r} has {size} values, so 'cases' must have {size} entries. "
            f"Got {len(cases)} instead.")


def encoded_literal(enc: Encoding, feature: int, mask: int, *, false: F, cube: Callable[[Sequence[Literal]], F],
                    either: Callable[[F, F], F], negate: Callable[[F], F]) -> F:
    """``x_feature in E`` (bit ``k`` of ``mask``: value number ``k``) on a backend, from the encoding's cubes
    (:meth:`~kcxai.compilers._encoding.Encoding.terms`): the disjunction of the cubes, negated where the
    encoding says so. The one definition of a literal for every builder over an :class:`Encoding` (the
    diagram builders and the CNF builder differ only in how they conjoin a cube and join two functions).

    Parameters
    ----------
    enc : Encoding
    feature, mask : int
        Checked (:func:`check_literal`); bits at or above the feature's number of values are ignored.
    false : F
        The backend's constant false.
    cube : callable
        A cube (a list of ``(variable, polarity)``; empty: true) as the backend's conjunction.
    either, negate : callable
        The backend's disjunction and negation.

    Examples
    --------
    On Python sets of value numbers (a one-variable-per-value backend):

    >>> from kcxai.space import Feature, FeatureSpace
    >>> enc = Encoding(FeatureSpace([Feature.categorical("x", [0, 1, 2, 3])]), "onehot")
    >>> values = {0, 1, 2, 3}
    >>> def cube(c):  # one-hot: a positive literal is its value; the empty cube is every value
    ...     return set.intersection(values, *({v} if pol else values - {v} for v, pol in c))
    >>> sorted(encoded_literal(enc, 0, 0b1011, false=set(), cube=cube, either=set.union,
    ...                        negate=lambda s: values - s))
    [0, 1, 3]
    """
    check_literal(enc.space, feature, mask)
    negated, cubes = enc.terms(feature, mask)
    out = false
    for c in cubes:
        out = either(out, cube(c))
    return negate(out) if negated else out


class BooleanHandle(Protocol):
    """A diagram package's function: closed under ``&``, ``|`` and ``~`` (PySDD and dd nodes are)."""

    def __and__(self: H, other: H) -> H: ...

    def __or__(self: H, other: H) -> H: ...

    def __invert__(self: H) -> H: ...


def _or(a: H, b: H) -> H:
    return a | b


def _invert(a: H) -> H:
    return ~a


class DiagramBuilder(Generic[H]):
    """A :class:`FunctionBuilder` on a diagram package whose functions support ``&``, ``|`` and ``~``.

    Subclasses give the package's constants (:meth:`true`, :meth:`false`), a variable's literal
    (:meth:`literal`) and a hashable identity of a function (:meth:`identity`, for grouping the cases
    of a :meth:`switch`). Literals ``x_f in E`` are built once each from the encoding's cubes;
    every operation ticks the :class:`~kcxai.compilers._limits.Guard`, if any.

    Parameters
    ----------
    enc : Encoding
        The Boolean variables of every feature.
    guard : Guard or None
        The limits of the compilation.
    """

    def __init__(self, enc: Encoding, guard: Guard | None = None) -> None:
        self.space = enc.space
        self.enc = enc
        self.guard = guard
        self._lits: dict[tuple[int, int], H] = {}

    def true(self) -> H:
        raise NotImplementedError

    def false(self) -> H:
        raise NotImplementedError

    def literal(self, var: int, positive: bool) -> H:
        """Variable ``var`` of the encoding, or its negation."""
        raise NotImplementedError

    def identity(self, f: H) -> int:
        """An int that is equal for two handles exactly when they are the same function."""
        raise NotImplementedError

    def both(self, a: H, b: H) -> H:
        """``a & b`` on the package (a subclass may take it in steps; no tick)."""
        return a & b

    def either(self, a: H, b: H) -> H:
        """``a | b`` on the package (a subclass may take it in steps; no tick)."""
        return a | b

    def _tick(self) -> None:
        if self.guard is not None:
            self.guard.tick()

    def _cube(self, cube: Sequence[Literal]) -> H:
        c = self.true()
        for v, pol in cube:
            c = c & self.literal(v, pol)
        return c

    def value_in(self, feature: int, mask: int) -> H:
        key = (feature, mask)
        # True and 1.0 hash like 1: only plain ints may be looked up; others are checked (and refused) below
        got = self._lits.get(key) if type(feature) is int and type(mask) is int else None
        if got is None:
            got = self._lits[key] = encoded_literal(self.enc, feature, mask, false=self.false(), cube=self._cube,
                                                    either=_or, negate=_invert)
            self._tick()
        return got

    def conj(self, a: H, b: H) -> H:
        out = self.both(a, b)
        self._tick()
        return out

    def disj(self, a: H, b: H) -> H:
        out = self.either(a, b)
        self._tick()
        return out

    def neg(self, a: H) -> H:
        out = ~a
        self._tick()
        return out

    def switch(self, feature: int, cases: Sequence[H]) -> H:
        check_switch(self.space, feature, cases)
        groups: dict[int, tuple[H, int]] = {}
        for k, c in enumerate(cases):
            i = self.identity(c)
            g = groups.get(i)
            groups[i] = (c, 1 << k) if g is None else (g[0], g[1] | 1 << k)
        out = self.false()
        for c, mask in groups.values():
            out = self.either(out, self.both(self.value_in(feature, mask), c))
            self._tick()
        return out

    def release(self) -> None:
        """Drop the cached literals (before the backend's manager is freed)."""
        self._lits.clear()
