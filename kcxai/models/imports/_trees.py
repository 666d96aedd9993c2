"""From a library's binary threshold trees to kcxai trees: the shared, linear-time core of every tree importer.

A library tree is a set of flat arrays (:class:`RawTree`): node ``k`` is a leaf
when ``left[k] == -1``, and otherwise sends a point left when its feature
value, read the way the library reads it, is ``<= threshold[k]`` (and a missing
value, NaN, left when ``missing_left[k]``). Importers bring their tests to that
form first: XGBoost's ``x < t`` on float32 values is ``x <= t'`` with ``t'`` the
float32 just below ``t``. An importer hands over the whole ensemble as a
:class:`RawEnsemble`.

The trees then meet a feature space. Each internal node's left side is
resolved to the values of the feature it tests (:class:`Splits`), in one of two
forms:

* a *ranged* feature (numeric, :class:`Ranged`): its intervals are cut by
  increasing cut points, and the left side is a prefix of them (or a suffix, for
  a test that a decreasing map of the feature reaches the model through), plus
  the feature's missing value when it has one and the node sends NaN left. A
  node's position is found by one binary search (``numpy.searchsorted`` over all
  the nodes on that feature at once): scanning every interval at every node took
  more than 11 minutes on a 100-tree default forest on adult;
* a *masked* feature (finite values, :class:`Masked`): the left side is any set
  of values, one boolean row per distinct set (a one-hot column of a pipeline
  sends one category one way and the rest the other).

:func:`tree_arrays` turns the resolved nodes into kcxai tree arrays and the
reachable leaves of every tree, all trees at once: per depth one step of the
reachability pass (value ranges for ranged features, packed value masks for
masked ones). :func:`plain_parts` is the import of an estimator over its own
input columns (``from_sklearn``); pipelines compose the same nodes with their
encoders (:mod:`kcxai.models.imports._pipeline_trees`).
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from kcxai._cuts import float32_cuts
from kcxai._errors import ModelFormatError, ProblemTooLargeError
from kcxai.models._tree_data import TreeArrays
from kcxai.space import Feature, FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike

__all__ = ["RawTree", "RawEnsemble", "EnsembleParts", "Ranged", "Masked", "Plan", "Splits", "FlatNodes",
           "tree_arrays", "check_mask_memory", "MASK_MEMORY_LIMIT", "plain_parts", "parts_from", "numeric_cuts",
           "cut_positions", "as_read"]


@dataclass(frozen=True)
class RawTree:
    """A library's binary tree as arrays (node ``k`` is a leaf when ``left[k] == -1``).

    ``threshold[k]`` is a float64 holding the exact value compared with ``<=``
    (after the feature value is rounded to float32 when the library does so);
    ``missing_left[k]`` says where a missing value (NaN) goes, ``None`` when the
    library has no rule for NaN.
    """

    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    missing_left: np.ndarray | None = None

    @property
    def internal(self) -> np.ndarray:
        """The ids of the internal nodes."""
        return np.flatnonzero(self.left != -1)


@dataclass(frozen=True)
class RawEnsemble:
    """A library's fitted trees before they meet a feature space: what every tree importer reads.

    ``labels[t][k]`` is the class index of leaf ``k`` of tree ``t`` (zeros for
    boosted trees); ``node_values[t][k]`` what leaf ``k`` adds (class scores for a
    soft-voting forest, a margin for a boosted tree, ``None`` for one tree or a
    hard vote). ``float32``: the library rounds its input to float32 before
    comparing. ``nan_rule``: how the library routes NaN, in words (empty when it
    refuses NaN). Boosted trees also carry the class each tree adds to
    (``tree_class``), the initial margins (``init``) and the tie rule (``ties``).
    """

    classes: list[Any]
    trees: list[RawTree]
    labels: list[np.ndarray]
    node_values: list[Any] | None
    float32: bool
    n_features: int
    nan_rule: str = ""
    tree_class: list[int] | None = None
    init: list[Any] | None = None
    ties: str = "first"


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
    with np.errstate(over="ignore"):
        return arr.astype(np.float32).astype(np.float64) if float32 else arr


# -- how a feature's values are numbered ------------------------------------------------

@dataclass(frozen=True)
class Ranged:
    """A numeric feature: ``len(n_cuts) + 1`` intervals in increasing order, then its missing value when
    ``missing`` (the feature's last value)."""

    n_cuts: int
    missing: bool = False

    @property
    def n_intervals(self) -> int:
        return self.n_cuts + 1

    @property
    def size(self) -> int:
        return self.n_cuts + 1 + int(self.missing)


@dataclass(frozen=True)
class Masked:
    """A feature of ``size`` values whose tests send any subset of them left."""

    size: int


Plan = Union[Ranged, Masked]


@dataclass(frozen=True)
class FlatNodes:
    """The nodes of all the trees numbered together (tree ``t`` holds ids ``starts[t] ..``)."""

    starts: np.ndarray
    counts: np.ndarray
    left: np.ndarray  # global ids, -1 at a leaf
    right: np.ndarray
    feature: np.ndarray  # the library's input column, -1 at a leaf
    threshold: np.ndarray
    missing_left: np.ndarray  # False where the library has no rule
    local_left: np.ndarray  # the trees' own ids
    local_right: np.ndarray

    @classmethod
    def of(cls, raws: Sequence[RawTree], float32: bool = False) -> "FlatNodes":
        """The nodes of ``raws``; with ``float32`` (the library rounds its input to float32), each threshold is
        replaced by the float32 at or below it (:func:`kcxai._cuts.float32_cuts`), which splits every float32
        value alike: two thresholds between the same two float32 values become one cut, so no interval of a
        feature is left without a value the library can read."""
        counts = np.array([len(r.left) for r in raws], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        left = np.concatenate([r.left for r in raws]).astype(np.int64)
        right = np.concatenate([r.right for r in raws]).astype(np.int64)
        leaf = left == -1
        shift = np.repeat(starts, counts)
        feature = np.where(leaf, -1, np.concatenate([r.feature for r in raws]).astype(np.int64))
        ml = np.concatenate([np.zeros(len(r.left), dtype=bool) if r.missing_left is None
                             else np.asarray(r.missing_left, dtype=bool) for r in raws])
        return cls(starts, counts, np.where(leaf, -1, left + shift), np.where(leaf, -1, right + shift), feature,
                   _cuts_as_read(np.concatenate([r.threshold for r in raws]).astype(np.float64), float32), ml, left,
                   right)

    def on(self, column: int) -> np.ndarray:
        """The global ids of the internal nodes testing the library's input ``column``."""
        return np.flatnonzero(self.feature == column)

    def by_column(self) -> dict[int, np.ndarray]:
        """The internal nodes grouped by the input column they test."""
        inner = np.flatnonzero(self.feature >= 0)
        cols = self.feature[inner]
        order = np.argsort(cols, kind="stable")
        cols, inner = cols[order], inner[order]
        keys, first = np.unique(cols, return_index=True)
        return {int(k): part for k, part in zip(keys.tolist(), np.split(inner, first[1:]))}


class Splits:
    """Per node (global ids): the kcxai feature it tests and the values its left side holds.

    Ranged features: ``pos`` (the left side is intervals ``[0, pos)``, or ``[pos, n)``
    when ``upper``) and ``missing_left``. Masked features: ``row``, a distinct
    boolean row of the feature's values (:meth:`masked`).
    """

    def __init__(self, n_nodes: int, plans: Sequence[Plan]) -> None:
        self.plans = list(plans)
        self.feat = np.full(n_nodes, -1, dtype=np.int64)
        self.pos = np.zeros(n_nodes, dtype=np.int64)
        self.upper = np.zeros(n_nodes, dtype=bool)
        self.missing_left = np.zeros(n_nodes, dtype=bool)
        self.row = np.full(n_nodes, -1, dtype=np.int64)
        self.rows: dict[int, np.ndarray] = {}  # per masked feature: its distinct left rows (n_rows x size)

    def ranged(self, nodes: np.ndarray, f: int, pos: np.ndarray, *, upper: Any = False,
               missing_left: Any = False) -> None:
        """Nodes testing ranged feature ``f``: left side ``[0, pos)`` (``upper``: ``[pos, n)``)."""
        self.feat[nodes] = f
        self.pos[nodes] = pos
        self.upper[nodes] = upper
        self.missing_left[nodes] = missing_left

    def masked(self, nodes: np.ndarray, f: int, left: np.ndarray) -> None:
        """Nodes testing masked feature ``f``: ``left[j]`` the boolean row of the values node ``nodes[j]``
        sends left. Equal rows are stored once."""
        self.feat[nodes] = f
        uniq, inverse = np.unique(np.asarray(left, dtype=bool).reshape(len(nodes), -1), axis=0, return_inverse=True)
        old = self.rows.get(f)
        base = 0 if old is None else len(old)
        self.rows[f] = uniq if old is None else np.concatenate([old, uniq])
        self.row[nodes] = base + inverse.ravel()


def tree_arrays(flat: FlatNodes, splits: Splits,
                labels: Sequence[np.ndarray]) -> list[tuple[TreeArrays, tuple[int, ...]]]:
    """Per tree, the arrays of a kcxai tree (node ids = the library's) and its reachable leaves in the order of
    :attr:`DecisionTree.paths <kcxai.DecisionTree.paths>`.

    ``labels[t][k]`` is the class index of leaf ``k`` of tree ``t``. The trees are valid by construction (each
    test splits the values that reach it in two), so the tree class need not check them again.
    """
    n = len(flat.left)
    is_leaf = flat.left == -1
    br = _branches(flat, splits, n)
    feat = np.where(is_leaf, -1, splits.feat).tolist()
    lab = np.where(is_leaf, np.concatenate([np.asarray(x, dtype=np.int64) for x in labels]), -1).tolist()
    leaves = _reachable_leaves(flat, splits)
    out = []
    for t, (s, c) in enumerate(zip(flat.starts.tolist(), flat.counts.tolist())):
        out.append((TreeArrays(tuple(feat[s:s + c]), tuple(lab[s:s + c]), tuple(br[s:s + c]), 0), leaves[t]))
    return out


#: The most memory the value masks of an imported ensemble's ranged splits may take (bytes): each distinct
#: split of a numeric feature with ``n`` intervals is two ``n``-bit integers, so the masks grow with the square
#: of the feature's cuts (an ExtraTrees forest draws a new threshold at every node: 100 default trees on
#: adult cut one column about 490,000 times, some 60 GB of masks).
MASK_MEMORY_LIMIT = 4 * 2**30


def check_mask_memory(flat: FlatNodes, splits: Splits, names: Sequence[str], limit: int | None = None) -> None:
    """Refuse, before building them, value masks that would take more than ``limit`` bytes (default
    :data:`MASK_MEMORY_LIMIT`), naming the features with the most cuts and what would work."""
    limit = MASK_MEMORY_LIMIT if limit is None else limit
    inner = np.flatnonzero(flat.left != -1)
    feats = splits.feat[inner]
    need, worst = 0, []
    for f in np.unique(feats).tolist():
        plan = splits.plans[f]
        if not isinstance(plan, Ranged):
            continue
        nodes = inner[feats == f]
        keys = np.unique(splits.pos[nodes] * 4 + splits.upper[nodes] * 2 + splits.missing_left[nodes])
        cost = int(keys.size) * 2 * (plan.size // 8 + 32)  # two ints per distinct split, with their headers
        need += cost
        worst.append((cost, f, plan.n_cuts))
    if need <= limit:
        return
    worst.sort(reverse=True)
    named = ", ".join(f"{names[f]!r} ({cuts} cuts)" for _, f, cuts in worst[:3])
    raise ProblemTooLargeError(
        f"The trees cut numeric features at so many distinct thresholds that their value masks would take about "
        f"{need / 2**30:.1f} GiB (more than {limit / 2**30:.0f} GiB; the masks grow with the square of a feature's "
        f"cuts): {named}. What would work: fewer or shallower trees (max_depth, min_samples_leaf, max_leaf_nodes); "
        "a RandomForest rather than ExtraTrees (its thresholds fall between data values, which trees share); or the "
        "column binned (KBinsDiscretizer) or rounded before fitting.")


def _row_int(row: np.ndarray) -> int:
    return int.from_bytes(np.packbits(row, bitorder="little").tobytes(), "little")


def _branches(flat: FlatNodes, splits: Splits, n: int) -> list[tuple[tuple[int, int], ...]]:
    """Per node, its two edges ``((left mask, left child), (right mask, right child))`` (local child ids);
    each distinct mask is one shared int (a mask on a feature with 70,000 intervals is 9 kB)."""
    br: list[tuple[tuple[int, int], ...]] = [()] * n
    inner = np.flatnonzero(flat.left != -1)
    feats = splits.feat[inner]
    for f in np.unique(feats).tolist():
        nodes = inner[feats == f]
        plan = splits.plans[f]
        full = (1 << plan.size) - 1
        if isinstance(plan, Ranged):
            key = splits.pos[nodes] * 4 + splits.upper[nodes] * 2 + splits.missing_left[nodes]
            uniq, inverse = np.unique(key, return_inverse=True)
            lefts = []
            every = (1 << plan.n_intervals) - 1
            for k in uniq.tolist():
                p, up, ml = k >> 2, k >> 1 & 1, k & 1
                m = (1 << p) - 1
                if up:
                    m = every ^ m
                if ml and plan.missing:
                    m |= 1 << plan.n_intervals
                lefts.append(m)
        else:
            rows = splits.rows[f]
            lefts = [_row_int(r) for r in rows]
            inverse = splits.row[nodes]
        rights = [full ^ m for m in lefts]
        idx = np.asarray(inverse).ravel().tolist()
        lm = list(map(lefts.__getitem__, idx))
        rm = list(map(rights.__getitem__, idx))
        pairs = zip(zip(lm, flat.local_left[nodes].tolist()), zip(rm, flat.local_right[nodes].tolist()))
        collections.deque(map(br.__setitem__, nodes.tolist(), pairs), maxlen=0)
    return br


class _Reach:
    """The per-feature constants of the reachability pass: slots of ranged features, the packed value rows of
    masked ones (over all masked features' values laid end to end)."""

    def __init__(self, splits: Splits) -> None:
        plans = splits.plans
        self.is_ranged = np.array([isinstance(p, Ranged) for p in plans] + [True], dtype=bool)
        self.slot = np.zeros(len(plans) + 1, dtype=np.int64)
        ranged = [(i, p) for i, p in enumerate(plans) if isinstance(p, Ranged)]
        self.slot[[i for i, _ in ranged]] = np.arange(len(ranged))
        self.n_int = np.array([p.n_intervals for _, p in ranged] or [1], dtype=np.int32)
        self.miss0 = np.array([p.missing for _, p in ranged] or [False], dtype=np.bool_)
        offsets: dict[int, int] = {}
        width = 0
        for i, p in enumerate(plans):
            if isinstance(p, Masked):
                offsets[i] = width
                width += p.size
        self.width = width
        # every masked row of every feature, full width: left rows and right rows (the rest of the feature)
        lefts, rights = [np.zeros((1, max(width, 1)), dtype=bool)], [np.zeros((1, max(width, 1)), dtype=bool)]
        self.base: dict[int, int] = {}
        count = 1
        for f, rows in splits.rows.items():
            o, size = offsets[f], plans[f].size
            lw = np.zeros((len(rows), max(width, 1)), dtype=bool)
            rw = np.zeros_like(lw)
            lw[:, o:o + size] = rows
            rw[:, o:o + size] = ~rows
            lefts.append(lw)
            rights.append(rw)
            self.base[f] = count
            count += len(rows)
        self.left_rows = np.packbits(np.concatenate(lefts), axis=1, bitorder="little")
        self.right_rows = np.packbits(np.concatenate(rights), axis=1, bitorder="little")
        self.row_of = np.zeros(len(splits.row), dtype=np.int64)  # global row per node (0: none)
        for f in splits.rows:
            nodes = np.flatnonzero((splits.feat == f) & (splits.row >= 0))
            self.row_of[nodes] = self.base[f] + splits.row[nodes]


def _reachable_leaves(flat: FlatNodes, splits: Splits) -> list[tuple[int, ...]]:
    """Per tree, the leaves some point reaches, depth first with the right branch first (the paths' order).

    Along a path, a ranged feature may still take a range ``[lo, hi)`` of its intervals (every test cuts their
    order) and, when it has one, its missing value; a masked feature a set of values (packed bits). A child is
    reachable when its side of the split meets what the path allows. The pass goes depth by depth over all the
    trees at once; then each reached leaf's rank from the left is counted from the reachable leaves per
    subtree, and the paths' order is that rank reversed.
    """
    left, right, roots = flat.left, flat.right, flat.starts
    n = len(left)
    rc = _Reach(splits)
    m = len(roots)
    lo = np.zeros((m, len(rc.n_int)), dtype=np.int32)
    hi = np.tile(rc.n_int, (m, 1))
    miss = np.tile(rc.miss0, (m, 1))
    allow = np.tile(np.packbits(np.ones(max(rc.width, 1), dtype=bool), bitorder="little"), (m, 1))
    cur = roots
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
        f = splits.feat[c]
        isr = rc.is_ranged[f]
        s = rc.slot[f]
        a, b = lo[rows, s], hi[rows, s]
        p = splits.pos[c].astype(np.int32)
        up, ml, ms = splits.upper[c], splits.missing_left[c], miss[rows, s]
        low_part, high_part = a < np.minimum(b, p), np.maximum(a, p) < b
        r_id = rc.row_of[c]
        mask_l = (allow[rows] & rc.left_rows[r_id]).any(axis=1)
        mask_r = (allow[rows] & rc.right_rows[r_id]).any(axis=1)
        go_l = np.where(isr, np.where(up, high_part, low_part) | (ms & ml), mask_l)
        go_r = np.where(isr, np.where(up, low_part, high_part) | (ms & ~ml), mask_r)
        k = int(np.count_nonzero(go_l))
        take = np.concatenate([rows[go_l], rows[go_r]])  # one gather for both children
        lo, hi, miss, allow = lo[take], hi[take], miss[take], allow[take]
        for side, sel, offset in ((0, go_l, 0), (1, go_r, k)):
            j = np.arange(offset, offset + int(np.count_nonzero(sel)))
            r_sel, s_sel, up_sel = isr[sel], s[sel], up[sel]
            # ranged: the side's intervals narrow the range; the missing value stays if it goes this way
            low_side = r_sel & (up_sel == bool(side))  # this side is [.., p): the range's top drops to p
            high_side = r_sel & (up_sel != bool(side))
            hi[j[low_side], s_sel[low_side]] = np.minimum(b[sel], p[sel])[low_side]
            lo[j[high_side], s_sel[high_side]] = np.maximum(a[sel], p[sel])[high_side]
            keep = ml[sel] if side == 0 else ~ml[sel]
            miss[j[r_sel], s_sel[r_sel]] = (ms[sel] & keep)[r_sel]
            other = rc.right_rows if side == 0 else rc.left_rows
            mj = j[~r_sel]
            allow[mj] &= ~other[r_id[sel][~r_sel]]
        cur = np.concatenate([left[c[go_l]], right[c[go_r]]])
        if reached[cur].any():  # a cycle (a node twice in one depth is caught below)
            raise ModelFormatError("A library tree reaches a node twice: its arrays do not form a tree.")
        reached[cur] = True
        n_reached += len(cur)
    if np.count_nonzero(reached) != n_reached:
        raise ModelFormatError("A library tree reaches a node twice: its arrays do not form a tree.")
    return _leaf_order(flat, reached, levels)


def _leaf_order(flat: FlatNodes, reached: np.ndarray, levels: list[np.ndarray]) -> list[tuple[int, ...]]:
    """The reached leaves of each tree in the paths' order (right branch first), from their ranks."""
    left, right, roots, counts = flat.left, flat.right, flat.starts, flat.counts
    n = len(left)
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
    flat_order = order.tolist()
    return [tuple(flat_order[s:s + k]) for s, k in zip(base.tolist(), totals.tolist())]


# -- an estimator over its own input columns ------------------------------------------------

def plain_parts(raw: RawEnsemble, names: Sequence[str], domains: Sequence[Sequence[float] | None],
                distribution: DistributionLike) -> EnsembleParts:
    """The parts of an ensemble over its own input columns: categorical features for given domains, numeric
    ones cut by the union of the trees' thresholds (the values read as the library reads them)."""
    flat = FlatNodes.of(raw.trees, raw.float32)
    groups = flat.by_column()
    features: list[Feature] = []
    plans: list[Plan] = []
    for i in range(raw.n_features):
        dom = domains[i]
        if dom is None:
            cuts = numeric_cuts(flat.threshold[groups.get(i, np.empty(0, dtype=np.int64))])
            features.append(Feature.numeric(names[i], cuts.tolist(), float32=raw.float32))
            plans.append(Ranged(len(cuts)))
        else:
            features.append(Feature.categorical(names[i], list(dom)))
            plans.append(Masked(len(dom)))
    splits = Splits(len(flat.left), plans)
    for i, nodes in groups.items():
        t = flat.threshold[nodes]
        dom = domains[i]
        if dom is None:
            splits.ranged(nodes, i, cut_positions(np.asarray(features[i].thresholds), t))
        else:
            vals = as_read(dom, raw.float32)
            splits.masked(nodes, i, vals[None, :] <= t[:, None])
    space = FeatureSpace(features, distribution=distribution)
    return parts_from(raw, space, flat, splits)


def _cuts_as_read(thresholds: np.ndarray, float32: bool) -> np.ndarray:
    return float32_cuts(thresholds) if float32 else thresholds


def numeric_cuts(thresholds: np.ndarray) -> np.ndarray:
    """The cuts of a numeric feature: the distinct finite thresholds (a library tree trained with missing values
    may test ``x <= inf``: every number one way, NaN the other)."""
    return np.unique(thresholds[np.isfinite(thresholds)])


def cut_positions(cuts: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """The number of intervals ``x <= t`` takes, per threshold ``t`` (all of them for ``inf``, none for ``-inf``)."""
    return np.where(thresholds == np.inf, len(cuts) + 1,
                    np.where(thresholds == -np.inf, 0, np.searchsorted(cuts, thresholds, side="left") + 1))


def parts_from(raw: RawEnsemble, space: FeatureSpace, flat: FlatNodes, splits: Splits) -> EnsembleParts:
    """The :class:`EnsembleParts` of resolved nodes (refused when their value masks would not fit in
    :data:`MASK_MEMORY_LIMIT`)."""
    check_mask_memory(flat, splits, space.names)
    trees = tree_arrays(flat, splits, raw.labels)
    return EnsembleParts(space, list(raw.classes), [a for a, _ in trees], raw.node_values, raw.tree_class,
                         raw.init, raw.ties, leaves=[lv for _, lv in trees])
