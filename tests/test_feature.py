"""Cut points print as the shortest decimal that denotes the same split of the values a feature reads (float32
or float64), the decimal read as the model reads it in an input row; a printed bound reads back as that split.
Checked against the exact split semantics: every representable value next to the cut compared with the
threshold and with the printed decimal as read."""

import math
import re
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import kcxai
from kcxai._cuts import cut_text, float32_cuts, read_cut
from kcxai._feature import format_bound, format_interval

FLOAT32_MAX = float(np.finfo(np.float32).max)


def step(v, up, float32):
    """The representable value next to ``v`` (float32 or float64), as a float."""
    if float32:
        with np.errstate(over="ignore"):
            return float(np.nextafter(np.float32(v), np.float32(np.inf if up else -np.inf)))
    return math.nextafter(v, math.inf if up else -math.inf)


def read(text, float32):
    """A printed decimal as a model reads it in an input row: parsed to float64, then cast to float32."""
    with np.errstate(over="ignore"):
        return float(np.float32(float(text))) if float32 else float(text)


def last_at_or_below(t, float32):
    """The representable value the split ``x <= t`` puts last on its lower side, found by stepping (not by the
    code under test)."""
    if not float32:
        return t
    with np.errstate(over="ignore"):
        v = float(np.float32(t))
    while v > t:
        v = step(v, False, True)
    while step(v, True, True) <= t:
        v = step(v, True, True)
    return v


def splits_alike(t, text, strict, float32):
    """Whether ``x <= t`` and the printed bound (``x < d`` when strict, else ``x <= d``, ``d`` read as an input)
    put every representable value on the same side: checked on the values two steps either side of the cut
    (further out both agree by monotonicity)."""
    d = read(text, float32)
    low = last_at_or_below(t, float32)
    values = [low, step(low, False, float32), step(step(low, False, float32), False, float32)]
    values += [step(low, True, float32), step(step(low, True, float32), True, float32)]
    return all((v <= t) == (v < d if strict else v <= d) for v in values if not math.isinf(v))


def fewer_digits(text):
    """The two decimals with one significant digit fewer on either side of ``text`` (none for one digit)."""
    dec = Decimal(text).normalize()
    sign, digits, exp = dec.as_tuple()
    if len(digits) <= 1:
        return []
    q = Decimal((0, (1,), exp + 1))
    return [str(dec.quantize(q, rounding=r)) for r in ("ROUND_FLOOR", "ROUND_CEILING")]


def digits(text):
    return len(Decimal(text).normalize().as_tuple().digits)


def numpy_shortest(v, float32):
    """numpy's shortest decimal that parses back to ``v`` in its own type (an independent shortest)."""
    x = np.float32(v) if float32 else np.float64(v)
    text = np.format_float_positional(x, unique=True, trim="-")
    return text if read(text, float32) == v else repr(v)


finite = st.floats(allow_nan=False, allow_infinity=False)
float32s = st.floats(width=32, allow_nan=False, allow_infinity=False)
# float32 thresholds as scikit-learn makes them: the float64 midpoint of two float32 values
midpoints = st.tuples(float32s, float32s).map(lambda ab: (ab[0] + ab[1]) / 2)
# XGBoost's x < c on float32 values, imported as x <= the float32 below c
below_float32 = float32s.map(lambda c: step(c, False, True)).filter(math.isfinite)
decimals = st.tuples(st.integers(-10**9, 10**9), st.integers(-12, 12)).map(lambda me: f"{me[0]}e{me[1]}")


@settings(max_examples=500)
@given(t=st.one_of(finite, float32s, midpoints, below_float32), float32=st.booleans())
def test_printed_cut_denotes_the_same_split_and_is_shortest(t, float32):
    low = last_at_or_below(t, float32)
    high = step(low, True, float32)
    assume(not math.isinf(low) and not math.isinf(high) and abs(low) >= 1e-4)  # the ends, and tiny numbers: below
    text, strict = cut_text(t, float32=float32)
    assert re.fullmatch(r"-?\d+(\.\d+)?(e[+-]\d+)?", text), text
    assert splits_alike(t, text, strict, float32), (t, text, strict)
    for fewer in fewer_digits(text):
        assert not splits_alike(t, fewer, False, float32) and not splits_alike(t, fewer, True, float32), \
            (t, text, fewer)
    assert digits(text) <= min(digits(numpy_shortest(low, float32)), digits(numpy_shortest(high, float32)))
    assert read_cut(float(text), strict, float32=float32) == low  # it reads back as the same cut


@settings(max_examples=400)
@given(d=decimals, strict=st.booleans(), float32=st.booleans())
def test_a_bound_reads_as_the_last_representable_value_on_its_side(d, strict, float32):
    x = read(d, float32)
    assume(not math.isinf(x))
    low = read_cut(float(d), strict, float32=float32)
    assert (low < x) if strict else (low <= x)
    above = step(low, True, float32)
    assert (above >= x) if strict else (above > x)


def test_ends_of_the_line():
    assert cut_text(-1e39, float32=True) == ("-inf", False)
    assert cut_text(1e39, float32=True) == ("3.4028235e+38", False)  # the largest float32
    assert cut_text(-5e-324) == ("0", True)  # x <= the float below 0 is x < 0
    assert read_cut(math.inf, False) == math.inf and read_cut(-math.inf, True) == -math.inf
    assert read_cut(1e40, False, float32=True) == math.inf  # float32(1e40) is infinity: every value
    assert read_cut(1e40, True, float32=True) == FLOAT32_MAX and read_cut(-1e40, False, float32=True) == -math.inf


def test_examples_from_scikit_learn_xgboost_and_lightgbm():
    assert format_bound(0.7000000029802322, float32=True) == "<= 0.7"  # iris forest: float32(0.7) is below
    assert format_bound(0.6000000014901161, float32=True) == "< 0.6"  # was <= 0.59999996: float32(0.6) is above
    assert format_bound(952.8999938964844, float32=True) == "< 952.9"  # was <= 952.89996
    assert format_bound(0.9999999403953552, float32=True) == "< 1"  # XGBoost's x < 1: was <= 0.99999994
    assert format_bound(0.9999999403953552, float32=True, lower=True) == ">= 1"
    assert format_bound(99.69999, float32=True) == "< 99.7"  # XGBoost's x < 99.7: was <= 99.69999
    assert format_bound(952.8999938964844) == "<= 952.8999938964844"  # float64: its own repr
    assert format_bound(2.4499999999999997) == "< 2.45"  # HistGradientBoosting, one float below 2.45
    assert format_bound(11.315000000000003) == "<= 11.315000000000003"  # LightGBM's threshold: no shorter cut
    assert format_bound(30.0) == format_bound(30.0, float32=True) == "<= 30"
    assert format_bound(-0.0) == "<= 0" and format_bound(1e300) == "<= 1e+300"
    assert format_interval(-math.inf, math.inf) == "(-inf, inf)"
    assert format_interval(0.9999999403953552, 1.9999998807907104, float32=True) == "[1, 2)"


def float32_near(t):
    """The float32 values on either side of a float64 ``t`` (the values a cut at ``t`` separates)."""
    low = last_at_or_below(t, True)
    return [low, step(low, True, True)]


BOUNDS = re.compile(r"(<=|<|>=|>) (-?\d+(?:\.\d+)?(?:e[+-]\d+)?)$|([\(\[])(\S+), (\S+)([\)\]])$")


def admits(text, value, float32):
    """Whether a printed interval admits a value as the feature reads it: its bounds read as inputs are read,
    its brackets saying which ends belong."""
    if text == "(-inf, inf)":
        return True
    m = BOUNDS.search(text)
    op, d, lb, a, b, rb = m.groups()
    if op is not None:
        d = read(d, float32)
        return {"<=": value <= d, "<": value < d, ">": value > d, ">=": value >= d}[op]
    a, b = read(a, float32), read(b, float32)
    return (value >= a if lb == "[" else value > a) and (value <= b if rb == "]" else value < b)


@settings(max_examples=200)
@given(ts=st.lists(st.one_of(midpoints, below_float32).filter(lambda t: abs(t) < FLOAT32_MAX / 2), min_size=1,
                   max_size=4, unique=True).map(sorted), float32=st.booleans(), data=st.data())
def test_feature_intervals_admit_exactly_the_values_the_feature_places_there(ts, float32, data):
    """The value (as the feature reads it) a printed interval admits is the one the feature places in it, for
    values drawn next to the cuts, where a wrong label shows; and every interval's text reads back to it."""
    assume(not float32 or len(set(float32_cuts(ts).tolist())) == len(ts))
    near = [x for t in ts for x in float32_near(t)] + list(ts)
    x = data.draw(st.one_of(float32s.filter(lambda v: abs(v) < FLOAT32_MAX / 2), st.sampled_from(near)))
    feature = kcxai.Feature.numeric("x", ts, float32=float32)
    value = read(x, float32)
    for k in range(feature.size):
        assert admits(feature.label(k), value, float32) == (feature.index(x) == k), (feature.label(k), x, k)
    assert feature.thresholds == tuple(ts)  # printing changes nothing stored


def _bound_mask(feature, text):
    from kcxai._rule_parse import _interval_mask

    return _interval_mask(feature, text, "test")


@settings(max_examples=200)
@given(ts=st.lists(st.one_of(finite.filter(lambda t: abs(t) < 1e300), midpoints, below_float32), min_size=1,
                   max_size=5, unique=True).map(sorted), float32=st.booleans(), data=st.data())
def test_every_union_of_intervals_reads_back(ts, float32, data):
    """A run of intervals prints as a bound or interval that reads back to that run."""
    assume(not float32 or len(set(float32_cuts(ts).tolist())) == len(ts))  # else no float32 feature (tested below)
    feature = kcxai.Feature.numeric("x", ts, float32=float32)
    n = feature.size
    a = data.draw(st.integers(0, n - 1))
    b = data.draw(st.integers(a, n - 1))
    text = feature.interval_text(a, b)
    assert _bound_mask(feature, text) == sum(1 << k for k in range(a, b + 1)), text


def test_bounds_that_cut_an_interval_name_it():
    age = kcxai.Feature.numeric("age", [29.5, 37.5, 52.5])
    with pytest.raises(kcxai.InvalidInputError, match=r"cuts the interval \(37.5, 52.5\] of 'age'"):
        age.bound_position(38.0, True)
    with pytest.raises(kcxai.InvalidInputError, match="split float32 values alike"):
        kcxai.Feature.numeric("w", [0.75, 0.7500000149011612], float32=True)  # one float32 cut: an empty interval


def test_every_printed_place_uses_the_shortest_cut():
    """A scikit-learn tree on float data: literals, rules, values, DOT text and to_frame print the cuts' shortest
    decimals, which are shorter than the stored float32 thresholds."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.tree import DecisionTreeClassifier

    from kcxai.viz import tree_to_dot

    data = load_breast_cancer()
    clf = DecisionTreeClassifier(max_depth=3, random_state=0).fit(data.data, data.target)
    tree = kcxai.DecisionTree.from_sklearn(clf, feature_names=list(data.feature_names))
    cuts = {cut_text(t, float32=True)[0] for f in tree.space.features for t in f.thresholds or ()}
    assert all(len(c.replace("-", "").replace(".", "").lstrip("0")) <= 6 for c in cuts), cuts  # no float32 noise
    e = kcxai.min_idrs(tree, data.data[0], 0)
    texts = [e.rule(), *e.literals, *map(str, e.values), str(e.to_dict()["values"])]
    texts.append(tree_to_dot(tree, e))
    texts.append(kcxai.Explainer(tree).explain([data.data[0]]).to_frame()["rule"][0])
    numbers = {n for text in texts for n in re.findall(r"(?<![\w.])-?\d+\.\d+(?:e[+-]\d+)?", text)}
    assert numbers and numbers <= cuts, numbers - cuts


@pytest.mark.parametrize("float32", [False, True])
def test_interval_prints_as_its_feature_reads(float32):
    feature = kcxai.Feature.numeric("x", [0.1], float32=float32)
    assert str(feature.values[0]) == ("< 0.1" if float32 else "<= 0.1")  # float32(0.1) lies above 0.1
    assert feature.values[0] == kcxai.Interval(-math.inf, 0.1)  # the flag is not part of the value
    again = kcxai.Feature.from_dict(feature.to_dict())
    assert again == feature and again.literal(1) == feature.literal(1)
