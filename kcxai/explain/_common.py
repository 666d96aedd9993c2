"""What every explainer shares: argument checks and a counting view of the oracle."""

from __future__ import annotations

import numbers
import time
from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction
from typing import Any

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.explain._result import Explanation
from kcxai.arithmetic import Bound, Probability, Weight
from kcxai.distribution import Distribution
from kcxai.oracle import ApproximateOracle, CountingOracle, OracleSession, PathOracle, has_paths
from kcxai.space import FeatureSpace

__all__ = ["Query", "Bound", "prepare", "check_delta", "check_order", "check_start"]


def resolve(obj: Any) -> tuple[CountingOracle, Any]:
    """The oracle and the source model (or ``None``) of what a user passed."""
    from kcxai.compilers._base import CompiledModel
    from kcxai.compilers.native import native_compiled
    from kcxai.models._base import Classifier

    if isinstance(obj, CompiledModel):
        return obj.oracle, obj.model
    if isinstance(obj, Classifier):
        return native_compiled(obj).oracle, obj
    if isinstance(obj, CountingOracle):
        return obj, None
    raise InvalidTypeError(
        "'obj' must be a kcxai model (e.g. DecisionTree), a CompiledModel from compile_model(), "
        f"or a CountingOracle. Got {type(obj).__name__} instead.")


def describe(distribution: Distribution) -> str:
    """How an explanation names its distribution: ``uniform``, ``product`` or ``mixture of K``."""
    if distribution.kind == "mixture":
        return f"mixture of {distribution.n_components}"
    return distribution.kind


def check_delta(delta: Any, *, argument: str = "delta", exact: bool = True) -> Probability:
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


class Query:
    """One instance against one oracle, counting the calls made."""

    __slots__ = ("oracle", "model", "space", "instance", "point", "label", "calls", "t0", "confidence")

    def __init__(self, oracle: CountingOracle, model: Any, instance: Any) -> None:
        self.t0 = time.perf_counter()
        self.oracle = oracle
        #: ``None`` for an exact oracle; an approximate one's confidence (checked once, not per query)
        self.confidence: float | None = oracle.confidence if isinstance(oracle, ApproximateOracle) else None
        self.model = model
        self.space: FeatureSpace = oracle.space
        if isinstance(instance, Iterator):  # read a generator once
            instance = list(instance)
        self.point = self.space.encode(instance)
        if isinstance(instance, Mapping) or (hasattr(instance, "keys") and all(
                isinstance(k, str) for k in instance.keys())):  # by name (a Series labelled by feature)
            self.instance = tuple(instance[n] for n in self.space.names)
        else:
            self.instance = tuple(instance.tolist() if hasattr(instance, "tolist") else instance)
        self.label = oracle.predict_point(self.point)
        self.calls = 0

    @property
    def prediction(self) -> Any:
        classes = getattr(self.model, "classes", None)
        return classes[self.label] if classes is not None else self.label

    # -- counting -----------------------------------------------------------

    def disagree_weight(self, fixed: Iterable[int]) -> Weight:
        if self.confidence is not None:
            raise InvalidInputError(
                f"This explainer needs exact counts, and the {self.oracle.language!r} oracle only estimates "
                "them: with it use min_idrs (its deletion-loop decisions are certified), or compile the model "
                "to an exact language (dt, sdd, obdd).")
        self.calls += 1
        return self.oracle.disagree_weight(self.point, self.label, frozenset(fixed))

    def session(self, fixed: Iterable[int]) -> "CountingSession":
        return CountingSession(self, self.oracle.session(self.point, self.label, frozenset(fixed)))

    def error_of(self, weight: Weight) -> Probability:
        return self.space.probability(weight)

    def precision_of(self, fixed: Iterable[int], weight: Weight) -> Probability:
        return self.space.arith.complement(weight, self.space.consistent_weight(self.point, fixed))

    def coverage_of(self, fixed: Iterable[int]) -> Probability:
        """``Pr(x_S = v_S)`` under the space's distribution."""
        return self.space.probability(self.space.consistent_weight(self.point, fixed))

    def within(self, delta: Probability) -> "Bound":
        """A test ``weight <= delta * total_weight`` done exactly."""
        return self.space.arith.bound(delta, self.space.total_weight)

    def delta(self, delta: Any, *, argument: str = "delta") -> Probability:
        """A validated bound in this space's number system."""
        return check_delta(delta, argument=argument, exact=self.space.is_exact)

    # -- results ------------------------------------------------------------

    def explanation(self, features: Iterable[int], *, weight: Weight, delta: Probability | None,
                    method: str, kind: str = "relevant") -> Explanation:
        feats = tuple(sorted(features))
        space, point = self.space, self.point
        fixed = feats if kind == "relevant" else tuple(i for i in range(space.n_features) if i not in feats)
        return Explanation(
            features=feats,
            names=tuple(space.features[i].name for i in feats),
            values=tuple(space.features[i].values[point[i]] for i in feats),
            literals=tuple(space.literal(i, point) for i in feats),
            prediction=self.prediction, delta=delta,
            error=self.error_of(weight), precision=self.precision_of(fixed, weight),
            language=self.oracle.language, oracle_calls=self.calls,
            seconds=time.perf_counter() - self.t0, kind=kind, method=method, instance=self.instance,
            coverage=self.coverage_of(fixed), distribution=describe(space.distribution),
            confidence=self.confidence)


class CountingSession:
    """An :class:`OracleSession` that counts its queries on the :class:`Query`."""

    __slots__ = ("_q", "_s")

    def __init__(self, q: Query, s: OracleSession) -> None:
        self._q = q
        self._s = s

    @property
    def fixed(self) -> frozenset[int]:
        return self._s.fixed

    def weight(self) -> Weight:
        self._q.calls += 1
        return self._s.weight()

    def weight_if_freed(self, feature: int) -> Weight:
        self._q.calls += 1
        return self._s.weight_if_freed(feature)

    def holds_if_freed(self, feature: int, bound: Bound) -> bool:
        self._q.calls += 1
        return self._s.holds_if_freed(feature, bound)

    def free(self, feature: int) -> None:
        self._s.free(feature)


def prepare(obj: Any, instance: Any) -> Query:
    """Resolve ``obj`` and encode ``instance``; the start of every explainer."""
    oracle, model = resolve(obj)
    return Query(oracle, model, instance)


def check_features(q: Query, features: Any, *, argument: str = "features") -> frozenset[int]:
    """A validated set of feature indices."""
    return q.space.feature_set(features, argument=argument)


def check_start(q: Query, start: Any) -> frozenset[int] | None:
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


def check_order(q: Query, order: Any, fixed: Iterable[int]) -> list[int]:
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
