"""Inflated explanations: widen each condition of a set to the widest values that keep its guarantee.

An explanation ``S`` of the instance ``v`` fixes every feature of ``S`` to ``v``'s own cell (the
paper's definitions: ``x_S = v_S``). *Inflating* it (Izza et al., AAAI 2024, for delta = 0) widens each
feature's condition to a set of values ``A_f`` containing ``v_f``: a run of consecutive intervals for a
numeric feature, any set of categories for a categorical one, as long as the rule
``AND_f x_f in A_f`` keeps the guarantee the set was computed for:

* an I-delta set (``min_idrs``, ``smallest_idrs``, AXps at delta = 0): the error
  ``Pr(kappa(x) != c, x in A) <= delta``;
* a C-delta set (``local_cdrs``, ``min_cdrs``, ``smallest_drs``): the precision
  ``Pr(kappa(x) = c | x in A) >= delta``;
* an AXp of a tree ensemble found by SAT or search (delta = 0): every point of the box gets ``c``.

Every weight comes from the oracle's box counts (:class:`~kcxai.oracle.BoxOracle`), so the widened
rule's error, precision and coverage are exact, under the model's distribution. Widening is a run of
queries on one :class:`~kcxai.explain._query.Query` (``q.box_weights_by_value``, ``q.box_weights``,
``q.box_sufficient``), under its time limit and call counter: the explainers' ``inflate=True`` widens
on the query that found the set, :func:`inflate` on a query of its own. AXps are widened by default
(``inflate=None``: :meth:`~kcxai.explain._methods.Method.widens_by_default`); ``inflate=False`` keeps the
paper's set, each feature fixed to the instance's cell.

Tree ensembles (delta = 0). The decision engines decide sufficiency without counting. The branch and
bound (:class:`~kcxai.engines._ensemble_box.EnsembleBox`) decides it for any box of value ranges, so each
condition of an ensemble AXp grows up, then down, to the farthest value at which no point of the box gets
another class (``q.box_sufficient``), found by bisection (sufficiency is monotone in the box: a
logarithmic number of decisions per end instead of one per value), the whole rest of the domain asked
first (one query where it holds); as the box up to the end known to
hold is proven, each step asks only the slab of new values (the box up to the new end is the two
together), a much smaller search. The branch and bound expands at most :data:`WIDEN_BOXES` boxes for one
widening (each query also counting :data:`QUERY_BOXES` for its fixed cost): a query that would need more
is left undecided and its end not moved, and once the boxes are spent no query is asked. The box is then
still proven to force the prediction, but maybe not maximal: the result says which
(:attr:`~kcxai.Explanation.widening`, ``"maximal"`` or ``"box budget"``). Counting boxes rather than
seconds keeps the answer the same on any machine and under any load. An AXp found by SAT is widened by
the branch and bound of the same model (which the model keeps): the SAT engine fixes a feature to one
value by assumptions, and a value set would need its encoding to expose "not value k" (the branch and
bound asks its own SAT solver first where it has one, with ranges as assumptions on the order
literals). The widened rule's precision is 1
(proved by the search) and its coverage is the box's weight under the model's distribution, exactly.

Order. Features are widened one at a time in ``order`` (default: the set's features by index; for an
ensemble AXp, the features of most values first, ties by index, so that the budget of boxes goes first to
the widenings that can multiply the coverage most).
Widening feature ``f`` asks the oracle once for the weights of every value of ``f`` with the other
conditions as they stand (``box_weights_by_value``); then values are added in increasing order of their
disagreement rate (the weight of other classes among the value's points: cheapest first), a
categorical feature trying every value, a numeric feature growing its interval one adjacent cell at a
time on the side with the lower rate, while the guarantee holds. Rounds over the features repeat until
none can change.

Maximality. The result is maximal: no single condition can be widened by one more value (a category,
or the next interval on either side) without breaking the guarantee. The rounds end when every
feature has been widened as far as one value at a time goes with the other conditions as they now
are (a feature is looked at again only after another one changed).
For the error bound one round suffices: a box's disagreeing weight only grows as it grows, so a
value refused once stays refused (the second round is skipped). Precision is not monotone in the
box (a precise value raises it), which is why rounds repeat. The same holds for the ensemble search
(sufficiency is monotone: one round), unless its budget of boxes ran out first (``widening`` says so).

References
----------
Izza, Ignatiev, Stuckey, Marques-Silva, "Delivering Inflated Explanations", AAAI 2024.
Izza, Huang, Ignatiev, Narodytska, Cooper, Marques-Silva, "Efficient Explanations With Relevant Sets"
(the I-delta- and C-delta-relevant sets whose guarantees are kept).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import cast

from kcxai._deadline import DEFAULT_SEARCH_SECONDS
from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai._types import FeaturesLike
from kcxai.arithmetic import Probability, Weight
from kcxai.explain._query import Query, prepare, resolve
from kcxai.explain.explanation import Condition, Explanation
from kcxai.models.classifier import Classifier
from kcxai.oracle import ANSWERS, Box, BoxOracle, box_weight, has_boxes, point_box
from kcxai.space import FeatureSpace
from kcxai.typing import Explainable

__all__ = ["inflate", "is_inflated", "widen", "box_of", "conditions_of"]


class _Guarantee:
    """The test a box must pass: ``disagree <= delta * total`` (error) or
    ``disagree <= (1 - delta) * consistent`` (precision), done exactly."""

    def __init__(self, space: FeatureSpace, delta: Probability, on_precision: bool) -> None:
        arith = space.arith
        self.total = space.total_weight
        self.on_precision = on_precision
        self._bound = arith.bound(1 - delta) if on_precision else arith.bound(delta, space.total_weight)

    def holds(self, disagree: Weight, consistent: Weight) -> bool:
        if self.on_precision:
            return bool(consistent) and self._bound.holds(disagree, consistent)
        return self._bound.holds(disagree)


def _bound(e: Explanation, space: FeatureSpace) -> Probability:
    """The explanation's bound (its precision bound, else its delta; checked present) in the space's numbers."""
    bound = cast(Probability, e.precision_bound if e.precision_bound is not None else e.delta)
    return bound if space.is_exact else float(bound)


def _check_explanation(e: object) -> Explanation:
    if not isinstance(e, Explanation):
        raise InvalidTypeError(f"'explanation' must be an Explanation. Got {type(e).__name__} instead.")
    if e.kind != "relevant":
        raise InvalidInputError(
            f"'explanation' must be a relevant set (a rule IF x_S = v_S) to widen; got a {e.kind!r} set ({e.method}).")
    if e.approximate:
        raise InvalidInputError(
            f"'explanation' was found by the approximate {e.language!r} oracle (confidence {e.confidence:g}): its "
            "guarantee is an estimate, and widening it would print estimates as exact. Compile the model to an "
            "exact language (dt, sdd, obdd) to inflate.")
    if e.delta is None and e.precision_bound is None:
        raise InvalidInputError(f"'explanation' ({e.method}) has no bound (delta or precision) to keep while widening.")
    return e


def _check_prediction(q: Query, e: Explanation) -> None:
    if q.model is not None and q.prediction != e.prediction:
        raise InvalidInputError(
            f"'obj' predicts {q.prediction!r} for the explanation's instance, which was explained as "
            f"{e.prediction!r}: pass the model the explanation was computed with.")


def inflate(obj: Explainable, explanation: Explanation, *, order: FeaturesLike | None = None,
            max_seconds: float | None = DEFAULT_SEARCH_SECONDS) -> Explanation:
    """Widen each condition of an explanation to a maximal set of values that keeps its guarantee.

    Parameters
    ----------
    obj : Classifier, CompiledModel or BoxOracle
        What the explanation was computed with (the same model and distribution), in an exact
        language; for an ensemble AXp found by SAT or search (``language`` ``"sat"`` / ``"search"``),
        the ensemble model or its compiled engine (the widening then runs the box search).
    explanation : Explanation
        A relevant set with a bound: an I-delta set (error <= ``delta``, AXps at delta = 0) or a C-delta
        set (precision >= ``precision_bound``).
    order : sequence of int or str, optional
        The order in which features are widened (default: the set's features by index); features of
        the set it leaves out come after, by index.
    max_seconds : float or None, default 60
        Time limit of the widening (:class:`~kcxai.SearchLimitError`); ``None``: none.

    Returns
    -------
    Explanation
        The same explanation with :attr:`~kcxai.Explanation.conditions` set, its literals and rule
        printing them, and ``error``, ``precision`` and ``coverage`` those of the widened rule, exact,
        under the model's distribution (``unwidened_coverage``: the set's before). A feature whose
        condition widens to its whole domain is no longer needed and is left out. ``oracle_calls`` and
        ``seconds`` include the widening. ``widening`` is ``"maximal"``, or ``"box budget"`` for an ensemble
        AXp whose widening spent its :data:`WIDEN_BOXES` first (the box proven, maybe not maximal).

    Raises
    ------
    InvalidInputError
        For a dual set, a set without a bound, an approximate explanation (never widened as if
        exact), or an explanation that does not meet its bound under ``obj``'s distribution.
    InvalidTypeError
        When ``obj`` cannot count over boxes (e.g. the ``"sampling"`` language).

    Notes
    -----
    See the module :mod:`kcxai.explain.inflate` for the order of widening and why the result is
    maximal: no single condition can take one more value (category, or adjacent interval) without
    breaking the guarantee.

    References
    ----------
    Izza, Ignatiev, Stuckey, Marques-Silva, "Delivering Inflated Explanations", AAAI 2024.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> e = kcxai.min_idrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0.03, start="path")
    >>> wide = kcxai.inflate(tree, e)
    >>> wide.rule(), wide.error <= 0.03, wide.coverage >= e.coverage
    ('IF x1 = 1 AND x9 = 1 THEN class = 1', True, True)
    """
    e = _check_explanation(explanation)
    ensemble = e.language in _ENSEMBLE_LANGUAGES
    if ensemble and e.conditions is not None:  # one pass of the box search is maximal
        return e
    with prepare(obj, e.instance, what="inflate", answers=ANSWERS, max_seconds=max_seconds,
                 language="search" if ensemble and isinstance(obj, Classifier) else None) as q:
        return widen(q, e, order)


#: The decision engines (delta = 0, by SAT or search), whose explanations are widened by the box search.
_ENSEMBLE_LANGUAGES = ("sat", "search", "portfolio")


def can_widen(q: Query) -> bool:
    """Whether the oracle of ``q`` can widen its explanations: exact counts over boxes, or decisions (a tree
    ensemble's engine, whose branch and bound decides boxes)."""
    return q.answers == "decisions" or (q.answers == "counts" and has_boxes(q.oracle))


#: The boxes the branch and bound may expand while widening one ensemble AXp (all its queries together);
#: past them the widening keeps the box proven so far (see the module docstring).
WIDEN_BOXES: int | None = 4_000
#: What one box query counts against that budget besides the boxes it expands (its fixed cost: selecting
#: the leaves that meet the box and evaluating the root box), in boxes.
QUERY_BOXES = 16


def widen(q: Query, explanation: Explanation, order: FeaturesLike | None = None,
          max_boxes: int | None = None, *, found_here: bool = False) -> Explanation:
    """:func:`inflate` on a query (the explainers' ``inflate=True``): its calls and time added to the result;
    ``max_boxes`` (default :data:`WIDEN_BOXES`) bounds the branch and bound's boxes for an ensemble AXp.
    ``found_here``: the explanation was found on ``q`` (its sufficiency is not decided again)."""
    e = _check_explanation(explanation)
    _check_prediction(q, e)
    t0, calls = time.perf_counter(), q.calls
    maximal = True
    if e.language in _ENSEMBLE_LANGUAGES or q.answers == "decisions":
        box, disagree, consistent, maximal = _widen_sufficient(
            q, e, order, WIDEN_BOXES if max_boxes is None else max_boxes, found_here)
    else:
        box, disagree, consistent = _widen_counted(q, e, order)
    return widened_explanation(e, q.space, box, disagree, consistent, q.calls - calls, time.perf_counter() - t0,
                               maximal)


def _widen_counted(q: Query, e: Explanation, order: FeaturesLike | None) -> tuple[Box, Weight, Weight]:
    """Widening over exact box counts (see the module docstring): the box and its two weights."""
    space = q.space
    guarantee = _Guarantee(space, _bound(e, space), e.bounds_precision)
    box = list(box_of(space, e))  # an explanation widened already starts from its conditions
    steps = widening_order(space, e.features, order)
    weights: tuple[Weight, Weight] | None = None  # (disagree, consistent) of the current box
    clean: set[int] = set()  # features widened as far as they go with the other conditions as they are
    while steps and not clean.issuperset(steps):
        for f in steps:
            if f in clean:
                continue
            by_value = q.box_weights_by_value(tuple(box), f)
            if weights is None:
                weights = _sums(box[f], by_value)
                _check_start(e, guarantee, weights)
            new, weights = _widen(space.features[f].is_numeric, box[f], by_value, guarantee)
            clean.add(f)
            if new != box[f]:
                box[f] = new
                if guarantee.on_precision:  # the others may widen further now: look at them again
                    clean = {f}
        if not guarantee.on_precision:  # error bounds are monotone: one round is maximal
            break
    if weights is None:  # nothing to widen (an empty set)
        weights = q.box_weights(tuple(box))
        _check_start(e, guarantee, weights)
    return tuple(box), weights[0], weights[1]


def _widen_sufficient(q: Query, e: Explanation, order: FeaturesLike | None, max_boxes: int | None,
                      found_here: bool = False) -> tuple[Box, Weight, Weight, bool]:
    """Widening an AXp over box decisions (see the module docstring): the box, 0, its weight, and whether
    the widening is maximal (``False``: ``max_boxes`` were spent first, and the box is what was proven).
    An AXp not ``found_here`` (on ``q``) is first decided sufficient, outside the budget."""
    if e.delta != 0:
        raise InvalidInputError(f"An ensemble explanation ({e.language}) is an AXp (delta = 0). Got delta {e.delta}.")
    space = q.space
    sizes = [f.size for f in space.features]
    lo = [q.point[f] if f in e.features else 0 for f in range(len(sizes))]
    hi = [q.point[f] if f in e.features else sizes[f] - 1 for f in range(len(sizes))]
    if not found_here and not q.box_sufficient(_ranges(lo, hi)).sufficient:
        raise InvalidInputError(f"'explanation' ({e.method}) is not sufficient for 'obj': nothing to widen from.")
    budget = _Budget(max_boxes)
    # by default the features of most values first: under the budget, the widenings that can multiply the
    # coverage most are asked first (adult, 8 rows: median gain 1.7e4x against 36x by index, same time)
    by_size = sorted(e.features, key=lambda f: (-sizes[f], f))
    for f in widening_order(space, e.features, by_size if order is None else order):
        for end, step, stop in ((hi, 1, sizes[f] - 1), (lo, -1, 0)):
            # sufficiency is monotone in the box: the farthest end that keeps it, by bisection between the
            # end known to hold (``good``) and the first value known to fail (``bad``, past the domain at first),
            # the whole rest of the domain asked first (one query where it holds). The box up to ``good`` is
            # proven, so only the slab of values between ``good`` and the new end is asked: the box up to the
            # new end is the two together.
            good, bad, mid = end[f], stop + step, stop
            while good != bad - step and budget.left():
                slab_lo, slab_hi = list(lo), list(hi)
                slab_lo[f], slab_hi[f] = (good + 1, mid) if step > 0 else (mid, good - 1)
                if budget.sufficient(q, _ranges(slab_lo, slab_hi)):
                    good = mid
                else:  # a counterexample, or undecided within the boxes left: not widened past ``good``
                    bad = mid
                mid = (good + bad) // 2 if step > 0 else -((-good - bad) // 2)
            end[f] = good
    box = _ranges(lo, hi)
    dist = space.distribution
    weight = sum((c * box_weight(pw, box) for c, pw in dist.components), dist.arith.zero)
    return box, dist.arith.zero, weight, budget.maximal


class _Budget:
    """The work a widening may still do, in boxes of the branch and bound (``None``: no bound): each box
    query counts its boxes and :data:`QUERY_BOXES` more; once none are left, no query is asked and the
    widening keeps the box proven so far (not :attr:`maximal`). Counted in boxes, not seconds, so that the
    same explanation widens to the same box on any machine and under any load."""

    def __init__(self, max_boxes: int | None) -> None:
        self._left = max_boxes
        #: Whether every end was decided (``False``: some end stopped at the budget, undecided).
        self.maximal = True

    def left(self) -> bool:
        """Whether a query may still be asked (else the widening stops, not maximal)."""
        if self._left is not None and self._left <= 0:
            self.maximal = False
            return False
        return True

    def sufficient(self, q: Query, box: Box) -> bool:
        """Whether ``box`` was proven sufficient within the boxes left (undecided: ``False``)."""
        decision = q.box_sufficient(box, self._left)
        if self._left is not None:
            self._left -= decision.boxes + QUERY_BOXES
        if decision.sufficient is None:
            self.maximal = False
        return bool(decision.sufficient)


def _ranges(lo: Sequence[int], hi: Sequence[int]) -> Box:
    """The box of the ranges ``lo[f] .. hi[f]`` of value numbers."""
    return tuple(((1 << (h + 1)) - 1) & ~((1 << low) - 1) for low, h in zip(lo, hi))


def _check_start(e: Explanation, guarantee: "_Guarantee", weights: tuple[Weight, Weight]) -> None:
    if not guarantee.holds(*weights):
        raise InvalidInputError(
            f"'explanation' ({e.method}, bound {e.precision_bound if e.precision_bound is not None else e.delta}) "
            "does not meet its bound under the distribution of 'obj' "
            "(was it computed under another distribution?): nothing to widen from.")


def _sums(mask: int, by_value: Sequence[tuple[Weight, Weight]]) -> tuple[Weight, Weight]:
    """The weights of the box whose condition on the feature is ``mask``, from its values' weights."""
    d = w = 0 * by_value[0][0]
    for k, (dk, wk) in enumerate(by_value):
        if mask >> k & 1:
            d += dk
            w += wk
    return d, w


def _rate_key(k: int, by_value: Sequence[tuple[Weight, Weight]]) -> tuple[float | Probability, int]:
    d, w = by_value[k]
    return (d / w if w else float("inf"), k)


def _widen(ordered: bool, mask: int, by_value: Sequence[tuple[Weight, Weight]], guarantee: _Guarantee
           ) -> tuple[int, tuple[Weight, Weight]]:
    """The widest ``mask`` reached one value at a time, cheapest value first, keeping the guarantee, and
    the box's weights with it."""
    disagree, consistent = _sums(mask, by_value)
    if not ordered:
        for k in sorted((k for k in range(len(by_value)) if not mask >> k & 1), key=lambda k: _rate_key(k, by_value)):
            d, w = disagree + by_value[k][0], consistent + by_value[k][1]
            if guarantee.holds(d, w):
                mask |= 1 << k
                disagree, consistent = d, w
        return mask, (disagree, consistent)
    lo = (mask & -mask).bit_length() - 1
    hi = mask.bit_length() - 1
    while True:
        fits = [k for k in (lo - 1, hi + 1) if 0 <= k < len(by_value)
                and guarantee.holds(disagree + by_value[k][0], consistent + by_value[k][1])]
        if not fits:
            return mask, (disagree, consistent)
        k = min(fits, key=lambda k: _rate_key(k, by_value))
        mask |= 1 << k
        disagree, consistent = disagree + by_value[k][0], consistent + by_value[k][1]
        lo, hi = min(lo, k), max(hi, k)


def is_inflated(obj: Explainable, explanation: Explanation) -> bool:
    """Whether a widened explanation keeps its guarantee and no single condition can be widened further.

    The checker of :func:`inflate` (exact languages): the rule's weights are counted afresh, and every
    one-value widening of every condition (a category, or the adjacent interval on either side) is tried.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> e = kcxai.min_idrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0.03, start="path")
    >>> kcxai.is_inflated(tree, kcxai.inflate(tree, e)), kcxai.is_inflated(tree, e)
    (True, True)
    """
    e = _check_explanation(explanation)
    with prepare(obj, e.instance, what="is_inflated", answers=ANSWERS, max_seconds=None) as q:
        space = q.space
        guarantee = _Guarantee(space, _bound(e, space), e.bounds_precision)
        box = box_of(space, e)
        if not guarantee.holds(*q.box_weights(box)):
            return False
        for f in e.features:
            mask, size = box[f], space.features[f].size
            if space.features[f].is_numeric:
                lo, hi = (mask & -mask).bit_length() - 1, mask.bit_length() - 1
                wider = [mask | 1 << k for k in (lo - 1, hi + 1) if 0 <= k < size]
            else:
                wider = [mask | 1 << k for k in range(size) if not mask >> k & 1]
            for m in wider:
                if guarantee.holds(*q.box_weights(box[:f] + (m,) + box[f + 1:])):
                    return False
        return True


# -- boxes and their conditions ---------------------------------------------------------------


def _box_oracle(obj: Explainable) -> tuple[BoxOracle, Classifier | None]:
    """The exact box-counting oracle of ``obj`` and its model (what scoring a rule needs, with no instance)."""
    oracle, model = resolve(obj)
    if not has_boxes(oracle):
        raise InvalidTypeError(
            f"Widening conditions needs exact counts over sets of values, which the {oracle.language!r} oracle "
            "does not give: compile the model to an exact language (dt, sdd, obdd, brute).")
    return oracle, model



def widening_order(space: FeatureSpace, features: Sequence[int], order: FeaturesLike | None) -> list[int]:
    """The features of a set in the order they are widened: ``order``'s first (by index or name), then the
    others by index."""
    if order is None:
        return list(features)
    if isinstance(order, (str, bytes, Mapping)) or not isinstance(order, Iterable):
        raise InvalidTypeError(f"'order' must be a sequence of feature indices or names. Got {order!r} instead.")
    listed = list(order.tolist() if hasattr(order, "tolist") else order)
    seq = [space.feature_index(f) for f in listed]
    if len(set(seq)) != len(seq):
        raise InvalidInputError(f"'order' must not repeat a feature. Got {listed!r} instead.")
    return [f for f in seq if f in features] + [f for f in features if f not in set(seq)]


def conditions_of(space: FeatureSpace, box: Box) -> tuple[Condition, ...]:
    """The conditions of a box on its constrained features (those not left free), in index order."""
    out = []
    for f, mask in enumerate(box):
        feat = space.features[f]
        if mask == (1 << feat.size) - 1:
            continue
        values = tuple(k for k in range(feat.size) if mask >> k & 1)
        out.append(Condition(f, feat.name, values, feat.set_literal(values)))
    return tuple(out)


def box_of(space: FeatureSpace, explanation: Explanation) -> Box:
    """The box of an explanation: its conditions if widened, else the instance's cells on its features."""
    if explanation.conditions is not None:
        box = [(1 << f.size) - 1 for f in space.features]
        for c in explanation.conditions:
            box[c.feature] = sum(1 << k for k in c.values)
        return tuple(box)
    return point_box(space, space.encode(explanation.instance, argument="explanation.instance"),
                     explanation.features)


def widened_explanation(e: Explanation, space: FeatureSpace, box: Box, disagree: Weight, consistent: Weight,
                        calls: int, seconds: float, maximal: bool = True) -> Explanation:
    """``e`` with the conditions of ``box``, their exact weights under the distribution, and the work added
    (``maximal``: whether the widening ended with every condition as wide as it goes, see
    :attr:`~kcxai.Explanation.widening`)."""
    conds = conditions_of(space, box)
    point = space.encode(e.instance, argument="explanation.instance")
    feats = tuple(c.feature for c in conds)
    return dataclasses.replace(
        e, features=feats, names=tuple(c.name for c in conds),
        values=tuple(space.features[f].values[point[f]] for f in feats), literals=tuple(c.literal for c in conds),
        error=space.probability(disagree), precision=space.arith.complement(disagree, consistent),
        coverage=space.probability(consistent), oracle_calls=e.oracle_calls + calls, seconds=e.seconds + seconds,
        conditions=conds, widening="maximal" if maximal else "box budget",
        unwidened_coverage=e.coverage if e.conditions is None else e.unwidened_coverage)
