"""Boolean encodings of multi-valued features, shared by the SDD and OBDD compilers.

Encodings
---------
Feature ``f`` with ``d`` values gets a *block* of Boolean variables:

* ``d == 1``: no variable (the feature is constant);
* ``d == 2``: one variable, true for value number 1;
* ``d >= 3``, ``"order"`` encoding: ``d - 1`` variables, variable ``t``
  (``t = 1 .. d-1``) true iff the value number is ``>= t``. A threshold test
  ``x <= threshold`` of a numeric feature is a single literal;
* ``d >= 3``, ``"onehot"`` encoding: ``d`` variables, variable ``k`` true iff
  the value number is ``k``;
* ``d >= 3``, ``"log"`` encoding: ``ceil(log2 d)`` variables, the bits of the
  value number (most significant first); codes ``>= d`` are not values.

Only *valid* assignments (the encodings of values) correspond to points of
feature space. The compilers do **not** conjoin the validity constraints
(exactly-one, the order chain, codes below ``d``) into the diagrams: every
function is only ever evaluated on valid assignments, and the constraints can
multiply the size of a diagram (measured on a 1,000-node adult tree, same block
order: 17,600 OBDD nodes without them and 102,850 with them in the order
encoding; 101,858 and 107,536 one-hot; 12,713 and 12,783 in the log encoding).
The counters in :mod:`kcxai.compilers._tables.wmc` sum over valid assignments only;
this is what makes the counts equal the weight of points of feature space
exactly. For that, every feature's block must be contiguous in the variable
order (an OBDD) or the set of leaves of one vtree node (an SDD).

The default, ``"auto"``, is the log encoding. Measured on a 1,000-node adult
tree (313 variables in the order encoding, 56 in the log one): OBDD 1.10 s /
12,239 nodes / 5.0 ms per explanation with ``"order"``, 0.60 s / 11,539 nodes /
2.9 ms with ``"log"``; SDD 1.19 s / 14,123 nodes / 10.6 ms against 0.64 s /
4,815 nodes / 4.5 ms. Few variables per feature also make CUDD's group
sifting, which swaps blocks variable by variable, much cheaper.

Feature orders are in :mod:`kcxai.compilers._orders`, limits in
:mod:`kcxai.compilers._limits`, options in :mod:`kcxai.compilers._options`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from kcxai._errors import InvalidInputError
from kcxai.space import FeatureSpace

__all__ = ["Encoding", "ENCODINGS", "Literal", "value_masks"]

#: Accepted values of the ``encoding`` option.
ENCODINGS = ("auto", "order", "onehot", "log")

#: A literal: (variable index, polarity).
Literal = tuple[int, bool]


class Encoding:
    """The Boolean variables of every feature of ``space``.

    Variables are numbered ``0 .. n_vars - 1``, block by block in the given
    feature order, so that a variable's number is its initial level.

    Attributes
    ----------
    kinds : tuple of str
        Per feature: ``"constant"``, ``"binary"``, ``"order"`` or ``"onehot"``.
    blocks : tuple of tuple of int
        Per feature, its variables.
    var_feature : list of int
        The feature of each variable.
    var_true : list of int
        For each variable, the bitmask of the values whose encoding sets it true.
    """

    def __init__(self, space: FeatureSpace, encoding: str = "auto", order: Sequence[int] | None = None) -> None:
        if not isinstance(encoding, str) or encoding not in ENCODINGS:
            raise InvalidInputError(f"'encoding' must be one of {list(ENCODINGS)}. Got {encoding!r} instead.")
        self.space = space
        self.encoding = encoding
        n = space.n_features
        order = list(range(n)) if order is None else list(order)
        kinds: list[str] = [""] * n
        blocks: list[tuple[int, ...]] = [()] * n
        var_feature: list[int] = []
        var_true: list[int] = []
        for f in order:
            feat = space.features[f]
            d = feat.size
            full = (1 << d) - 1
            if d == 1:
                kind = "constant"
                masks: list[int] = []
            elif d == 2:
                kind = "binary"
                masks = [0b10]
            elif encoding == "onehot":
                kind = "onehot"
                masks = [1 << k for k in range(d)]
            elif encoding in ("log", "auto"):
                kind = "log"
                nbits = (d - 1).bit_length()
                masks = [sum(1 << k for k in range(d) if k >> (nbits - 1 - j) & 1) for j in range(nbits)]
            else:
                kind = "order"
                masks = [full & ~((1 << t) - 1) for t in range(1, d)]
            kinds[f] = kind
            start = len(var_feature)
            blocks[f] = tuple(range(start, start + len(masks)))
            var_feature.extend([f] * len(masks))
            var_true.extend(masks)
        self.kinds = tuple(kinds)
        self.blocks = tuple(blocks)
        self.var_feature = var_feature
        self.var_true = var_true
        self.order = tuple(order)

    @property
    def n_vars(self) -> int:
        """Number of Boolean variables."""
        return len(self.var_feature)

    def assignment(self, feature: int, k: int) -> dict[int, bool]:
        """The values of the feature's variables in the encoding of value number ``k``."""
        return {v: bool(self.var_true[v] >> k & 1) for v in self.blocks[feature]}

    def terms(self, feature: int, mask: int) -> tuple[bool, list[list[Literal]]]:
        """``x_feature in E`` on valid assignments, as ``(negate, cubes)``.

        The function is the disjunction of the cubes (conjunctions of
        literals), negated if ``negate``. An empty list of cubes is false; a
        list holding the empty cube is true. Complementary masks give
        complementary functions whenever possible, so that a two-way split is
        one ``ite``.
        """
        d = self.space.features[feature].size
        full = (1 << d) - 1
        mask &= full
        if mask == 0:
            return False, []
        if mask == full:
            return False, [[]]
        kind = self.kinds[feature]
        vs = self.blocks[feature]
        if kind == "binary":
            return False, [[(vs[0], mask == 0b10)]]
        if kind == "onehot":
            pos = [k for k in range(d) if mask >> k & 1]
            neg = [k for k in range(d) if not mask >> k & 1]
            if len(pos) <= len(neg):
                return False, [[(vs[k], True)] for k in pos]
            return True, [[(vs[k], True)] for k in neg]
        runs_in, runs_out = _runs(mask, d), _runs(full & ~mask, d)
        negate, runs = (False, runs_in) if len(runs_in) <= len(runs_out) else (True, runs_out)
        if kind == "log":
            return negate, [cube for a, b in runs for cube in _prefix_cubes(vs, a, b)]
        return negate, [self._run_cube(vs, a, b, d) for a, b in runs]

    @staticmethod
    def _run_cube(vs: Sequence[int], a: int, b: int, d: int) -> list[Literal]:
        """Values ``a..b`` in the order encoding: ``value >= a and not value >= b + 1``."""
        cube: list[Literal] = []
        if a > 0:
            cube.append((vs[a - 1], True))
        if b < d - 1:
            cube.append((vs[b], False))
        return cube


def _prefix_cubes(vs: Sequence[int], a: int, b: int) -> list[list[Literal]]:
    """Values ``a..b`` in the log encoding (``vs[j]`` is bit ``len(vs) - 1 - j``): one cube per aligned
    block ``[p * 2**k, (p + 1) * 2**k)`` of the interval, fixing the block's prefix bits."""
    nbits = len(vs)
    cubes = []
    lo = a
    while lo <= b:
        k = 0  # the largest aligned block starting at lo and ending by b
        while k < nbits and lo % (1 << (k + 1)) == 0 and lo + (1 << (k + 1)) - 1 <= b:
            k += 1
        cubes.append([(vs[j], bool(lo >> (nbits - 1 - j) & 1)) for j in range(nbits - k)])
        lo += 1 << k
    return cubes


def _runs(mask: int, d: int) -> list[tuple[int, int]]:
    """Maximal runs ``(first, last)`` of consecutive set bits among the first ``d``."""
    runs = []
    k = 0
    while k < d:
        if mask >> k & 1:
            j = k
            while j + 1 < d and mask >> (j + 1) & 1:
                j += 1
            runs.append((k, j))
            k = j + 1
        else:
            k += 1
    return runs


N = TypeVar("N", bound=Hashable)


def value_masks(enc: Encoding, feature: int, entry: N,
                step: Callable[[N], tuple[int, N, N] | None]) -> dict[N, int]:
    """Where each value of ``feature`` leaves its block of a diagram.

    ``step(node)`` returns ``None`` if ``node`` is no longer in the block,
    else ``(variable, low, high)``. Returns ``{exit node: mask of the values
    reaching it}``; values are pushed down the block all at once, split by
    each variable's ``var_true`` mask, so the cost is the number of (node,
    value set) pairs visited, at most the block's nodes times its values.
    """
    full = (1 << enc.space.features[feature].size) - 1
    exits: dict[N, int] = {}
    stack = [(entry, full)]
    var_true = enc.var_true
    while stack:
        node, values = stack.pop()
        s = step(node)
        if s is None:
            exits[node] = exits.get(node, 0) | values
            continue
        var, low, high = s
        t = var_true[var]
        if values & t:
            stack.append((high, values & t))
        if values & ~t:
            stack.append((low, values & ~t))
    return exits
