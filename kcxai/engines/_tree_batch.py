"""Algorithm 1 (min_idrs from all features or the path, feature order) for many rows of one tree at once:
the decision tree oracle's batch hook (:class:`~kcxai.oracle.BatchOracle`).

The per-row loop asks the tree oracle one pruned traversal per feature tried. Here the rows of a
batch share the work that does not depend on the deletion loop: for every row and every leaf of
another class, the set ``D`` of features on which the row disagrees with the leaf's path is computed
at once with numpy (one table lookup per row, leaf and feature). With ``T`` the freed features, the
points of a leaf ``L`` that agree with ``v`` on ``S = F \\ T`` exist iff ``D_L`` is inside ``T``, and weigh

    prod_{f in S} w(v_f) * prod_{f in T} w(A_f(L))

(``A_f(L)`` the values the path allows, the whole domain when it does not test ``f``). So the error
weight of ``S`` is a sum over the few leaves with ``D_L`` inside ``T``, in exact integers: the same
number the oracle computes, tested equal to :func:`kcxai.min_idrs` (every field but the time) on
random trees. Under a mixture of products the weight is the sum over components ``c_k * weight_k``
(counting is linear in the distribution). Used for exact distributions; float ones go through the oracle.
The batch runner (:mod:`kcxai._batch`) builds the explanations from the rows it returns.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, cast

import numpy as np

from kcxai._errors import InvalidTypeError, KcxaiError
from kcxai._types import Point, Values
from kcxai.arithmetic import Bound, Probability
from kcxai.models.tree import DecisionTree
from kcxai.oracle import BatchRow
from kcxai.space import FeatureSpace

__all__ = ["TreeBatch"]


#: Ints up to this size are floats exactly (read as the float path reads them: :meth:`Feature.index`).
_EXACT = 2**53


def _indices(feat: Any, col: Sequence[Any]) -> list[int]:
    """``feat.index(v)`` for each value of ``col``, computed once per distinct value (keyed with its type, so that
    ``1``, ``1.0`` and ``True`` are looked up apart, as ``Feature.index`` may tell them apart)."""
    seen: dict[tuple[type, Any], int] = {}
    out = []
    for v in col:
        key = (type(v), v)
        try:
            k = seen.get(key)
        except TypeError:  # an unhashable value: Feature.index says what is wrong with it
            k = None
        if k is None:
            k = feat.index(v)
            try:
                seen[key] = k
            except TypeError:
                pass
        out.append(k)
    return out


class TreeBatch:
    """Batch min_idrs on one decision tree (see the module docstring)."""

    def __init__(self, tree: DecisionTree) -> None:
        self.tree = tree
        self.space = space = tree.space
        feats = space.features
        self.n = n = len(feats)
        paths = tree.paths
        self.labels = np.array([p.label for p in paths], dtype=np.int64)
        allowed = [np.ones((f.size, len(paths)), dtype=bool) for f in feats]
        for li, p in enumerate(paths):
            for f, m in p.masks:
                size = feats[f].size
                allowed[f][:, li] = np.frombuffer(bin(m)[2:].zfill(size)[::-1].encode(), dtype=np.uint8) == ord("1")
        # per feature, per value: the bit of the feature on the leaves whose path excludes the value
        self._badbits = [np.where(a, 0, 1 << f).astype(np.int64) for f, a in enumerate(allowed)]
        self._literals: dict[tuple[int, int], str] = {}
        self._fidx = np.arange(n)
        self._lidx = np.arange(len(paths))
        # One entry per product component (c_k, P_k) of the distribution (one unless a mixture): the exact
        # w_k(A_f(L)) per leaf and feature, and floats for the first, approximate decisions:
        # pi_k = c_k P_k(all) / total, w_k(A_f(L)) / w_k(F_f) and w_k(v) / w_k(F_f).
        total = int(space.total_weight)  # exact spaces only (build): every weight is an int
        # per component: c_k, w_k(value) per feature, w_k(A_f(L)) per leaf and feature
        self._comps: list[tuple[int, list[list[int]], list[list[int]]]] = []
        self._pi: list[float] = []
        self._qf: list[np.ndarray] = []
        self._pw: list[list[np.ndarray]] = []
        for coefficient, pw in space.distribution.components:
            c = int(coefficient)
            totals = [int(t) for t in pw.totals]
            wa = []
            for p in paths:
                row = list(totals)
                for f, m in p.masks:
                    row[f] = int(pw.mask_weight(f, m))
                wa.append(row)
            self._comps.append((c, [[int(w) for w in ws] for ws in pw.weights], wa))
            self._pi.append(float(Fraction(c * int(pw.total), total)))
            self._qf.append(np.array([[float(Fraction(w, totals[f])) for f, w in enumerate(row)] for row in wa],
                                     dtype=np.float64).reshape(len(paths), n))
            self._pw.append([np.array([float(Fraction(int(w), totals[f])) for w in pw.weights[f]], dtype=np.float64)
                             for f in range(n)])
        self._prod_cache: dict[tuple[int, int], list[int]] = {}
        self._path_masks = np.array([sum(1 << f for f in p.features()) for p in paths], dtype=np.int64)

    @classmethod
    def build(cls, tree: DecisionTree) -> "TreeBatch | None":
        """The batch engine of a decision tree, or ``None`` where it does not apply (not a
        :class:`~kcxai.DecisionTree`, a float distribution, more than 62 features)."""
        if (not isinstance(tree, DecisionTree) or type(tree.space) is not FeatureSpace or not tree.space.is_exact
                or tree.space.n_features > 62):
            return None
        return cls(tree)

    # -- encoding -------------------------------------------------------------------

    def encode(self, instances: Sequence[Sequence[Any]]) -> np.ndarray:
        """Value indices of many instances (as ``space.encode`` gives them), column by column."""
        out = np.empty((len(instances), self.n), dtype=np.int64)
        for f, feat in enumerate(self.space.features):
            col = [inst[f] for inst in instances]
            if feat.is_numeric and all(type(x) is float or (type(x) is int and -_EXACT <= x <= _EXACT) for x in col):
                x = np.asarray(col, dtype=np.float64)
                if feat.float32:
                    x = x.astype(np.float32).astype(np.float64)
                if np.isnan(x).any():
                    raise ValueError("nan")
                out[:, f] = np.searchsorted(np.asarray(feat.thresholds, dtype=np.float64), x, side="left")
            else:
                out[:, f] = _indices(feat, col)
        return out

    # -- Algorithm 1 ------------------------------------------------------------------

    def _literal(self, f: int, k: int) -> str:
        lit = self._literals.get((f, k))
        if lit is None:
            lit = self._literals[(f, k)] = self.space.features[f].literal(k)
        return lit

    def _products(self, k: int, freed: int) -> list[int]:
        """Per leaf, ``prod_{f in T} w_k(A_f(L))`` for component ``k`` and the freed set ``T`` (cached: rows
        share their sets)."""
        hit = self._prod_cache.get((k, freed))
        if hit is None:
            tf = [f for f in range(self.n) if freed >> f & 1]
            hit = []
            for row in self._comps[k][2]:
                p = 1
                for f in tf:
                    p *= row[f]
                hit.append(p)
            if len(self._prod_cache) > 4096:
                self._prod_cache.clear()
            self._prod_cache[(k, freed)] = hit
        return hit

    def _weight(self, point: Sequence[int], cand: Sequence[int], freed: int) -> int:
        """The exact error weight of ``S = F \\ freed``, ``cand`` the other-class leaves with ``D`` inside
        ``freed``: ``sum_k c_k * prod_{f in S} w_k(v_f) * sum_{L in cand} prod_{f in T} w_k(A_f(L))``."""
        total = 0
        for k, (c, weights, _) in enumerate(self._comps):
            kv = 1
            for f in range(self.n):
                if not freed >> f & 1:
                    kv *= weights[f][point[f]]
            prods = self._products(k, freed)
            total += c * kv * sum(map(prods.__getitem__, cand))
        return total

    def _loop(self, block: np.ndarray, dmask: np.ndarray, own: np.ndarray, pts: list[tuple[int, ...]],
              delta: Fraction, bound: Bound, start: np.ndarray) -> np.ndarray:
        """The freed features of every row of a block after Algorithm 1 from the fixed sets ``start``
        (bitmasks), trying features in index order, as bitmasks. Rows are grouped by predicted class,
        each group looking only at the leaves of the other classes."""
        freed = np.zeros(block.shape[0], dtype=np.int64)
        labels = self.labels[own]
        for c in np.unique(labels).tolist():
            rsel = np.flatnonzero(labels == c)
            cols = np.flatnonzero(self.labels != c)
            freed[rsel] = self._loop_group(block[rsel], dmask[np.ix_(rsel, cols)], cols, [pts[r] for r in rsel],
                                           delta, bound, start[rsel])
        return freed

    def _loop_group(self, block: np.ndarray, dmask: np.ndarray, cols: np.ndarray, pts: list[tuple[int, ...]],
                    delta: Fraction, bound: Bound, start: np.ndarray) -> np.ndarray:
        """:meth:`_loop` for rows of one class; ``dmask`` and ``cols`` are over the other classes' leaves.

        All rows take step ``i`` together (rows whose start set lacks ``i`` skip it). Each decision is
        first made in floats, with a relative margin of 1e-9 far above the rounding error of the sums
        (at most ~1e-13 here); rows within the margin are decided exactly with :meth:`_weight`.
        delta = 0 needs no arithmetic: a leaf of another class that agrees with the row on ``S`` has
        positive weight, so ``S`` is relevant iff there is none.
        """
        n = self.n
        rows = block.shape[0]
        freed = ((1 << n) - 1) & ~start
        if delta == 0 or not cols.size:
            for i in range(n):
                t = freed | (1 << i)
                blocked = ((dmask & ~t[:, None]) == 0).any(axis=1)
                freed = np.where(~blocked & ((start >> i) & 1 == 1), t, freed)
            return freed
        d = float(delta)
        lo, hi = d * (1 - 1e-9), d * (1 + 1e-9)
        comps = range(len(self._comps))
        qf = [q[cols] for q in self._qf]
        pv = [np.empty((rows, n), dtype=np.float64) for _ in comps]
        prod_t = [np.ones((rows, cols.size), dtype=np.float64) for _ in comps]
        for k in comps:
            for f in range(n):
                pv[k][:, f] = self._pw[k][f][block[:, f]]
                prod_t[k] = np.where(((freed >> f) & 1 == 1)[:, None], prod_t[k] * qf[k][None, :, f], prod_t[k])
        for i in range(n):
            active = (start >> i) & 1 == 1
            if not active.any():
                continue
            t = freed | (1 << i)
            cand = (dmask & ~t[:, None]) == 0
            keep = ((t[:, None] >> self._fidx[None, :]) & 1) == 0
            err = np.zeros(rows, dtype=np.float64)
            for k in comps:
                err += self._pi[k] * np.where(keep, pv[k], 1.0).prod(axis=1) * (cand * prod_t[k]).dot(qf[k][:, i])
            holds = err <= lo
            unsure = active & ~holds & (err < hi)
            for r in np.flatnonzero(unsure).tolist():
                holds[r] = bound.holds(self._weight(pts[r], cols[cand[r]].tolist(), int(t[r])))
            holds &= active
            freed = np.where(holds, t, freed)
            for k in comps:
                prod_t[k] = np.where(holds[:, None], prod_t[k] * qf[k][None, :, i], prod_t[k])
        return freed

    def min_idrs_rows(self, instances: Sequence[Values], delta: Probability, start: str | None = None
                      ) -> list[BatchRow | Exception]:
        """Per instance, :func:`kcxai.min_idrs`'s set with the default order, from all features (``start=None``)
        or from the instance's path (``start="path"``), computed for the batch (the
        :class:`~kcxai.oracle.BatchOracle` hook); or the error reading the instance raised."""
        space, n = self.space, self.n
        if not isinstance(delta, Fraction):
            raise InvalidTypeError(f"'delta' must be exact (a Fraction) in a tree batch. Got {delta!r} instead.")
        bound = space.arith.bound(delta, space.total_weight)
        pts: list[Point | None] = [None] * len(instances)
        failed: dict[int, Exception] = {}
        try:
            pts = [tuple(p) for p in self.encode(instances).tolist()]
        except (KcxaiError, ValueError, TypeError):  # some row does not encode: one by one, for its error
            for k, inst in enumerate(instances):
                try:
                    pts[k] = space.encode(inst)
                except KcxaiError as err:
                    failed[k] = err
        good = [k for k, p in enumerate(pts) if p is not None]
        done: dict[int, BatchRow] = {}
        full = (1 << n) - 1
        for c in range(0, len(good), 256):
            part = good[c:c + 256]
            t0 = time.perf_counter()
            points = [cast(Point, pts[k]) for k in part]
            block = np.array(points, dtype=np.int64).reshape(len(part), n)
            # D[r, l]: the features on which row r disagrees with the path of leaf l, as a bitmask
            dmask = self._badbits[0][block[:, 0]]
            for f in range(1, n):
                dmask = dmask | self._badbits[f][block[:, f]]
            own = np.argmin(dmask, axis=1)  # each point is on exactly one path: its D is empty
            starts = self._path_masks[own] if start == "path" else np.full(len(part), full, dtype=np.int64)
            freed_all = self._loop(block, dmask, own, points, delta, bound, starts)
            share = (time.perf_counter() - t0) / len(part)
            for r, k in enumerate(part):
                t1 = time.perf_counter()
                label = int(self.labels[own[r]])
                freed = int(freed_all[r])
                s0 = int(starts[r])
                calls = n if start is None else 1 + s0.bit_count()  # min_idrs's count: tries (+ the start's weight)
                if freed != full & ~s0:
                    calls += 1  # the final weight, asked when the loop freed a feature
                weight = 0
                if freed:
                    cand = np.flatnonzero((self.labels != label) & ((dmask[r] & ~freed) == 0)).tolist()
                    weight = self._weight(points[r], cand, freed)
                fixed = tuple(f for f in range(n) if not freed >> f & 1)
                done[k] = BatchRow(points[r], label, fixed, weight, calls, time.perf_counter() - t1 + share)
        return [done[k] if k in done else failed[k] for k in range(len(instances))]
