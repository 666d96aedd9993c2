"""From a library's binary threshold trees to kcxai trees: the shared, linear-time core of every tree importer.

A library tree is a set of flat arrays (:class:`RawTree`): node ``k`` is a leaf
when ``left[k] == -1``, and otherwise sends a point left when its feature
value, read the way the library reads it, is ``<= threshold[k]``. Importers
bring their tests to that form first: XGBoost's ``x < t`` on float32 values is
``x <= t'`` with ``t'`` the float32 just below ``t``.

A feature without an explicit domain becomes numeric, cut by the union of the
thresholds the ensemble uses on it; a node's left branch is then a prefix of
the feature's intervals, found by one binary search (``numpy.searchsorted``
over all the nodes on that feature at once). That keeps the import linear in
the ensemble's size: scanning every interval at every node took more than 11
minutes on a 100-tree default forest on adult.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kcxai._errors import ModelFormatError
from kcxai.models._tree_data import TreeArrays
from kcxai.space import Feature, FeatureSpace

__all__ = ["RawTree", "EnsembleParts", "numeric_space", "trees_over_space", "mask_table", "as_read"]


@dataclass(frozen=True)
class RawTree:
    """A library's binary tree as arrays (node ``k`` is a leaf when ``left[k] == -1``).

    ``threshold[k]`` is a float64 holding the exact value compared with ``<=``
    (after the feature value is rounded to float32 when the space says so).
    """

    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray

    @property
    def internal(self) -> np.ndarray:
        """The ids of the internal nodes."""
        return np.flatnonzero(self.left != -1)


@dataclass(frozen=True)
class EnsembleParts:
    """What an ensemble importer hands the model class (which builds the trees and the model).

    ``node_values[t][k]`` is what leaf ``k`` of tree ``t`` adds (a score per class for a
    forest, one margin for a boosted tree; ``None`` for a hard-voting forest). Boosted
    trees also carry the class each tree adds to (``tree_class``), the initial
    margins (``init``) and the library's tie rule (``ties``).
    """

    space: FeatureSpace
    classes: list[Any]
    trees: list[TreeArrays]
    node_values: list[Any] | None
    tree_class: list[int] | None = None
    init: list[Any] | None = None
    ties: str = "first"
    leaves: list[tuple[int, ...]] | None = None  # per tree, as in TreeParts (trees valid by construction)


def as_read(values: Sequence[float], float32: bool) -> np.ndarray:
    """Domain values as the library reads them (rounded to float32 or kept as float64)."""
    arr = np.asarray(values, dtype=np.float64)
    return arr.astype(np.float32).astype(np.float64) if float32 else arr


def numeric_space(names: Sequence[str], domains: Sequence[Sequence[float] | None], trees: Sequence[RawTree],
                  distribution: Any, *, float32: bool) -> FeatureSpace:
    """Categorical features for given domains; numeric ones cut by the union of the trees' thresholds."""
    n = len(names)
    per_feature: list[list[np.ndarray]] = [[] for _ in range(n)]
    for t in trees:
        inner = t.internal
        feats, thrs = t.feature[inner], t.threshold[inner]
        for i in np.unique(feats):
            per_feature[int(i)].append(thrs[feats == i])
    features = []
    for i in range(n):
        dom = domains[i]
        if dom is None:
            cuts = np.unique(np.concatenate(per_feature[i])) if per_feature[i] else np.empty(0)
            features.append(Feature.numeric(names[i], [float(x) for x in cuts], float32=float32))
        else:
            features.append(Feature.categorical(names[i], list(dom)))
    return FeatureSpace(features, distribution=distribution)


class _MaskTable:
    """Per feature: where a threshold splits the feature's values, and the value masks of both sides.

    Values are numbered in increasing order as the library reads them (the
    intervals of a numeric feature are already in that order); ``x <= t`` takes
    the first ``p`` of them, ``p`` found by binary search. The masks of a
    split position are made once per import and shared by every node that
    uses it: a mask on a feature with 70,000 intervals is 9 kB.
    """

    def __init__(self, space: FeatureSpace, domains: Sequence[Sequence[float] | None], float32: bool) -> None:
        self.keys: list[np.ndarray] = []
        self.order: list[list[int] | None] = []  # value number of each sorted position (None: the identity)
        self.full: list[int] = []
        self.sizes: list[int] = []
        self._masks: list[tuple[dict[int, int], dict[int, int]]] = []
        for feature, dom in zip(space.features, domains):
            self.full.append((1 << feature.size) - 1)
            self.sizes.append(feature.size)
            self._masks.append(({}, {}))
            if dom is None:
                # numeric: interval j is (t_{j-1}, t_j]; x <= t_j takes intervals 0..j
                self.keys.append(np.asarray(feature.thresholds, dtype=np.float64))
                self.order.append(None)
            else:
                vals = as_read(dom, float32)
                order = np.argsort(vals, kind="stable")
                self.keys.append(vals[order])
                self.order.append(order.tolist())

    def positions(self, feature: int, thresholds: np.ndarray) -> np.ndarray:
        """Per threshold, how many of the feature's values (in increasing order) satisfy ``x <= threshold``."""
        if self.order[feature] is None:  # every threshold is one of the feature's cuts: t_j leaves j + 1 intervals
            return np.searchsorted(self.keys[feature], thresholds, side="left") + 1
        return np.searchsorted(self.keys[feature], thresholds, side="right")

    def masks(self, feature: int, positions: list[int]) -> tuple[list[int], list[int]]:
        """The value masks of the left (``x <= t``) and right sides of splits at the given positions."""
        left, right = self._masks[feature]
        order = self.order[feature]
        full, size = self.full[feature], self.sizes[feature]
        for p in set(positions).difference(left):
            m = full >> (size - p) if order is None else sum(1 << k for k in order[:p])
            left[p] = m
            right[p] = full ^ m  # xor: "& ~m" on a 70,000-bit mask is 5x slower
        return list(map(left.__getitem__, positions)), list(map(right.__getitem__, positions))


def trees_over_space(raws: Sequence[RawTree], space: FeatureSpace, domains: Sequence[Sequence[float] | None],
                     labels: Sequence[Sequence[int] | np.ndarray], *, float32: bool,
                     table: _MaskTable | None = None) -> list[tuple[TreeArrays, tuple[int, ...]]]:
    """Per library tree, the arrays of a kcxai tree (node ids = the library's) over ``space`` and its
    reachable leaves in the order of :attr:`DecisionTree.paths <kcxai.DecisionTree.paths>`.

    ``labels[t][k]`` is the class index of leaf ``k`` of tree ``t`` (ignored at
    internal nodes). The trees are valid by construction (each test splits the
    values that reach it in two), so the tree class need not check them again.
    All the trees are processed at once: per feature one binary search over all
    its nodes, per depth one step of the reachability pass over all the trees.
    """
    if table is None:
        table = _MaskTable(space, domains, float32)
    if not raws:
        return []
    counts = np.array([len(r.left) for r in raws], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    left = np.concatenate([r.left for r in raws])
    right = np.concatenate([r.right for r in raws])
    is_leaf = left == -1
    feature = np.where(is_leaf, -1, np.concatenate([r.feature for r in raws]))
    threshold = np.concatenate([r.threshold for r in raws])
    n = len(left)
    inner = np.flatnonzero(~is_leaf)
    feats_inner = feature[inner]
    pos = np.zeros(n, dtype=np.int64)
    # the branches of every node, internal ones set per feature by a map (the loop runs in C)
    br: list[tuple[tuple[int, int], ...]] = [()] * n
    for i in np.unique(feats_inner).tolist():
        nodes = inner[feats_inner == i]
        p = table.positions(i, threshold[nodes])
        pos[nodes] = p
        lm, rm = table.masks(i, p.tolist())
        pairs = zip(zip(lm, left[nodes].tolist()), zip(rm, right[nodes].tolist()))
        collections.deque(map(br.__setitem__, nodes.tolist(), pairs), maxlen=0)
    feat = feature.tolist()
    lab = np.where(is_leaf, np.concatenate([np.asarray(x, dtype=np.int64) for x in labels]), -1).tolist()
    shift = np.repeat(starts, counts)
    leaves = _reachable_leaves(np.where(is_leaf, -1, left + shift), np.where(is_leaf, -1, right + shift), feature,
                               pos, starts, counts, table.sizes)
    out = []
    for t, (s, c) in enumerate(zip(starts.tolist(), counts.tolist())):
        out.append((TreeArrays(tuple(feat[s:s + c]), tuple(lab[s:s + c]), tuple(br[s:s + c]), 0), leaves[t]))
    return out


def _reachable_leaves(left: np.ndarray, right: np.ndarray, feature: np.ndarray, pos: np.ndarray,
                      roots: np.ndarray, counts: np.ndarray, sizes: list[int]) -> list[tuple[int, ...]]:
    """Per tree, the leaves some point reaches, depth first with the right branch first (the paths' order).

    The nodes of all the trees are numbered together (``left``/``right``: global
    ids, -1 at a leaf). Along a path the values a feature may still take are a
    range ``[lo, hi)`` of positions in increasing order (every test cuts that
    order), so a child is reachable when its side of the split meets the range.
    The pass goes depth by depth over all the trees at once; then each reached
    leaf's rank from the left is counted from the reachable leaves per subtree,
    and the paths' order is that rank reversed.
    """
    n = len(left)
    cur = roots
    lo = np.zeros((len(cur), len(sizes)), dtype=np.int32)  # per node of the current depth: its ranges
    hi = np.tile(np.asarray(sizes, dtype=np.int32), (len(cur), 1))
    reached = np.zeros(n, dtype=bool)
    reached[cur] = True
    n_reached = len(cur)
    levels: list[np.ndarray] = []  # the internal nodes reached, depth by depth
    while cur.size:
        rows = np.flatnonzero(left[cur] != -1)
        if not rows.size:
            break
        c = cur[rows]
        levels.append(c)
        f, p = feature[c], pos[c].astype(np.int32)
        a, b = lo[rows, f], hi[rows, f]
        go_l, go_r = a < p, p < b
        k = int(np.count_nonzero(go_l))
        take = np.concatenate([rows[go_l], rows[go_r]])  # one gather for both children
        lo, hi = lo[take], hi[take]
        hi[np.arange(k), f[go_l]] = np.minimum(b, p)[go_l]
        lo[np.arange(k, len(take)), f[go_r]] = np.maximum(a, p)[go_r]
        cur = np.concatenate([left[c[go_l]], right[c[go_r]]])
        if reached[cur].any():  # a cycle (a node twice in one depth is caught below)
            raise ModelFormatError("A library tree reaches a node twice: its arrays do not form a tree.")
        reached[cur] = True
        n_reached += len(cur)
    if np.count_nonzero(reached) != n_reached:
        raise ModelFormatError("A library tree reaches a node twice: its arrays do not form a tree.")
    leaf = reached & (left == -1)
    below = leaf.astype(np.int64)  # reachable leaves per subtree
    for c in reversed(levels):
        below[c] = below[left[c]] + below[right[c]]
    rank = np.zeros(n, dtype=np.int64)  # reachable leaves to the left
    for c in levels:
        rank[left[c]] = rank[c]
        rank[right[c]] = rank[c] + below[left[c]]
    ids = np.flatnonzero(leaf)
    tree = np.repeat(np.arange(len(roots)), counts)[ids]
    totals = below[roots]
    base = np.concatenate([[0], np.cumsum(totals)[:-1]]).astype(np.int64)
    order = np.empty(len(ids), dtype=np.int64)
    order[base[tree] + totals[tree] - 1 - rank[ids]] = ids - roots[tree]
    flat = order.tolist()
    return [tuple(flat[s:s + k]) for s, k in zip(base.tolist(), totals.tolist())]


def mask_table(space: FeatureSpace, domains: Sequence[Sequence[float] | None], *, float32: bool) -> _MaskTable:
    """The per-feature threshold lookup shared by all the trees of one import."""
    return _MaskTable(space, domains, float32)
