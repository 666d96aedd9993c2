"""Relevance tests decided from proven bounds (issue 28, item 2): the interval first, then refinements.

A ``bounded`` compiled form (:mod:`kcxai.compilers.bounded`) answers every query with exact lower and
upper bounds on the disagreeing weight ``W(S)`` (a :class:`~kcxai.oracle.BoundsOracle`). Every relevance
test of every method is a threshold on it, ``W(S) <= t`` (:class:`Threshold`): ``t = delta * total`` for
the I-delta test, ``t = (1 - p) * consistent(S)`` for precision ``p``. The :class:`Prover` of a query
decides each test:

1. from the interval, when it lies wholly on one side of ``t`` (``upper <= t``: holds; ``lower > t``:
   fails): proven, and exact when the bounds are equal;
2. else from the branch and bound over boxes of the free features
   (:class:`~kcxai.engines._box_bounds.BoxBounds`), until the interval decides ``t``, within
   :attr:`RefineBudget.box_boxes` boxes for the test and :attr:`RefineBudget.query_boxes` for all the
   tests of the query, and as many rows (leaves met by the boxes evaluated, :attr:`RefineBudget.box_rows`)
   (measured on the adult pipelines, it decides every test the conditioned compile
   decides at a tenth to a hundredth of the CPU: see ``docs/results.md``);
3. else from the exact counts of the ensemble conditioned on the instance's values of ``S``
   (:func:`~kcxai.compilers._ensemble.conditioned.conditioned_counts`: fixing features collapses trees),
   within :attr:`RefineBudget.conditioned_nodes` (not tried for a subset of a set whose compile did not fit);
4. only then, for a method that accepts certified estimates (``min_idrs``, ``local_cdrs``), by
   certified sampling of that one query (:meth:`~kcxai.engines.sampling.SamplingOracle.certify`, its
   stream seeded from the row, the set and the seed): marked ``sampled``. A method that needs exact
   answers (the searches, the dual sets) raises :class:`~kcxai.NotProvenError` naming the option that
   makes the model exact.

The budgets are counted in nodes and boxes, not seconds, so that the same row gets the same answer
whatever the machine's load (the conditioned compile also has a safety limit in seconds,
:attr:`RefineBudget.conditioned_seconds`, which only a machine far slower than usual reaches). Nothing
outlives the query but the model's box-bounds tables, which hold no state between queries. Within a
query, the tightest bounds proven on each fixed set are kept, so that a set asked again (a deletion
loop's result, whose interval the result prints) starts from them rather than from the oracle's.

The :class:`Proof` of a query says how its decisions were taken: how many by each step, the widest
interval a proven decision used (on the measure the method bounds: the error, or the precision), and
the bounds that certified the sampled ones, and why each sampled test was not decided
(:attr:`Proof.missed`). An explanation carries it (``decided``: ``"exact"``, ``"proven"`` or ``"sampled"``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, cast

from kcxai._deadline import Deadline
from kcxai._errors import CompilationLimitError, NotProvenError
from kcxai.arithmetic import Bound, Probability, Weight
from kcxai.compilers._ensemble import is_additive
from kcxai.compilers._ensemble.conditioned import conditioned_counts
from kcxai.engines._box_bounds import BoxBounds, decides
from kcxai.engines.choose import cached_compiled
from kcxai.oracle import BoundsOracle, point_box
from kcxai.space import FeatureSpace
from kcxai._types import Point

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.engines.sampling import SamplingOracle

__all__ = ["RefineBudget", "REFINE", "Threshold", "Proof", "Prover", "DECIDED", "box_bounds_of", "EXACT_ADVICE"]

#: How a result was decided: every decision from exact counts; some from proven bounds (none sampled);
#: some by certified sampling.
DECIDED = ("exact", "proven", "sampled")

#: What makes a bounded model's answers exact (the end of :class:`~kcxai.NotProvenError`'s message).
EXACT_ADVICE = ("a larger fit budget makes the model's form exact (Explainer(..., fit_budget=...), or "
                "compile_model(model, 'bounded', max_seconds=...) / compile_model(model, 'obdd', max_seconds=...))")


@dataclass(frozen=True)
class RefineBudget:
    """The budgets of the refinements of one query's relevance tests (declared once: :data:`REFINE`).

    Counted in work (boxes, nodes), not seconds, so that an answer does not depend on the machine's load.

    Attributes
    ----------
    box_boxes : int
        Boxes the branch and bound may evaluate for one test (step 2).
    query_boxes : int
        Boxes it may evaluate for all the tests of one query together (an explanation's deletion loop):
        once spent, the remaining tests go to the conditioned compile and then to sampling.
    conditioned_nodes : int
        Nodes the conditioned exact compile may build to decide a test (step 3): small, since on the adult
        pipelines a compile rarely fits where the branch and bound did not decide, and a failed one is costly.
    count_nodes : int
        Nodes it may build where an exact count is needed (a result's own weight; the methods that need
        exact counts).
    conditioned_seconds : float
        Its safety limit in wall-clock seconds: far above what the node budgets take (at most a few seconds
        under load), so that the clock, which would make the answer depend on the machine, stops nothing
        but a runaway compile.
    final_boxes : int
        Boxes the branch and bound may evaluate to tighten the bounds of a result's own set when it could
        not be counted (what the result prints), beyond what its tests proved.
    box_rows, query_rows, final_rows : int
        The same three budgets in rows (:attr:`~kcxai.engines._box_bounds.WeightBounds.rows`: per box
        evaluated, the leaves of its undecided trees that meet it), whichever limit comes first. A box of
        GradientBoosting 100x3 on adult reads 85 rows on average (14.9 M rows in 176,279 boxes, one row's
        tests), so these stop its searches after about twice its box budgets; a box of the default
        RandomForest reads thousands, and without them one row's tests took 88 s of CPU.
    """

    box_boxes: int = 60_000
    query_boxes: int = 240_000
    conditioned_nodes: int = 2_000
    count_nodes: int = 20_000
    conditioned_seconds: float = 60.0
    final_boxes: int = 40_000
    box_rows: int = 10_000_000
    query_rows: int = 40_000_000
    final_rows: int = 7_000_000


#: The refinement budgets every query uses.
REFINE = RefineBudget()


@dataclass(frozen=True)
class Threshold:
    """One relevance test ``W(S) <= limit`` on the disagreeing weight of a fixed set.

    Attributes
    ----------
    fixed : frozenset of int
    limit : int, Fraction or float
        Exact (a ``Fraction`` in exact spaces).
    measure : {"error", "precision"}
        What the method bounds (the I-delta or the C-delta test).
    value : Fraction or float
        Its bound (``delta`` or the precision).
    consistent : int or float
        The weight of the cell ``x_S = v_S``.
    """

    fixed: frozenset[int]
    limit: Any
    measure: str
    value: Probability
    consistent: Weight | None  # the consistent weight of ``fixed``: what a precision test's measure needs

    @staticmethod
    def error(space: FeatureSpace, point: Point, fixed: frozenset[int], delta: Probability) -> "Threshold":
        """``error(S) <= delta``: ``W <= delta * total``."""
        total = space.total_weight
        limit = delta * total if isinstance(delta, Fraction) and isinstance(total, int) else float(delta) * total
        return Threshold(fixed, limit, "error", delta, None)

    @staticmethod
    def precision(space: FeatureSpace, point: Point, fixed: frozenset[int], precision: Probability) -> "Threshold":
        """``precision(S) >= p``: ``W <= (1 - p) * consistent(S)``."""
        cons = space.consistent_weight(point, fixed)
        limit = ((1 - precision) * cons if isinstance(precision, Fraction) and isinstance(cons, int)
                 else (1.0 - float(precision)) * cons)
        return Threshold(fixed, limit, "precision", precision, cons)

    def on_measure(self, space: FeatureSpace, lower: Weight, upper: Weight) -> tuple[Probability, Probability]:
        """The interval ``[lower, upper]`` of ``W`` as an interval of the measure tested (error or precision)."""
        if self.measure == "error":
            return space.probability(lower), space.probability(upper)
        arith, consistent = space.arith, self.consistent
        if consistent is None:  # pragma: no cover - precision tests carry it (Threshold.precision)
            raise ValueError("a precision threshold needs its consistent weight")
        return arith.complement(upper, consistent), arith.complement(lower, consistent)


@dataclass
class Proof:
    """How one query's relevance tests were decided.

    Attributes
    ----------
    by : dict of str to int
        Decisions taken ``"exact"`` (equal bounds), by ``"bounds"`` (an interval on one side),
        ``"conditioned"`` (the conditioned exact compile), ``"box"`` (the branch and bound) and
        ``"sampled"``.
    widest : tuple or None
        The widest interval (on the measure tested) a proven decision used.
    missed : dict of str to int
        Per reason, the sampled decisions the refinements did not decide: the branch and bound's stop
        (``"box max_boxes"``, ``"box max_rows"``, ``"box deadline"``, or ``"box none"`` when the query's boxes
        or rows were spent),
        then ``"conditioned limit"``, ``"conditioned clock"`` (its safety limit in seconds) or
        ``"conditioned skipped"`` (a superset's compile did not fit), joined by ``", "``. A reason naming the
        clock (``"box deadline"``, ``"conditioned clock"``) is one the machine's speed decided: the only
        decisions that another run may take otherwise.
    cpu : dict of str to float
        CPU seconds spent in each refinement (``"box"``, ``"conditioned"``): what a benchmark reports; no
        answer reads it.
    """

    by: dict[str, int] = field(default_factory=lambda: dict.fromkeys(("exact", "bounds", "box", "conditioned",
                                                                        "sampled"), 0))
    widest: tuple[Probability, Probability] | None = None
    missed: dict[str, int] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=lambda: {"box": 0.0, "conditioned": 0.0})

    @property
    def sampled(self) -> int:
        """Decisions taken by sampling."""
        return self.by["sampled"]

    @property
    def decided(self) -> str:
        """``"sampled"`` if any decision was, else ``"proven"`` if any used an interval, else ``"exact"``."""
        if self.by["sampled"]:
            return "sampled"
        return "proven" if self.widest is not None else "exact"

    def widen(self, interval: tuple[Probability, Probability]) -> None:
        """Remember ``interval`` if it is the widest used so far."""
        lo, hi = interval
        if hi > lo and (self.widest is None or hi - lo > self.widest[1] - self.widest[0]):
            self.widest = (lo, hi)


_BOX_LOCK = threading.Lock()


def box_bounds_of(model: Any) -> BoxBounds:
    """The model's :class:`BoxBounds` tables, built once and kept by the model (they hold no query state)."""
    got = model.__dict__.get("_box_bounds")
    if got is None:
        with _BOX_LOCK:
            got = model.__dict__.get("_box_bounds")
            if got is None:
                got = model.__dict__["_box_bounds"] = BoxBounds(model)
    return cast(BoxBounds, got)


class Prover:
    """The relevance tests of one query over a bounds oracle (see the module docstring).

    Parameters
    ----------
    oracle : BoundsOracle
    model : classifier or None
        The tree ensemble (refinements need it; without one an undecided test raises).
    point, label :
        The instance's point and class.
    deadline : Deadline
        The call's time limit.
    sample : bool
        Whether an undecided test may be sampled (the method accepts certified estimates).
    what : str
        The method's name, for errors.
    budget : RefineBudget, optional
        Default :data:`REFINE` (read when the prover is made).
    certified : dict, optional
        Where a sampled decision found relevant keeps the rate bound it certified, per fixed set (the
        query's store, :attr:`kcxai.explain._query.Query.certified`); a new one if not given.
    """

    def __init__(self, oracle: BoundsOracle, model: Any, point: Point, label: int, deadline: Deadline, *,
                 sample: bool, what: str, budget: RefineBudget | None = None,
                 certified: dict[frozenset[int], float] | None = None) -> None:
        self.oracle = oracle
        self.space: FeatureSpace = oracle.space
        self.model = model if model is not None and is_additive(model) else None
        self.point = point
        self.label = label
        self.deadline = deadline
        self.sample = sample
        self.what = what
        self.budget = REFINE if budget is None else budget
        self.proof = Proof()
        #: Boxes and rows the branch and bound may still evaluate for this query's tests
        #: (:attr:`RefineBudget.query_boxes`, :attr:`RefineBudget.query_rows`).
        self.boxes_left = self.budget.query_boxes
        self.rows_left = self.budget.query_rows
        #: Per fixed set, the tightest proven bounds on its weight found so far (equal once counted); all the
        #: features fixed leave the instance alone, which gets its own class.
        zero, everything = self.space.arith.zero, frozenset(range(self.space.n_features))
        self._known: dict[frozenset[int], tuple[Weight, Weight]] = {everything: (zero, zero)}
        #: Fixed sets whose conditioned compile did not fit: a subset of one is not tried (fixing fewer
        #: features leaves more of every tree).
        self._too_big: list[tuple[frozenset[int], int]] = []  # with the node budget that did not suffice
        self._stop = "limit"  # why the last conditioned compile failed: its node/memory limit, or the clock
        self._sampler: SamplingOracle | None = None
        #: The tests decided so far, by (fixed set, limit).
        self._decided: dict[tuple[frozenset[int], object], bool] = {}
        #: Per fixed set a sampled decision found relevant: the rate bound it certified.
        self.certified: dict[frozenset[int], float] = {} if certified is None else certified

    # -- the steps ------------------------------------------------------------------------------------------

    def decide(self, test: Threshold, interval: tuple[Weight, Weight] | None = None) -> bool:
        """Whether ``W(test.fixed) <= test.limit``: from ``interval`` (the oracle's, asked if not given),
        then the refinements in order (see the module docstring). A test asked again (the passes of
        ``local_cdrs``) is answered as the first time, and counted once."""
        key = (test.fixed, test.limit)
        known = self._decided.get(key)
        if known is None:
            known = self._decided[key] = self._decide(test, interval)
        return known

    def _decide(self, test: Threshold, interval: tuple[Weight, Weight] | None) -> bool:
        lower, upper = self._interval(test.fixed, interval)
        got = decides(lower, upper, test.limit)
        if got is not None:
            self._proven("exact" if lower == upper else "bounds", test, lower, upper)
            return got
        why = "box none"
        if self.model is not None and self.boxes_left > 0 and self.rows_left > 0:
            c = time.process_time()
            lower, upper, stopped = self._box(test, lower, upper)
            self.proof.cpu["box"] += time.process_time() - c
            got = decides(lower, upper, test.limit)
            if got is not None:
                self._proven("box", test, lower, upper)
                return got
            why = f"box {stopped}"
        skipped = self._skips(test.fixed, self.budget.conditioned_nodes)
        c = time.process_time()
        exact = self.conditioned(test.fixed)
        self.proof.cpu["conditioned"] += time.process_time() - c
        if exact is not None:
            self.proof.by["conditioned"] += 1
            return bool(exact <= test.limit)
        why += ", conditioned skipped" if skipped else f", conditioned {self._stop}"
        self.proof.missed[why] = self.proof.missed.get(why, 0) + 1
        return self._sampled(test, lower, upper)

    def _box(self, test: Threshold, lower: Weight, upper: Weight) -> tuple[Weight, Weight, str]:
        """The branch and bound on ``test`` within the budgets: the bounds on ``W(test.fixed)`` it reached
        (met with ``[lower, upper]``) and why it stopped."""
        box = box_bounds_of(self.model).decide(
            point_box(self.space, self.point, test.fixed), self.label, test.limit, deadline=self.deadline,
            max_boxes=min(self.budget.box_boxes, self.boxes_left), max_rows=min(self.budget.box_rows, self.rows_left))
        self.boxes_left -= box.boxes
        self.rows_left -= box.rows
        lower, upper = self._tighten(test.fixed, max(lower, box.lower), min(upper, box.upper))
        return lower, upper, box.stopped

    def _interval(self, fixed: frozenset[int], interval: tuple[Weight, Weight] | None) -> tuple[Weight, Weight]:
        """The tightest bounds known on ``W(fixed)``: ``interval`` (the oracle's, asked if not given and not
        known yet) met with what earlier refinements proved."""
        if interval is None:
            known = self._known.get(fixed)
            if known is not None:
                return known
            interval = self.oracle.disagree_bounds(self.point, self.label, fixed)
        return self._tighten(fixed, *interval)

    def _tighten(self, fixed: frozenset[int], lower: Weight, upper: Weight) -> tuple[Weight, Weight]:
        """Keep ``[lower, upper]`` met with the bounds known on ``W(fixed)``; return the meet."""
        known = self._known.get(fixed)
        if known is not None:
            lower, upper = max(lower, known[0]), min(upper, known[1])
        self._known[fixed] = (lower, upper)
        return lower, upper

    def _skips(self, fixed: frozenset[int], nodes: int) -> bool:
        """Whether a superset of ``fixed`` did not compile within ``nodes`` or more."""
        return any(fixed <= big and nodes <= tried for big, tried in self._too_big)

    def conditioned(self, fixed: frozenset[int], nodes: int | None = None) -> Weight | None:
        """The exact ``W(fixed)`` from the conditioned compile within ``nodes`` (default
        :attr:`RefineBudget.conditioned_nodes`), or ``None`` (a failure is kept: a subset is not tried again
        within as many nodes or fewer)."""
        known = self._known.get(fixed)
        if known is not None and known[0] == known[1]:
            return known[0]
        nodes = self.budget.conditioned_nodes if nodes is None else nodes
        if self.model is None or self._skips(fixed, nodes):
            return None
        self.deadline.check()
        try:
            got = conditioned_counts(self.model, self.point, self.label, fixed,
                                     max_seconds=self.budget.conditioned_seconds,
                                     max_nodes=nodes).disagree
        except (CompilationLimitError, MemoryError) as e:
            self._too_big.append((fixed, nodes))
            self._stop = "clock" if getattr(e, "limit", None) == "max_seconds" else "limit"
            return None
        self._known[fixed] = (got, got)
        return got

    def _proven(self, how: str, test: Threshold, lower: Weight, upper: Weight) -> None:
        self.proof.by[how] += 1
        if lower != upper:
            self.proof.widen(test.on_measure(self.space, lower, upper))

    def _sampled(self, test: Threshold, lower: Weight, upper: Weight) -> bool:
        if not self.sample or self.model is None:
            lo, hi = test.on_measure(self.space, lower, upper)
            raise NotProvenError(
                f"{self.what} needs this relevance test decided exactly: {test.measure} of the set "
                f"{sorted(test.fixed)} lies in [{float(lo):.6g}, {float(hi):.6g}], which straddles its bound "
                f"{float(test.value):.6g}, and neither the branch and bound ({self.budget.box_boxes:,} boxes a "
                f"test, {self.budget.query_boxes:,} a query) nor the conditioned compile "
                f"({self.budget.conditioned_nodes:,} nodes) decided it; {EXACT_ADVICE}.")
        sampler = self.sampler()
        self.proof.by["sampled"] += 1
        if test.measure == "precision":
            rate = sampler.certify_precision(self.point, self.label, test.fixed, test.value)
        else:
            rate = sampler.certify(self.point, self.label, test.fixed, Bound(test.value, self.space.total_weight))
        if rate is not None:
            self.certified[test.fixed] = rate
        return rate is not None

    def sampler(self) -> "SamplingOracle":
        """The model's certified sampling oracle (the chooser's, kept by the model)."""
        if self._sampler is None:
            if self.model is None:
                raise NotProvenError(f"{self.what}: sampling needs the model, which this bounds oracle does not carry.")
            self._sampler = cast("SamplingOracle", cached_compiled(self.model, "sampling").oracle)
        return self._sampler

    # -- measures ---------------------------------------------------------------------------------------------

    def weight(self, fixed: Iterable[int], interval: tuple[Weight, Weight] | None = None) -> Weight:
        """The exact ``W(fixed)`` (equal bounds, the conditioned compile, or the branch and bound to the end
        within its budget), or :class:`~kcxai.NotProvenError`. ``interval``: the oracle's, if the caller has it."""
        fixed = frozenset(fixed)
        lower, upper = self.bounds(fixed, interval)
        if lower == upper:
            return lower
        raise NotProvenError(
            f"{self.what} needs the exact count of the set {sorted(fixed)}: its disagreeing weight is only known "
            f"to lie in [{lower}, {upper}] (of {self.space.total_weight}) within the refinement budgets; "
            f"{EXACT_ADVICE}.")

    def bounds(self, fixed: frozenset[int], interval: tuple[Weight, Weight] | None = None) -> tuple[Weight, Weight]:
        """The tightest bounds on ``W(fixed)`` within the budgets (equal where it could be counted): the
        bounds known (``interval``, the oracle's, if the caller has it, met with what the tests proved),
        else the conditioned compile within :attr:`RefineBudget.count_nodes`, else the branch and bound
        towards exact within :attr:`RefineBudget.final_boxes` boxes."""
        lower, upper = self._interval(fixed, interval)
        if lower == upper:
            return lower, upper
        exact = self.conditioned(fixed, self.budget.count_nodes)
        if exact is not None:
            return exact, exact
        if self.model is not None:
            box = box_bounds_of(self.model).bounds(point_box(self.space, self.point, fixed), self.label,
                                                   deadline=self.deadline, max_boxes=self.budget.final_boxes,
                                                   max_rows=self.budget.final_rows)
            lower, upper = self._tighten(fixed, box.lower, box.upper)
        return lower, upper
