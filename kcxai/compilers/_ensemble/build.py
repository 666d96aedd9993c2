"""The exact construction: every class of an additive ensemble as a node of one diagram.

Two classes need one threshold test (the other class is its complement, a negated root). ``K > 2``
classes need one test per pair; class ``c`` is the conjunction of its tests (``apply`` on the same
table), so that ties go to the class first in the ensemble's ``priority``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kcxai.compilers._ensemble.bottom import BOTTOM_POINTS
from kcxai.compilers._ensemble.diagram import CONJ_WORK, TRUE, EnsembleDiagram
from kcxai.compilers._ensemble.sources import Sources, scaled_differences, source_work_floor
from kcxai.compilers._ensemble.threshold import Threshold
from kcxai.compilers._ensemble.stopped import Stopped
from kcxai.compilers._limits import Guard, LimitHit
from kcxai.compilers._orders import feature_order
from kcxai.compilers._tables.level import LevelTable
from kcxai.functions import AdditiveTrees
from kcxai.space import FeatureSpace

__all__ = ["ensemble_order", "is_additive", "compile_additive", "BuiltEnsemble", "build_ensemble", "Tests",
           "conditioned_order"]


def is_additive(model: Any) -> bool:
    """Whether ``model`` describes itself as an :class:`~kcxai.functions.AdditiveTrees` (``additive_trees()``)."""
    return callable(getattr(model, "additive_trees", None))


def ensemble_order(spec: AdditiveTrees) -> tuple[int, ...]:
    """Features by decreasing weight of their tests: a test at depth ``k`` of any tree weighs ``2**-k``.

    Features no tree tests come last, in index order.

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.models import RandomForest
    >>> space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "abc"])
    >>> Leaf, Split = kcxai.Leaf, kcxai.Split
    >>> t = kcxai.DecisionTree(space, [0, 1], Split("c", {0: Leaf(0), 1: Split("b", {0: Leaf(0), 1: Leaf(1)})}))
    >>> ensemble_order(RandomForest(space, [0, 1], [t, t]).additive_trees())
    (2, 1, 0)
    """
    n = spec.space.n_features
    weight = [0.0] * n
    for tree in spec.trees:
        a = tree.arrays
        stack = [(a.root, 1.0)]
        while stack:
            nid, w = stack.pop()
            f = a.feature[nid]
            if f >= 0:
                weight[f] += w
                stack.extend((child, w / 2) for _, child in a.branches[nid])
    return tuple(sorted(range(n), key=lambda f: (-weight[f], f)))


def conditioned_order(spec: AdditiveTrees, fixed: Sequence[int]) -> tuple[int, ...]:
    """The features of ``fixed`` first (in that order), then the others in :func:`ensemble_order`."""
    first = tuple(fixed)
    return first + tuple(f for f in ensemble_order(spec) if f not in set(first))


def _fractions(space: FeatureSpace, order: Sequence[int]) -> list[list[float]]:
    """Per level, the marginal probability of each value of its feature (the path masses' factors)."""
    dist = space.distribution
    return [[float(dist.value_probability(f, k)) for k in range(space.features[f].size)] for f in order]


@dataclass
class Tests:
    """The threshold tests of an ensemble in one order, ready to run (once, or in rounds).

    Attributes
    ----------
    pairs : list of (int, int)
        ``(c, d)``: the test ``score_c >= score_d`` (``c`` before ``d`` in the priority).
    runs : list of (Threshold, list of int, int)
        Per test, its construction, its root residuals and its starting partial sum.
    stats : dict
        ``source_nodes``, ``states_by_level`` (live) and ``nodes_by_level`` (live).
    """

    spec: AdditiveTrees
    out: EnsembleDiagram
    pairs: list[tuple[int, int]]
    runs: list[tuple[Threshold, list[int], int]]
    stats: dict[str, Any] = field(default_factory=dict)
    current: int = 0

    @classmethod
    def prepare(cls, spec: AdditiveTrees, out: EnsembleDiagram, guard: Guard | None, stats: dict[str, Any],
                values: Sequence[int | None] | None = None, bottom_points: int = BOTTOM_POINTS,
                bottom: bool | None = None, monitor: Callable[[Threshold], None] | None = None,
                max_work: int | None = None, max_nodes: int | None = None) -> "Tests":
        """Every test's trees as diagrams, followed down through the levels with a value in ``values`` (a
        conditioned construction; ``None``: none). Building them stops
        (:class:`~kcxai.compilers._ensemble.stopped.Stopped`) once their work reaches ``max_work``, and does
        not start when it is sure to (:func:`~.sources.source_work_floor` at least ``max_work``, unconditioned):
        then the exception's ``ticks`` is 0 and no work was spent. Building them stops with a ``max_nodes``
        :class:`~kcxai.compilers._limits.LimitHit` once the diagram and the trees' diagrams pass ``max_nodes``
        nodes (``None``: no limit), which a construction ending within ``max_nodes`` never reaches."""
        order = out.order
        level_of = [0] * spec.space.n_features
        for lv, f in enumerate(order):
            level_of[f] = lv
        rank = {c: j for j, c in enumerate(spec.priority)}
        k = spec.n_classes
        pairs = [(c, d) for c in range(k) for d in range(k) if rank[c] < rank[d]] if k > 2 else \
            ([(spec.priority[0], spec.priority[1])] if k == 2 else [])
        stats["nodes_by_level"] = out.per_level
        expanded = stats.setdefault("states_by_level", [0] * len(order))
        fractions = _fractions(spec.space, order)
        runs: list[tuple[Threshold, list[int], int]] = []
        if guard is not None:
            guard.set_size(lambda: len(out) + sum(len(th.src.level) for th, _, _ in runs))
        fixed = {order[lv]: v for lv, v in enumerate(values) if v is not None} if values is not None else None
        if max_work is not None and not fixed:
            floor = source_work_floor(spec, pairs)
            if floor >= max_work:
                raise Stopped(-1, 0, f"building the trees' diagrams takes at least {floor:,} units of work (the "
                                     f"tests of their paths), not less than the budget ({max_work:,} units): not "
                                     f"started", work=0)
        spent = 0
        for c, d in pairs:
            cap = None if max_work is None else max_work - spent
            nodes = None if max_nodes is None else max_nodes - len(out) - stats.get("source_nodes", 0)
            try:
                src, roots, s0 = _sources(spec, c, d, out, level_of, guard, fixed, cap, nodes)
            except Stopped as e:  # the work counted: this test's and the earlier tests'
                raise Stopped(e.test, e.ticks, e.why, None if e.work is None else e.work + spent) from None
            spent += src.work
            stats["source_nodes"] = stats.get("source_nodes", 0) + len(src.level)
            if values is not None:
                roots, reached = src.descend(roots, values)
                s0 += reached
            th = Threshold(src, out, guard, expanded, fractions=fractions, bottom_points=bottom_points, bottom=bottom,
                           monitor=monitor)
            runs.append((th, roots, s0))
        return cls(spec, out, pairs, runs, stats)

    def run(self, guard: Guard | None, theta: float = 0.0, max_work: int | None = None) -> tuple[list[int], list[bool]]:
        """One pass over every test (exact with ``theta = 0``, else a bounded round): per class its root and
        whether it is negated. :attr:`current` is the test running (when a limit or a monitor stops it). The
        pass stops (:class:`~kcxai.compilers._ensemble.stopped.Stopped`) at the first state at which
        :meth:`work` reaches ``max_work``."""
        nodes = []
        for j, (th, roots, s0) in enumerate(self.runs):
            self.current = j
            th.work_cap = None if max_work is None else th.work + max_work - self.work()
            try:
                nodes.append(th.run(roots, s0, theta))
            finally:
                th.work_cap = None
        self.stats["states"] = sum(self.stats["states_by_level"])
        out = self.out
        out.and_cap = None if max_work is None else out.and_steps + max(0, max_work - self.work()) // CONJ_WORK
        try:
            return self.classes(nodes, guard)
        finally:
            out.and_cap = None

    def work(self) -> int:
        """The work counted so far (the trees' diagrams, every pass of every test, and the conjunctions that
        make the class functions of more than two classes), in the units of
        :mod:`kcxai.compilers._ensemble.threshold` ("Work")."""
        return sum(th.src.work + th.work for th, _, _ in self.runs) + CONJ_WORK * self.out.and_steps

    def size(self) -> int:
        """Nodes of the diagram and of the trees' diagrams."""
        return len(self.out) + sum(len(th.src.level) for th, _, _ in self.runs)

    def unknown_states(self) -> int:
        """States sent to UNKNOWN by the last pass of every test."""
        return sum(th.unknown_states for th, _, _ in self.runs)

    def classes(self, nodes: Sequence[int], guard: Guard | None) -> tuple[list[int], list[bool]]:
        """The class roots from the tests' nodes."""
        spec, out = self.spec, self.out
        k = spec.n_classes
        if k == 1:
            return [TRUE], [False]
        if k == 2:
            first, second = self.pairs[0]
            roots = [0, 0]
            roots[first] = roots[second] = nodes[0]
            negated = [False, False]
            negated[second] = True
            return roots, negated
        tests = dict(zip(self.pairs, nodes))
        out_roots = []
        for c in range(k):
            f = TRUE
            for d in range(k):
                if d != c:
                    g = tests[c, d] if (c, d) in tests else out.negate(tests[d, c])
                    f = out.conj(f, g, guard)
            out_roots.append(f)
        return out_roots, [False] * k

    def done(self, index: int, th: Threshold) -> float:
        """The fraction of the construction done while test ``index`` runs in ``th``."""
        return (index + th.done) / max(len(self.runs), 1)

    def index(self, th: Threshold) -> int:
        """Which test ``th`` is."""
        for j, (other, _, _) in enumerate(self.runs):
            if other is th:
                return j
        return 0


def _sources(spec: AdditiveTrees, c: int, d: int, out: EnsembleDiagram, level_of: Sequence[int],
             guard: Guard | None, fixed: Mapping[int, int] | None = None,
             work_cap: int | None = None, node_cap: int | None = None) -> tuple[Sources, list[int], int]:
    """The trees of ``score_c >= score_d`` (restricted to ``x_f = fixed[f]``) as a sealed :class:`Sources`, their
    root residuals (trees that are leaves and constant trees go to the partial sum) and the starting partial
    sum; building them stops at ``work_cap`` units of work and past ``node_cap`` nodes, and (unconditioned)
    once the work spent predicts that the trees will not fit ``work_cap`` (:attr:`.sources.Sources.trees`)."""
    diffs, s0 = scaled_differences(spec, c, d)
    src = Sources(out.sizes, level_of, guard)
    src.work_cap, src.node_cap = work_cap, node_cap
    live = [(tree, values) for tree, values in zip(spec.trees, diffs) if len(set(values)) > 1]
    s0 += sum(values[0] for values in diffs if len(set(values)) == 1)
    src.trees = (0, len(live)) if work_cap is not None and not fixed else None
    roots = []
    for tree, values in live:
        r = src.add_tree(tree.paths, values, fixed)
        if src.level[r] == src.n_levels:
            s0 += src.lo[r]
        else:
            roots.append(r)
    src.work_cap = src.node_cap = src.trees = None
    return src, src.seal(roots), s0


def compile_additive(spec: AdditiveTrees, order: Sequence[int], guard: Guard | None = None,
                     stats: dict[str, Any] | None = None, *, fixed: Mapping[int, int] | None = None,
                     monitor: Callable[[Threshold], None] | None = None, bottom_points: int = BOTTOM_POINTS,
                     bottom: bool | None = None, max_work: int | None = None, max_source_nodes: int | None = None,
                     max_source_work: int | None = None) -> tuple[EnsembleDiagram, list[int], list[bool]]:
    """The diagram of every class of ``spec`` in ``order``: ``(diagram, roots, negated)``.

    Class ``c``'s function is node ``roots[c]``, complemented when ``negated[c]`` (two classes share one
    test). ``stats`` (if given) receives ``states`` (states expanded: a residual tuple with a partial sum
    that no cached interval covered), ``source_nodes`` (nodes of the trees' diagrams), and, per level,
    ``states_by_level`` and ``nodes_by_level`` (lists updated as the construction goes, so that they tell
    how far it got when a limit stops it).

    ``fixed`` (feature -> value number) builds the diagram of the points agreeing with it only: those
    features must come first in ``order`` (:func:`conditioned_order`); their levels get no node, so
    counting with them fixed to these values gives the conditioned counts. ``monitor`` is called with the
    running :class:`~kcxai.compilers._ensemble.threshold.Threshold` every 1,024 states (it may raise to stop).
    ``bottom_points`` and ``bottom`` set the vectors below a cut level (see
    :class:`~kcxai.compilers._ensemble.threshold.Threshold`). ``max_work``: the whole construction stops
    (:class:`~kcxai.compilers._ensemble.stopped.Stopped`) once its counted work (:meth:`Tests.work`) reaches it.
    ``max_source_nodes`` stops the trees' diagrams (a ``max_nodes`` :class:`~kcxai.compilers._limits.LimitHit`)
    once they and the diagram pass that many nodes, ``max_source_work`` once they take that much work
    (:class:`~kcxai.compilers._ensemble.stopped.Stopped`).

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.models import RandomForest
    >>> space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "abc"])
    >>> Leaf, Split = kcxai.Leaf, kcxai.Split
    >>> trees = [kcxai.DecisionTree(space, [0, 1], Split(n, {0: Leaf(0), 1: Leaf(1)})) for n in "abc"]
    >>> spec = RandomForest(space, [0, 1], trees).additive_trees()       # majority of three votes
    >>> diagram, roots, negated = compile_additive(spec, (0, 1, 2))
    >>> diagram.reachable(roots), negated     # class 0 is the complement of class 1's test
    (4, [False, True])
    """
    out = EnsembleDiagram(spec.space, order)
    stats = {} if stats is None else stats
    values: list[int | None] | None = None
    if fixed:
        values = [fixed.get(f) for f in order]
        if any(v is not None for v in values[len(fixed):]):
            raise ValueError("internal error: the fixed features must come first in the order")
    tests = Tests.prepare(spec, out, guard, stats, values, bottom_points, bottom, monitor,
                          max_work=max_source_work if max_work is None else min(max_work, max_source_work or max_work),
                          max_nodes=max_source_nodes)
    roots, negated = tests.run(guard, 0.0, max_work)
    stats["work"] = tests.work()
    if guard is not None:
        guard.set_size(lambda: len(out))
    return out, roots, negated


class BuiltEnsemble:
    """What :func:`build_ensemble` produced: the diagram, its class roots, the order and the cost.

    Attributes
    ----------
    order : tuple of int
    diagram : EnsembleDiagram
    roots : list of int
    negated : list of bool
    seconds : float
        Seconds until the diagram was built (order included).
    states : int
        Residual tuples expanded (the construction's work, see the module docstring).
    source_nodes : int
        Nodes of the trees' own diagrams.
    work : int
        The work counted (:meth:`Tests.work`).
    """

    def __init__(self, order: tuple[int, ...], diagram: EnsembleDiagram, roots: list[int], negated: list[bool],
                 seconds: float, counts: dict[str, Any]) -> None:
        self.order, self.diagram, self.roots, self.negated = order, diagram, roots, negated
        self.seconds = seconds
        self.states = counts.get("states", 0)
        self.source_nodes = counts.get("source_nodes", 0)
        self.work = counts.get("work", 0)

    def table(self, space: FeatureSpace) -> LevelTable:
        """The counting table of the class functions (negated roots materialised in float spaces, whose
        counts must not subtract)."""
        roots, negated = list(self.roots), list(self.negated)
        if not space.is_exact:
            roots = [self.diagram.negate(r) if neg else r for r, neg in zip(roots, negated)]
            negated = [False] * len(roots)
        feature, edges, new_roots = self.diagram.compact(roots)
        return LevelTable(space, self.order, feature, edges, new_roots, negated)


def with_progress(e: LimitHit, order: Sequence[int], counts: dict[str, Any]) -> LimitHit:
    """``e`` with what the construction had reached: per level (in ``order``), the states expanded and the
    diagram's nodes."""
    e.progress = {"order": tuple(order), "states_by_level": list(counts.get("states_by_level", [])),
                  "nodes_by_level": list(counts.get("nodes_by_level", []))}
    return e


def _past_work(guard: Guard, max_work: int | None, why: str) -> LimitHit:
    shown = "None" if max_work is None else f"{max_work:,}"
    return LimitHit(f"Compiling to {guard.language!r} stopped within max_work={shown} units of counted work while "
                    f"{guard.phase} ({why}; {guard.seconds:.1f} s). Raise 'max_work'{guard.advice}.", "max_work")


def build_ensemble(model: Any, opts: Any, guard: Guard) -> BuiltEnsemble:
    """The ``"ensemble"`` construction of ``model`` (with ``additive_trees()``) under ``opts``'s ``order``
    (``"auto"``: :func:`ensemble_order`) and ``guard``'s limits, and ``opts.max_work`` if it has one: a
    construction whose counted work is past it is refused (:class:`~kcxai.compilers._limits.LimitHit`,
    ``limit`` ``"max_work"``), wherever it was when it passed it."""
    spec = model.additive_trees()
    if opts.order == "auto":
        order = ensemble_order(spec)
    else:
        order = feature_order(model, opts.order, guard)
    guard.phase = "building the ensemble's diagram feature by feature"
    counts: dict[str, Any] = {}
    max_work = getattr(opts, "max_work", None)
    try:
        diagram, roots, negated = compile_additive(spec, order, guard, counts, max_work=max_work)
    except MemoryError:
        raise with_progress(guard.out_of_memory("Python failed to allocate"), order, counts) from None
    except LimitHit as e:
        raise with_progress(e, order, counts) from None
    except Stopped as e:  # stopped by the counted work (reached or predicted): the same on every machine
        raise with_progress(_past_work(guard, max_work, e.why), order, counts) from None
    if max_work is not None and counts["work"] >= max_work:  # reached between two checks: refused all the same
        raise with_progress(_past_work(guard, max_work, f"it counted {counts['work']:,} units"), order, counts)
    guard.set_size(None)
    diagram.seal()
    guard.check(diagram.reachable(roots))
    return BuiltEnsemble(tuple(order), diagram, roots, negated, guard.seconds, counts)
