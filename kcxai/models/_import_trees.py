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

import contextlib
import gc
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kcxai.models._tree_data import TreeArrays
from kcxai.space import Feature, FeatureSpace

__all__ = ["RawTree", "EnsembleParts", "numeric_space", "tree_over_space", "mask_table", "as_read", "gc_paused"]


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
    """Per feature: the value mask of ``x <= threshold`` for any threshold, by binary search."""

    def __init__(self, space: FeatureSpace, domains: Sequence[Sequence[float] | None], float32: bool) -> None:
        self.keys: list[np.ndarray] = []
        self.prefix: list[list[int]] = []
        self.full: list[int] = []
        for feature, dom in zip(space.features, domains):
            size = feature.size
            self.full.append((1 << size) - 1)
            if dom is None:
                # numeric: interval j is (t_{j-1}, t_j]; x <= t_j takes intervals 0..j
                self.keys.append(np.asarray(feature.thresholds, dtype=np.float64))
                self.prefix.append([(1 << (j + 1)) - 1 for j in range(size)])
            else:
                vals = as_read(dom, float32)
                order = np.argsort(vals, kind="stable")
                masks = [0]
                for k in order:
                    masks.append(masks[-1] | (1 << int(k)))
                self.keys.append(vals[order])
                self.prefix.append(masks)

    def left_masks(self, feature: int, thresholds: np.ndarray, numeric: bool) -> list[int]:
        keys, prefix = self.keys[feature], self.prefix[feature]
        if numeric:  # every threshold is one of the feature's cuts
            pos = np.searchsorted(keys, thresholds, side="left")
            return [prefix[p] for p in pos.tolist()]
        pos = np.searchsorted(keys, thresholds, side="right")  # number of values <= threshold
        return [prefix[p] for p in pos.tolist()]


def tree_over_space(raw: RawTree, space: FeatureSpace, domains: Sequence[Sequence[float] | None],
                    labels: Sequence[int] | np.ndarray, *, float32: bool,
                    table: _MaskTable | None = None) -> TreeArrays:
    """The arrays of a kcxai tree (node ids = the library's) for ``raw`` over ``space``.

    ``labels[k]`` is the class index of leaf ``k`` (ignored at internal nodes).
    Pass one ``table`` (:func:`mask_table`) for all the trees of an ensemble.
    """
    if table is None:
        table = _MaskTable(space, domains, float32)
    n = len(raw.left)
    left_l = raw.left.tolist()
    right_l = raw.right.tolist()
    feat_np = raw.feature
    inner = raw.internal
    lm: dict[int, int] = {}
    feats_inner = feat_np[inner]
    for i in np.unique(feats_inner).tolist():
        nodes = inner[feats_inner == i]
        masks = table.left_masks(i, raw.threshold[nodes], domains[i] is None)
        lm.update(zip(nodes.tolist(), masks))
    feat: list[int] = []
    lab: list[int] = []
    br: list[tuple[tuple[int, int], ...]] = []
    full = table.full
    feat_l = feat_np.tolist()
    for k in range(n):
        a = left_l[k]
        if a == -1:
            feat.append(-1)
            lab.append(int(labels[k]))
            br.append(())
            continue
        i = feat_l[k]
        m = lm[k]
        feat.append(i)
        lab.append(-1)
        br.append(((m, a), (full[i] ^ m, right_l[k])))  # xor: "& ~m" on a 70,000-bit mask is 5x slower
    return TreeArrays(tuple(feat), tuple(lab), tuple(br), 0)


def mask_table(space: FeatureSpace, domains: Sequence[Sequence[float] | None], *, float32: bool) -> _MaskTable:
    """The per-feature threshold lookup shared by all the trees of one import."""
    return _MaskTable(space, domains, float32)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of acyclic tuples are built.

    The objects built (node arrays, paths) hold no cycles, but each allocation
    burst triggers full collections that rescan everything alive: on a 100-tree
    adult forest the collector took about a third of the import time.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
