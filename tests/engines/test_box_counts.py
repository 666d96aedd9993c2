"""The box-counting capability (:class:`kcxai.oracle.BoxOracle`) of every exact language, against enumeration.

A box allows a set of values per feature; its disagreeing and consistent weights are checked against
sums over all points from the distribution's parameters as given (``reference``), on random trees,
decision lists and naive Bayes models with multi-valued features, 2-3 classes and uniform, product,
float and mixture distributions.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from tests._support import reference as ref
from kcxai.oracle import BoxOracle, has_boxes, point_box
from tests._support.languages import EXACT
from tests._support.model_strategies import decision_lists, naive_bayes_models
from tests._support.strategies import DISTRIBUTIONS, points, trees


def _model(data, name):
    if kcxai.engines.LANGUAGES[name].accepts is None and data.draw(st.booleans()):
        family = data.draw(st.sampled_from([decision_lists, naive_bayes_models]))
        return data.draw(family(distributions=DISTRIBUTIONS))
    return data.draw(trees(distributions=DISTRIBUTIONS))


def _box(data, space):
    """A random non-empty value set per feature (often the full one)."""
    out = []
    for f in space.features:
        full = (1 << f.size) - 1
        out.append(full if data.draw(st.booleans()) else data.draw(st.integers(1, full)))
    return tuple(out)


def _want(model, box, label):
    space = model.space
    d = w = 0
    for x in ref.all_points(space):
        if all(m >> k & 1 for m, k in zip(box, x)):
            p = ref.point_probability(space, x)
            w += p
            if model.predict_point(x) != label:
                d += p
    return d, w


@pytest.mark.parametrize("name", EXACT)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_box_weights_equal_enumeration(name, data):
    model = _model(data, name)
    oracle = kcxai.compile_model(model, name).oracle
    assert isinstance(oracle, BoxOracle) and has_boxes(oracle)
    space = model.space
    box = _box(data, space)
    label = data.draw(st.integers(0, len(model.classes) - 1))
    d, w = oracle.box_weights(box, label)
    want_d, want_w = _want(model, box, label)
    assert ref.close(space.probability(d), want_d) and ref.close(space.probability(w), want_w)
    f = data.draw(st.integers(0, space.n_features - 1))
    by_value = oracle.box_weights_by_value(box, label, f)
    assert len(by_value) == space.features[f].size
    for k, (dk, wk) in enumerate(by_value):
        want_dk, want_wk = _want(model, box[:f] + (1 << k,) + box[f + 1:], label)
        assert ref.close(space.probability(dk), want_dk) and ref.close(space.probability(wk), want_wk)


@pytest.mark.parametrize("name", EXACT)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_a_point_box_is_the_cell_query(name, data):
    """The instance's cells as a box give the oracle's own disagree_weight and consistent weight."""
    model = data.draw(trees(distributions=DISTRIBUTIONS))
    oracle = kcxai.compile_model(model, name).oracle
    space = model.space
    p = data.draw(points(space))
    fixed = frozenset(data.draw(st.sets(st.integers(0, space.n_features - 1))))
    label = model.predict_point(p)
    d, w = oracle.box_weights(point_box(space, p, fixed), label)
    assert ref.close(d, oracle.disagree_weight(p, label, fixed))
    assert ref.close(w, space.consistent_weight(p, fixed))


def test_the_sampling_language_counts_no_boxes():
    tree = kcxai.datasets.running_example_tree()
    oracle = kcxai.compile_model(tree, "sampling").oracle
    assert not has_boxes(oracle)
