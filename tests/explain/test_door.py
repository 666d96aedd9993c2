"""The one door (issue 29): every method runs through ``explain_with`` on the chooser's engine, which the model
keeps; results and errors name the method; one default order per method, whichever name calls it; widening
runs on the query that found the set; the tree batch is the dt oracle's hook."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai import InvalidTypeError, ProblemTooLargeError, SearchLimitError
from kcxai.engines import choose as chooser
from kcxai.engines._decision import is_decision_engine
from kcxai.engines._ensemble_box import EnsembleBox
from kcxai.engines._ensemble_cnf import EnsembleCnf
from kcxai.explain import _door as door
from kcxai.explain._methods import DEFAULT_ORDER, METHODS
from kcxai.explain._progression import deletion_order
from kcxai.oracle import BatchOracle, has_batch
from tests._support.ensemble_reference import ENSEMBLES, Brute
from tests._support.strategies import instance_of, points

V = (1, 1, 1, 1, 0, 0, 0, 0, 1)


def _counting_compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The languages compiled from now on (the one place a language compiles, ``choose._compile``)."""
    calls: list[str] = []
    real = chooser._compile
    monkeypatch.setattr(chooser, "_compile", lambda lang, *a, **k: calls.append(lang.name) or real(lang, *a, **k))
    return calls


def _forest() -> kcxai.RandomForest:
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1, 2]) for n in "abcd"])
    trees = [kcxai.DecisionTree(space, [0, 1], kcxai.Split(n, {0: kcxai.Leaf(0), 1: kcxai.Leaf(1), 2: kcxai.Leaf(1)}))
             for n in "abcd"]
    return kcxai.RandomForest(space, [0, 1], trees, voting="hard")


def test_a_loop_of_functional_calls_builds_the_engine_once(monkeypatch: pytest.MonkeyPatch) -> None:
    forest = _forest()
    compiles = _counting_compiles(monkeypatch)
    rows = [[1, 1, 0, 2], [0, 2, 2, 1], [2, 0, 1, 1], [1, 1, 1, 1]]
    sets = [kcxai.ensemble_axp(forest, x, inflate=False).features for x in rows]
    assert compiles == ["sat"]  # the chooser's engine for a small hard-voting forest, built once
    assert [kcxai.is_ensemble_axp(forest, x, s) for x, s in zip(rows, sets)] == [True] * 4
    assert compiles == ["sat"]
    assert [kcxai.ensemble_axp(forest, x).features for x in rows] == sets  # widened by the box search,
    assert compiles == ["sat", "search"]  # built once too
    kcxai.ensemble_axp(forest, rows[0], engine="search")
    kcxai.smallest_ensemble_cxp(forest, rows[0], engine="search")
    assert compiles == ["sat", "search"]


def test_results_and_errors_name_the_method() -> None:
    forest = _forest()
    x = [1, 1, 0, 2]
    assert kcxai.ensemble_axp(forest, x).method == "axp"
    assert kcxai.ensemble_cxp(forest, x).method == "cxp"
    assert kcxai.smallest_ensemble_axp(forest, x).method == "smallest_axp"
    assert kcxai.smallest_ensemble_cxp(forest, x).method == "smallest_cxp"
    assert kcxai.min_idrs(forest, x, 0).method == "min_idrs"
    explainer = kcxai.Explainer(forest, language="sat")
    assert explainer.explain_one(x, method="axp").method == "axp"
    with pytest.raises(SearchLimitError, match=r"^row 0: axp stopped at its time limit"):
        explainer.explain_one(x, method="axp", max_seconds=1e-9)
    with pytest.raises(SearchLimitError, match=r"^smallest_cxp stopped .*try the other engine"):
        kcxai.smallest_ensemble_cxp(forest, x, max_seconds=1e-9)
    with pytest.raises(InvalidTypeError, match=r"decide tree ensembles .* Got DecisionTree instead"):
        kcxai.ensemble_axp(kcxai.datasets.running_example_tree(), V)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), model=ENSEMBLES, engine=st.sampled_from(["sat", "search"]))
def test_one_default_order_whichever_name_calls_axp(data: Any, model: Any, engine: str) -> None:
    """On one engine, ensemble_axp, min_idrs(delta=0), the Explainer's axp and an explicit 'fewer values
    first' order give the same set (the default order is the method's, not the name's), and it is an AXp."""
    compiled = kcxai.compile_model(model, engine)
    try:
        point = data.draw(points(model.space))
        x = instance_of(model.space, point)
        by_alias = kcxai.ensemble_axp(compiled, x).features
        assert DEFAULT_ORDER["decisions"] == "fewest values"
        assert kcxai.min_idrs(compiled, x, 0).features == by_alias
        assert kcxai.Explainer(model, language=engine).explain_one(x, method="axp").features == by_alias
        explicit = deletion_order(model.space.domain_sizes)
        assert kcxai.min_idrs(compiled, x, 0, order=explicit).features == by_alias
        bf = Brute(model, point)
        assert bf.sufficient(set(by_alias)) and all(not bf.sufficient(set(by_alias) - {i}) for i in by_alias)
    finally:
        compiled.close()


def test_every_name_picks_the_same_axp_where_the_order_decides() -> None:
    """Two AXps, {a} (3 values) and {b} (2 values), and no cores (the branch and bound): the order alone decides,
    and every name of axp on the engine tries b first, so keeps a."""
    space = kcxai.FeatureSpace([kcxai.Feature.categorical("a", [0, 1, 2]), kcxai.Feature.categorical("b", [0, 1])])
    tree_a = kcxai.DecisionTree(space, [0, 1], kcxai.Split("a", {0: kcxai.Leaf(0), 1: kcxai.Leaf(1), 2: kcxai.Leaf(0)}))
    tree_b = kcxai.DecisionTree(space, [0, 1], kcxai.Split("b", {0: kcxai.Leaf(0), 1: kcxai.Leaf(1)}))
    both = kcxai.RandomForest(space, [0, 1], [tree_a, tree_b])  # ties go to class 0: class 1 needs a=1 and b=1
    search = kcxai.compile_model(both, "search")
    got = {"ensemble_axp": kcxai.ensemble_axp(both, [0, 0], engine="search").names,
           "min_idrs": kcxai.min_idrs(search, [0, 0], 0).names,
           "Explainer": kcxai.Explainer(both, language="search").explain_one([0, 0], method="axp").names,
           "is_min_idrs": ("a",) if kcxai.is_min_idrs(search, [0, 0], ["a"], 0) else ()}
    assert set(got.values()) == {("a",)}, got
    assert kcxai.min_idrs(search, [0, 0], 0, order=["a", "b"]).names == ("b",)  # the other AXp, asked for


def test_counting_languages_keep_index_order() -> None:
    """Over exact counts the default order is the feature order, as in the paper (the running example's AXp)."""
    assert DEFAULT_ORDER["counts"] == "index"
    tree = kcxai.datasets.running_example_tree()
    e = kcxai.min_idrs(tree, V, 0)
    assert e.features == kcxai.min_idrs(tree, V, 0, order=range(9)).features == (0, 1, 2, 7, 8)


def test_compile_model_without_a_language_takes_the_chooser_s_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    tree = kcxai.datasets.running_example_tree()
    assert kcxai.compile_model(tree).language == "dt"
    assert kcxai.compile_model(_forest()).language == "obdd"  # a small forest compiles within the probe budget
    monkeypatch.setattr(chooser, "PROBE", chooser.ProbeBudget(max_seconds=1e-9))  # nothing compiles in time
    forest = _forest()
    compiled = kcxai.compile_model(forest)
    assert compiled.language == "sat" and compiled is kcxai.compile_model(forest)  # kept by the model
    with pytest.raises(kcxai.InvalidInputError, match="apply to a language"):
        kcxai.compile_model(forest, max_seconds=3)


def test_the_decision_engines_share_one_protocol() -> None:
    forest = _forest()
    engines = [EnsembleCnf(forest), EnsembleBox(forest)]
    try:
        assert all(is_decision_engine(e) for e in engines)
        assert not is_decision_engine(kcxai.compile_model(forest, "obdd").oracle)
        x = [1, 1, 0, 2]
        assert kcxai.ensemble_axp(engines[0], x).features == kcxai.ensemble_axp(engines[1], x).features
    finally:
        for e in engines:
            e.close()


def test_widening_runs_on_the_method_s_query() -> None:
    """inflate=True counts its queries with the method's and stops at the method's time limit."""
    tree = kcxai.datasets.running_example_tree()
    plain = kcxai.min_idrs(tree, V, 0.03, start="path")
    wide = kcxai.min_idrs(tree, V, 0.03, start="path", inflate=True)
    assert wide.oracle_calls > plain.oracle_calls and wide.conditions is not None
    assert wide == kcxai.inflate(tree, plain)  # the same widening as the public function's
    forest = _forest()
    x = [1, 1, 0, 2]
    axp = kcxai.ensemble_axp(forest, x, engine="sat")
    widened = kcxai.inflate(forest, axp)  # an AXp found by SAT is widened by the model's branch and bound
    assert widened.conditions is not None and widened.precision == 1
    with pytest.raises(SearchLimitError, match=r"^smallest_idrs stopped"):
        kcxai.smallest_idrs(forest, x, 0, inflate=True, max_seconds=1e-9)


@pytest.mark.parametrize("error, said", [(SearchLimitError, "time limit"), (ProblemTooLargeError, "too large")])
def test_widening_by_default_never_turns_a_set_found_into_an_error(monkeypatch: pytest.MonkeyPatch, error: Any,
                                                                   said: str) -> None:
    """The row's time limit (or an engine too large) stopping the default widening returns the AXp found,
    unwidened and marked; asked for explicitly (inflate=True), the limit is the caller's error."""
    forest, x = _forest(), [1, 1, 0, 2]
    plain = kcxai.ensemble_axp(forest, x, inflate=False)

    def stopped(*args: Any, **kwargs: Any) -> Any:
        raise error("stopped")

    monkeypatch.setattr(door, "widen", stopped)
    got = kcxai.ensemble_axp(forest, x)
    assert got.features == plain.features and got.conditions is None and got.widening == said
    through = kcxai.Explainer(forest).explain_one(x, method="axp")  # the Explainer's door: the same default
    assert through.features == plain.features and through.widening == said
    assert f"not widened: {'the row' if said == 'time limit' else 'its widening engine'}" in str(got)
    with pytest.raises(error):
        kcxai.ensemble_axp(forest, x, inflate=True)


def test_the_tree_batch_is_the_dt_oracle_s_hook() -> None:
    tree = kcxai.datasets.running_example_tree()
    dt = kcxai.compile_model(tree, "dt").oracle
    assert has_batch(dt) and isinstance(dt, BatchOracle)
    assert not has_batch(kcxai.compile_model(tree, "brute").oracle)
    rows = dt.min_idrs_batch([V, (9, 9, 9, 9, 9, 9, 9, 9, 9)], kcxai.explain._query.check_delta(0), None)
    assert rows is not None and isinstance(rows[1], kcxai.KcxaiError)
    assert rows[0].fixed == kcxai.min_idrs(tree, V, 0).features and rows[0].weight == 0
    # an oracle without the hook: the per-row loop, the same explanations
    for language in ("dt", "brute"):
        got = kcxai.Explainer(tree, language=language).explain([V, V], method="axp", on_error="report")
        assert [e.features for e in got] == [(0, 1, 2, 7, 8)] * 2


def test_every_method_declares_its_algorithm() -> None:
    for m in METHODS.values():
        assert callable(m.run) and callable(m.function) and m.function.__module__ == m.run.__module__
