"""Inflated explanations (kcxai.inflate) held to enumeration: the guarantee holds after widening, the
measures are exact, and the result is maximal (no single condition takes one more value)."""

from __future__ import annotations

import dataclasses
import itertools
import sys
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from tests._support import reference as ref
from kcxai.explain.inflate import box_of
from tests._support.languages import EXACT
from tests._support.model_strategies import boosted_models, decision_lists, forests, naive_bayes_models
from tests._support.strategies import DISTRIBUTIONS, EXACT_KINDS, feature_spaces, instance_of, points, trees

ENSEMBLES = st.one_of(forests(), feature_spaces(min_features=2, max_features=4).flatmap(
    lambda space: boosted_models(space=space, max_trees=4)))
ENGINES = st.sampled_from(["sat", "search"])

V = (1, 1, 1, 1, 0, 0, 0, 0, 1)


def _weights(model: Any, box: tuple[int, ...], label: int) -> tuple[Any, Any]:
    """(Pr(kappa != label, x in box), Pr(x in box)) by enumeration from the raw parameters."""
    d = w = 0
    for x in ref.all_points(model.space):
        if all(m >> k & 1 for m, k in zip(box, x)):
            p = ref.point_probability(model.space, x)
            w += p
            if model.predict_point(x) != label:
                d += p
    return d, w


def _holds(e: Any, d: Any, w: Any) -> bool:
    if e.bounds_precision:
        return w > 0 and 1 - d / w >= e.precision_bound
    return d <= e.delta


def _one_step_wider(space: Any, box: tuple[int, ...], f: int) -> list[tuple[int, ...]]:
    mask, size = box[f], space.features[f].size
    if space.features[f].is_numeric:
        lo, hi = (mask & -mask).bit_length() - 1, mask.bit_length() - 1
        masks = [mask | 1 << k for k in (lo - 1, hi + 1) if 0 <= k < size]
    else:
        masks = [mask | 1 << k for k in range(size) if not mask >> k & 1]
    return [box[:f] + (m,) + box[f + 1:] for m in masks]


def _model(data: Any, name: str, distributions: Any) -> Any:
    if kcxai.engines.LANGUAGES[name].accepts is None and data.draw(st.booleans()):
        family = data.draw(st.sampled_from([decision_lists, naive_bayes_models]))
        return data.draw(family(distributions=distributions))
    return data.draw(trees(distributions=distributions))


def _explanation(data: Any, obj: Any, x: Any) -> Any:
    if data.draw(st.booleans()):
        delta = data.draw(st.sampled_from([Fraction(0), Fraction(1, 100), Fraction(1, 10), Fraction(1, 4)]))
        return kcxai.min_idrs(obj, x, delta)
    return kcxai.local_cdrs(obj, x, data.draw(st.sampled_from([Fraction(1, 2), Fraction(4, 5), Fraction(19, 20)])))


@pytest.mark.parametrize("name", EXACT)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_inflated_sets_keep_their_guarantee_and_are_maximal(name: str, data: Any) -> None:
    model = _model(data, name, EXACT_KINDS)
    obj = kcxai.compile_model(model, name)
    point = data.draw(points(model.space))
    x = instance_of(model.space, point)
    e = _explanation(data, obj, x)
    wide = kcxai.inflate(obj, e)
    space = model.space
    box = box_of(space, wide)
    label = model.classes.index(e.prediction)
    assert all(m >> k & 1 for m, k in zip(box, point))  # the instance meets the widened rule
    assert set(wide.features) <= set(e.features) and wide.inflated and wide.method == e.method
    d, w = _weights(model, box, label)
    assert _holds(e, d, w)
    assert (wide.error, wide.coverage, wide.precision) == (d, w, 1 - d / w)
    assert wide.coverage >= e.coverage
    for c in wide.conditions:
        assert c.name == space.names[c.feature] and c.literal == space.features[c.feature].set_literal(c.values)
        if space.features[c.feature].is_numeric:  # a run of consecutive intervals
            assert list(c.values) == list(range(c.values[0], c.values[-1] + 1))
    for f in wide.features:
        for wider in _one_step_wider(space, box, f):
            assert not _holds(e, *_weights(model, wider, label)), (f, wider)
    assert kcxai.is_inflated(obj, wide)
    assert wide.literals == tuple(c.literal for c in wide.conditions)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_language_widens_alike(data: Any) -> None:
    """The same order and exact weights give the same widened rule in every exact language."""
    model = data.draw(trees(distributions=EXACT_KINDS))
    x = instance_of(model.space, data.draw(points(model.space)))
    e = _explanation(data, model, x)
    got = {name: kcxai.inflate(kcxai.compile_model(model, name), e) for name in EXACT}
    first = got[EXACT[0]]
    for wide in got.values():
        assert (wide.conditions, wide.precision, wide.coverage) == (first.conditions, first.precision, first.coverage)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_float_distributions_give_the_enumerated_measures(data: Any) -> None:
    model = data.draw(trees(distributions=DISTRIBUTIONS))
    x = instance_of(model.space, data.draw(points(model.space)))
    wide = kcxai.inflate(model, _explanation(data, model, x))
    d, w = _weights(model, box_of(model.space, wide), model.classes.index(wide.prediction))
    assert ref.close(wide.error, d) and ref.close(wide.coverage, w)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), model=ENSEMBLES, engine=ENGINES)
def test_ensemble_axps_stay_sufficient_and_are_maximal(data: Any, model: Any, engine: str) -> None:
    space = model.space
    point = data.draw(points(space))
    e = kcxai.ensemble_axp(model, instance_of(space, point), engine=engine)
    wide = kcxai.inflate(model, e)
    box = box_of(space, wide)
    label = model.predict_point(point)
    table = [(p, model.predict_point(p)) for p in itertools.product(*map(range, space.domain_sizes))]

    def sufficient(b: tuple[int, ...]) -> bool:
        return all(c == label for p, c in table if all(m >> k & 1 for m, k in zip(b, p)))

    assert sufficient(box) and wide.precision == 1 and wide.error == 0
    assert ref.close(wide.coverage, _weights(model, box, label)[1])
    for c in wide.conditions:  # ranges of value numbers
        assert list(c.values) == list(range(c.values[0], c.values[-1] + 1))
    for f in wide.features:
        mask, size = box[f], space.features[f].size
        lo, hi = (mask & -mask).bit_length() - 1, mask.bit_length() - 1
        for k in (lo - 1, hi + 1):
            if 0 <= k < size:
                assert not sufficient(box[:f] + (mask | 1 << k,) + box[f + 1:])


def test_widening_order_is_respected_and_documented_in_the_result() -> None:
    tree = kcxai.datasets.running_example_tree()
    e = kcxai.local_cdrs(tree, V, Fraction(1, 2))
    a = kcxai.inflate(tree, e, order=list(reversed(e.names)))
    b = kcxai.inflate(tree, e)
    assert a.inflated and b.inflated and "widened" in a.measures() and "conditions widened" in a._repr_html_()
    assert a.to_dict()["conditions"] == [c.to_dict() for c in a.conditions]
    with pytest.raises(kcxai.InvalidInputError, match="order"):
        kcxai.inflate(tree, e, order=["x1", "x1"])


def test_widened_rules_read_in_the_features_units() -> None:
    space = kcxai.FeatureSpace([kcxai.Feature.numeric("age", [30, 40, 50]),
                                kcxai.Feature.categorical("job", ["a", "b", "c"], labels=["Private", "Gov", "Self"])])
    # class 1 for age in (30, 50] or job Self, class 0 otherwise
    tree = kcxai.DecisionTree(space, [0, 1], kcxai.Split("job", {
        "c": kcxai.Leaf(1), ("a", "b"): kcxai.Split("age", {iv: kcxai.Leaf(int(k in (1, 2)))
                                                           for k, iv in enumerate(space.features[0].values)})}))
    e = kcxai.min_idrs(tree, [45, "a"], 0, inflate=False)
    wide = kcxai.inflate(tree, e)
    assert wide.rule() == "IF age in (30, 50] THEN class = 1"
    assert kcxai.evaluate_on_data(tree, wide, [[35, "b"], [55, "a"], [31, "c"]]).matching == 2
    assert kcxai.evaluate_on_data(tree, e, [[35, "b"], [55, "a"], [31, "c"]]).matching == 0


def test_bad_input_is_refused() -> None:
    tree = kcxai.datasets.running_example_tree()
    dual = kcxai.min_dual_idrs(tree, V, 0)
    with pytest.raises(kcxai.InvalidInputError, match="relevant set"):
        kcxai.inflate(tree, dual)
    sampled = kcxai.compile_model(tree, "sampling")
    approx = kcxai.min_idrs(sampled, V, Fraction(1, 10))
    with pytest.raises(kcxai.InvalidInputError, match="approximate"):
        kcxai.inflate(tree, approx)
    e = kcxai.min_idrs(tree, V, Fraction(1, 100))
    with pytest.raises(kcxai.InvalidTypeError, match="sampling"):
        kcxai.inflate(sampled, e)
    broken = dataclasses.replace(e, delta=Fraction(0))  # its error is above 0
    with pytest.raises(kcxai.InvalidInputError, match="does not meet its bound"):
        kcxai.inflate(tree, broken)
    with pytest.raises(kcxai.InvalidTypeError):
        kcxai.inflate(tree, "IF x1 = 1")


def _two_feature_tree(space: Any, leaves: dict[tuple[int, int], int]) -> Any:
    f0, f1 = space.features
    return kcxai.DecisionTree(space, [0, 1], kcxai.Split(f0.name, {
        a: kcxai.Split(f1.name, {b: kcxai.Leaf(leaves[i, j]) for j, b in enumerate(f1.values)})
        for i, a in enumerate(f0.values)}))


def test_a_value_past_a_refused_one_is_still_tried() -> None:
    """Values go cheapest rate first, and a refused value does not end the widening: job=c (rate 1, weight
    1/15) fits the error budget after job=b (rate 1/2, weight 4/15) is refused."""
    space = kcxai.FeatureSpace([kcxai.Feature.categorical("job", ["a", "b", "c"]),
                                kcxai.Feature.categorical("age", [0, 1])], distribution=[[10, 4, 1], [1, 1]])
    tree = _two_feature_tree(space, {(0, 0): 1, (0, 1): 1, (1, 0): 1, (1, 1): 0, (2, 0): 0, (2, 1): 0})
    e = kcxai.min_idrs(tree, ["a", 0], Fraction(1, 10), order=["age", "job"])
    assert e.names == ("job",)
    wide = kcxai.inflate(tree, e)
    assert wide.rule() == "IF job in {a, c} THEN class = 1" and wide.error == Fraction(1, 15)


def test_precision_bounds_widen_in_rounds_until_nothing_changes() -> None:
    """Widening y first refuses x = 1 (precision 1/2); once y is free, x = 1 keeps precision 3/4 >= 2/3, so
    a second round frees x too."""
    space = kcxai.FeatureSpace([kcxai.Feature.categorical("x", [0, 1]), kcxai.Feature.categorical("y", [0, 1])])
    tree = _two_feature_tree(space, {(0, 0): 1, (1, 0): 0, (0, 1): 1, (1, 1): 1})
    e = dataclasses.replace(kcxai.local_cdrs(tree, [0, 0], Fraction(2, 3)), features=(0, 1))
    wide = kcxai.inflate(tree, e, order=["x", "y"])
    assert wide.rule() == "IF TRUE THEN class = 1" and wide.precision == Fraction(3, 4) and wide.coverage == 1


def test_tables_print_widened_rules_one_per_line_with_their_coverage() -> None:
    explainer = kcxai.Explainer(kcxai.datasets.running_example_tree())
    rows = [V, (0, 0, 0, 0, 0, 0, 0, 0, 0), (1, 0, 1, 0, 1, 0, 1, 0, 1)]
    result = explainer.explain(rows, method="local_cdrs", precision=0.6, inflate=False)
    wide = [kcxai.inflate(explainer.compiled_, e) for e in result]
    assert list(explainer.explain(rows, method="local_cdrs", precision=0.6)) == wide  # the Explainer's default
    table = kcxai.ExplanationSet(wide, result.ids, bounds="precision").to_frame()
    assert table["rule"].tolist() == [w.rule() for w in wide] and not any("\n" in r for r in table["rule"])
    assert table["coverage"].tolist() == [float(w.coverage) for w in wide]


def test_a_pipeline_explanation_widens_to_labelled_categories_and_original_units() -> None:
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"workclass": rng.choice(["Private", "Self-emp", "Gov", "Never"], 400),
                      "age": rng.integers(18, 80, 400)})
    y = ((X["age"] > 37) & X["workclass"].isin(["Private", "Self-emp"])).map({True: ">50K", False: "<=50K"})
    encode = ColumnTransformer([("coded", OneHotEncoder(), ["workclass"])], remainder="passthrough")
    pipe = make_pipeline(encode, DecisionTreeClassifier(max_depth=4, random_state=0)).fit(X, y)
    explainer = kcxai.Explainer(pipe, X, distribution="product")
    e = explainer.explain_one(pd.DataFrame({"workclass": ["Private"], "age": [50]}), method="axp", inflate=False)
    wide = kcxai.inflate(explainer.compiled_, e)
    assert "workclass in {Private, Self-emp}" in wide.rule() and "age > 37.5" in wide.rule()
    assert wide.precision == 1 and wide.coverage > e.coverage


# -- widened by default (issue 32): AXps, through every door --------------------------------------------------

_INFLATE = sys.modules["kcxai.explain.inflate"]  # the module (kcxai.explain.inflate is also the function's name)


def _sufficient_by_table(model: Any, box: tuple[int, ...], label: int) -> bool:
    return all(model.predict_point(p) == label for p in itertools.product(*map(range, model.space.domain_sizes))
               if all(m >> k & 1 for m, k in zip(box, p)))


@settings(max_examples=20, deadline=None)
@given(data=st.data(), model=ENSEMBLES, engine=ENGINES)
def test_ensemble_axps_are_widened_by_default_and_opt_out_gives_the_cells(data: Any, model: Any, engine: str) -> None:
    point = data.draw(points(model.space))
    x = instance_of(model.space, point)
    wide = kcxai.ensemble_axp(model, x, engine=engine)
    cell = kcxai.ensemble_axp(model, x, engine=engine, inflate=False)
    label = model.predict_point(point)
    box = box_of(model.space, wide)
    assert wide.inflated and not cell.inflated and cell.widening is None
    assert wide.features == cell.features  # an AXp is subset-minimal: no condition widens to the whole domain
    assert _sufficient_by_table(model, box, label) and wide.error == 0 and wide.precision == 1
    assert ref.close(wide.coverage, _weights(model, box, label)[1])
    assert wide.unwidened_coverage == cell.coverage and wide.coverage >= cell.coverage
    assert wide.widening in ("maximal", "box budget")
    if wide.widening == "maximal":  # the same box as widening the cells afterwards
        assert box == box_of(model.space, kcxai.inflate(model, cell))


@settings(max_examples=20, deadline=None)
@given(data=st.data(), model=ENSEMBLES, budget=st.integers(0, 12))
def test_a_widening_out_of_boxes_keeps_a_proven_box(data: Any, model: Any, budget: int) -> None:
    point = data.draw(points(model.space))
    x = instance_of(model.space, point)
    label = model.predict_point(point)
    cell = kcxai.ensemble_axp(model, x, engine="search", inflate=False)
    full = kcxai.inflate(model, cell)
    original = _INFLATE.WIDEN_BOXES
    _INFLATE.WIDEN_BOXES = budget
    try:
        small = kcxai.inflate(model, cell)
    finally:
        _INFLATE.WIDEN_BOXES = original
    box, big = box_of(model.space, small), box_of(model.space, full)
    assert _sufficient_by_table(model, box, label)
    assert all(m & ~b == 0 for m, b in zip(box, big))  # inside the maximal box
    assert small.widening == "maximal" or (small.widening == "box budget" and "box budget" in small.measures())
    if small.widening == "maximal":
        assert box == big


def test_axps_of_counting_oracles_are_widened_by_default() -> None:
    tree = kcxai.datasets.running_example_tree()
    for language in EXACT:
        compiled = kcxai.compile_model(tree, language)
        wide, cell = kcxai.min_idrs(compiled, V, 0), kcxai.min_idrs(compiled, V, 0, inflate=False)
        assert wide.inflated and wide.widening == "maximal" and kcxai.is_inflated(compiled, wide)
        assert not cell.inflated and wide.unwidened_coverage == cell.coverage <= wide.coverage
        assert box_of(tree.space, wide) == box_of(tree.space, kcxai.inflate(compiled, cell))
        assert "(unwidened 1/32" in wide.measures() and cell.coverage == Fraction(1, 32)
        assert "<th>coverage unwidened</th><td>1/32" in wide._repr_html_()
    assert not kcxai.min_idrs(tree, V, Fraction(3, 100)).inflated  # delta > 0: the paper's set unless asked
    assert kcxai.smallest_idrs(tree, V, 0).inflated and not kcxai.smallest_idrs(tree, V, 0, inflate=False).inflated
    with pytest.raises(kcxai.InvalidTypeError, match="'inflate' must be None or True or False"):
        kcxai.min_idrs(tree, V, 0, inflate="yes")


def test_the_explainer_widens_axps_by_default_serial_and_in_parallel() -> None:
    forest = _small_forest()
    rows = [list(p) for p in itertools.islice(itertools.product(*map(range, forest.space.domain_sizes)), 0, None, 7)]
    explainer = kcxai.Explainer(forest)
    serial = explainer.explain(rows, method="axp")
    parallel = kcxai.Explainer(forest).explain(rows, method="axp", n_jobs=2)
    cells = explainer.explain(rows, method="axp", inflate=False)
    assert all(e.inflated for e in serial) and not any(e.inflated for e in cells)
    assert [e.conditions for e in serial] == [e.conditions for e in parallel]
    assert [e.features for e in serial] == [e.features for e in cells]
    for e, c, x in zip(serial, cells, rows):
        label = forest.predict_point(forest.space.encode(x))
        assert _sufficient_by_table(forest, box_of(forest.space, e), label) and e.coverage >= c.coverage


def test_widening_on_a_shared_engine_gives_a_fresh_engines_answers() -> None:
    forest = _small_forest()
    rows = [list(p) for p in itertools.islice(itertools.product(*map(range, forest.space.domain_sizes)), 0, None, 5)]
    shared = kcxai.compile_model(forest, "search")
    first = [kcxai.ensemble_axp(shared, x) for x in rows]
    again = [kcxai.ensemble_axp(shared, x) for x in reversed(rows)][::-1]
    fresh = [kcxai.ensemble_axp(kcxai.compile_model(forest, "search"), x) for x in rows]
    assert [e.conditions for e in first] == [e.conditions for e in again] == [e.conditions for e in fresh]


def test_budgets_of_boxes_stop_widenings_at_proven_boxes() -> None:
    """A hard-voting forest (no SAT solver asked first: the boxes decide) widened under budgets of 1 to 60
    boxes: every box forces the class (enumeration), lies inside the maximal one, and some stop at the budget."""
    forest = _small_forest("hard")
    table = {p: forest.predict_point(p) for p in itertools.product(*map(range, forest.space.domain_sizes))}
    stopped = 0
    original = _INFLATE.WIDEN_BOXES
    try:
        for k, p in enumerate(list(table)[::11]):
            x = instance_of(forest.space, p)
            cell = kcxai.ensemble_axp(forest, x, engine="search", inflate=False)
            _INFLATE.WIDEN_BOXES = None
            big = box_of(forest.space, kcxai.inflate(forest, cell))
            _INFLATE.WIDEN_BOXES = 1 + k % 60
            small = kcxai.inflate(forest, cell)
            box = box_of(forest.space, small)
            assert all(c == table[p] for q, c in table.items() if all(m >> v & 1 for m, v in zip(box, q)))
            assert all(m & ~b == 0 for m, b in zip(box, big))
            stopped += small.widening == "box budget"
            assert small.widening == "box budget" or box == big
    finally:
        _INFLATE.WIDEN_BOXES = original
    assert stopped


def _small_forest(voting: str = "soft") -> Any:
    """A forest of 6 trees over 3 numeric features of 6 values, fitted by scikit-learn."""
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    X = rng.integers(0, 6, size=(300, 3))
    y = (X[:, 0] + 2 * X[:, 1] - X[:, 2] + rng.integers(-2, 3, size=300) > 4).astype(int)
    rf = RandomForestClassifier(n_estimators=6, max_depth=4, random_state=0).fit(X, y)
    return kcxai.models.RandomForest.from_sklearn(rf, voting=voting)
