"""The native decision-tree oracle (language ``"dt"``): counting from the paths.

For a path ``R_j`` and a fixed set ``S``, the weight of the points consistent
with ``R_j`` and with ``x_S = v_S`` is a product of per-feature factors (the
paper's ``||R_j|| = d_1 x ... x d_m``): ``w(v_f)`` for a fixed feature (or 0 if
``v_f`` is not in the path's set ``E_jf``), ``w(E_jf)`` for a free feature the
path tests, and the feature's total weight ``Z_f`` for a free feature it does
not test. ``disagree_weight`` sums this over the paths whose class is not ``c``.

The deletion-loop session keeps, for every such path, the number of fixed
features that block it and the integer

    H_j = L * prod_{f free, tested on j} w(E_jf) / Z_f,   L = prod_f Z_f,

so that ``disagree_weight(S) = M(S) * sum_{j unblocked} H_j / L`` with
``M(S) = prod_{f in S} w(v_f) * prod_{f not in S} Z_f``. Freeing feature ``i``
only touches the paths that test ``i``: one min_idrs costs about one pass over
the path literals. All of it is exact integer arithmetic.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from kcxai.oracle import GenericSession, OracleSession
from kcxai.space import Weight

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.compilers._base import CompiledModel
    from kcxai.models.tree import DecisionTree

__all__ = ["TreeOracle", "compile"]


class TreeOracle:
    """Counting oracle answering from a :class:`~kcxai.models.DecisionTree`'s paths."""

    language = "dt"

    def __init__(self, tree: "DecisionTree") -> None:
        self.tree = tree
        self.space = tree.space
        self.n_classes = len(tree.classes)
        space = tree.space
        ws = space.weights
        self._labels = [p.label for p in tree.paths]
        # per path: ((feature, mask, w(E)), ...)
        self._lits: list[tuple[tuple[int, int, Weight], ...]] = []
        by_feature: list[list[tuple[int, int, Weight]]] = [[] for _ in range(space.n_features)]
        for j, p in enumerate(tree.paths):
            lits = []
            for f, mask in p.masks:
                wE = sum(w for k, w in enumerate(ws[f]) if mask >> k & 1)
                lits.append((f, mask, wE))
                by_feature[f].append((j, mask, wE))
            self._lits.append(tuple(lits))
        self._by_feature = by_feature
        self._index: dict[tuple[int, int, int], tuple[list[tuple[int, Weight]], list[tuple[int, Weight]]]] = {}

    def predict_point(self, point: tuple[int, ...]) -> int:
        return self.tree.predict_point(point)

    def disagree_weight(self, point: tuple[int, ...], label: int, fixed: frozenset[int]) -> Weight:
        space = self.space
        ws, totals, exact = space.weights, space.totals, space.is_exact
        base = space.consistent_weight(point, fixed)
        total: Weight = 0
        for lab, lits in zip(self._labels, self._lits):
            if lab == label:
                continue
            num: Weight = 1
            den: Weight = 1
            for f, mask, wE in lits:
                if f in fixed:
                    if not mask >> point[f] & 1:
                        break
                else:
                    num *= wE
                    den *= totals[f]
            else:
                total += base // den * num if exact else base * num / den
        return total

    def _lists(self, label: int, f: int, a: int) -> tuple[list[tuple[int, Weight]], list[tuple[int, Weight]]]:
        """Paths of another class than ``label`` testing ``f``: those excluding value ``a``, those including it."""
        key = (label, f, a)
        got = self._index.get(key)
        if got is None:
            labels = self._labels
            excl = [(j, wE) for j, mask, wE in self._by_feature[f] if labels[j] != label and not mask >> a & 1]
            incl = [(j, wE) for j, mask, wE in self._by_feature[f] if labels[j] != label and mask >> a & 1]
            got = self._index[key] = (excl, incl)
        return got

    def session(self, point: tuple[int, ...], label: int, fixed: frozenset[int]) -> OracleSession:
        if not self.space.is_exact:
            return GenericSession(self, point, label, fixed)
        return _TreeSession(self, point, label, frozenset(fixed))


class _TreeSession:
    """Incremental deletion-loop session over the paths (exact spaces only)."""

    __slots__ = ("_o", "_point", "_label", "_fixed", "_cnt", "_h", "_t", "_m", "_l")

    def __init__(self, oracle: TreeOracle, point: tuple[int, ...], label: int, fixed: frozenset[int]) -> None:
        self._o = oracle
        self._point = point
        self._label = label
        self._fixed = set(fixed)
        space = oracle.space
        n_paths = len(oracle._labels)
        L = space.total_weight
        cnt = [0] * n_paths
        h = [L] * n_paths
        m = 1
        for f in range(space.n_features):
            excl, incl = oracle._lists(label, f, point[f])
            if f in fixed:
                m *= space.weights[f][point[f]]
                for j, _ in excl:
                    cnt[j] += 1
            else:
                z = space.totals[f]
                m *= z
                for j, wE in excl:
                    h[j] = h[j] // z * wE
                for j, wE in incl:
                    h[j] = h[j] // z * wE
        labels = oracle._labels
        self._t = sum(h[j] for j in range(n_paths) if labels[j] != label and cnt[j] == 0)
        self._cnt = cnt
        self._h = h
        self._m = m
        self._l = L

    @property
    def fixed(self) -> frozenset[int]:
        return frozenset(self._fixed)

    def weight(self) -> Weight:
        return self._m * self._t // self._l

    def _freed(self, i: int) -> tuple[int, int]:
        o = self._o
        a = self._point[i]
        excl, incl = o._lists(self._label, i, a)
        z = o.space.totals[i]
        cnt, h = self._cnt, self._h
        delta = 0
        for j, wE in excl:
            if cnt[j] == 1:
                delta += h[j] // z * wE
        for j, wE in incl:
            if cnt[j] == 0:
                hj = h[j]
                delta += hj // z * wE - hj
        return self._t + delta, self._m // o.space.weights[i][a] * z

    def weight_if_freed(self, feature: int) -> Weight:
        if feature not in self._fixed:
            return self.weight()
        t, m = self._freed(feature)
        return m * t // self._l

    def free(self, feature: int) -> None:
        if feature not in self._fixed:
            return
        self._t, self._m = self._freed(feature)
        self._fixed.discard(feature)
        o = self._o
        excl, incl = o._lists(self._label, feature, self._point[feature])
        z = o.space.totals[feature]
        cnt, h = self._cnt, self._h
        for j, wE in excl:
            cnt[j] -= 1
            h[j] = h[j] // z * wE
        for j, wE in incl:
            h[j] = h[j] // z * wE


def compile(model: Any, **options: Any) -> "CompiledModel":
    """The ``"dt"`` language: a decision tree answers from its own paths (nothing to compile)."""
    from kcxai._errors import InvalidInputError, InvalidTypeError
    from kcxai.compilers._base import CompiledModel
    from kcxai.models.tree import DecisionTree

    if options:
        raise InvalidInputError(f"The 'dt' language takes no options. Got {sorted(options)}.")
    if not isinstance(model, DecisionTree):
        raise InvalidTypeError(
            f"The 'dt' language explains DecisionTree models only. Got {type(model).__name__}; "
            "compile it to 'sdd' or 'obdd' instead.")
    t0 = time.perf_counter()
    oracle = TreeOracle(model)
    seconds = time.perf_counter() - t0
    n_lits = sum(len(lits) for lits in oracle._lits)
    return CompiledModel(model=model, oracle=oracle, language="dt", backend="kcxai",
                         stats={"nodes": model.n_nodes, "paths": len(model.paths), "path_literals": n_lits,
                                "size": n_lits, "variables": model.space.n_features,
                                "compile_seconds": seconds})
