"""What every explainer shares: one query object over any oracle, the argument checks, one way to build results.

:func:`prepare` resolves what the user passed (a model, a compiled form, an engine or an oracle) into
an oracle that can answer the method at its bound (the method table, :mod:`kcxai.explain._methods`,
says which answers serve; the chooser, :func:`kcxai.engines.choose.oracle_for`, which engine gives
them), reads the instance once, and returns a :class:`Query` that carries the method. The algorithms
talk to the query only:

* ``q.session(S)``: the deletion loop's incremental session (``holds_if_freed``, ``free``), over
  exact counts, certified estimates or sufficiency decisions alike; ``q.deletion_order(order, S)``:
  the order it tries features in (one rule per kind of answer, :data:`~kcxai.explain._methods.DEFAULT_ORDER`);
* ``q.relevant(S, bound)``: one relevance decision; ``q.disagree_weight(S)``: one exact count;
* ``q.decide(S)``: a sufficiency decision with what the engine learnt (a core, or where its
  counterexample differs): delta = 0 searches use it to skip queries, as pysat's MUSX does;
* ``q.box_weights(box)``, ``q.box_weights_by_value(box, f)``, ``q.box_sufficient(box)``: counts and
  decisions over boxes of values (what widening a rule asks, :mod:`kcxai.explain.inflate`);
* ``q.explanation(...)``: the result, named after the method, with its exact (or estimated, or
  proved) measures.

Every query runs under the call's :class:`~kcxai._deadline.Deadline` (``max_seconds``) and counts its
calls, widening included.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import cast

from kcxai._deadline import DEFAULT_SEARCH_SECONDS, Deadline, check_max_seconds
from kcxai._errors import InvalidInputError, InvalidTypeError, NotRelevantError
from kcxai.arithmetic import Bound, Probability, Weight
from kcxai.distribution import Distribution
from kcxai.engines._decision import is_ensemble
from kcxai.engines.choose import oracle_for
from kcxai.explain._methods import DEFAULT_ORDER, Method
from kcxai.explain._progression import deletion_order
from kcxai.explain._sessions import CountingSession, DecisionSession, ProvenSession, unanswered
from kcxai.explain._proven import Proof, Prover, Threshold
from kcxai.explain.explanation import Explanation, Missed, format_probability
from kcxai.models.classifier import Classifier
from kcxai.oracle import (Box, BoundsOracle, BoxDecision, BoxDecisionOracle, BoxOracle, CountingOracle, Decision,
                          DecisionOracle, Oracle, OracleSession, PathOracle, Point, answers_of,
                          has_box_decisions, has_boxes, has_paths)
from kcxai.space import FeatureSpace
from kcxai._types import FeaturesLike, InstanceLike, ProbabilityLike, Values
from kcxai.typing import Explainable

__all__ = ["PrecisionTest", "Query", "Bound", "prepare", "check_delta", "check_order", "check_start", "read_instance",
           "build_explanation", "DEFAULT_SEARCH_SECONDS", "resolve", "ENGINE_ADVICE"]

#: Appended to the time-limit message of a query answered by a decision engine.
ENGINE_ADVICE = (", try the other engine ('sat' or 'search'), or use delta > 0 with a compiled oracle "
                 "(kcxai.min_idrs(kcxai.compile_model(model, 'obdd'), x, delta)) or certified estimates from the "
                 "'sampling' language")


def resolve(obj: Explainable, answers: Sequence[str] = ("counts",), *, language: str | None = None
            ) -> tuple[Oracle, Classifier | None]:
    """The oracle and the source model (or ``None``) of what a user passed: the chooser's
    (:func:`kcxai.engines.choose.oracle_for`), a bare model answered by the first of ``answers`` its
    engines give (or by ``language``)."""
    return oracle_for(obj, answers, language=language)


def describe(distribution: Distribution) -> str:
    """How an explanation names its distribution: ``uniform``, ``product`` or ``mixture of K``."""
    if distribution.kind == "mixture":
        return f"mixture of {distribution.n_components}"
    return distribution.kind


def check_delta(delta: object, *, argument: str = "delta", exact: bool = True) -> Probability:
    """A probability bound in [0, 1].

    ``int`` and ``Fraction`` stay exact. A ``float`` is read as the decimal it
    prints as (``0.03`` means ``3/100``), so that a bound written in decimal is
    compared exactly; in a float-weighted space it stays a float.
    """
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise InvalidTypeError(f"'{argument}' must be a real number in [0, 1]. Got {delta!r} instead.")
    if isinstance(delta, numbers.Rational):
        value: Probability = Fraction(int(delta.numerator), int(delta.denominator))
    else:
        f = float(delta)
        if f != f:
            raise InvalidInputError(f"'{argument}' must be a real number in [0, 1]. Got nan instead.")
        # str() gives the shortest decimal that reads back as the same number (also for numpy floats)
        value = Fraction(str(delta)) if exact and f not in (float("inf"), float("-inf")) else f
    if not 0 <= value <= 1:
        raise InvalidInputError(f"'{argument}' must be in [0, 1]. Got {delta!r} instead.")
    return value


def read_instance(space: FeatureSpace, instance: InstanceLike) -> tuple[Values, Point]:
    """An instance in user values, as a tuple in feature order, and its point (value indices).

    A mapping (or a pandas Series labelled by feature name) is read by name; a generator is read once.
    """
    row: InstanceLike = list(instance) if isinstance(instance, Iterator) else instance
    point = space.encode(row)
    keys = getattr(row, "keys", None)
    if isinstance(row, Mapping) or (callable(keys) and all(isinstance(k, str) for k in keys())):
        by_name = cast(Mapping[str, object], row)  # a dict, or a pandas Series labelled by name
        return tuple(by_name[n] for n in space.names), point
    tolist = getattr(row, "tolist", None)  # a numpy row
    return tuple(tolist() if callable(tolist) else row), point


def build_explanation(space: FeatureSpace, point: Point, features: Iterable[int], *, instance: Values,
                      prediction: object, kind: str, method: str, language: str, calls: int, seconds: float,
                      error: Probability | None, precision: Probability | None, coverage: Probability | None,
                      delta: Probability | None = None, precision_bound: Probability | None = None,
                      confidence: float | None = None, literal: Callable[[int, int], str] | None = None,
                      decided: str = "exact", interval: tuple[Probability, Probability] | None = None,
                      sampled: int = 0, error_bounds: tuple[Probability, Probability] | None = None,
                      certified: Probability | None = None, missed: Missed = ()) -> Explanation:
    """The one constructor of :class:`~kcxai.Explanation` results (the per-row explainers and the batch runner).

    ``literal(i, value_index)``, if given, prints feature ``i``'s literal (a batch caches them).
    """
    feats = tuple(sorted(features))
    fs = space.features
    lits = tuple(space.literal(i, point) if literal is None else literal(i, point[i]) for i in feats)
    return Explanation(
        features=feats, names=tuple(fs[i].name for i in feats), values=tuple(fs[i].values[point[i]] for i in feats),
        literals=lits, prediction=prediction, delta=delta,
        error=error, precision=precision, language=language, oracle_calls=calls, seconds=seconds, kind=kind,
        method=method, instance=instance, coverage=coverage, distribution=describe(space.distribution),
        confidence=confidence, precision_bound=precision_bound, decided=decided, interval=interval, sampled=sampled,
        error_bounds=error_bounds, certified=certified, missed=missed)


class Query:
    """One instance against one oracle under one time limit, counting the queries made.

    Parameters
    ----------
    oracle : CountingOracle or DecisionOracle
    model : Classifier or None
    instance : sequence or mapping
        In user values.
    method : Method, optional
        The method asking (:data:`~kcxai.explain._methods.METHODS`): errors and results are named after
        it, and its advice ends a time-limit message.
    what : str, optional
        The name errors and results carry when no method asks (a checker such as ``is_min_idrs``).
    answers : sequence of str
        The answers the method can use at its bound (checked against the oracle's).
    max_seconds : float or None
        The call's time limit (checked already).
    started : float, optional
        When the call started (``time.perf_counter()``), if before the query was made: the time limit and
        the reported seconds count from then.
    """

    __slots__ = ("oracle", "model", "space", "instance", "point", "label", "calls", "t0", "confidence",
                 "answers", "deadline", "what", "method", "_box_decider", "prover", "certified", "_final")

    def __init__(self, oracle: Oracle, model: Classifier | None, instance: InstanceLike, *,
                 method: Method | None = None, what: str | None = None,
                 answers: Sequence[str] = ("counts", "estimates"), max_seconds: float | None = None,
                 started: float | None = None) -> None:
        self.t0 = time.perf_counter() if started is None else started
        self.oracle = oracle
        self.model = model
        self.method = method
        self.what: str = what if what is not None else method.name if method is not None else "explain"
        self.answers = answers_of(oracle)
        if self.answers not in answers:
            raise InvalidInputError(unanswered(self.what, oracle, self.answers, answers))
        #: ``None`` for an exact oracle; an approximate one's confidence (checked once, not per query)
        self.confidence: float | None = getattr(oracle, "confidence", None) if self.answers == "estimates" else None
        self.space: FeatureSpace = oracle.space
        self.instance, self.point = read_instance(self.space, instance)
        self.label = oracle.predict_point(self.point)
        self.calls = 0
        advice = (method.advice if method is not None else "") + (ENGINE_ADVICE if self.answers == "decisions" else "")
        self.deadline = Deadline(max_seconds, what=self.what, advice=advice, queries=lambda: self.calls,
                                 queries_are=_QUERIES_ARE[self.answers], started=self.t0)
        self._box_decider: BoxDecisionOracle | None = None
        #: Per fixed set, the rate bound a sampled decision that found it relevant certified (a sampling
        #: session's, or the prover's over a bounds oracle).
        self.certified: dict[frozenset[int], float] = {}
        #: Over a bounds oracle, what decides each relevance test (:mod:`kcxai.explain._proven`).
        self.prover: Prover | None = None
        if self.answers == "bounds":
            self.prover = Prover(cast(BoundsOracle, oracle), model, self.point, self.label, self.deadline,
                                 sample=method is not None and method.estimates, what=self.what,
                                 certified=self.certified)
        #: Per fixed set: the bounds on its weight that :meth:`final_weight` could not make exact.
        self._final: dict[frozenset[int], tuple[Weight, Weight]] = {}

    def __enter__(self) -> "Query":
        return self

    def __exit__(self, *exc: object) -> None:
        self.deadline.close()

    @property
    def prediction(self) -> object:
        """The predicted class (its label in the model, else its index)."""
        classes = getattr(self.model, "classes", None)
        return classes[self.label] if classes is not None else self.label

    @property
    def counts(self) -> bool:
        """Whether the oracle gives exact weights: exact counts, or proven bounds refined to exact counts where
        a weight is asked (:meth:`disagree_weight`; relevance tests decide from the interval first)."""
        return self.answers in ("counts", "bounds")

    @property
    def proof(self) -> Proof | None:
        """How the relevance tests were decided over a bounds oracle (``None`` over any other)."""
        return None if self.prover is None else self.prover.proof

    # -- queries --------------------------------------------------------------

    def _counts(self) -> CountingOracle:
        if self.answers not in ("counts", "bounds"):
            raise InvalidInputError(unanswered(self.what, self.oracle, self.answers, ("counts",)))
        return cast(CountingOracle, self.oracle)

    def disagree_weight(self, fixed: Iterable[int]) -> Weight:
        """The exact weight of ``{x : kappa(x) != c and x_S = v_S}``."""
        oracle = self._counts()
        self.deadline.check()
        self.calls += 1
        if self.prover is not None:
            return self.prover.weight(fixed)
        return oracle.disagree_weight(self.point, self.label, frozenset(fixed))

    def final_weight(self, fixed: Iterable[int], session: OracleSession | None = None) -> Weight | None:
        """The weight of a result's fixed set (``session``'s, if a deletion loop ends with it): exact where it
        can be; over a bounds oracle refined within the budgets, ``None`` with the bounds kept for the result
        where it cannot; else the session's own (counted, estimated, or the proved zero of a decision
        engine), or counted afresh."""
        fixed = frozenset(fixed)
        if self.prover is not None:
            self.deadline.check()
            self.calls += 1
            known = session.bounds() if isinstance(session, ProvenSession) else None
            lower, upper = self.prover.bounds(fixed, known)
            if lower == upper:
                return lower
            self._final[fixed] = (lower, upper)
            return None
        if session is not None:
            return session.weight()
        if self.answers == "counts":
            return self.disagree_weight(fixed)
        return self.session(fixed).weight()

    def decide(self, fixed: Iterable[int]) -> Decision:
        """Whether ``fixed`` is sufficient (error 0), with the engine's core or counterexample where it has one."""
        fixed = frozenset(fixed)
        if self.answers == "decisions":
            self.deadline.check()
            self.calls += 1
            return cast(DecisionOracle, self.oracle).decide(self.point, self.label, fixed, self.deadline)
        if self.prover is not None:
            sufficient = self.relevant(fixed, self.within(Fraction(0)))
            return Decision(sufficient, fixed if sufficient else frozenset(range(self.space.n_features)) - fixed)
        if self.disagree_weight(fixed) == 0:
            return Decision(True, fixed)
        return Decision(False, frozenset(range(self.space.n_features)) - fixed)

    def relevant(self, fixed: Iterable[int], bound: Bound) -> bool:
        """Whether ``fixed`` is I-delta-relevant for ``bound`` (for a decision oracle delta is 0)."""
        if self.answers == "decisions":
            return self.decide(fixed).sufficient
        if self.prover is not None:
            self.deadline.check()
            self.calls += 1
            return self.prover.decide(Threshold.error(self.space, self.point, frozenset(fixed), bound.delta))
        return bound.holds(self.disagree_weight(fixed))

    def relevant_weight(self, fixed: Iterable[int], bound: Bound) -> tuple[bool, Weight | None]:
        """Whether ``fixed`` is I-delta-relevant for ``bound``, with its weight where that came with the
        decision (exact counts); over a bounds oracle decided from the interval first (weight ``None``:
        :meth:`final_weight` counts a result's)."""
        if self.prover is not None:
            return self.relevant(fixed, bound), None
        weight = self.disagree_weight(fixed)
        return bound.holds(weight), weight

    def session(self, fixed: Iterable[int]) -> "OracleSession":
        """The deletion loop's session from ``fixed``."""
        if self.answers == "decisions":
            return DecisionSession(self, fixed)
        if self.answers == "bounds":
            bounds = cast(BoundsOracle, self.oracle)
            return ProvenSession(self, bounds.session(self.point, self.label, frozenset(fixed)))
        oracle = cast(CountingOracle, self.oracle)
        return CountingSession(self, oracle.session(self.point, self.label, frozenset(fixed)))

    def deletion_order(self, order: FeaturesLike | None, fixed: Iterable[int]) -> list[int]:
        """The order in which a loop dropping features from a relevant set tries them: ``order`` (see
        :func:`check_order`), or by default the rule of :data:`~kcxai.explain._methods.DEFAULT_ORDER` for
        this oracle's kind of answer."""
        if order is None and DEFAULT_ORDER[self.answers] == "fewest values":
            order = deletion_order(self.space.domain_sizes)
        return check_order(self, order, fixed)

    # -- boxes (widening) -----------------------------------------------------

    def _boxes(self) -> BoxOracle:
        if not has_boxes(self.oracle):
            raise InvalidTypeError(
                f"Widening conditions needs exact counts over sets of values, which the {self.oracle.language!r} "
                "oracle does not give: compile the model to an exact language (dt, sdd, obdd, brute).")
        return self.oracle

    def box_weights(self, box: Box) -> tuple[Weight, Weight]:
        """``(disagree, consistent)``: the exact weights of the points of ``box`` of another class, and of all."""
        oracle = self._boxes()
        self.deadline.check()
        self.calls += 1
        return oracle.box_weights(box, self.label)

    def box_weights_by_value(self, box: Box, feature: int) -> tuple[tuple[Weight, Weight], ...]:
        """Per value ``k`` of ``feature``, :meth:`box_weights` of ``box`` with ``box[feature] = {k}``: one query."""
        oracle = self._boxes()
        self.deadline.check()
        self.calls += 1
        return oracle.box_weights_by_value(box, self.label, feature)

    def box_sufficient(self, box: Box, max_boxes: int | None = None) -> BoxDecision:
        """Whether every point of ``box`` (a range of values per feature) gets the predicted class: decided
        by the oracle if it decides boxes (the branch and bound), else by the branch and bound of the
        model (a tree ensemble), which the model keeps; undecided past ``max_boxes`` boxes of its search."""
        decider = self._box_decider
        if decider is None:
            if has_box_decisions(self.oracle):
                decider = self.oracle
            elif isinstance(self.model, Classifier) and is_ensemble(self.model):
                found, _ = resolve(self.model, ("decisions",), language="search")
                decider = cast(BoxDecisionOracle, found)
            else:
                raise InvalidTypeError(
                    f"Deciding boxes needs the branch and bound of a tree ensemble; the {self.oracle.language!r} "
                    f"oracle of {type(self.model).__name__} has none.")
            self._box_decider = decider
        self.deadline.check()
        self.calls += 1
        return decider.decide_box(box, self.label, self.deadline, max_boxes)

    def start_weight(self, session: OracleSession, bound: Bound, delta: Probability) -> Weight:
        """The weight of a session's start set, or :class:`~kcxai.NotRelevantError` if it breaks ``bound``."""
        if isinstance(session, DecisionSession):
            if session.sufficient():
                return 0
            shown = "some point agreeing with it gets another class"
        else:
            weight = session.weight()
            if bound.holds(weight):
                return weight
            shown = f"its error is {format_probability(self.error_of(weight))}"
        raise NotRelevantError(
            f"'start' must be an I-delta-relevant set: {shown}, above delta = {format_probability(delta)}.")

    def precision_holds_if_freed(self, session: OracleSession, feature: int, test: PrecisionTest) -> bool:
        """Whether freeing ``feature`` keeps ``precision(S) >= test.delta`` (``test`` a
        :class:`PrecisionTest`): exactly from counts, as a sufficiency decision
        at precision 1, or as a certified decision of an estimating (sampling) session."""
        if isinstance(session, DecisionSession):
            return session.holds_if_freed(feature, self.within(Fraction(0)))
        if isinstance(session, ProvenSession):
            return session.holds_precision_if_freed(feature, test.delta)
        if self.answers == "estimates" or (isinstance(session, CountingSession) and session.decides_precision):
            return session.holds_precision_if_freed(feature, test.delta)  # type: ignore[attr-defined, no-any-return]
        return bool(test.holds(session.fixed - {feature}, session.weight_if_freed(feature)))

    # -- measures -------------------------------------------------------------

    def error_of(self, weight: Weight) -> Probability:
        return self.space.probability(weight)

    def precision_of(self, fixed: Iterable[int], weight: Weight) -> Probability:
        return self.space.arith.complement(weight, self.space.consistent_weight(self.point, fixed))

    def coverage_of(self, fixed: Iterable[int]) -> Probability:
        """``Pr(x_S = v_S)`` under the space's distribution."""
        return self.space.probability(self.space.consistent_weight(self.point, fixed))

    def within(self, delta: Probability) -> Bound:
        """A test ``weight <= delta * total_weight`` done exactly."""
        return self.space.arith.bound(delta, self.space.total_weight)

    def delta(self, delta: ProbabilityLike, *, argument: str = "delta") -> Probability:
        """A validated bound in this space's number system."""
        return check_delta(delta, argument=argument, exact=self.space.is_exact)

    # -- results --------------------------------------------------------------

    def explanation(self, features: Iterable[int], *, weight: Weight | None, kind: str = "relevant",
                    delta: Probability | None = None, precision_bound: Probability | None = None) -> Explanation:
        """The result, named after the method (:attr:`what`). ``weight`` is the disagreeing weight of the
        fixed set (the set itself, or the complement of a dual set); ``None`` where it is not known (a dual
        set found by decisions)."""
        feats = frozenset(features)
        fixed = feats if kind == "relevant" else frozenset(range(self.space.n_features)) - feats
        error = precision = None
        error_bounds = None
        if weight is not None:
            error, precision = self.error_of(weight), self.precision_of(fixed, weight)
        elif fixed in self._final:
            lower, upper = self._final[fixed]
            error_bounds = (self.error_of(lower), self.error_of(upper))
        decided, interval, sampled = self.decided()
        return build_explanation(
            self.space, self.point, feats, instance=self.instance, prediction=self.prediction, kind=kind,
            method=self.what, language=self.oracle.language, calls=self.calls,
            seconds=time.perf_counter() - self.t0, error=error, precision=precision,
            coverage=self.coverage_of(fixed), delta=delta, precision_bound=precision_bound,
            confidence=self.sample_confidence(sampled),
            decided=decided, interval=interval, sampled=sampled, error_bounds=error_bounds,
            certified=self.certified_measure(fixed, precision_bound is not None), missed=self.missed())

    def decided(self) -> tuple[str, tuple[Probability, Probability] | None, int]:
        """How this query's relevance tests were decided: ``"exact"``, ``"proven"`` or ``"sampled"``, the
        widest interval a proven decision used, and how many decisions were sampled."""
        if self.answers == "estimates":
            return "sampled", None, self.calls
        proof = self.proof
        if proof is None:
            return "exact", None, 0
        return proof.decided, proof.widest, proof.sampled

    def missed(self) -> Missed:
        """Why this query's sampled tests were not proven (:attr:`Proof.missed`, sorted); ``"sampling"`` for
        every call of a sampling oracle."""
        if self.answers == "estimates":
            return (("sampling", self.calls),) if self.calls else ()
        proof = self.proof
        return () if proof is None else tuple(sorted(proof.missed.items()))

    def sample_confidence(self, sampled: int) -> float | None:
        """The confidence of the sampled decisions (``None`` when none was sampled)."""
        if self.answers == "estimates":
            return self.confidence
        if sampled and self.prover is not None:
            return self.prover.sampler().confidence
        return None

    def certified_measure(self, fixed: frozenset[int], precision: bool) -> Probability | None:
        """What the sampled decision that freed the last feature of ``fixed`` certified, on the measure the
        method bounds: the lower confidence bound of the precision, or the upper one of the error."""
        rate = self.certified.get(fixed)
        if rate is None:
            return None
        if precision:
            return max(0.0, 1.0 - rate)
        cons = float(self.space.consistent_weight(self.point, fixed))
        return min(1.0, rate * cons / float(self.space.total_weight))

    def remember_certified(self, fixed: frozenset[int], rate: float | None) -> None:
        """Keep the rate bound a sampling session certified for ``fixed`` (see :meth:`certified_measure`)."""
        if rate is not None:
            self.certified[fixed] = rate


class PrecisionTest:
    """``precision(S) >= delta`` from the oracle's ``disagree_weight``, decided exactly.

    ``precision(S) = 1 - disagree_weight(S) / consistent_weight(S)``, so the test
    is ``consistent - disagree >= delta * consistent``: the same ratio test as
    the I-delta bound (:class:`~kcxai.arithmetic.Bound`), from below.
    """

    __slots__ = ("q", "delta", "_bound")

    def __init__(self, q: Query, delta: Probability) -> None:
        self.q = q
        self.delta = delta
        self._bound = q.space.arith.bound(delta)

    def holds(self, fixed: Iterable[int], weight: Weight) -> bool:
        """Whether the set ``fixed`` with disagreeing weight ``weight`` has precision ``>= delta``."""
        cons = self.q.space.consistent_weight(self.q.point, fixed)
        return self._bound.holds_from_below(cons - weight, cons)

    def relevant(self, fixed: Iterable[int]) -> bool:
        """One oracle query: whether ``fixed`` is C-delta-relevant (over a bounds oracle, decided from the
        interval first, :mod:`kcxai.explain._proven`)."""
        fixed = frozenset(fixed)
        q = self.q
        if q.prover is not None:
            q.deadline.check()
            q.calls += 1
            return q.prover.decide(Threshold.precision(q.space, q.point, fixed, self.delta))
        return self.holds(fixed, q.disagree_weight(fixed))


#: How a time-limit message names the queries of each kind of oracle.
_QUERIES_ARE = {"counts": "counting queries", "bounds": "bounded counting queries", "estimates": "sampled queries",
                "decisions": "sufficiency decisions"}


def prepare(obj: Explainable, instance: InstanceLike, *, method: Method | None = None, what: str | None = None,
            answers: Sequence[str] = ("counts",), max_seconds: float | None = None,
            language: str | None = None) -> Query:
    """Resolve ``obj`` for a method that ``answers`` serve (or through ``language``), encode ``instance``:
    the start of every explainer. Use the query as a context manager (its time limit is released on exit)."""
    limit = check_max_seconds(max_seconds)
    oracle, model = resolve(obj, answers, language=language)
    return Query(oracle, model, instance, method=method, what=what, answers=answers, max_seconds=limit)


def zero_bound(value: ProbabilityLike, *, argument: str = "delta") -> Probability:
    """The bound checked before an oracle is chosen (exactly; the oracle's space may read it again as a float)."""
    return check_delta(value, argument=argument)


def check_features(q: Query, features: FeaturesLike, *, argument: str = "features") -> frozenset[int]:
    """A validated set of feature indices."""
    if isinstance(features, (str, bytes)) or not isinstance(features, Iterable):
        raise InvalidTypeError(
            f"'{argument}' must be a collection of feature indices or names. Got {features!r} instead.")
    return q.space.feature_set(features, argument=argument)


def check_start(q: Query, start: FeaturesLike | str | None) -> frozenset[int] | None:
    """``None`` (all features), ``"path"`` (a tree's path) or a feature collection."""
    if start is None:
        return None
    if isinstance(start, str) and start == "path":
        paths = path_source(q)
        if paths is None:
            raise InvalidInputError(
                f"start='path' needs a decision tree (a model or oracle with paths). "
                f"Got {type(q.model if q.model is not None else q.oracle).__name__} instead.")
        return frozenset(paths.path_of(q.point).features())
    return check_features(q, start, argument="start")


def path_source(q: Query) -> PathOracle | None:
    """Where the instance's decision-tree path comes from: the oracle if it has paths
    (:class:`~kcxai.oracle.PathOracle`), else the model if it is a tree, else ``None``."""
    if has_paths(q.oracle):
        return q.oracle
    if has_paths(q.model):
        return q.model
    return None


def check_order(q: Query, order: FeaturesLike | None, fixed: Iterable[int]) -> list[int]:
    """The order in which features are tried.

    ``None`` is feature-index order. Otherwise a sequence of distinct features
    (indices or names); features already free are skipped, and features of the
    start set that ``order`` leaves out are tried afterwards in index order.
    """
    fixed = set(fixed)
    if order is None:
        return sorted(fixed)
    if isinstance(order, (str, bytes, Mapping)) or not isinstance(order, Iterable):
        raise InvalidTypeError(f"'order' must be a sequence of feature indices or names. Got {order!r} instead.")
    order = list(order.tolist() if hasattr(order, "tolist") else order)
    seq = [q.space.feature_index(f) for f in order]
    if len(set(seq)) != len(seq):
        raise InvalidInputError(f"'order' must not repeat a feature. Got {list(order)!r} instead.")
    listed = set(seq)
    return [i for i in seq if i in fixed] + sorted(fixed - listed)
