"""The native decision-tree oracle (language ``"dt"``): counting on the tree itself.

A query is answered by the exact walk of the tree's nodes (:class:`~kcxai.engines._tree_walk.TreeWalk`):
it descends only into subtrees that test a fixed feature, so it visits the nodes above tests of fixed
features, not the whole tree, for every component of the distribution at once.

Algorithm 1's deletion loop asks one such query per feature tried, in a :class:`TreeSession`: each query
walks the tree while the walks stay short (:data:`WALK_BUDGET` nodes), and the session moves to numpy
tables of the tree's leaves (:mod:`kcxai.engines._path_table`) at the first walk that would be longer,
keeping there what each query computed for the next. Every weight and decision is exact either way.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from kcxai._errors import InvalidTypeError
from kcxai._types import Point, Values
from kcxai.arithmetic import Bound, Probability, Weight
from kcxai.compilers.compiled import CompiledModel, CompileStats
from kcxai.compilers._tables.vectors import Component
from kcxai.engines._path_table import PathSession, PathTable
from kcxai.engines._registry import is_tree
from kcxai.engines._tree_batch import TreeBatch
from kcxai.engines._tree_walk import AnyTreeWalk, tree_walk
from kcxai.models.classifier import Classifier
from kcxai.models.tree import DecisionTree, TreePath
from kcxai.oracle import BatchRow, Box, OracleSession, SessionBase, box_weight

__all__ = ["TreeOracle", "TreeSession", "compile", "WALK_BUDGET"]

#: The most nodes a session's (or a count's) walk of the tree visits, for a product distribution, before the
#: deletion loop moves to the path tables (:class:`~kcxai.engines._path_table.PathSession`): on a cheap query
#: the walk costs less than a session's numpy calls, on a long one far more (docs/results.md, "Counting
#: speed under fitted distributions"). A mixture of ``K`` walks ``4 * WALK_BUDGET // (K + 3)`` nodes (a
#: node costs more, a numpy query about the same).
WALK_BUDGET = 32


class TreeOracle:
    """Counting oracle answering from a decision tree's node arrays, under its distribution.

    Parameters
    ----------
    tree : DecisionTree
        Read through its public view ``tree.arrays`` and ``tree.paths``.
    components : sequence of (coefficient, ProductWeights), optional
        The components to count under; default those of the tree's distribution
        (``space.distribution.components``: one for a uniform or product distribution, ``K`` for a
        mixture). Every query walks the tree once for all of them.

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.engines.dt import TreeOracle
    >>> tree = kcxai.datasets.running_example_tree()
    >>> TreeOracle(tree).disagree_weight((1, 1, 1, 1, 0, 0, 0, 0, 1), 1, frozenset({0, 8}))
    7
    """

    language = "dt"

    def __init__(self, tree: DecisionTree, components: Sequence[Component] | None = None) -> None:
        self.tree = tree
        self.space = space = tree.space
        self.n_classes = len(tree.classes)
        self.components: tuple[Component, ...] = tuple(
            space.distribution.components if components is None else components)
        self._walk: AnyTreeWalk = tree_walk(tree, self.components)
        self._total: Weight = space.arith.zero
        for c, pw in self.components:
            self._total += c * pw.total
        self._lock = threading.Lock()
        self._min_depth = _fewest_tested(tree)
        self._table: PathTable | None = None
        self._table_built = False
        # the batch hook (built on first use; None: it does not apply, the components not the tree's own)
        self._batch: TreeBatch | None = None
        self._batch_built = components is not None

    @property
    def paths(self) -> tuple[TreePath, ...]:
        """The tree's reachable paths (the :class:`~kcxai.oracle.PathOracle` capability)."""
        return self.tree.paths

    def path_of(self, point: Point) -> TreePath:
        """The path ``point`` follows."""
        return self.tree.path_of(point)

    def predict_point(self, point: Point) -> int:
        return self.tree.predict_point(point)

    def disagree_weight(self, point: Point, label: int, fixed: frozenset[int]) -> Weight:
        if len(fixed) >= self._min_depth:
            path = self.tree.path_of(point)
            if path.label == label and fixed.issuperset(path.features()):
                return self.space.arith.zero  # the points agreeing with it on its path's features follow the path
        w = self.traversed_weight(point, label, fixed, self.walk_budget())
        if w is not None:
            return w
        table = self.path_table()
        if table is None:
            return self.walked_weight(point, label, fixed)
        return table.count(point, label, fixed)

    def traversed_weight(self, point: Point, label: int, fixed: frozenset[int], budget: int = -1) -> Weight | None:
        """``disagree_weight`` by the exact walk of the tree (:class:`~kcxai.engines._tree_walk.TreeWalk`); with a
        ``budget`` >= 0, ``None`` when the walk would visit more nodes than that."""
        return self._walk.disagree(point, label, fixed, budget)

    def walked_weight(self, point: Point, label: int, fixed: frozenset[int]) -> Weight:
        """``disagree_weight`` by the exact walk of the whole tree, however long."""
        w = self._walk.disagree(point, label, fixed)
        if w is None:  # pragma: no cover - no budget: the walk always answers
            raise RuntimeError("internal error: an unbounded walk stopped")
        return w

    def walk_budget(self) -> int:
        """The most nodes a walk visits before the path tables answer instead (see :data:`WALK_BUDGET`); ``-1``:
        no limit (no table applies)."""
        if self._table_built and self._table is None:
            return -1
        return 4 * WALK_BUDGET // (len(self.components) + 3)

    def path_table(self) -> PathTable | None:
        """The numpy tables of the tree's paths under this oracle's components (built on first use and kept;
        ``None`` where screening in floats does not apply, see :meth:`PathTable.build`)."""
        if not self._table_built:
            with self._lock:
                if not self._table_built:
                    self._table = PathTable.build(self.tree, self.components, self._total, self._walk.regions)
                    self._table_built = True
        return self._table

    def session(self, point: Point, label: int, fixed: frozenset[int]) -> OracleSession:
        return TreeSession(self, point, label, fixed)

    def min_idrs_batch(self, instances: Sequence[Values], delta: Probability, start: str | None
                       ) -> list[BatchRow | Exception] | None:
        """Algorithm 1 for many instances at once (the :class:`~kcxai.oracle.BatchOracle` hook): see
        :class:`~kcxai.engines._tree_batch.TreeBatch`, built on first use and kept."""
        if not self._batch_built:
            with self._lock:
                if not self._batch_built:
                    self._batch = TreeBatch.build(self.tree)
                    self._batch_built = True
        batch = self._batch
        return None if batch is None else batch.min_idrs_rows(instances, delta, start)

    # -- boxes (the BoxOracle capability) ------------------------------------------

    def box_weights(self, box: Box, label: int) -> tuple[Weight, Weight]:
        """``(disagree, consistent)`` weights of a box (:class:`~kcxai.oracle.BoxOracle`), in one walk."""
        walked = self._walk.box(box, label, -1).get(0, [])
        disagree = consistent = self.space.arith.zero
        for (c, _), x in zip(self.components, walked):
            disagree += c * x
        for c, pw in self.components:
            consistent += c * box_weight(pw, box)
        return disagree, consistent

    def box_weights_by_value(self, box: Box, label: int, feature: int) -> tuple[tuple[Weight, Weight], ...]:
        """Per value of ``feature``, the box's weights with ``feature`` set to it, in one walk: a region that
        does not test ``feature`` spreads its weight over the values it allows, pro rata, per component."""
        arith = self.space.arith
        div = arith.div
        size = self.space.features[feature].size
        full = box[:feature] + ((1 << size) - 1,) + box[feature + 1:]
        walked = list(self._walk.box(box, label, feature).items())
        disagree = [arith.zero] * size
        consistent = [arith.zero] * size
        for k, (c, pw) in enumerate(self.components):
            ws = pw.weights[feature]
            for mask, per in walked:
                share = div(per[k], pw.mask_weight(feature, mask))
                for v in range(size):
                    if mask >> v & 1:
                        disagree[v] += c * (share * ws[v])
            base = div(box_weight(pw, full), pw.totals[feature])
            for v in range(size):
                consistent[v] += c * (base * ws[v])
        return tuple(zip(disagree, consistent))


class TreeSession(SessionBase):
    """The deletion-loop session of :class:`TreeOracle`: each query walks the tree while the walks stay within
    :data:`WALK_BUDGET` nodes, and moves for good to a :class:`~kcxai.engines._path_table.PathSession`
    (which keeps what the previous query computed) at the first walk that would be longer. Every weight and
    decision is exact either way; only the cost differs."""

    __slots__ = ("_o", "_point", "_label", "_fixed", "_path", "_budget", "_kv", "_memo")

    def __init__(self, oracle: TreeOracle, point: Point, label: int, fixed: frozenset[int]) -> None:
        self._o = oracle
        self._point = tuple(point)
        self._label = label
        self._fixed = frozenset(fixed)
        self._path: PathSession | None = None
        self._budget = oracle.walk_budget()
        # per component: its coefficient times prod over the fixed features of w_k(v_f) and over the free ones
        # of the feature's total (the consistent weight, kept as features are freed)
        self._kv: list[Weight] = [c * pw.consistent_weight(point, self._fixed) for c, pw in oracle.components] \
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
                self._path = PathSession(o.space, table, self._point, self._label, self._fixed)
                return None
            self._budget = -1
            w = o.walked_weight(self._point, self._label, fixed)
        self._memo[feature] = w
        return w

    def _tables(self) -> PathSession:
        """The path tables' session (once :meth:`_walk` has moved there)."""
        if self._path is None:  # pragma: no cover - _walk answers until the session moves to the tables
            raise RuntimeError("internal error: the tree session has no path tables")
        return self._path

    def weight(self) -> Weight:
        w = self._walk(-1)
        return w if w is not None else self._tables().weight()

    def weight_if_freed(self, feature: int) -> Weight:
        if feature not in self._fixed:
            return self.weight()
        w = self._walk(feature)
        return w if w is not None else self._tables().weight_if_freed(feature)

    def holds_if_freed(self, feature: int, bound: Bound) -> bool:
        w = self._walk(feature) if feature in self._fixed else self._walk(-1)
        if w is not None:
            return bound.holds(w)
        return self._tables().holds_if_freed(feature, bound)

    def holds_precision_if_freed(self, feature: int, precision: Probability) -> bool:
        """Whether freeing ``feature`` keeps ``Pr(kappa(x) = c | x_S = v_S) >= precision``, decided exactly."""
        w = self._walk(feature) if feature in self._fixed else self._walk(-1)
        if w is None:
            path = self._tables()
            if not (path.table.exact and self._kv):  # float tables screen the decision themselves
                return path.holds_precision_if_freed(feature, precision)
            w = path.weight_if_freed(feature)  # exact int64 sums; the consistent weight is kept here
        space = self._o.space
        cons: Weight
        if not self._kv:
            cons = space.consistent_weight(self._point, self._fixed - {feature})
        elif feature not in self._fixed:
            cons = sum(self._kv)
        else:
            cons = 0
            for x, (_, pw) in zip(self._kv, self._o.components):
                cons += x // pw.weights[feature][self._point[feature]] * pw.totals[feature]
        return space.arith.bound(precision).holds_from_below(cons - w, cons)

    def free(self, feature: int) -> None:
        if feature not in self._fixed:
            return
        w = self._memo.get(feature)
        if self._kv:
            self._kv = [x // pw.weights[feature][self._point[feature]] * pw.totals[feature]
                        for x, (_, pw) in zip(self._kv, self._o.components)]
        self._fixed = self._fixed - {feature}
        self._memo = {} if w is None else {-1: w}
        if self._path is not None:
            self._path.free(feature)


def compile(model: Classifier) -> CompiledModel:
    """The ``"dt"`` language: a decision tree answers from itself (nothing to compile).

    Under a mixture distribution every query walks the tree once for all components (:class:`TreeOracle`).
    """
    if not is_tree(model) or not isinstance(model, DecisionTree):
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
                                            details={"nodes": model.n_nodes, "edges": model.n_nodes - 1,
                                                     "paths": n_paths, "path_literals": n_lits}))


def _fewest_tested(tree: DecisionTree) -> int:
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


def _path_sizes(tree: DecisionTree) -> tuple[int, int]:
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
