"""Exact "can the class change?" for tree ensembles by branch and bound over boxes of values.

The same question as :class:`~kcxai.explain._ensemble_cnf.EnsembleCnf` (is
there a point with ``x_S = v_S`` that a rival class ``d`` beats the predicted
class ``c`` at?), decided by search instead of SAT, because CDCL solvers are
slow on sums of 30-50-bit integers: on a 100-tree, depth-6 XGBoost model of
adult one deletion step took 1 to 130 s with the adder encoding (Glucose 4
and CaDiCaL 1.9.5 alike), and RC2 (MaxSAT, leaf values as soft weights)
5 to 150 s.

For each rival ``d`` the margin ``score_c - score_d`` is a sum over trees;
``d`` wins where it is ``<= 0`` (``< 0`` when ``c`` wins ties). The search
keeps a *box*: a range of value numbers per free feature (the fixed features
are single values). Its lower bound is the sum over trees of the smallest
value among the leaves whose path meets the box (a relaxation: one tree's
minimum may need other values than another's). A box whose bound stays above
the threshold holds no counterexample; a box in which every tree has a single
leaf meeting it has exactly that margin at all its points (each point reaches
one leaf meeting the box), so it either is a counterexample or is pruned.
Otherwise the free feature on which most of the box's leaves restrict the
box is split in two, at the median of those leaves' boundaries. A path that restricts a feature to a value set that is
not a range is relaxed to the set's hull, which keeps both facts true.

Bounds are computed with numpy over all the leaves at once, in int64 when
the scaled leaf values allow it and in exact Python integers otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from kcxai._deadline import Deadline
from kcxai.explain._ensemble_cnf import ensemble_view

__all__ = ["EnsembleBox"]


class _Rival:
    """The leaves of the trees that separate ``c`` from ``d``: their boxes and margin contributions."""

    __slots__ = ("lo", "hi", "value", "starts", "base", "threshold")

    def __init__(self, lo: np.ndarray, hi: np.ndarray, value: np.ndarray, starts: np.ndarray, base: int,
                 threshold: int) -> None:
        self.lo, self.hi, self.value, self.starts = lo, hi, value, starts
        self.base = base
        self.threshold = threshold  # a counterexample has margin <= threshold


def _leaf_hulls(tree: Any, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per reachable leaf (``tree.leaves`` order) and feature, the lowest and highest value number its path
    allows: a walk down the node arrays with one mask per feature, restored on the way back (the tree's
    paths, whose total size can be quadratic in the tree's, are not built)."""
    a = tree.arrays
    n_leaves = len(tree.leaves)
    lo = np.zeros((n_leaves, len(sizes)), dtype=np.int64)
    hi = np.tile(sizes - 1, (n_leaves, 1))
    allowed = [(1 << int(s)) - 1 for s in sizes]
    lo_now = np.zeros(len(sizes), dtype=np.int64)
    hi_now = np.array(sizes - 1, dtype=np.int64)
    k = 0
    stack: list[tuple[int, int, int, int, int]] = [(a.root, -1, 0, 0, 0)]  # node, feature, mask, low, high
    while stack:
        nid, g, mg, lg, hg = stack.pop()
        if g >= 0:
            if nid >= 0:
                stack.append((-1, g, allowed[g], int(lo_now[g]), int(hi_now[g])))
            allowed[g], lo_now[g], hi_now[g] = mg, lg, hg
            if nid < 0:
                continue
        f = a.feature[nid]
        if f < 0:
            lo[k] = lo_now
            hi[k] = hi_now
            k += 1
            continue
        here = allowed[f]
        for mask, child in a.branches[nid]:
            m = mask & here
            if m:
                stack.append((child, f, m, (m & -m).bit_length() - 1, m.bit_length() - 1))
    return lo, hi


class EnsembleBox:
    """Exact class-change queries on a tree ensemble by branch and bound (see the module docstring).

    Same query interface as :class:`~kcxai.explain._ensemble_cnf.EnsembleCnf`; ``deadline`` limits
    the construction (checked once per tree), and a query's ``deadline`` is checked once per box.
    """

    language = "search"

    def __init__(self, model: Any, *, deadline: Deadline | None = None) -> None:
        self.model = model
        self.view = ensemble_view(model)
        self.space = model.space
        self.sizes = np.asarray([f.size for f in self.space.features], dtype=np.int64)
        n = len(self.sizes)
        # per tree: the hull of every reachable leaf's path, per feature
        self._boxes: list[tuple[np.ndarray, np.ndarray, list[int]]] = []
        for tree in self.view.trees:
            if deadline is not None:
                deadline.check()
            lo, hi = _leaf_hulls(tree, self.sizes)
            self._boxes.append((lo, hi, list(tree.leaves)))
        self._rivals: dict[int, list[_Rival]] = {}
        self._witness: tuple[int, ...] | None = None
        self.nodes = 0

    # -- per predicted class -------------------------------------------------

    def _rivals_of(self, c: int, deadline: Deadline | None) -> list[_Rival]:
        got = self._rivals.get(c)
        if got is not None:
            return got
        view = self.view
        out = []
        for d in range(len(view.base)):
            if d == c:
                continue
            diffs = []
            scale = 1
            for rows in view.rows:  # exact fractions over every leaf: look at the clock once per tree
                if deadline is not None:
                    deadline.check()
                t = {leaf: row[c] - row[d] for leaf, row in rows.items()}
                for x in set(t.values()):
                    scale = scale * x.denominator // math.gcd(scale, x.denominator)
                diffs.append(t)
            base = view.base[c] - view.base[d]
            scale = scale * base.denominator // math.gcd(scale, base.denominator)
            lows, highs, values, starts = [], [], [], []
            b0 = int(base * scale)
            total = abs(b0)
            at = 0
            for (lo, hi, leaves), t in zip(self._boxes, diffs):
                if deadline is not None:
                    deadline.check()
                vals = [int(t[leaf] * scale) for leaf in leaves]
                if len(set(vals)) == 1:  # constant for this pair
                    b0 += vals[0]
                    total += abs(vals[0])
                    continue
                total += max(abs(v) for v in vals)
                lows.append(lo)
                highs.append(hi)
                values.extend(vals)
                starts.append(at)
                at += len(vals)
            dtype: Any = np.int64 if total < 2 ** 62 else object
            n = len(self.sizes)
            out.append(_Rival(
                np.vstack(lows) if lows else np.zeros((0, n), dtype=np.int64),
                np.vstack(highs) if highs else np.zeros((0, n), dtype=np.int64),
                np.asarray(values, dtype=dtype), np.asarray(starts, dtype=np.int64), b0,
                0 if view.prefers(d, c) else -1))
        self._rivals[c] = out
        return out

    # -- queries ---------------------------------------------------------------

    def changes(self, point: Sequence[int], label: int, fixed: Iterable[int], deadline: Deadline | None = None) -> bool:
        """Whether some point with ``x_fixed = point_fixed`` is classified other than ``label``."""
        fixed = set(fixed)
        lo = np.asarray(point, dtype=np.int64).copy()
        hi = lo.copy()
        for i in range(len(lo)):
            if i not in fixed:
                lo[i], hi[i] = 0, self.sizes[i] - 1
        return self.changes_in_box(lo, hi, label, deadline)

    def changes_in_box(self, lo: Sequence[int], hi: Sequence[int], label: int,
                       deadline: Deadline | None = None) -> bool:
        """Whether some point with ``lo[f] <= x_f <= hi[f]`` (value numbers) for every feature is
        classified other than ``label``: the sufficiency of a box of ranges (what widening an
        explanation's conditions asks)."""
        low = np.asarray(lo, dtype=np.int64).copy()
        high = np.asarray(hi, dtype=np.int64).copy()
        for rival in self._rivals_of(label, deadline):
            w = self._search(rival, low, high, label, deadline)
            if w is not None:
                self._witness = w
                return True
        self._witness = None
        return False

    def _search(self, r: _Rival, lo0: np.ndarray, hi0: np.ndarray, label: int,
                deadline: Deadline | None) -> tuple[int, ...] | None:
        if not len(r.starts):
            return tuple(int(x) for x in lo0) if r.base <= r.threshold else None
        # leaves that meet the fixed values; trees keep at least one
        keep = np.all((r.lo <= hi0) & (r.hi >= lo0), axis=1)
        tree_of = np.repeat(np.arange(len(r.starts)), np.diff(np.append(r.starts, len(r.value))))
        llo, lhi, val, tree_of = r.lo[keep], r.hi[keep], r.value[keep], tree_of[keep]
        starts = np.flatnonzero(np.r_[True, tree_of[1:] != tree_of[:-1]])
        free = np.flatnonzero(lo0 != hi0)
        llo, lhi = llo[:, free], lhi[:, free]
        # above any sum of leaf values: no tree minimum is ever this (a tree always meets the box)
        big: Any = np.iinfo(np.int64).max if val.dtype != object else 1 << 4096
        stack = [(lo0[free].copy(), hi0[free].copy())]
        check = deadline.check if deadline is not None else None
        while stack:
            if check is not None:
                check()
            lo, hi = stack.pop()
            self.nodes += 1
            meet = np.all((llo <= hi) & (lhi >= lo), axis=1)
            mins = np.minimum.reduceat(np.where(meet, val, big), starts)
            bound = r.base + (int(mins.sum(dtype=np.int64)) if val.dtype != object else sum(mins.tolist()))
            if bound > r.threshold:
                continue
            if np.all(lo == hi):  # one point (relaxed hulls may still meet several leaves): decide exactly
                out = lo0.copy()
                out[free] = lo
                pt = tuple(int(x) for x in out)
                if self.model.predict_point(pt) != label:
                    return pt
                continue
            single = np.add.reduceat(meet.astype(np.int64), starts)
            if np.all(single == 1):  # every point of the box has this margin
                out = lo0.copy()
                out[free] = lo
                return tuple(int(x) for x in out)
            # split the free feature that most of the box's leaves restrict inside it
            inside = meet[:, None] & ((llo > lo) | (lhi < hi))
            score = inside.sum(axis=0)
            score[lo == hi] = -1
            j = int(np.argmax(score))
            # cut at the median of the leaf boundaries inside the range (halving the value numbers
            # instead needs 16 levels to reach a boundary of a 70,000-value feature)
            cuts = np.concatenate([llo[inside[:, j], j] - 1, lhi[inside[:, j], j]])
            cuts = cuts[(cuts >= lo[j]) & (cuts < hi[j])]
            mid = int(np.median(cuts)) if len(cuts) else (int(lo[j]) + int(hi[j])) // 2
            a_hi, b_lo = hi.copy(), lo.copy()
            a_hi[j], b_lo[j] = mid, mid + 1
            stack.append((b_lo, hi))
            stack.append((lo, a_hi))
        return None

    def core_features(self, point: Sequence[int], fixed: Iterable[int]) -> set[int]:
        """No core: all the fixed features."""
        return set(fixed)

    def model_point(self) -> tuple[int, ...]:
        """After a positive :meth:`changes`: the counterexample found."""
        assert self._witness is not None
        return self._witness

    def differs(self, point: Sequence[int], features: Iterable[int]) -> set[int]:
        """After a positive :meth:`changes`: the features among ``features`` where the counterexample differs."""
        w = self.model_point()
        return {i for i in features if w[i] != point[i]}

    def close(self) -> None:
        """Nothing to free."""
