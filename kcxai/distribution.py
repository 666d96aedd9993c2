"""Distributions over a finite feature space: uniform, product, and mixtures of products.

Every probability kcxai prints is ``weight / total_weight`` for weights that
are sums of point weights. A distribution exposes itself to the oracles in one
shape only, its *components*: pairs ``(c_k, P_k)`` of a coefficient and a
product distribution :class:`ProductWeights` (one weight per value of each
feature), such that the weight of any set of points ``X`` is

    weight(X) = sum_k c_k * P_k(X),      total_weight = sum_k c_k * P_k(all points).

A uniform or product distribution has one component with ``c = 1``; a mixture
of ``K`` product distributions (a latent-class model, i.e. a shallow
probabilistic circuit) has ``K``. Counting is linear in the distribution, so
a query under a mixture is the weighted sum of ``K`` product answers: the
counting oracles walk their structure once with a vector of ``K`` weights per
value (:mod:`kcxai.compilers._tables.vectors`), a product distribution being
``K = 1``.

With ``int``/``Fraction`` parameters every weight is a Python ``int``: each
product's weights are scaled to integers per feature, and the coefficients
``c_k = D * pi_k`` are integers for ``D`` the least common multiple of
the mixing weights' denominators, after every component's per-feature
weights are scaled to common totals (so all components share one total ``T``
and ``total_weight = T * D``). With any ``float`` parameter everything is ``float``.
"""

from __future__ import annotations

import abc
import math
import numbers
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, ClassVar, Union

from kcxai._errors import InvalidInputError, InvalidTypeError, ModelFormatError
from kcxai.arithmetic import EXACT, FLOAT, Arithmetic, Probability, Weight

__all__ = ["Distribution", "Uniform", "Product", "Mixture", "ProductWeights", "Parameter", "DistributionLike",
           "distribution_from_dict"]

#: A distribution parameter as given: exact (``int``/``Fraction``) or ``float``.
Parameter = Union[int, Fraction, float]

#: A distribution as a feature space takes it: ``None`` (uniform), a :class:`Distribution`, or product
#: weights, one entry per feature (a sequence in feature order or a mapping by name; see
#: :class:`~kcxai.FeatureSpace`).
DistributionLike = Union[None, "Distribution", Sequence[Any], Mapping[str, Any]]


def _lcm(a: int, b: int) -> int:
    return a * b // math.gcd(a, b)


class ProductWeights:
    """One product distribution, scaled: an integer (or float) weight per value of each feature.

    Attributes
    ----------
    weights : tuple of tuple
        ``weights[f][k]``, the weight of value number ``k`` of feature ``f``.
    totals : tuple
        ``totals[f] = sum_k weights[f][k]``.
    total : int or float
        The product of the totals: the weight of the whole space.
    arith : Arithmetic
    """

    __slots__ = ("weights", "totals", "total", "arith")

    def __init__(self, weights: Sequence[Sequence[Weight]], arith: Arithmetic) -> None:
        self.arith = arith
        self.weights: tuple[tuple[Weight, ...], ...] = tuple(tuple(ws) for ws in weights)
        self.totals: tuple[Weight, ...] = tuple(sum(ws) for ws in self.weights)
        total = arith.one
        for z in self.totals:
            total *= z
        self.total: Weight = total

    def consistent_weight(self, point: Sequence[int], fixed: Any) -> Weight:
        """Weight of the points ``x`` with ``x_S = point_S``."""
        w = self.arith.one
        for i, ws in enumerate(self.weights):
            w *= ws[point[i]] if i in fixed else self.totals[i]
        return w

    def point_weight(self, point: Sequence[int]) -> Weight:
        """Weight of one point."""
        w = self.arith.one
        for ws, k in zip(self.weights, point):
            w *= ws[k]
        return w

    def mask_weight(self, feature: int, mask: int) -> Weight:
        """``sum_{k in mask} weights[feature][k]`` (bit ``k`` of ``mask`` is value ``k``)."""
        ws = self.weights[feature]
        total = self.arith.zero
        k = 0
        while mask:
            if mask & 1:
                total += ws[k]
            mask >>= 1
            k += 1
        return total


def _parameter(x: Any, what: str) -> Fraction | float:
    """A positive finite parameter as a ``Fraction`` or ``float``."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise InvalidTypeError(f"{what} must be an int, Fraction or float. Got {x!r} instead.")
    v: Fraction | float
    if isinstance(x, numbers.Rational):
        v = Fraction(int(x.numerator), int(x.denominator))
    else:
        v = float(x)
        if not math.isfinite(v):
            raise InvalidInputError(f"{what} must be finite. Got {x!r} instead.")
    if not v > 0:
        raise InvalidInputError(
            f"{what} must be positive (drop a value from the domain instead of giving it weight 0). "
            f"Got {x!r} instead.")
    return v


def _scale_exact(ws: Sequence[Fraction]) -> tuple[int, ...]:
    lcm = 1
    for w in ws:
        lcm = _lcm(lcm, w.denominator)
    ints = [int(w * lcm) for w in ws]
    g = 0
    for x in ints:
        g = math.gcd(g, x)
    return tuple(x // g for x in ints)


class Distribution(abc.ABC):
    """A distribution over a finite feature space, as components ``(c_k, P_k)`` (see the module).

    Attributes
    ----------
    kind : str
        ``"uniform"``, ``"product"`` or ``"mixture"``.
    sizes : tuple of int
        The number of values of each feature.
    arith : Arithmetic
        ``EXACT`` (int weights, Fraction probabilities) or ``FLOAT``.
    components : tuple of (coefficient, ProductWeights)
    total_weight : int or float
    """

    kind: ClassVar[str] = ""
    sizes: tuple[int, ...]
    arith: Arithmetic
    components: tuple[tuple[Weight, ProductWeights], ...]
    total_weight: Weight

    def _finish(self, components: Sequence[tuple[Weight, ProductWeights]]) -> None:
        self.components = tuple(components)
        total = self.arith.zero
        for c, pw in self.components:
            total += c * pw.total
        self.total_weight = total

    @property
    def is_exact(self) -> bool:
        """Whether weights are Python ints and probabilities Fractions."""
        return self.arith.exact

    @property
    def n_components(self) -> int:
        """Number of product components (1 unless a mixture)."""
        return len(self.components)

    @property
    def n_features(self) -> int:
        """Number of features."""
        return len(self.sizes)

    def consistent_weight(self, point: Sequence[int], fixed: Any) -> Weight:
        """Weight of the points ``x`` with ``x_S = point_S``."""
        if len(self.components) == 1:
            c, pw = self.components[0]
            w = pw.consistent_weight(point, fixed)
            return w if c == 1 else c * w
        total = self.arith.zero
        for c, pw in self.components:
            total += c * pw.consistent_weight(point, fixed)
        return total

    def point_weight(self, point: Sequence[int]) -> Weight:
        """Weight of one point."""
        total = self.arith.zero
        for c, pw in self.components:
            total += c * pw.point_weight(point)
        return total

    def probability(self, weight: Weight) -> Probability:
        """A weight as a probability."""
        return self.arith.probability(weight, self.total_weight)

    def value_probability(self, feature: int, k: int) -> Probability:
        """The marginal ``Pr(x_feature = value k)``."""
        num = self.arith.zero
        for c, pw in self.components:
            num += c * self.arith.div(pw.total, pw.totals[feature]) * pw.weights[feature][k]
        return self.probability(num)

    def check_sizes(self, sizes: Sequence[int], *, argument: str = "distribution") -> None:
        """Raise unless this distribution is over domains of the given sizes."""
        if tuple(sizes) != self.sizes:
            raise InvalidInputError(
                f"'{argument}' is a distribution over domains of sizes {list(self.sizes)}; the feature space "
                f"has domains of sizes {list(sizes)}.")

    def _key(self) -> tuple[Any, ...]:
        return (self.sizes, tuple((c, pw.weights) for c, pw in self.components))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Distribution) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self.sizes)

    @abc.abstractmethod
    def to_dict(self) -> Any:
        """A JSON-ready description (exact parameters as strings like ``"1/3"``)."""


class Uniform(Distribution):
    """The uniform distribution over each domain (the paper's setting).

    Examples
    --------
    >>> from kcxai.distribution import Uniform
    >>> u = Uniform([2, 3])
    >>> u.total_weight, u.value_probability(1, 2)
    (6, Fraction(1, 3))
    """

    kind = "uniform"

    def __init__(self, sizes: Sequence[int]) -> None:
        self.sizes = tuple(int(s) for s in sizes)
        self.arith = EXACT
        self._finish([(1, ProductWeights([(1,) * s for s in self.sizes], EXACT))])

    def to_dict(self) -> Any:
        return None

    def __repr__(self) -> str:
        return f"Uniform({list(self.sizes)})"


def _row(ws: Any, size: int | None, what: str) -> tuple[Fraction | float, ...]:
    if isinstance(ws, (str, bytes)) or not isinstance(ws, Sequence) and not hasattr(ws, "tolist"):
        raise InvalidTypeError(f"{what} must be a sequence of weights. Got {ws!r} instead.")
    values = list(ws.tolist() if hasattr(ws, "tolist") else ws)
    if size is not None and len(values) != size:
        raise InvalidInputError(f"{what} must have one weight per value ({size}). Got {len(values)} instead.")
    if not values:
        raise InvalidInputError(f"{what} must have at least one weight. Got none.")
    return tuple(_parameter(w, what) for w in values)


class Product(Distribution):
    """A product distribution: independent features, a positive weight per value.

    Parameters
    ----------
    weights : sequence of sequences
        Per feature, one positive weight per value (they need not sum to 1).
        ``int``/``Fraction`` weights keep every result exact; if any is a
        ``float``, every result is a float.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from kcxai.distribution import Product
    >>> p = Product([[1, 3], [Fraction(1, 2), Fraction(1, 2)]])
    >>> p.value_probability(0, 1), p.probability(p.point_weight((1, 0)))
    (Fraction(3, 4), Fraction(3, 8))
    """

    kind = "product"

    def __init__(self, weights: Sequence[Sequence[Parameter]]) -> None:
        if isinstance(weights, (str, bytes)) or not isinstance(weights, Sequence):
            raise InvalidTypeError(
                f"'weights' must be a sequence with one sequence of weights per feature. Got {weights!r} instead.")
        raw = tuple(_row(ws, None, f"'weights' of feature {i}") for i, ws in enumerate(weights))
        self._init_raw(raw)

    def _init_raw(self, raw: tuple[tuple[Fraction | float, ...], ...]) -> None:
        self.sizes = tuple(len(ws) for ws in raw)
        exact = all(isinstance(w, Fraction) for ws in raw for w in ws)
        if not exact:
            raw = tuple(tuple(float(w) for w in ws) for ws in raw)
        #: The weights as given (``Fraction`` or ``float``), per feature.
        self.raw: tuple[tuple[Fraction | float, ...], ...] = raw
        if exact:
            self.arith = EXACT
            scaled: list[tuple[Weight, ...]] = [_scale_exact(ws) for ws in raw]  # type: ignore[arg-type]
        else:
            self.arith = FLOAT
            scaled = [tuple(float(w) / math.fsum(map(float, ws)) for w in ws) for ws in raw]
        self._finish([(self.arith.one, ProductWeights(scaled, self.arith))])

    @classmethod
    def _from_raw(cls, raw: tuple[tuple[Fraction | float, ...], ...]) -> "Product":
        p = cls.__new__(cls)
        p._init_raw(raw)
        return p

    def probabilities(self) -> tuple[tuple[Probability, ...], ...]:
        """Per feature, the probability of each value."""
        return tuple(tuple(self.value_probability(f, k) for k in range(s)) for f, s in enumerate(self.sizes))

    def to_dict(self) -> Any:
        return [[str(w) if isinstance(w, Fraction) else w for w in ws] for ws in self.raw]

    def __repr__(self) -> str:
        return f"Product({len(self.sizes)} features, {'exact' if self.is_exact else 'float'})"


class Mixture(Distribution):
    """A mixture of product distributions: ``Pr(x) = sum_k pi_k * P_k(x)``.

    A latent-class model (a shallow probabilistic circuit). Unlike a product
    distribution it represents dependencies between features (two features
    that move together in the data get components where both take the same
    values). Every count under it is exact when its parameters are.

    Parameters
    ----------
    weights : sequence of positive numbers
        The mixing weights ``pi_k`` (normalised; they need not sum to 1).
    components : sequence of Product or Uniform
        The ``K`` product distributions, over the same domains.

    Examples
    --------
    >>> from kcxai.distribution import Mixture, Product
    >>> m = Mixture([1, 1], [Product([[3, 1], [3, 1]]), Product([[1, 3], [1, 3]])])
    >>> m.probability(m.point_weight((0, 0))), m.value_probability(0, 0)
    (Fraction(5, 16), Fraction(1, 2))
    >>> m.n_components, m.total_weight
    (2, 32)
    """

    kind = "mixture"

    def __init__(self, weights: Sequence[Parameter], components: Sequence[Distribution]) -> None:
        pis = _row(weights, None, "'weights' (the mixing weights)")
        if isinstance(components, (str, bytes)) or not isinstance(components, Sequence):
            raise InvalidTypeError(f"'components' must be a sequence of Product distributions. Got {components!r}.")
        comps = list(components)
        if len(comps) != len(pis):
            raise InvalidInputError(
                f"'components' must have one distribution per mixing weight ({len(pis)}). Got {len(comps)} instead.")
        for k, c in enumerate(comps):
            if not isinstance(c, (Product, Uniform)):
                raise InvalidTypeError(
                    f"'components' must be Product (or Uniform) distributions. Got {type(c).__name__} at {k}.")
            if c.sizes != comps[0].sizes:
                raise InvalidInputError(
                    f"'components' must share their domain sizes: component {k} has {list(c.sizes)}, "
                    f"component 0 has {list(comps[0].sizes)}.")
        self.sizes = comps[0].sizes
        exact = all(isinstance(p, Fraction) for p in pis) and all(c.is_exact for c in comps)
        #: The mixing weights as given.
        self.mixing: tuple[Fraction | float, ...] = pis if exact else tuple(float(p) for p in pis)
        self.parts: tuple[Product | Uniform, ...] = tuple(
            c if exact or not c.is_exact else _float_product(c) for c in comps)  # type: ignore[misc]
        if exact:
            # Give every component the same per-feature totals (L_f, the lcm of theirs) so that all
            # have one total T; then c_k = pi_k * D (D the lcm of the mixing weights' denominators)
            # are small integers and total_weight = T * D.
            self.arith = EXACT
            z = Fraction(sum(pis, Fraction(0)))
            norm: list[Fraction] = [Fraction(p) / z for p in pis]  # exact: every pi is a Fraction here
            assert all(isinstance(q, Fraction) for q in norm)  # narrowing for mypy; not user input
            pws = [c.components[0][1] for c in self.parts]
            common = [1] * len(self.sizes)
            for pw in pws:
                for f, t in enumerate(pw.totals):
                    common[f] = _lcm(common[f], int(t))
            scaled_pws = [ProductWeights([[int(w) * (common[f] // int(pw.totals[f])) for w in ws]
                                          for f, ws in enumerate(pw.weights)], EXACT) for pw in pws]
            d = 1
            for q in norm:
                d = _lcm(d, q.denominator)
            comp_list: list[tuple[Weight, ProductWeights]] = [
                (int(p * d), pw) for p, pw in zip(norm, scaled_pws)]
        else:
            self.arith = FLOAT
            zf = math.fsum(float(p) for p in pis)
            comp_list = [(float(p) / zf / float(c.total_weight), c.components[0][1]) for p, c in zip(pis, self.parts)]
        self._finish(comp_list)

    def to_dict(self) -> Any:
        return {"kind": "mixture",
                "weights": [str(p) if isinstance(p, Fraction) else p for p in self.mixing],
                "components": [c.to_dict() if isinstance(c, Product) else None for c in self.parts]}

    def __repr__(self) -> str:
        return (f"Mixture({len(self.parts)} components, {len(self.sizes)} features, "
                f"{'exact' if self.is_exact else 'float'})")


def _float_product(c: Distribution) -> Product:
    if isinstance(c, Product):
        return Product._from_raw(tuple(tuple(float(w) for w in ws) for ws in c.raw))
    return Product._from_raw(tuple((1.0,) * s for s in c.sizes))


def _json_parameter(x: Any, where: str) -> Fraction | float:
    if isinstance(x, str):
        if len(x) > 200 or "e" in x.lower():
            raise ModelFormatError(f"{where}: a weight must be a short decimal or 'p/q' string. Got {x[:50]!r}.")
        try:
            v = Fraction(x)
        except (ValueError, ZeroDivisionError):
            raise ModelFormatError(f"{where}: {x!r} is not a number or 'p/q' fraction.") from None
        return v
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ModelFormatError(f"{where}: a weight must be a number or a 'p/q' string. Got {x!r}.")
    return Fraction(x) if isinstance(x, int) else float(x)


def _product_from_json(d: Any, sizes: Sequence[int], where: str) -> Product:
    if not isinstance(d, list) or len(d) != len(sizes):
        raise ModelFormatError(f"{where} must be a list with one list of weights per feature ({len(sizes)}).")
    rows: list[tuple[Fraction | float, ...]] = []
    for f, (ws, size) in enumerate(zip(d, sizes)):
        if ws is None:
            rows.append((Fraction(1),) * size)
            continue
        if not isinstance(ws, list) or len(ws) != size:
            raise ModelFormatError(f"{where}, feature {f}: expected a list of {size} weights. Got {ws!r}.")
        rows.append(tuple(_json_parameter(w, f"{where}, feature {f}") for w in ws))
    try:
        return Product(rows)
    except (InvalidInputError, InvalidTypeError) as e:
        raise ModelFormatError(f"{where}: {e}") from None


def distribution_from_dict(d: Any, sizes: Sequence[int]) -> Distribution:
    """Inverse of :meth:`Distribution.to_dict`, for features with the given domain sizes."""
    if d is None:
        return Uniform(sizes)
    if isinstance(d, list):
        return _product_from_json(d, sizes, "'distribution'")
    if isinstance(d, Mapping) and d.get("kind") == "mixture":
        ws, comps = d.get("weights"), d.get("components")
        if not isinstance(ws, list) or not isinstance(comps, list) or len(ws) != len(comps) or not ws:
            raise ModelFormatError("A mixture 'distribution' needs lists 'weights' and 'components' of one length.")
        parts: list[Distribution] = [
            Uniform(sizes) if c is None else _product_from_json(c, sizes, f"mixture component {k}")
            for k, c in enumerate(comps)]
        try:
            return Mixture([_json_parameter(w, "mixture 'weights'") for w in ws], parts)
        except (InvalidInputError, InvalidTypeError) as e:
            raise ModelFormatError(f"Malformed mixture 'distribution': {e}") from None
    raise ModelFormatError(
        "'distribution' must be null (uniform), a list of weight lists (product) or "
        f"{{'kind': 'mixture', ...}}. Got {type(d).__name__}.")
