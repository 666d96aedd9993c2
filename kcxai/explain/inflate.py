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
rule's error, precision and coverage are exact, under the model's distribution.

Order. Features are widened one at a time in ``order`` (default: the set's features by index).
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
(sufficiency is monotone: one round).

References
----------
Izza, Ignatiev, Stuckey, Marques-Silva, "Delivering Inflated Explanations", AAAI 2024.
Izza, Huang, Ignatiev, Narodytska, Cooper, Marques-Silva, "Efficient Explanations With Relevant Sets"
(the I-delta- and C-delta-relevant sets whose guarantees are kept).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, cast

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.arithmetic import Probability, Weight
from kcxai._params import BOOL, check
from kcxai.explain._query import Query, resolve
from kcxai.explain.explanation import Explanation
from kcxai.explain._widen import box_of, conditions_of, widened_explanation, widening_order
from kcxai.oracle import BoxOracle, has_boxes
from kcxai.space import FeatureSpace
from kcxai.typing import Explainable, FeaturesLike

__all__ = ["inflate", "is_inflated", "box_of", "conditions_of"]

#: The ensemble engines (delta = 0 by SAT or search), whose explanations are widened by the box search.
_ENSEMBLE_LANGUAGES = ("sat", "search")


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


def _check_explanation(e: Any) -> Explanation:
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


def inflate(obj: Explainable, explanation: Explanation, *, order: FeaturesLike | None = None,
            max_seconds: float | None = 60) -> Explanation:
    """Widen each condition of an explanation to a maximal set of values that keeps its guarantee.

    Parameters
    ----------
    obj : Classifier, CompiledModel or BoxOracle
        What the explanation was computed with (the same model and distribution), in an exact
        language; for an ensemble AXp found by SAT or search (``language`` ``"sat"`` / ``"search"``),
        the ensemble model or its prepared engine (the widening then runs the box search).
    explanation : Explanation
        A relevant set with a bound: an I-delta set (error <= ``delta``, AXps at delta = 0) or a C-delta
        set (precision >= ``precision_bound``).
    order : sequence of int or str, optional
        The order in which features are widened (default: the set's features by index); features of
        the set it leaves out come after, by index.
    max_seconds : float or None, default 60
        Time limit of the ensemble box search (only used for ``"sat"`` / ``"search"`` explanations).

    Returns
    -------
    Explanation
        The same explanation with :attr:`~kcxai.Explanation.conditions` set, its literals and rule
        printing them, and ``error``, ``precision`` and ``coverage`` those of the widened rule, exact,
        under the model's distribution. A feature whose condition widens to its whole domain is no
        longer needed and is left out. ``oracle_calls`` and ``seconds`` include the widening.

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
    t0 = time.perf_counter()
    if e.language in _ENSEMBLE_LANGUAGES:
        if e.conditions is not None:  # one pass of the box search leaves nothing to widen
            return e
        from kcxai.explain._inflate_ensemble import inflate_sufficient

        return inflate_sufficient(obj, e, order=order, max_seconds=max_seconds, t0=t0)
    oracle, model = _box_oracle(obj)
    space: FeatureSpace = oracle.space
    point = space.encode(e.instance, argument="explanation.instance")
    label = oracle.predict_point(point)
    classes = getattr(model, "classes", None)
    if classes is not None and classes[label] != e.prediction:
        raise InvalidInputError(
            f"'obj' predicts {classes[label]!r} for the explanation's instance, which was explained as "
            f"{e.prediction!r}: pass the model the explanation was computed with.")
    guarantee = _Guarantee(space, _bound(e, space), e.bounds_precision)
    box = list(box_of(space, e))  # an explanation widened already starts from its conditions
    steps = widening_order(space, e.features, order)
    calls = 0
    weights: tuple[Weight, Weight] | None = None  # (disagree, consistent) of the current box
    clean: set[int] = set()  # features widened as far as they go with the other conditions as they are
    while steps and not clean.issuperset(steps):
        for f in steps:
            if f in clean:
                continue
            by_value = oracle.box_weights_by_value(tuple(box), label, f)
            calls += 1
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
        weights = oracle.box_weights(tuple(box), label)
        calls += 1
        _check_start(e, guarantee, weights)
    return widened_explanation(e, space, tuple(box), weights[0], weights[1], calls, time.perf_counter() - t0)


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


def _box_oracle(obj: Any) -> tuple[BoxOracle, Any]:
    oracle, model = resolve(obj)
    if not has_boxes(oracle):
        raise InvalidTypeError(
            f"Widening conditions needs exact counts over sets of values, which the {oracle.language!r} oracle "
            "does not give: compile the model to an exact language (dt, sdd, obdd, brute).")
    return oracle, model


def _rate_key(k: int, by_value: Sequence[tuple[Weight, Weight]]) -> tuple[Any, int]:
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
    oracle, _ = _box_oracle(obj)
    space = oracle.space
    label = oracle.predict_point(space.encode(e.instance, argument="explanation.instance"))
    guarantee = _Guarantee(space, _bound(e, space), e.bounds_precision)
    box = box_of(space, e)
    if not guarantee.holds(*oracle.box_weights(box, label)):
        return False
    for f in e.features:
        mask, size = box[f], space.features[f].size
        if space.features[f].is_numeric:
            lo, hi = (mask & -mask).bit_length() - 1, mask.bit_length() - 1
            wider = [mask | 1 << k for k in (lo - 1, hi + 1) if 0 <= k < size]
        else:
            wider = [mask | 1 << k for k in range(size) if not mask >> k & 1]
        for m in wider:
            if guarantee.holds(*oracle.box_weights(box[:f] + (m,) + box[f + 1:], label)):
                return False
    return True


def widened(q: Query, e: Explanation, wanted: Any) -> Explanation:
    """``e``, or with ``inflate=True`` its conditions widened while its guarantee holds (:func:`kcxai.inflate`,
    on the same oracle, in the time the call has left)."""
    check("inflate", wanted, BOOL)
    if not wanted:
        return e
    left = None if q.deadline.max_seconds is None else max(1e-9, q.deadline.at - time.perf_counter())
    return inflate(q.oracle, e, max_seconds=left)
