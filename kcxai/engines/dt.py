"""The native decision-tree oracle (language ``"dt"``): counting on the tree itself.

Each node's region ``{x : x_f in A_f(node)}`` (``A_f`` the values its
ancestors allow) has an exact integer weight, and so has the part of it each
class covers (the paper's path counts ``||R_j|| = d_1 x ... x d_m`` summed
over the leaves below); both are computed once. A query for ``S`` descends
from the root only into subtrees that test a fixed feature, following at a
fixed feature the branch holding ``v_f``; any other subtree contributes its
other-class weight times ``prod_{f in S} w(v_f) / w(A_f)`` (exact divisions).
So a query visits the nodes above tests of fixed features, not the whole tree.

Algorithm 1's deletion loop asks one such query per feature tried
(:class:`~kcxai.oracle.GenericSession`). An earlier incremental session over
the paths (updating per-path counters when a feature is freed) was slower than
these pruned queries on sklearn trees of 1k and 10k nodes, and was removed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kcxai.arithmetic import Bound, Probability, Weight
from kcxai.engines._path_table import PathSession, PathTable
from kcxai.engines._tree_batch import TreeBatch
from kcxai.distribution import ProductWeights
from kcxai.oracle import BatchRow, Box, OracleSession, SessionBase, box_weight
from kcxai._types import Values

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.compilers.compiled import CompiledModel
    from kcxai.models.tree import DecisionTree, TreePath

__all__ = ["TreeOracle", "compile"]


class _ProductCounts:
    """The exact traversal tables of a tree under one product distribution (see the module)."""

    def __init__(self, tree: "DecisionTree", pw: ProductWeights) -> None:
        space = tree.space
        self._pw = pw
        arith = pw.arith
        div = arith.div
        ws = pw.weights
        arrays = tree.arrays
        self._feat = arrays.feature
        self._root = arrays.root
        # Traversal tables, per node: w(A) of its tested feature (A = values allowed by the ancestors);
        # per branch (child, A & m, w(A & m)); the exact weight R of the node's region
        # {x : x_f in A_f for all f}; the weight of that region each class covers; and the
        # bitmask of the features tested in its subtree.
        n = len(arrays.feature)
        self._wA: list[Weight] = [0] * n
        self._aA: list[int] = [0] * n  # the allowed set A itself (box queries)
        self._other_of: dict[int, list[Weight]] = {}  # per class, per node: region - cover
        self._br: list[tuple[tuple[int, int, Weight], ...]] = [()] * n
        self._region: list[Weight] = [0] * n
        self._cover: list[dict[int, Weight]] = [{} for _ in range(n)]
        self._sub: list[int] = [0] * n
        self._mask_weights: dict[int, Weight] = {}
        full = tuple((1 << f.size) - 1 for f in space.features)
        order = []
        stack = [(arrays.root, full, pw.total)]
        while stack:
            nid, allowed, region = stack.pop()
            order.append(nid)
            self._region[nid] = region
            f = arrays.feature[nid]
            if f < 0:
                continue
            a = self._aA[nid] = allowed[f]
            wa = self._wA[nid] = sum(w for k, w in enumerate(ws[f]) if a >> k & 1)
            out = []
            for mask, child in arrays.branches[nid]:
                m = a & mask
                if m:
                    wm = sum(w for k, w in enumerate(ws[f]) if m >> k & 1)
                    out.append((child, m, wm))
                    stack.append((child, allowed[:f] + (m,) + allowed[f + 1:], div(region, wa) * wm))
            self._br[nid] = tuple(out)
        self._order = order
        for nid in reversed(order):  # children before parents
            f = arrays.feature[nid]
            if f < 0:
                self._cover[nid] = {arrays.label[nid]: self._region[nid]}
                continue
            cover: dict[int, Weight] = {}
            sub = 1 << f
            for child, _, _ in self._br[nid]:
                sub |= self._sub[child]
                for c, w in self._cover[child].items():
                    cover[c] = cover.get(c, 0) + w
            self._cover[nid] = cover
            self._sub[nid] = sub

    def _others(self, label: int) -> list[Weight]:
        """Per node, the weight of its region that other classes than ``label`` cover (kept per class)."""
        got = self._other_of.get(label)
        if got is None:
            got = self._other_of[label] = [r - c.get(label, 0) for r, c in zip(self._region, self._cover)]
        return got

    def disagree_weight(self, point: tuple[int, ...], label: int, fixed: frozenset[int],
                        budget: int = -1) -> Weight | None:
        # Descend only where the subtree tests a fixed feature; elsewhere the class does not depend
        # on the fixed values, so the node contributes its region's weight of other classes, times
        # prod_{f in S} w(v_f) / w(A_f) (the fixed features' allowed sets at the node). With a budget
        # (>= 0): None as soon as more nodes than that would be visited.
        pw = self._pw
        div = pw.arith.div
        ws, totals = pw.weights, pw.totals
        smask = 0
        kv: Weight = 1
        pf: Weight = 1
        for f in fixed:
            smask |= 1 << f
            kv *= ws[f][point[f]]
            pf *= totals[f]
        feat, br, wA, sub = self._feat, self._br, self._wA, self._sub
        others = self._others(label)
        total: Weight = 0
        stack = [(self._root, pf)]
        while stack:
            nid, pf = stack.pop()
            budget -= 1
            if budget == -1:
                return None
            other = others[nid]
            if not other:  # every point below has class `label`
                continue
            if not sub[nid] & smask:
                total += div(other, pf)
                continue
            f = feat[nid]
            if smask >> f & 1:
                bit = 1 << point[f]
                for child, m, wm in br[nid]:
                    if m & bit:
                        stack.append((child, div(pf, wA[nid]) * wm))
                        break
            else:
                for child, _, _ in br[nid]:
                    stack.append((child, pf))
        return total * kv

    def box_weights(self, box: Box, label: int) -> tuple[Weight, Weight]:
        walked = self._box_walk(box, label, -1)
        assert isinstance(walked, (int, float))  # split -1: a total
        return walked, box_weight(self._pw, box)

    def box_weights_by_value(self, box: Box, label: int, feature: int) -> tuple[tuple[Weight, Weight], ...]:
        pw = self._pw
        div, ws, mw = pw.arith.div, pw.weights[feature], pw.mask_weight
        acc = self._box_walk(box, label, feature)
        assert isinstance(acc, dict)
        out = [pw.arith.zero] * len(ws)
        for mask, w in acc.items():
            share = div(w, mw(feature, mask))
            for k in range(len(ws)):
                if mask >> k & 1:
                    out[k] += share * ws[k]
        base = box_weight(pw, box[:feature] + ((1 << len(ws)) - 1,) + box[feature + 1:])
        return tuple((d, div(base, pw.totals[feature]) * ws[k]) for k, d in enumerate(out))

    def _box_walk(self, box: Box, label: int, split: int) -> "Weight | dict[int, Weight]":
        # As disagree_weight, with a value set B_g per constrained feature g: descend only where the
        # subtree tests a constrained feature (or ``split``); elsewhere the node's other-class weight
        # times prod_g w(A_g & B_g) / w(A_g) (num / den, A_g the values its ancestors allow) is exact.
        # With ``split`` >= 0, the weights are kept apart by the values of ``split`` the node allows.
        pw = self._pw
        div, mw = pw.arith.div, pw.mask_weight
        one = pw.arith.one
        cmask = 0 if split < 0 else 1 << split
        num: Weight = one
        den: Weight = one
        for g, b in enumerate(box):
            if g != split and b != (1 << len(pw.weights[g])) - 1:
                cmask |= 1 << g
                num *= mw(g, b)
                den *= pw.totals[g]
        feat, br, wA, aA, sub = self._feat, self._br, self._wA, self._aA, self._sub
        others = self._others(label)
        n_feat = len(box)
        memo = self._mask_weights  # w(m) of the masks met, keyed m * n_feat + f (kept across walks, bounded)
        if len(memo) > 1 << 16:
            memo.clear()

        def weigh(f: int, m: int) -> Weight:
            key = m * n_feat + f
            got = memo.get(key)
            if got is None:
                got = memo[key] = mw(f, m)
            return got

        total: Weight = pw.arith.zero
        acc: dict[int, Weight] = {}
        root_split = (1 << len(pw.weights[split])) - 1 if split >= 0 else 0
        stack = [(self._root, num, den, root_split)]
        while stack:
            nid, num, den, am = stack.pop()
            other = others[nid]
            if not other:
                continue
            if not sub[nid] & cmask:
                x = div(other, den) * num
                if split < 0:
                    total += x
                else:
                    acc[am] = acc.get(am, 0) + x
                continue
            f = feat[nid]
            if f == split:
                for child, m, _ in br[nid]:
                    stack.append((child, num, den, m))
            elif cmask >> f & 1:
                b = box[f]
                wab = weigh(f, aA[nid] & b)
                for child, m, wm in br[nid]:
                    mb = m & b
                    if mb:
                        stack.append((child, div(num, wab) * weigh(f, mb), div(den, wA[nid]) * wm, am))
            else:
                for child, _, _ in br[nid]:
                    stack.append((child, num, den, am))
        return total if split < 0 else acc


class _MixtureCounts:
    """The exact traversal of :class:`_ProductCounts`, for ``K`` components at once: one walk of the tree
    with a vector of ``K`` weights per node, and one exact division per group of nodes reached with the
    same factors (a sum of multiples of ``pf`` divided by ``pf``) instead of one per node."""

    def __init__(self, parts: Sequence[tuple[Weight, _ProductCounts]]) -> None:
        first = parts[0][1]
        self._coef = tuple(c for c, _ in parts)
        self._pws = tuple(p._pw for _, p in parts)
        self._parts = tuple(p for _, p in parts)
        self._feat, self._root, self._sub = first._feat, first._root, first._sub
        self._wA = list(zip(*(p._wA for p in self._parts)))
        self._br = [tuple((child, m, tuple(p._br[nid][j][2] for p in self._parts))
                          for j, (child, m, _) in enumerate(b)) for nid, b in enumerate(first._br)]
        self._other_of: dict[int, list[tuple[Weight, ...]]] = {}
        self._mask_weights: dict[int, tuple[Weight, ...]] = {}

    def _others(self, label: int) -> list[tuple[Weight, ...]]:
        got = self._other_of.get(label)
        if got is None:
            got = self._other_of[label] = list(zip(*(p._others(label) for p in self._parts)))
        return got

    def disagree_weight(self, point: tuple[int, ...], label: int, fixed: frozenset[int],
                        budget: int = -1) -> Weight | None:
        div = self._pws[0].arith.div
        smask = 0
        for f in fixed:
            smask |= 1 << f
        kv = []
        pf0 = []
        for pw in self._pws:
            a: Weight = 1
            b: Weight = 1
            for f in fixed:
                a *= pw.weights[f][point[f]]
                b *= pw.totals[f]
            kv.append(a)
            pf0.append(b)
        feat, br, wA, sub = self._feat, self._br, self._wA, self._sub
        others = self._others(label)
        groups: dict[int, tuple[tuple[Weight, ...], list[tuple[Weight, ...]]]] = {}
        stack = [(self._root, tuple(pf0))]
        while stack:
            nid, pf = stack.pop()
            budget -= 1
            if budget == -1:
                return None
            other = others[nid]
            if not other[0]:  # every point below has class `label` (in every component alike)
                continue
            if not sub[nid] & smask:
                g = groups.get(id(pf))
                if g is None:
                    groups[id(pf)] = (pf, [other])
                else:
                    g[1].append(other)
                continue
            f = feat[nid]
            if smask >> f & 1:
                bit = 1 << point[f]
                for child, m, wm in br[nid]:
                    if m & bit:
                        stack.append((child, tuple(div(p, a) * w for p, a, w in zip(pf, wA[nid], wm))))
                        break
            else:
                for child, _, _ in br[nid]:
                    stack.append((child, pf))
        per: list[Weight] = [0] * len(kv)
        for pf, members in groups.values():
            for k, col in enumerate(zip(*members)):
                per[k] += div(sum(col), pf[k])
        total = self._pws[0].arith.zero
        for c, w, x in zip(self._coef, per, kv):
            total += c * w * x
        return total


    def box_walk(self, box: Box, label: int, split: int) -> dict[int, list[Weight]]:
        """:meth:`_ProductCounts._box_walk` for every component in one walk: per mask of ``split``'s values
        (``0`` when ``split < 0``), the weight of each component (nodes reached with the same factors are
        summed before the one exact division of their group)."""
        pws, parts = self._pws, self._parts
        div = pws[0].arith.div
        n_feat = len(box)
        cmask = 0 if split < 0 else 1 << split
        num: list[Weight] = [1] * len(pws)
        den: list[Weight] = [1] * len(pws)
        for g, b in enumerate(box):
            if g != split and b != (1 << len(pws[0].weights[g])) - 1:
                cmask |= 1 << g
                for k, pw in enumerate(pws):
                    num[k] *= pw.mask_weight(g, b)
                    den[k] *= pw.totals[g]
        memo = self._mask_weights
        if len(memo) > 1 << 16:
            memo.clear()

        def weigh(f: int, m: int) -> tuple[Weight, ...]:
            key = m * n_feat + f
            got = memo.get(key)
            if got is None:
                got = memo[key] = tuple(pw.mask_weight(f, m) for pw in pws)
            return got

        feat, br, wA, sub, aA = self._feat, self._br, self._wA, self._sub, parts[0]._aA
        others = self._others(label)
        groups: dict[tuple[int, int], tuple[int, tuple[tuple[Weight, ...], tuple[Weight, ...]], list[Any]]] = {}
        root_split = (1 << len(pws[0].weights[split])) - 1 if split >= 0 else 0
        stack = [(self._root, (tuple(num), tuple(den)), root_split)]
        while stack:
            nid, nd, am = stack.pop()
            other = others[nid]
            if not other[0]:
                continue
            if not sub[nid] & cmask:
                grp = groups.get((am, id(nd)))
                if grp is None:
                    groups[(am, id(nd))] = (am, nd, [other])
                else:
                    grp[2].append(other)
                continue
            f = feat[nid]
            if f == split:
                for child, m, _ in br[nid]:
                    stack.append((child, nd, m))
            elif cmask >> f & 1:
                b = box[f]
                wab = weigh(f, aA[nid] & b)
                nu, de = nd
                for child, m, wm in br[nid]:
                    mb = m & b
                    if mb:
                        wmb = weigh(f, mb)
                        stack.append((child, (tuple(div(x, a) * y for x, a, y in zip(nu, wab, wmb)),
                                              tuple(div(x, a) * y for x, a, y in zip(de, wA[nid], wm))), am))
            else:
                for child, _, _ in br[nid]:
                    stack.append((child, nd, am))
        acc: dict[int, list[Weight]] = {}
        for am, (nu, de), members in groups.values():
            per = acc.setdefault(am, [pws[0].arith.zero] * len(pws))
            for k, col in enumerate(zip(*members)):
                per[k] += div(sum(col), de[k]) * nu[k]
        return acc


class TreeOracle:
    """Counting oracle answering from a decision tree's node arrays, under its distribution.

    Parameters
    ----------
    tree : DecisionTree
        Read through its public view ``tree.arrays`` and ``tree.paths``.
    weights : ProductWeights, optional
        One product distribution to count under; default the tree's space's distribution, all of its
        components (a mixture of ``K`` products is ``K`` exact tables sharing the tree, and one
        :class:`~kcxai.engines._path_table.PathTable` for the deletion loop's sessions).

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.engines.dt import TreeOracle
    >>> tree = kcxai.datasets.running_example_tree()
    >>> TreeOracle(tree).disagree_weight((1, 1, 1, 1, 0, 0, 0, 0, 1), 1, frozenset({0, 8}))
    7
    """

    language = "dt"

    def __init__(self, tree: "DecisionTree", weights: ProductWeights | None = None) -> None:
        self.tree = tree
        self.space = space = tree.space
        self.n_classes = len(tree.classes)
        comps = ((1, weights),) if weights is not None else space.distribution.components
        self._parts = tuple((c, _ProductCounts(tree, pw)) for c, pw in comps)
        self._components = tuple(comps)
        self._total = weights.total if weights is not None else space.total_weight
        self._single = self._parts[0][1] if len(self._parts) == 1 and self._parts[0][0] == 1 else None
        # exact mixtures: one walk for all components (float ones sum the components' walks, as they always did)
        self._vector = _MixtureCounts(self._parts) if self._single is None and space.is_exact else None
        self._lock = threading.Lock()
        self._min_depth = _fewest_tested(tree)
        self._table: PathTable | None | bool = False  # False: not built yet (None: none applies)
        self._batch: TreeBatch | None | bool = False if weights is None else None  # the same, for the batch hook

    @property
    def paths(self) -> "tuple[TreePath, ...]":
        """The tree's reachable paths (the :class:`~kcxai.oracle.PathOracle` capability)."""
        return self.tree.paths

    def path_of(self, point: tuple[int, ...]) -> "TreePath":
        """The path ``point`` follows."""
        return self.tree.path_of(point)

    def predict_point(self, point: tuple[int, ...]) -> int:
        return self.tree.predict_point(point)

    def disagree_weight(self, point: tuple[int, ...], label: int, fixed: frozenset[int]) -> Weight:
        if len(fixed) >= self._min_depth:
            path = self.tree.path_of(point)
            if path.label == label and fixed.issuperset(path.features()):
                return self.space.arith.zero  # the points agreeing with it on its path's features follow the path
        w = self.traversed_weight(point, label, fixed, self.walk_budget())
        if w is not None:
            return w
        table = self.path_table()
        if table is None:
            return self.traversed_weight(point, label, fixed)  # type: ignore[return-value]
        return table.count(point, label, fixed)

    def traversed_weight(self, point: tuple[int, ...], label: int, fixed: frozenset[int],
                         budget: int = -1) -> Weight | None:
        """``disagree_weight`` by the exact walk of the tree (see the module); with a ``budget`` >= 0, ``None``
        when the walk would visit more nodes than that (a mixture without one walk for all components, in
        float weights, is walked whole)."""
        if self._single is not None:
            return self._single.disagree_weight(point, label, fixed, budget)
        if self._vector is not None:
            return self._vector.disagree_weight(point, label, fixed, budget)
        total = self.space.arith.zero
        for c, part in self._parts:
            w = part.disagree_weight(point, label, fixed)
            if w:
                total += c * w
        return total

    def walk_budget(self) -> int:
        """The most nodes a walk visits before the path tables answer instead (see :data:`WALK_BUDGET`); ``-1``:
        no limit (no table applies)."""
        if self._table is None:
            return -1
        return 4 * WALK_BUDGET // (len(self._parts) + 3)

    def path_table(self) -> PathTable | None:
        """The numpy tables of the tree's paths under this oracle's distribution (built on first use and kept;
        ``None`` where screening in floats does not apply, see :meth:`PathTable.build`)."""
        got = self._table
        if got is False:
            with self._lock:
                if self._table is False:
                    self._table = PathTable.build(self.tree, self._components, self._total,
                                                  [part._region for _, part in self._parts])
                got = self._table
        return got  # type: ignore[return-value]

    def session(self, point: tuple[int, ...], label: int, fixed: frozenset[int]) -> OracleSession:
        return TreeSession(self, point, label, fixed)

    def min_idrs_batch(self, instances: Sequence[Values], delta: Probability, start: str | None
                       ) -> list[BatchRow | Exception] | None:
        """Algorithm 1 for many instances at once (the :class:`~kcxai.oracle.BatchOracle` hook): see
        :class:`~kcxai.engines._tree_batch.TreeBatch`, built on first use and kept."""
        if self._batch is False:
            with self._lock:
                if self._batch is False:
                    self._batch = TreeBatch.build(self.tree)
        batch = self._batch
        return None if not isinstance(batch, TreeBatch) else batch.min_idrs_rows(instances, delta, start)

    # -- boxes (the BoxOracle capability) ------------------------------------------

    def box_weights(self, box: Box, label: int) -> tuple[Weight, Weight]:
        """``(disagree, consistent)`` weights of a box (:class:`~kcxai.oracle.BoxOracle`)."""
        if self._single is not None:
            return self._single.box_weights(box, label)
        if self._vector is not None:
            walked = self._vector.box_walk(box, label, -1).get(0, [0] * len(self._parts))
            d = sum(c * x for (c, _), x in zip(self._parts, walked))
            return d, sum(c * box_weight(pw, box) for c, pw in self._components)
        d = w = self.space.arith.zero
        for c, part in self._parts:
            a, b = part.box_weights(box, label)
            d += c * a
            w += c * b
        return d, w

    def box_weights_by_value(self, box: Box, label: int, feature: int) -> tuple[tuple[Weight, Weight], ...]:
        """Per value of ``feature``, the box's weights with ``feature`` set to it, in one walk: a region
        that does not test ``feature`` spreads its weight over the values it allows, pro rata."""
        if self._single is not None:
            return self._single.box_weights_by_value(box, label, feature)
        if self._vector is not None:
            return self._by_value(self._vector.box_walk(box, label, feature), box, feature)
        zero = self.space.arith.zero
        out = [(zero, zero)] * self.space.features[feature].size
        for c, part in self._parts:
            for k, (a, b) in enumerate(part.box_weights_by_value(box, label, feature)):
                out[k] = (out[k][0] + c * a, out[k][1] + c * b)
        return tuple(out)

    def _by_value(self, acc: dict[int, list[Weight]], box: Box, feature: int) -> tuple[tuple[Weight, Weight], ...]:
        """:meth:`box_weights_by_value` from one walk's weights per mask of ``feature`` and component: each mask's
        weight spread over its values pro rata, per component, then the components summed."""
        size = self.space.features[feature].size
        full = box[:feature] + ((1 << size) - 1,) + box[feature + 1:]
        disagree: list[Weight] = [0] * size
        consistent: list[Weight] = [0] * size
        for k, (c, pw) in enumerate(self._components):
            ws = pw.weights[feature]
            for mask, per in acc.items():
                share = per[k] // pw.mask_weight(feature, mask)
                for v in range(size):
                    if mask >> v & 1:
                        disagree[v] += c * share * ws[v]
            base = box_weight(pw, full) // pw.totals[feature]
            for v in range(size):
                consistent[v] += c * base * ws[v]
        return tuple(zip(disagree, consistent))


#: The most nodes a session's (or a count's) walk of the tree visits, for a product distribution, before
#: the deletion loop moves to the path tables (:class:`~kcxai.engines._path_table.PathSession`): on a cheap
#: query the walk costs less than a session's numpy calls, on a long one far more (measured on the
#: experiment's trees: about 0.4 us a node, 10-25 us a numpy query). A mixture of ``K`` walks
#: ``4 * WALK_BUDGET // (K + 3)`` nodes (a node costs more, a numpy query about the same).
WALK_BUDGET = 32


class TreeSession(SessionBase):
    """The deletion-loop session of :class:`TreeOracle`: each query walks the tree while the walks stay within
    :data:`WALK_BUDGET` nodes, and moves for good to a :class:`~kcxai.engines._path_table.PathSession`
    (which keeps what the previous query computed) at the first walk that would be longer. Every weight and
    decision is exact either way; only the cost differs."""

    __slots__ = ("_o", "_point", "_label", "_fixed", "_path", "_budget", "_kv", "_memo")

    def __init__(self, oracle: TreeOracle, point: tuple[int, ...], label: int, fixed: frozenset[int]) -> None:
        self._o = oracle
        self._point = tuple(point)
        self._label = label
        self._fixed = frozenset(fixed)
        self._path: PathSession | None = None
        self._budget = oracle.walk_budget()
        # per component: its coefficient times prod over the fixed features of w_k(v_f) and over the free ones
        # of the feature's total (the consistent weight, kept as features are freed)
        self._kv = [c * pw.consistent_weight(point, self._fixed) for c, pw in oracle._components] \
            if oracle.space.is_exact else []
        self._memo: dict[int, Weight] = {}  # feature (-1: none) -> the weight with it freed, for this S

    @property
    def fixed(self) -> frozenset[int]:
        return self._fixed

    def _walk(self, feature: int) -> Weight | None:
        """The weight with ``feature`` freed (-1: none), walked within the budget; ``None`` once on the tables."""
        got = self._memo.get(feature)
        if got is not None or self._path is not None:
            return got
        o = self._o
        fixed = self._fixed - {feature}
        w = o.traversed_weight(self._point, self._label, fixed, self._budget)
        if w is None:
            table = o.path_table()
            if table is not None:
                self._path = PathSession(o, table, self._point, self._label, self._fixed)
                return None
            self._budget = -1
            w = o.traversed_weight(self._point, self._label, fixed)
        self._memo[feature] = w  # type: ignore[assignment]
        return w

    def weight(self) -> Weight:
        w = self._walk(-1)
        return w if w is not None else self._path.weight()  # type: ignore[union-attr]

    def weight_if_freed(self, feature: int) -> Weight:
        if feature not in self._fixed:
            return self.weight()
        w = self._walk(feature)
        return w if w is not None else self._path.weight_if_freed(feature)  # type: ignore[union-attr]

    def holds_if_freed(self, feature: int, bound: Bound) -> bool:
        w = self._walk(feature) if feature in self._fixed else self._walk(-1)
        if w is not None:
            return bound.holds(w)
        return self._path.holds_if_freed(feature, bound)  # type: ignore[union-attr]

    def holds_precision_if_freed(self, feature: int, precision: Probability) -> bool:
        """Whether freeing ``feature`` keeps ``Pr(kappa(x) = c | x_S = v_S) >= precision``, decided exactly."""
        w = self._walk(feature) if feature in self._fixed else self._walk(-1)
        if w is None:
            path: PathSession = self._path  # type: ignore[assignment]  # (None only before the tables)
            if not (path.table.exact and self._kv):  # float tables screen the decision themselves
                return path.holds_precision_if_freed(feature, precision)
            w = path.weight_if_freed(feature)  # exact int64 sums; the consistent weight is kept here
        space = self._o.space
        if not self._kv:
            cons = space.consistent_weight(self._point, self._fixed - {feature})
        elif feature not in self._fixed:
            cons = sum(self._kv)
        else:
            cons = 0
            for x, (_, pw) in zip(self._kv, self._o._components):
                cons += x // pw.weights[feature][self._point[feature]] * pw.totals[feature]
        return space.arith.bound(precision).holds_from_below(cons - w, cons)

    def free(self, feature: int) -> None:
        if feature not in self._fixed:
            return
        w = self._memo.get(feature)
        if self._kv:
            self._kv = [x // pw.weights[feature][self._point[feature]] * pw.totals[feature]
                        for x, (_, pw) in zip(self._kv, self._o._components)]
        self._fixed = self._fixed - {feature}
        self._memo = {} if w is None else {-1: w}
        if self._path is not None:
            self._path.free(feature)


def compile(model: Any) -> "CompiledModel":
    """The ``"dt"`` language: a decision tree answers from itself (nothing to compile).

    Under a mixture distribution the oracle keeps one exact table per component and answers the
    deletion loop's queries for all components at once (:class:`TreeOracle`).
    """
    from kcxai._errors import InvalidTypeError
    from kcxai.compilers.compiled import CompiledModel, CompileStats
    from kcxai.engines._registry import is_tree

    if not is_tree(model):
        raise InvalidTypeError(
            f"The 'dt' language explains DecisionTree models only. Got {type(model).__name__}; "
            "compile it to 'sdd' or 'obdd' instead.")
    t0 = time.perf_counter()
    oracle = TreeOracle(model)
    seconds = time.perf_counter() - t0
    n_paths, n_lits = _path_sizes(model)
    return CompiledModel(model=model, oracle=oracle, language="dt", backend="kcxai",
                         stats=CompileStats(size=model.n_nodes, size_unit="tree nodes",
                                            variables=model.space.n_features, compile_seconds=seconds,
                                            details={"nodes": model.n_nodes, "paths": n_paths,
                                                     "path_literals": n_lits}))


def _fewest_tested(tree: "DecisionTree") -> int:
    """The fewest features a root-to-leaf path tests (no path restricts fewer: a cheap test before the path's)."""
    arrays = tree.arrays
    feat, branches = arrays.feature, arrays.branches
    best = tree.space.n_features
    stack = [(arrays.root, 0)]  # (node, features restricted above it, as a bitmask)
    while stack:
        nid, seen = stack.pop()
        f = feat[nid]
        if f < 0:
            best = min(best, seen.bit_count())
            continue
        for _, child in branches[nid]:
            stack.append((child, seen | 1 << f))
    return best


def _path_sizes(tree: "DecisionTree") -> tuple[int, int]:
    """The number of reachable paths and their total number of literals (features a path restricts), by
    one walk in memory linear in the tree's size: reading ``tree.paths`` builds them all, quadratic in the
    size of a deep chain."""
    arrays = tree.arrays
    feat, branches = arrays.feature, arrays.branches
    full = [(1 << f.size) - 1 for f in tree.space.features]
    allowed = list(full)
    restricted = paths = literals = 0
    stack = [(arrays.root, -1, 0)]  # (node, feature narrowed on entry, its mask); node -1: undo
    while stack:
        nid, g, m = stack.pop()
        if g >= 0:
            old = allowed[g]
            restricted += (m != full[g]) - (old != full[g])
            allowed[g] = m
            if nid < 0:
                continue
            stack.append((-1, g, old))
        f = feat[nid]
        if f < 0:
            paths += 1
            literals += restricted
            continue
        here = allowed[f]
        for mask, child in branches[nid]:
            if mask & here:
                stack.append((child, f, mask & here))
    return paths, literals
