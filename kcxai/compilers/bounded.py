"""The ``bounded`` language: a tree ensemble's diagram within a budget, exact where it fits, with exact bounds.

The ensemble's diagram is built feature by feature (:mod:`kcxai.compilers._ensemble`): exactly when the
exact pass is predicted to end within ``max_seconds``, else in rounds that send the least probable states
to a third terminal, UNKNOWN, so that the diagram fits the budget (:mod:`kcxai.compilers._ensemble.bounded`).
Its oracle (:class:`~kcxai.compilers._tables.bounds.DiagramBoundsOracle`) answers every query with exact
lower and upper bounds on the weight of the points that disagree with a class
(:class:`~kcxai.oracle.BoundsOracle`): equal, hence the exact count, where the diagram decides every point
of the cell.

The compiled form's stats say how much was left undecided: ``unknown_weight`` (exact, relative to
``space.total_weight``) and ``unknown`` (the same as a probability), ``exact`` (nothing undecided),
``theta`` and ``schedule`` (the passes that made it: compiling again with ``schedule=`` replays them and
makes the same diagram, whatever the clock says).

Options
-------
max_seconds : float, default 30
    The budget: wall-clock seconds for the whole compilation. The construction stops at 85% of it and
    keeps the rest for the counting tables.
max_nodes : int or None, default 2,000,000
    Nodes of the diagram while building (and the trees' own).
max_memory : int or None, default 4 GiB
    Growth of the resident memory while building, in bytes.
order : "auto" or a sequence of features, default "auto"
    The feature order (``"auto"``: :func:`~kcxai.compilers._ensemble.ensemble_order`).
progress : callable or None
    Called with a :class:`~kcxai.compilers._ensemble.progress.Progress` about every 0.25 s and at the end of
    each pass (for a progress bar).
schedule : sequence or None
    Replay these passes (from a compiled form's ``stats["schedule"]``) instead of timing new ones.

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
from kcxai.compilers._ensemble.bounded import BoundedBuild, compile_bounded
from kcxai.compilers._ensemble.diagram import FALSE, TRUE, UNKNOWN, EnsembleDiagram
from kcxai.compilers._ensemble.progress import Progress
from kcxai.compilers._limits import DEFAULT_MAX_MEMORY, DEFAULT_MAX_NODES, Guard, LimitHit, advice
from kcxai.compilers._orders import OrderSpec, check_order, feature_order
from kcxai.compilers._tables.bounds import DiagramBoundsOracle
from kcxai.compilers._tables.level import LevelTable
from kcxai.compilers.compiled import CompiledModel, CompileStats
from kcxai.compilers.language import LanguageOptions

__all__ = ["compile", "BoundedOptions", "DEFAULT_BUDGET", "BUILD_SHARE", "bounds_oracle"]

#: The default ``max_seconds`` of a bounded compilation.
DEFAULT_BUDGET = 30.0
#: The share of ``max_seconds`` (and ``max_memory``) the construction may use; the rest is for the tables.
BUILD_SHARE = 0.85

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


def compile(model: Any, **options: Any) -> CompiledModel:
    """Compile a tree ensemble to a bounded diagram (see the module docstring)."""
    opts = BoundedOptions.from_kwargs(**options)
    if not is_additive(model):
        raise InvalidInputError(
            "The 'bounded' language compiles tree ensembles whose class scores are sums of leaf scores "
            f"(RandomForest, BoostedTrees). Got {type(model).__name__}; use 'obdd' or 'sdd'.")
    hard = Guard("bounded", opts.max_nodes, opts.max_seconds, opts.max_memory, advice(model, "bounded"))
    soft = Guard("bounded", opts.max_nodes, BUILD_SHARE * opts.max_seconds,
                 None if opts.max_memory is None else int(BUILD_SHARE * opts.max_memory), hard.advice)
    spec = model.additive_trees()
    order = ensemble_order(spec) if opts.order == "auto" else feature_order(model, opts.order, hard)
    soft.phase = "building the ensemble's bounded diagram"
    built = _build(spec, order, soft, opts)
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


def _build(spec: Any, order: Sequence[int], soft: Guard, opts: BoundedOptions) -> BoundedBuild:
    """The bounded construction; if even the trees' diagrams do not fit the budget, the diagram that decides
    nothing (every class UNKNOWN everywhere)."""
    try:
        return compile_bounded(spec, order, soft, progress=opts.progress, schedule=opts.schedule)
    except (LimitHit, MemoryError) as e:
        nothing = EnsembleDiagram(spec.space, order, three_valued=True)
        return BoundedBuild(nothing, [UNKNOWN] * spec.n_classes, False, 1.0, ((1.0, None, None),),
                            f"the trees' diagrams did not fit: {e}", {})
