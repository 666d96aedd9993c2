"""The ``"sampling"`` language: certified estimates when no exact compiled form fits.

For models too large to compile (a random forest of normal size, boosted trees)
the counting query is *estimated*: points are drawn from the space's
distribution conditioned on ``x_S = v_S`` (exactly, for uniform, product and
mixture distributions: a mixture's component is drawn from its posterior given
``x_S = v_S``), each is classified exactly by the model, and the disagreement
rate ``p`` is estimated. The deletion loop of Algorithm 1 only needs the
decision ``disagree(S \\ {i}) <= delta * total``, i.e. ``p <= t`` for
``t = delta * total / consistent(S \\ {i})`` (the consistent weight is exact).
Each look at the data (``initial_samples`` draws, then doubling the sample up to
``max_samples``) frees the feature when a one-sided Clopper-Pearson *upper*
bound on ``p`` at level ``1 - alpha'`` is ``<= t``. It stops the decision and
**keeps** the feature when the sample cannot free it any more: when the
disagreements counted exceed the most that ``max_samples`` draws can have and
still certify (``k_reach``: counts only grow, and fewer draws certify less), or
when a one-sided lower bound at the same level exceeds ``k_reach / max_samples``
(the rate is above what ``max_samples`` draws can certify); and when
``max_samples`` draws leave it open. A threshold no ``max_samples`` draws can
certify keeps the feature without drawing.

Guarantee: ``alpha' = (1 - confidence) / (n_features * looks)`` (a Bonferroni
correction over every decision and every look at the data). A decision frees a
feature wrongly only if, at one of its looks, ``p > t >= `` the upper bound,
which has probability at most ``alpha'`` per look; so with probability at least
``confidence`` every "free" decision was right, and the returned set, which is
the set after the last feature freed, is I-delta-relevant. Keeping a feature is
never wrong for relevance, so the rules that keep one (the lower bound, the
count past ``k_reach``) are free to stop early and need no share of the error
budget; they cost only minimality: the set need not be subset-minimal. (Before,
a two-sided interval decided both ways, spending ``alpha' / 2`` a look on each
side, and sampled a near-threshold decision up to ``max_samples`` whatever the
evidence: the same seed now draws differently after the first decision that
stops earlier.) The error and precision it reports are estimates; the
explanation says so and carries the confidence
(:class:`~kcxai.oracle.ApproximateOracle`).

Reproducibility: every query draws from a random stream of its own, seeded from the ``seed`` option, the
row (the instance's point and class), the fixed set and what the draws are for (a decision, or the
estimates reported), through :class:`numpy.random.SeedSequence`. So an answer never depends on the
queries asked before it: the same row gets the same explanation whatever the batch, its order,
``n_jobs`` or the backend that ran it, and a decision asked twice (the passes of ``local_cdrs``) is the
same decision. A session remembers the bound each freeing decision certified
(:attr:`SamplingSession.certified`), which is what the set's guarantee rests on.

Cost: each look draws its samples in one batch (per feature, one ``numpy`` draw per mixture component)
and classifies them with one exact ``model.predict_points`` call; trees, forests and boosted trees
walk all samples down each tree at once (a 100-tree forest on adult: see
``benchmarks/bench_sampling.py``). The draws, the counts and hence the decisions are those of a
point-by-point classification (``oracle.batched = False``, kept for benchmarks).

The deletion loops are certified: ``min_idrs`` as above, and ``local_cdrs``,
whose test ``precision(S) >= p`` is a disagreement rate ``<= 1 - p`` among the
points agreeing with ``v`` on ``S`` (the same sampling), at level
``(1 - confidence) / (n (n + 1) looks)`` since its passes take at most
``n (n + 1)`` decisions; its returned set has precision ``>= p`` with
probability at least ``confidence`` (again only the freeing decisions need be
right: the set returned is all features, of precision 1, or the set its last
freeing decision certified). The error and precision an explanation reports
are estimated from ``estimate_samples`` fresh draws for the returned set. The
other explainers ask for exact counts,
and refuse an approximate oracle with a clear error.
"""

from __future__ import annotations

import functools
import math
import numbers
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kcxai._errors import InvalidInputError
from kcxai._params import INT, OPEN_PROBABILITY, Range, check
from kcxai.arithmetic import Bound, Weight
from kcxai.compilers.compiled import CompiledModel, CompileStats
from kcxai.compilers.language import LanguageOptions
from kcxai.oracle import GenericSession
from kcxai._types import Point

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.models.classifier import Classifier
    from kcxai.space import FeatureSpace

__all__ = ["SamplingOracle", "SamplingOptions", "compile", "clopper_pearson", "upper_bound", "lower_bound",
           "most_certifiable"]


def upper_bound(k: int, n: int, alpha: float) -> float:
    """The one-sided Clopper-Pearson upper bound at level ``1 - alpha`` on a rate with ``k`` successes in
    ``n`` trials: the rate is above it with probability at most ``alpha``.

    References
    ----------
    C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial limits illustrated in the case of
    the binomial", Biometrika 26(4), 1934 (the bound as a beta quantile).

    Examples
    --------
    >>> round(upper_bound(0, 100, 0.05), 4)
    0.0295
    """
    from scipy.stats import beta  # scipy.stats: 0.3 s to import, loaded when a bound is certified

    return 1.0 if k >= n else float(beta.ppf(1 - alpha, k + 1, n - k))


def lower_bound(k: int, n: int, alpha: float) -> float:
    """The one-sided Clopper-Pearson lower bound at level ``1 - alpha`` (see :func:`upper_bound`).

    Examples
    --------
    >>> round(lower_bound(100, 100, 0.05), 4)
    0.9705
    """
    from scipy.stats import beta  # scipy.stats: 0.3 s to import, loaded when a bound is certified

    return 0.0 if k <= 0 else float(beta.ppf(alpha, k, n - k + 1))


@functools.lru_cache(maxsize=1024)
def most_certifiable(n: int, threshold: float, alpha: float) -> int:
    """The most successes ``k`` in ``n`` trials whose :func:`upper_bound` is ``<= threshold`` (``-1``: none).

    The bound grows with ``k``, so this is a binary search. Cached (a bounded, thread-safe
    ``functools.lru_cache`` of plain numbers): ``local_cdrs`` asks it with one threshold for every decision.

    Examples
    --------
    >>> most_certifiable(100, 0.05, 0.05), upper_bound(1, 100, 0.05) <= 0.05 < upper_bound(2, 100, 0.05)
    (1, True)
    """
    lo, hi = -1, n  # upper_bound(lo) <= threshold (or lo = -1); upper_bound(n) = 1 > threshold unless >= 1
    if threshold >= 1:
        return n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if upper_bound(mid, n, alpha) <= threshold:
            lo = mid
        else:
            hi = mid
    return lo


def _cdf(probs: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.float64]]":
    """The cumulative probabilities of ``probs``, the last exactly 1 (``searchsorted(u, side="right")`` of a
    uniform ``u`` in [0, 1) then draws value ``i`` with probability ``probs[i]``, never one of probability 0)."""
    cdf = np.cumsum(probs, dtype=np.float64)
    cdf /= cdf[-1]
    return cdf


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """The two-sided Clopper-Pearson interval for ``k`` successes in ``n`` trials at level ``1 - alpha``.

    Examples
    --------
    >>> lo, hi = clopper_pearson(0, 100, 0.05)
    >>> lo, round(hi, 4)
    (0.0, 0.0362)
    """
    from scipy.stats import beta  # scipy.stats: 0.3 s to import, loaded when a bound is certified

    lo = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


@dataclass(frozen=True)
class SamplingOptions(LanguageOptions):
    """Options of the ``sampling`` language.

    Attributes
    ----------
    confidence : float
        The probability with which the returned set is relevant (default 0.95).
    initial_samples : int
        Samples at a decision's first look (default 256); doubled while undecided.
    max_samples : int
        Samples at which an undecided decision keeps the feature (default 16,384).
    estimate_samples : int
        Fresh draws behind the error and precision an explanation reports (default 4,096: a standard
        error of at most 0.0079 on the rate, 0.0039 with 16,384). They decide nothing; at 16,384 they
        were over half the points a ``local_cdrs`` explanation classified (a 100-tree forest on adult).
    seed : int
        Seed of the sampler (default 0): the same seed gives the same explanations.
    """

    language = "sampling"
    confidence: float = 0.95
    initial_samples: int = 256
    max_samples: int = 16384
    estimate_samples: int = 4096
    seed: int = 0

    def validate(self) -> None:
        check("confidence", self.confidence, OPEN_PROBABILITY)
        for name in ("initial_samples", "max_samples", "estimate_samples"):
            check(name, getattr(self, name), Range(numbers.Integral, 1))
        if self.max_samples < self.initial_samples:
            raise InvalidInputError(
                f"'max_samples' must be at least 'initial_samples' ({self.initial_samples}). "
                f"Got {self.max_samples} instead.")
        check("seed", self.seed, INT)


class SamplingOracle:
    """Estimated counting with certified relevance decisions (see the module).

    Attributes
    ----------
    confidence : float
        The :class:`~kcxai.oracle.ApproximateOracle` capability.
    """

    language = "sampling"

    def __init__(self, model: "Classifier", options: SamplingOptions) -> None:
        self.model = model
        self.space: FeatureSpace = model.space
        self.n_classes = len(model.classes)
        self.options = options
        self.confidence = float(options.confidence)
        looks = 1 + max(0, math.ceil(math.log2(options.max_samples / options.initial_samples)))
        n = max(1, self.space.n_features)
        self._alpha = (1.0 - self.confidence) / (n * looks)
        #: The level of each look of local_cdrs, whose passes take at most n (n + 1) decisions.
        self._alpha_local = (1.0 - self.confidence) / (n * (n + 1) * looks)
        dist = self.space.distribution
        self._coef = np.array([float(c) * float(pw.total) for c, pw in dist.components])
        self._probs = [[np.array([float(w) for w in ws]) / float(sum(ws)) for ws in pw.weights]
                       for _, pw in dist.components]
        #: Per component, per feature: the cumulative probabilities a value is drawn from (inverse CDF).
        self._cdfs = [[_cdf(p) for p in probs] for probs in self._probs]
        #: Points classified so far (a cost figure).
        self.samples = 0
        #: Classify each batch of samples with one ``model.predict_points`` call (exact, vectorised for trees,
        #: forests and boosted trees); ``False`` classifies them one ``predict_point`` at a time, as before:
        #: the same draws and the same counts, only slower (kept for benchmarks).
        self.batched = True

    def predict_point(self, point: Point) -> int:
        return self.model.predict_point(point)

    def query_rng(self, point: Point, label: int, fixed: frozenset[int], purpose: str) -> np.random.Generator:
        """The random stream of one query (see the module): seeded from the ``seed`` option, the point, its
        label, the fixed set and ``purpose`` (``"decide"`` or ``"estimate"``), and from nothing else.

        >>> import kcxai
        >>> oracle = kcxai.compile_model(kcxai.datasets.running_example_tree(), "sampling").oracle
        >>> v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
        >>> a, b = (oracle.query_rng(v, 1, frozenset({0, 8}), "decide").random() for _ in range(2))
        >>> a == b != oracle.query_rng(v, 1, frozenset({0}), "decide").random()
        True
        """
        seed = self.options.seed
        words = [int(seed < 0), abs(seed), _PURPOSES[purpose], label, len(point), *point, len(fixed), *sorted(fixed)]
        return np.random.default_rng(np.random.SeedSequence(words))

    def _sample(self, rng: np.random.Generator, point: Point, fixed: frozenset[int],
                n: int) -> "np.ndarray[Any, np.dtype[np.int64]]":
        """``n`` points from the distribution conditioned on ``x_fixed = point_fixed``, drawn from ``rng``: a
        component per point from its posterior given ``x_fixed``, then each free feature's values, component
        by component, by inverse CDF (the draws ``rng.choice`` makes from the same probabilities, without its
        per-call check and cumulative sum)."""
        post = np.array([c * np.prod([probs[f][point[f]] for f in fixed]) if fixed else c
                         for c, probs in zip(self._coef, self._probs)], dtype=float)
        comp = rng.choice(len(post), size=n, p=post / post.sum())
        groups = [np.flatnonzero(comp == k) for k in range(len(post))] if len(post) > 1 else [np.arange(n)]
        out = np.empty((n, self.space.n_features), dtype=np.int64)
        for f in range(self.space.n_features):
            if f in fixed:
                out[:, f] = point[f]
                continue
            col = out[:, f]
            for rows, cdfs in zip(groups, self._cdfs):
                if len(rows):
                    col[rows] = cdfs[f].searchsorted(rng.random(len(rows)), side="right")
        return out

    def _disagreements(self, rng: np.random.Generator, point: Point, label: int, fixed: frozenset[int],
                       n: int) -> int:
        xs = self._sample(rng, point, fixed, n)
        self.samples += n
        if self.batched:
            return int(np.count_nonzero(self.model.predict_points(xs) != label))
        predict = self.model.predict_point  # the point-by-point path (benchmark baseline)
        return sum(1 for x in xs if predict(tuple(int(v) for v in x)) != label)

    def disagree_weight(self, point: Point, label: int, fixed: frozenset[int]) -> Weight:
        """An *estimate* of the disagreeing weight (``estimate_samples`` fresh draws: never those of a decision,
        whose stopping rule biases them), rounded to the space's numbers."""
        cons = self.space.consistent_weight(point, fixed)
        n = self.options.estimate_samples
        fixed = frozenset(fixed)
        k = self._disagreements(self.query_rng(point, label, fixed, "estimate"), point, label, fixed, n)
        est = cons * k / n
        return self.space.arith.weight(round(est) if self.space.is_exact else est)

    def session(self, point: Point, label: int, fixed: frozenset[int]) -> "SamplingSession":
        return SamplingSession(self, point, label, fixed)

    def decide(self, point: Point, label: int, fixed: frozenset[int], bound: Bound) -> bool:
        """Whether ``disagree(fixed) <= bound``, certified at level ``1 - alpha'``; ``False`` when undecided."""
        return self.certify(point, label, fixed, bound) is not None

    def certify(self, point: Point, label: int, fixed: frozenset[int], bound: Bound) -> float | None:
        """The certified upper bound on the disagreement rate given ``x_fixed = point_fixed`` when it shows
        ``disagree(fixed) <= bound`` (at level ``1 - alpha'``); ``None`` when it does not."""
        space = self.space
        cons = space.consistent_weight(point, fixed)
        threshold = float(bound.delta) * float(space.total_weight) / float(cons)
        return self._rate_at_most(point, label, fixed, threshold, self._alpha)

    def decide_precision(self, point: Point, label: int, fixed: frozenset[int], precision: Any) -> bool:
        """Whether ``precision(fixed) >= precision``, i.e. the disagreement rate among the points agreeing
        with ``point`` on ``fixed`` is ``<= 1 - precision``; certified at the level of local_cdrs's decisions."""
        return self.certify_precision(point, label, fixed, precision) is not None

    def certify_precision(self, point: Point, label: int, fixed: frozenset[int], precision: Any) -> float | None:
        """:meth:`decide_precision` with the certified upper bound on the disagreement rate (``None``: kept)."""
        return self._rate_at_most(point, label, fixed, 1.0 - float(precision), self._alpha_local)

    def _rate_at_most(self, point: Point, label: int, fixed: frozenset[int], threshold: float,
                      alpha: float) -> float | None:
        """The one-sided upper bound at level ``1 - alpha`` on the disagreement rate given
        ``x_fixed = point_fixed`` once it is ``<= threshold``; ``None`` (keep) as soon as the sample cannot
        certify it any more, or at ``max_samples`` (see the module). The draws come from the query's own
        stream (:meth:`query_rng`)."""
        if threshold >= 1:
            return 1.0
        rng = self.query_rng(point, label, fixed, "decide")
        most = self.options.max_samples
        reach = most_certifiable(most, threshold, alpha)
        n, k = 0, 0
        step = self.options.initial_samples
        while n < most and reach >= k:
            take = min(step, most - n)
            k += self._disagreements(rng, point, label, fixed, take)
            n += take
            if k > reach:
                return None  # more disagreements than max_samples draws can have and certify
            upper = upper_bound(k, n, alpha)
            if upper <= threshold:
                return upper
            if lower_bound(k, n, alpha) * most > reach:
                return None  # the rate is, with confidence, above what max_samples draws certify
            step = n  # double the sample
        return None  # still open: keep the feature


class SamplingSession(GenericSession):
    """The deletion loop's session: each ``holds_if_freed`` is a certified decision (weights are estimates).

    Attributes
    ----------
    certified : float or None
        The upper bound on the disagreement rate given ``x_S = v_S`` that the decision freeing the last
        feature of the current set ``S`` certified (``None`` while no feature was freed: ``S`` is the
        start set). Kept only while it describes ``S``.
    """

    __slots__ = ("_pending", "certified")

    def __init__(self, oracle: SamplingOracle, point: Point, label: int, fixed: frozenset[int]) -> None:
        super().__init__(oracle, point, label, fixed)
        self._pending: dict[int, float] = {}
        self.certified: float | None = None

    def holds_if_freed(self, feature: int, bound: Bound) -> bool:
        oracle: SamplingOracle = self._oracle  # type: ignore[assignment]
        return self._remember(feature, oracle.certify(self._point, self._label, self._fixed - {feature}, bound))

    def holds_precision_if_freed(self, feature: int, precision: Any) -> bool:
        """Whether freeing ``feature`` keeps the precision ``>= precision``, certified (local_cdrs)."""
        oracle: SamplingOracle = self._oracle  # type: ignore[assignment]
        return self._remember(feature, oracle.certify_precision(self._point, self._label, self._fixed - {feature},
                                                                precision))

    def _remember(self, feature: int, upper: float | None) -> bool:
        if upper is not None:
            self._pending[feature] = upper
        return upper is not None

    def free(self, feature: int) -> None:
        super().free(feature)
        self.certified = self._pending.pop(feature, None)
        self._pending.clear()


#: What a query's draws are for (part of its stream's seed, :meth:`SamplingOracle.query_rng`).
_PURPOSES = {"decide": 1, "estimate": 2}


def compile(model: "Classifier", **options: Any) -> CompiledModel:
    """Nothing is compiled: the oracle samples the model (see the module).

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> c = kcxai.compile_model(tree, "sampling", confidence=0.99, seed=1)
    >>> e = kcxai.min_idrs(c, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0.03)
    >>> e.approximate, e.confidence, kcxai.is_idrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), e.features, 0.03)
    (True, 0.99, True)
    """
    opts = SamplingOptions.from_kwargs(**options)
    t0 = time.perf_counter()
    oracle = SamplingOracle(model, opts)
    return CompiledModel(model=model, oracle=oracle, language="sampling", backend="kcxai+numpy",
                         stats=CompileStats(size=0, size_unit="nothing compiled",
                                            variables=model.space.n_features,
                                            compile_seconds=time.perf_counter() - t0,
                                            details={"confidence": opts.confidence,
                                                     "max_samples": opts.max_samples,
                                                     "estimate_samples": opts.estimate_samples}))
