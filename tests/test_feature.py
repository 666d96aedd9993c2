"""Thresholds print as the shortest decimal that denotes the same cut, for values read as the feature reads
them (float32 or float64); the printed text is only a label: the stored cut is unchanged."""

import math
import re
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai._feature import format_cut, format_interval

FLOAT32_MAX = float(np.finfo(np.float32).max)


def f32(x):
    with np.errstate(over="ignore"):
        return np.float32(x)


def same_cut(text, t, float32):
    """Whether ``x <= float(text)`` and ``x <= t`` split the values the feature reads (float32 values, or
    float64 values) the same way: no value lies between the two."""
    d = float(text)
    if not float32:
        return d == t
    v = f32(d)  # the printed decimal read as the feature reads a value
    with np.errstate(over="ignore"):
        above = np.nextafter(v, np.float32(np.inf))  # inf above the largest float32
    return float(v) <= t < float(above)


def shorter(text):
    """The two decimals with one significant digit fewer on either side of ``text`` (none for one digit)."""
    dec = Decimal(text).normalize()  # 130 has two significant digits
    sign, digits, exp = dec.as_tuple()
    if len(digits) <= 1:
        return []
    q = Decimal((0, (1,), exp + 1))
    return [str(dec.quantize(q, rounding=r)) for r in ("ROUND_FLOOR", "ROUND_CEILING")]


finite = st.floats(allow_nan=False, allow_infinity=False)
float32s = st.floats(width=32, allow_nan=False, allow_infinity=False)
# float32 thresholds as scikit-learn makes them: the float64 midpoint of two float32 values
midpoints = st.tuples(float32s, float32s).map(lambda ab: (ab[0] + ab[1]) / 2)


@settings(max_examples=400)
@given(t=st.one_of(finite, float32s, midpoints), float32=st.booleans())
def test_printed_cut_reads_back_as_the_same_cut_and_is_shortest(t, float32):
    if float32 and t < -FLOAT32_MAX:
        return  # no finite float32 lies at or below t: printed as -inf (below)
    text = format_cut(t, float32=float32)
    assert re.fullmatch(r"-?\d+(\.\d+)?(e[+-]\d+)?", text), text
    assert same_cut(text, t, float32), (t, text)
    for fewer in shorter(text):
        assert not same_cut(fewer, t, float32), (t, text, fewer)


def test_examples_from_scikit_learn_trees():
    assert format_cut(952.8999938964844, float32=True) == "952.89996"
    assert format_cut(952.8999938964844) == "952.8999938964844"
    assert format_cut(-0.013504018483217806, float32=True) == "-0.013504019"
    assert format_cut(30.0) == format_cut(30.0, float32=True) == "30"
    assert format_cut(-0.0) == "0" and format_cut(1e300) == "1e+300"
    assert format_cut(-1e39, float32=True) == "-inf" and format_cut(1e39, float32=True) == "3.4028235e+38"
    assert format_interval(-math.inf, math.inf) == "(-inf, inf)"


def float32_near(t):
    """The float32 values on either side of a float64 ``t`` (the values a cut at ``t`` separates)."""
    v = f32(t)
    v = v if float(v) <= t else np.nextafter(v, np.float32(-np.inf))
    return [float(v), float(np.nextafter(v, np.float32(np.inf)))]


@settings(max_examples=150)
@given(ts=st.lists(midpoints.filter(lambda t: abs(t) < FLOAT32_MAX / 2), min_size=1, max_size=4,
                   unique=True).map(sorted), float32=st.booleans(), data=st.data())
def test_feature_literals_denote_the_stored_cuts(ts, float32, data):
    """The value a literal's printed bounds admit is the value the feature places in that interval
    (values drawn next to the cuts, where a wrong label shows)."""
    near = [x for t in ts for x in float32_near(t)] + [t for t in ts]
    x = data.draw(st.one_of(float32s, st.sampled_from(near)))
    feature = kcxai.Feature.numeric("x", ts, float32=float32)
    k = feature.index(x)
    lit = feature.literal(k)
    assert str(feature.values[k]) in lit and feature.label(k) == str(feature.values[k])
    bounds = re.findall(r"-?\d+(?:\.\d+)?(?:e[+-]\d+)?|-?inf", lit.split("x", 1)[1])
    read = float(f32(x)) if float32 else x
    as_read = (lambda s: float(f32(float(s)))) if float32 else float
    iv = feature.values[k]
    if iv.low != -math.inf:
        assert read > as_read(bounds[0]), (lit, x)
    if iv.high != math.inf:
        assert read <= as_read(bounds[-1]), (lit, x)
    assert feature.thresholds == tuple(ts)  # printing changes nothing stored


def test_every_printed_place_uses_the_float32_cut():
    """A scikit-learn tree on float data: literals, rules, values, DOT text and to_frame print float32 cuts."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.tree import DecisionTreeClassifier

    from kcxai.viz import tree_to_dot

    data = load_breast_cancer()
    clf = DecisionTreeClassifier(max_depth=3, random_state=0).fit(data.data, data.target)
    tree = kcxai.DecisionTree.from_sklearn(clf, feature_names=list(data.feature_names))
    cuts = {f.name: {format_cut(t, float32=True) for t in f.thresholds}
            for f in tree.space.features if f.is_numeric and f.thresholds}
    assert any(format_cut(t, float32=True) != repr(t) for f in tree.space.features for t in f.thresholds or ())
    e = kcxai.min_idrs(tree, data.data[0], 0)
    texts = [e.rule(), *e.literals, *map(str, e.values), str(e.to_dict()["values"])]
    texts.append(tree_to_dot(tree, e))
    texts.append(kcxai.Explainer(tree).explain([data.data[0]]).to_frame()["rule"][0])
    numbers = {n for text in texts for n in re.findall(r"(?<![\w.])-?\d+\.\d+(?:e[+-]\d+)?", text)}
    assert numbers and numbers <= set().union(*cuts.values()), numbers - set().union(*cuts.values())


@pytest.mark.parametrize("float32", [False, True])
def test_interval_prints_as_its_feature_reads(float32):
    feature = kcxai.Feature.numeric("x", [0.1], float32=float32)
    assert str(feature.values[0]) == ("<= 0.099999994" if float32 else "<= 0.1")
    assert feature.values[0] == kcxai.Interval(-math.inf, 0.1)  # the flag is not part of the value
    again = kcxai.Feature.from_dict(feature.to_dict())
    assert again == feature and again.literal(1) == feature.literal(1)
