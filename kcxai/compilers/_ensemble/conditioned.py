"""One query's exact counts from the ensemble conditioned on the instance's values of a fixed set.

Fixing the features of ``S`` to the instance's values collapses every tree that tests them: the trees are
followed down along those values before the construction starts (:meth:`.sources.Sources.descend`), and
the diagram is built over the free features only. Such a diagram is much smaller than the whole model's,
and it answers exactly every query whose fixed set contains ``S`` (the instance's values there). Built
with one more feature ``i`` placed just below ``S`` in the order, it also answers ``S \\ {i}``: what a
deletion loop asks next.

Whether it fits is decided from counted nodes (the trees' own at every node made, the diagram's every
1,024 states and at the end) and the trees' counted work (:data:`SOURCE_WORK_PER_NODE`), never from the
clock, so a query gets the same answer on any machine; ``max_seconds`` and ``max_memory`` are safety limits
only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kcxai.arithmetic import Weight
from kcxai.compilers._ensemble.build import BuiltEnsemble, compile_additive, conditioned_order
from kcxai.compilers._ensemble.stopped import Stopped
from kcxai.compilers._ensemble.threshold import Threshold
from kcxai.compilers._limits import DEFAULT_MAX_MEMORY, DEFAULT_MAX_NODES, Guard, LimitHit
from kcxai.compilers._tables.diagram import diagram_oracle
from kcxai._types import Point

__all__ = ["ConditionedCounts", "conditioned_counts", "SOURCE_WORK_PER_NODE"]

#: The work (:mod:`.threshold`, "Work") the trees' diagrams of a conditioned compile may take per node of its
#: ``max_nodes``: a tree over wide features (the default RandomForest's, on adult's 32,896 values of
#: ``fnlwgt``) can take tens of seconds to reduce while making few nodes, which the node count alone does not
#: stop (2,000 nodes: 4 M units, about 0.3 s at the reference rate).
SOURCE_WORK_PER_NODE = 2_000


@dataclass(frozen=True)
class ConditionedCounts:
    """Exact answers of one deletion-loop query, from a conditioned compilation.

    Attributes
    ----------
    fixed : frozenset of int
        The fixed set ``S`` asked about.
    disagree : Weight
        ``disagree_weight(point, label, S)``: the weight of the points agreeing with the instance on ``S``
        that get another class (exact, relative to ``space.total_weight``).
    freed : int or None
        The feature ``i`` also answered for.
    disagree_freed : Weight or None
        ``disagree_weight(point, label, S \\ {i})``.
    consistent, consistent_freed : Weight or None
        The weights of the two cells (points agreeing with the instance on ``S``, on ``S \\ {i}``).
    nodes : int
        Nodes of the conditioned diagram.
    seconds : float
        Wall-clock seconds of the compilation and the counts.
    """

    fixed: frozenset[int]
    disagree: Weight
    consistent: Weight
    freed: int | None
    disagree_freed: Weight | None
    consistent_freed: Weight | None
    nodes: int
    seconds: float


def conditioned_counts(model: Any, point: Point, label: int, fixed: Iterable[int], *, free: int | None = None,
                       max_seconds: float | None = 0.2, max_nodes: int | None = DEFAULT_MAX_NODES,
                       max_memory: int | None = DEFAULT_MAX_MEMORY) -> ConditionedCounts:
    """The exact disagreement weights of ``label`` at ``point`` for ``fixed`` (and ``fixed`` without ``free``),
    from the ensemble compiled on the points agreeing with ``point`` on ``fixed \\ {free}``, within the limits.

    Raises
    ------
    CompilationLimitError
        If the conditioned compilation does not fit the limits: more than ``max_nodes`` nodes (counted
        at every 1,024th state and at the end: the same on every machine), or the safety limits
        ``max_seconds`` and ``max_memory``.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> forest = kcxai.models.RandomForest(tree.space, tree.classes, [tree, tree])
    >>> v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
    >>> got = conditioned_counts(forest, v, 1, {0, 1, 8}, free=1)
    >>> got.disagree, got.disagree_freed
    (3, 7)
    """
    fixed = frozenset(fixed)
    space = model.space
    guard = Guard("conditioned ensemble", None, max_seconds, max_memory)  # nodes: counted below, not polled
    guard.phase = "building the conditioned ensemble's diagram"
    spec = model.additive_trees()
    cond = sorted(fixed - {free}) if free is not None else sorted(fixed)
    order = conditioned_order(spec, cond + ([free] if free is not None and free in fixed else []))
    counts: dict[str, Any] = {}
    try:
        diagram, roots, negated = compile_additive(
            spec, order, guard, counts, fixed={f: point[f] for f in cond},
            monitor=None if max_nodes is None else _NodeCount(max_nodes), max_source_nodes=max_nodes,
            max_source_work=None if max_nodes is None else int(SOURCE_WORK_PER_NODE * max_nodes))
    except Stopped as e:
        raise LimitHit(f"Compiling the conditioned ensemble within max_nodes={max_nodes:,}: {e} (counted, the same "
                       f"on every machine).", "max_nodes") from None
    guard.set_size(None)
    if max_nodes is not None and len(diagram) + counts.get("source_nodes", 0) > max_nodes:
        raise _NodeCount(max_nodes).hit(len(diagram) + counts.get("source_nodes", 0))
    built = BuiltEnsemble(tuple(order), diagram, roots, negated, guard.seconds, counts)
    table = built.table(space)
    oracle = diagram_oracle("obdd", space, table)
    dist = space.distribution
    disagree = oracle.disagree_weight(point, label, fixed)
    freed = disagree_freed = consistent_freed = None
    if free is not None and free in fixed:
        freed = free
        disagree_freed = oracle.disagree_weight(point, label, fixed - {free})
        consistent_freed = dist.consistent_weight(point, fixed - {free})
    return ConditionedCounts(fixed, disagree, dist.consistent_weight(point, fixed), freed, disagree_freed,
                             consistent_freed, table.n_nodes, guard.seconds)


class _NodeCount:
    """A construction's monitor stopping it once the diagram and the running test's trees pass ``max_nodes``."""

    def __init__(self, max_nodes: int) -> None:
        self.max_nodes = max_nodes

    def __call__(self, th: Threshold) -> None:
        nodes = len(th.out) + len(th.src.level)
        if nodes > self.max_nodes:
            raise self.hit(nodes)

    def hit(self, nodes: int) -> LimitHit:
        return LimitHit(f"Compiling the conditioned ensemble exceeded max_nodes={self.max_nodes:,}: {nodes:,} nodes "
                        f"(counted, the same on every machine).", "max_nodes")
