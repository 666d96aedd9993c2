"""Boolean encodings of multi-valued features and feature orders, shared by the SDD and OBDD compilers.

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
The counters in :mod:`kcxai.compilers._wmc` sum over valid assignments only;
this is what makes the counts equal the weight of points of feature space
exactly. For that, every feature's block must be contiguous in the variable
order (an OBDD) or the set of leaves of one vtree node (an SDD).

The default, ``"auto"``, is the log encoding. Measured on a 1,000-node adult
tree (313 variables in the order encoding, 56 in the log one): OBDD 1.10 s /
12,239 nodes / 5.0 ms per explanation with ``"order"``, 0.60 s / 11,539 nodes /
2.9 ms with ``"log"``; SDD 1.19 s / 14,123 nodes / 10.6 ms against 0.64 s /
4,815 nodes / 4.5 ms. Few variables per feature also make CUDD's group
sifting, which swaps blocks variable by variable, much cheaper.

Feature orders
--------------
The order of the feature blocks decides the size of an OBDD or SDD. ``"dfs"``
orders features by their first occurrence in a depth-first walk of the
expression the model builds (:class:`ProbeBuilder`), from the first class's
function: for a decision tree this is the preorder of the features from the
root, for a model built feature by feature (linear models, naive Bayes) it is
the model's own feature order. ``"index"`` is feature-index order; a sequence
of features (indices or names) gives the order explicitly. ``"auto"`` is
``"dfs"`` here; the OBDD compiler then improves it by CUDD's group sifting,
and the SDD compiler uses the order that sifting finds (see their modules).
No static order is good everywhere: on an 80-feature tree whose paths follow
feature-index order, ``"dfs"`` gave an OBDD over 300,000 nodes and ``"index"``
371 nodes; on a 1,000-node adult tree (order encoding), ``"index"`` did not
finish in 5 minutes while ``"dfs"`` gave 33,479 nodes and sifting 9,906.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from kcxai._errors import CompilationLimitError, InvalidInputError, InvalidTypeError
from kcxai.space import FeatureSpace

__all__ = ["Encoding", "ENCODINGS", "feature_order", "ProbeBuilder", "Guard", "check_options", "value_masks",
           "check_literal", "check_switch"]

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


def value_masks(enc: Encoding, feature: int, entry: Any, step: Any) -> dict[Any, int]:
    """Where each value of ``feature`` leaves its block of a diagram.

    ``step(node)`` returns ``None`` if ``node`` is no longer in the block,
    else ``(variable, low, high)``. Returns ``{exit node: mask of the values
    reaching it}``; values are pushed down the block all at once, split by
    each variable's ``var_true`` mask, so the cost is the number of (node,
    value set) pairs visited, at most the block's nodes times its values.
    """
    full = (1 << enc.space.features[feature].size) - 1
    exits: dict[Any, int] = {}
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


def check_literal(space: Any, feature: Any, mask: Any) -> None:
    """A builder's ``value_in`` arguments, checked once per distinct literal (models are code, not users,
    but a wrong index must not become a wrong count)."""
    if isinstance(feature, bool) or not isinstance(feature, int) or not 0 <= feature < space.n_features:
        raise InvalidInputError(
            f"value_in: 'feature' must be a feature index in [0, {space.n_features - 1}]. Got {feature!r} instead.")
    if isinstance(mask, bool) or not isinstance(mask, int) or mask < 0:
        raise InvalidInputError(f"value_in: 'mask' must be a non-negative int bitmask. Got {mask!r} instead.")


def check_switch(space: Any, feature: Any, cases: Any) -> None:
    check_literal(space, feature, 0)
    size = space.features[feature].size
    if len(cases) != size:
        raise InvalidInputError(
            f"switch: feature {space.names[feature]!r} has {size} values, so 'cases' must have {size} entries. "
            f"Got {len(cases)} instead.")


class ProbeBuilder:
    """A :class:`~kcxai.compilers._builder.FunctionBuilder` that only records the expression.

    Functions are integers naming expression nodes; :meth:`first_occurrence`
    walks the expression to find the ``"auto"`` feature order.
    """

    def __init__(self, space: FeatureSpace) -> None:
        self.space = space
        self._feature: list[int] = [-1, -1]
        self._children: list[tuple[int, ...]] = [(), ()]
        self._lits: dict[tuple[int, int], int] = {}

    def _new(self, feature: int, children: tuple[int, ...]) -> int:
        self._feature.append(feature)
        self._children.append(children)
        return len(self._feature) - 1

    def true(self) -> int:
        return 1

    def false(self) -> int:
        return 0

    def value_in(self, feature: int, mask: int) -> int:
        key = (feature, mask)
        got = self._lits.get(key)
        if got is None:
            check_literal(self.space, feature, mask)
            got = self._lits[key] = self._new(feature, ())
        return got

    def conj(self, a: int, b: int) -> int:
        return self._new(-1, (a, b))

    def disj(self, a: int, b: int) -> int:
        return self._new(-1, (a, b))

    def neg(self, a: int) -> int:
        return self._new(-1, (a,))

    def switch(self, feature: int, cases: Sequence[int]) -> int:
        check_switch(self.space, feature, cases)
        return self._new(feature, tuple(cases))

    def first_occurrence(self, roots: Sequence[Any]) -> list[int]:
        """Features in order of first occurrence in a depth-first walk from ``roots``."""
        seen_node = bytearray(len(self._feature))
        seen_feat: set[int] = set()
        out: list[int] = []
        for r in roots:
            if not isinstance(r, int) or not 0 <= r < len(self._feature):
                continue
            stack = [r]
            while stack:
                n = stack.pop()
                if seen_node[n]:
                    continue
                seen_node[n] = 1
                f = self._feature[n]
                if f >= 0 and f not in seen_feat:
                    seen_feat.add(f)
                    out.append(f)
                stack.extend(reversed(self._children[n]))
        return out


def feature_order(model: Any, order: Any) -> tuple[int, ...]:
    """The feature order (of blocks) for ``order`` = ``"auto"`` / ``"dfs"`` (the same here), ``"index"``
    or a sequence of features."""
    space = model.space
    n = space.n_features
    if isinstance(order, str):
        if order == "index":
            return tuple(range(n))
        if order in ("auto", "dfs"):
            probe = ProbeBuilder(space)
            found = probe.first_occurrence(model.build(probe))
            return tuple(found) + tuple(f for f in range(n) if f not in set(found))
        raise InvalidInputError(
            f"'order' must be 'auto', 'dfs', 'index' or a sequence of all the features. Got {order!r} instead.")
    if isinstance(order, bytes) or not isinstance(order, Sequence):
        raise InvalidTypeError(
            f"'order' must be 'auto', 'dfs', 'index' or a sequence of all the features. Got {order!r} instead.")
    seq = [space.feature_index(f) for f in order]
    if sorted(seq) != list(range(n)):
        missing = sorted(set(range(n)) - set(seq))
        repeated = sorted({f for f in seq if seq.count(f) > 1})
        raise InvalidInputError(
            f"'order' must list every feature exactly once ({n} features). "
            f"Missing {[space.names[f] for f in missing]}, repeated {[space.names[f] for f in repeated]}.")
    return tuple(seq)


class Guard:
    """Size and time limits of one compilation.

    ``tick()`` is called by builders once per operation; every 64 calls it
    checks the clock and, through ``size()``, the number of live nodes. A
    single backend operation cannot be interrupted, so a limit may be
    overshot by one operation.
    """

    __slots__ = ("language", "max_nodes", "max_seconds", "t0", "deadline", "calls", "size", "phase", "hook")

    def __init__(self, language: str, max_nodes: int | None, max_seconds: float | None) -> None:
        self.language = language
        self.max_nodes = max_nodes
        self.max_seconds = max_seconds
        self.t0 = time.perf_counter()
        self.deadline = None if max_seconds is None else self.t0 + max_seconds
        self.calls = 0
        self.size: Any = None
        self.hook: Any = None
        self.phase = "building the model's functions"

    def tick(self) -> None:
        self.calls += 1
        if self.calls & 63:
            return
        self.check()

    def check(self, nodes: int | None = None) -> None:
        """Raise :class:`CompilationLimitError` if a limit is exceeded (after running ``hook``, if any)."""
        if self.hook is not None:
            self.hook()
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise CompilationLimitError(
                f"Compiling to {self.language!r} exceeded max_seconds={self.max_seconds:g} while {self.phase} "
                f"({self.calls} operations, {self.nodes_now(nodes)} nodes). Raise 'max_seconds', try another "
                "'order', or use another language (a decision tree answers natively with 'dt').")
        if self.max_nodes is not None:
            now = self.nodes_now(nodes)
            if now > self.max_nodes:
                raise CompilationLimitError(
                    f"Compiling to {self.language!r} exceeded max_nodes={self.max_nodes} while {self.phase}: "
                    f"{now} nodes after {self.calls} operations. Raise 'max_nodes', try another 'order', "
                    "or use another language (a decision tree answers natively with 'dt').")

    def nodes_now(self, nodes: int | None = None) -> int:
        if nodes is not None:
            return nodes
        return int(self.size()) if self.size is not None else 0

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.t0


def check_options(language: str, options: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """Fill in defaults and validate the options shared by the diagram compilers."""
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise InvalidInputError(
            f"Unknown option(s) {unknown} for the {language!r} language; its options are {sorted(defaults)}.")
    out = {**defaults, **options}
    mn = out.get("max_nodes")
    if mn is not None and (isinstance(mn, bool) or not isinstance(mn, int) or mn < 1):
        raise InvalidInputError(f"'max_nodes' must be a positive int or None. Got {mn!r} instead.")
    ms = out.get("max_seconds")
    if ms is not None and (isinstance(ms, bool) or not isinstance(ms, (int, float)) or not ms > 0
                           or math.isnan(ms)):
        raise InvalidInputError(f"'max_seconds' must be a positive number or None. Got {ms!r} instead.")
    enc = out.get("encoding")
    if not isinstance(enc, str) or enc not in ENCODINGS:
        raise InvalidInputError(f"'encoding' must be one of {list(ENCODINGS)}. Got {enc!r} instead.")
    return out
