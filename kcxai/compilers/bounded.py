"""The ``bounded`` language: a tree ensemble's diagram within a budget, exact where it fits, with exact bounds.

The ensemble's diagram is built feature by feature (:mod:`kcxai.compilers._ensemble`): exactly when the
exact pass is predicted to fit the budget, else in rounds that send the least probable states to a third
terminal, UNKNOWN, so that the diagram fits the budget (:mod:`kcxai.compilers._ensemble.bounded`).
Its oracle (:class:`~kcxai.compilers._tables.bounds.DiagramBoundsOracle`) answers every query with exact
lower and upper bounds on the weight of the points that disagree with a class
(:class:`~kcxai.oracle.BoundsOracle`): equal, hence the exact count, where the diagram decides every point
of the cell.

The budget counts work, not seconds. ``max_seconds`` is converted to units of counted work
(:mod:`kcxai.compilers._ensemble.threshold`, "Work") at a fixed rate, :data:`WORK_PER_SECOND`, and every
decision of the construction (exact or bounded, where each round cuts, when to stop) is taken from the
work counted, so the same model, distribution and ``max_seconds`` give the same diagram on any machine,
under any load, in every run. The rate was measured on the machine the library is developed on (see
:data:`WORK_PER_SECOND`): there a budget of ``max_seconds`` takes about that many seconds; a slower or
busier machine takes longer for the same diagram. A wall-clock safety limit of :data:`SAFETY` times
``max_seconds`` (at least :data:`SAFETY_FLOOR` seconds, :func:`safety_seconds`) and ``max_memory`` still stop
a runaway; when it is what stopped the construction,
``stats["reproducible"]`` is False and ``stats["stopped"]`` says so.

The compiled form's stats say how much was left undecided: ``unknown_weight`` (exact, relative to
``space.total_weight``) and ``unknown`` (the same as a probability), ``exact`` (nothing undecided),
``theta`` and ``schedule`` (the passes that made it: compiling again with ``schedule=`` replays them and
makes the same diagram), ``work`` and ``max_work`` (the work counted and the budget in work units),
``reproducible``.

Options
-------
max_seconds : float, default 30
    The budget, in seconds of work at :data:`WORK_PER_SECOND` units per second: the construction may use
    :data:`BUILD_SHARE` of it (the rest is for the counting tables). Not a wall-clock limit: the wall-clock
    safety limit is :func:`safety_seconds` of it.
max_nodes : int or None, default 2,000,000
    Nodes of the diagram while building (and the trees' own), checked every 1,024 states: a pass that
    reaches it is stopped like one that uses the budget up.
max_memory : int or None, default 4 GiB
    Growth of the resident memory while building, in bytes (a safety limit: the result is then not
    reproducible).
order : "auto" or a sequence of features, default "auto"
    The feature order (``"auto"``: :func:`~kcxai.compilers._ensemble.ensemble_order`).
progress : callable or None
    Called with a :class:`~kcxai.compilers._ensemble.progress.Progress` about every 0.25 s and at the end of
    each pass (for a progress bar; it changes nothing else).
schedule : sequence or None
    Replay these passes (from a compiled form's ``stats["schedule"]``) instead of budgeting new ones.

Examples
--------
>>> import kcxai
>>> tree = kcxai.datasets.running_example_tree()
>>> forest = kcxai.models.RandomForest(tree.space, tree.classes, [tree])
>>> c = kcxai.compile_model(forest, "bounded")
>>> c.language, c.stats["exact"], c.stats["unknown"]
('bounded', True, Fraction(0, 1))
>>> c.oracle.disagree_bounds((1, 1, 1, 1, 0, 0, 0, 0, 1), 1, frozenset(range(9)))
(0, 0)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Union

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai._params import NONE, POSITIVE_INT, Range, check
from kcxai.compilers._ensemble import ensemble_order, is_additive
from kcxai.compilers._ensemble.bounded import BoundedBuild, compile_bounded, safety_message
from kcxai.compilers._ensemble.diagram import FALSE, TRUE, UNKNOWN, EnsembleDiagram
from kcxai.compilers._ensemble.progress import Progress
from kcxai.compilers._ensemble.stopped import Stopped
from kcxai.compilers._limits import DEFAULT_MAX_MEMORY, DEFAULT_MAX_NODES, Guard, LimitHit, advice
from kcxai.compilers._orders import OrderSpec, check_order, feature_order
from kcxai.compilers._tables.bounds import DiagramBoundsOracle
from kcxai.compilers._tables.level import LevelTable
from kcxai.compilers.compiled import CompiledModel, CompileStats
from kcxai.compilers.language import LanguageOptions

__all__ = ["compile", "BoundedOptions", "DEFAULT_BUDGET", "BUILD_SHARE", "WORK_PER_SECOND", "SAFETY", "SAFETY_FLOOR",
           "work_budget", "safety_seconds", "bounds_oracle"]

#: The default ``max_seconds`` of a bounded compilation.
DEFAULT_BUDGET = 30.0
#: The share of ``max_seconds`` (and ``max_memory``) the construction may use; the rest is for the tables.
BUILD_SHARE = 0.85
#: Units of counted work per second of budget: the construction's rate in CPU time on the development machine
#: (8.3-14.8 million units per CPU second on the default RandomForest, GradientBoosting 100x3,
#: HistGradientBoosting and XGBoost 100x6 behind adult's one-hot pipeline, 2026-11-28: docs/results.md).
WORK_PER_SECOND = 12_000_000
#: The wall-clock safety limit, as a multiple of ``max_seconds`` (a runaway; a result it stopped is not
#: reproducible), and its least value in seconds (so that a tiny budget is not stopped by the clock).
SAFETY = 10.0
SAFETY_FLOOR = 10.0

_SECONDS = Range(numbers.Real, 0, closed="neither", description="a positive number")


@dataclass(frozen=True)
class BoundedOptions(LanguageOptions):
    """Options of the ``bounded`` language (see :mod:`kcxai.compilers.bounded`)."""

    language = "bounded"
    max_seconds: float = DEFAULT_BUDGET
    max_nodes: Union[int, None] = DEFAULT_MAX_NODES
    max_memory: Union[int, None] = DEFAULT_MAX_MEMORY
    order: OrderSpec = "auto"
    progress: Union[Callable[[Progress], None], None] = None
    schedule: Union[Sequence[Any], None] = None

    def validate(self) -> None:
        check("max_seconds", self.max_seconds, _SECONDS)
        if math.isinf(self.max_seconds):
            raise InvalidInputError(f"'max_seconds' must be a finite positive number. Got {self.max_seconds!r} "
                                    "instead.")
        check("max_nodes", self.max_nodes, (POSITIVE_INT, NONE))
        check("max_memory", self.max_memory, (POSITIVE_INT, NONE))
        object.__setattr__(self, "order", check_order(self.order))
        if self.progress is not None and not callable(self.progress):
            raise InvalidTypeError(f"'progress' must be a callable taking a Progress, or None. Got "
                                   f"{self.progress!r} instead.")
        if self.schedule is not None:
            object.__setattr__(self, "schedule", _checked_schedule(self.schedule))


def _checked_schedule(schedule: Any) -> tuple[tuple[float, int | None, int | None], ...]:
    try:
        steps = tuple((float(t), None if k is None else int(k), None if n is None else int(n)) for t, k, n in schedule)
    except (TypeError, ValueError):
        raise InvalidInputError(f"'schedule' must be a compiled form's stats['schedule'] (triples (theta, test, "
                                f"states)). Got {schedule!r} instead.") from None
    if not steps or any(not 0 <= t <= 1 for t, _, _ in steps):
        raise InvalidInputError(f"'schedule' must be a non-empty sequence of (theta, test, states) with theta in "
                                f"[0, 1]. Got {schedule!r} instead.")
    return steps


def work_budget(max_seconds: float) -> int:
    """The work units the construction may use for a budget of ``max_seconds`` (see the module docstring).

    >>> work_budget(30.0) == round(BUILD_SHARE * 30.0 * WORK_PER_SECOND)
    True
    """
    return round(BUILD_SHARE * max_seconds * WORK_PER_SECOND)


def safety_seconds(max_seconds: float) -> float:
    """The wall-clock safety limit of a compilation with budget ``max_seconds``: :data:`SAFETY` times it, at
    least :data:`SAFETY_FLOOR`.

    >>> safety_seconds(30.0), safety_seconds(0.5)
    (300.0, 10.0)
    """
    return max(SAFETY * max_seconds, SAFETY_FLOOR)


def compile(model: Any, **options: Any) -> CompiledModel:
    """Compile a tree ensemble to a bounded diagram (see the module docstring)."""
    opts = BoundedOptions.from_kwargs(**options)
    if not is_additive(model):
        raise InvalidInputError(
            "The 'bounded' language compiles tree ensembles whose class scores are sums of leaf scores "
            f"(RandomForest, BoostedTrees). Got {type(model).__name__}; use 'obdd' or 'sdd'.")
    safety = safety_seconds(opts.max_seconds)
    hard = Guard("bounded", opts.max_nodes, safety, opts.max_memory, advice(model, "bounded"))
    # the build's guard is the safety net only: nodes and work are checked by the construction, at counted states
    soft = Guard("bounded", None, BUILD_SHARE * safety,
                 None if opts.max_memory is None else int(BUILD_SHARE * opts.max_memory), hard.advice)
    spec = model.additive_trees()
    order = ensemble_order(spec) if opts.order == "auto" else feature_order(model, opts.order, hard)
    soft.phase = "building the ensemble's bounded diagram"
    max_work = work_budget(opts.max_seconds)
    built = _build(spec, order, soft, opts, max_work)
    hard.phase = "building the bounds' counting table"
    space = model.space
    oracle = bounds_oracle(model, built, order)
    table = oracle.table
    # nothing was sent to UNKNOWN: no weight is left undecided (in float spaces not even the rounding's)
    unknown = space.arith.zero if built.exact else oracle.unknown_weight((0,) * space.n_features, frozenset())
    stats = {
        "size": table.n_nodes, "variables": space.n_features, "compile_seconds": hard.seconds,
        "exact": bool(built.exact or not unknown), "unknown_weight": unknown,
        "unknown": space.distribution.probability(unknown), "theta": built.theta, "schedule": built.schedule,
        "stopped": built.stopped, "diagram_nodes": built.diagram.reachable(built.roots),
        "counting_nodes": table.n_nodes, "counting_edges": table.n_edges, "states": built.stats.get("states", 0),
        "source_nodes": built.stats.get("source_nodes", 0), "memory_bytes": hard.peak_memory(),
        "work": built.stats.get("work", 0), "max_work": max_work, "reproducible": built.reproducible,
        "order": tuple(space.names[f] for f in order)}
    kwargs = {**opts.as_kwargs(), "order": opts.order, "schedule": built.schedule, "progress": None}
    return CompiledModel(model=model, oracle=oracle, language="bounded", backend="kcxai",
                         stats=CompileStats.from_mapping(stats, size_unit="diagram nodes"), options=kwargs)


def bounds_oracle(model: Any, built: BoundedBuild, order: Sequence[int]) -> DiagramBoundsOracle:
    """The bounds oracle of a bounded construction's diagram (its proven and possible class functions in one
    counting table)."""
    built.diagram.seal()
    proven = [built.diagram.settle(r, FALSE) for r in built.roots]
    possible = [built.diagram.settle(r, TRUE) for r in built.roots]
    feature, edges, roots = built.diagram.compact(proven + possible)
    table = LevelTable(model.space, order, feature, edges, roots)
    return DiagramBoundsOracle(model.space, table, len(built.roots), model.predict_point)


def _build(spec: Any, order: Sequence[int], soft: Guard, opts: BoundedOptions, max_work: int) -> BoundedBuild:
    """The bounded construction; if even the trees' diagrams do not fit the budget (or are predicted not to,
    from their paths' tests or the pace of the trees begun: step 0 of :mod:`kcxai.compilers._ensemble.bounded`),
    the diagram that decides nothing (every class UNKNOWN everywhere), with the work actually spent."""
    try:
        return compile_bounded(spec, order, soft, max_work=max_work, max_nodes=opts.max_nodes,
                               progress=opts.progress, schedule=opts.schedule)
    except Stopped as e:  # the work budget ran out while the trees' diagrams were built
        return _nothing(spec, order, f"the trees' diagrams did not fit: {e}", True,
                        {"work": max_work if e.work is None else e.work})
    except LimitHit as e:
        return _nothing(spec, order, f"the trees' diagrams did not fit: {safety_message(e)}", False)
    except MemoryError:
        return _nothing(spec, order, "the trees' diagrams did not fit: Python failed to allocate memory (not "
                                     "reproducible)", False)


def _nothing(spec: Any, order: Sequence[int], why: str, reproducible: bool,
             stats: dict[str, Any] | None = None) -> BoundedBuild:
    nothing = EnsembleDiagram(spec.space, order, three_valued=True)
    return BoundedBuild(nothing, [UNKNOWN] * spec.n_classes, False, 1.0, ((1.0, None, None),), why, stats or {},
                        reproducible)
