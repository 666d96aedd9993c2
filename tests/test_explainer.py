"""kcxai.Explainer: the same explanations as the functional API, batches, tables, failures, joblib."""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import joblib
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests._support.model_strategies import forests
from tests._support.strategies import deltas, instance_of, points, trees

import kcxai
from kcxai import Explainer, ExplanationSet, RowFailure
from kcxai._errors import InvalidInputError, InvalidTypeError, NotRelevantError
from kcxai.explain._methods import METHODS

V = (1, 1, 1, 1, 0, 0, 0, 0, 1)


def brute_coverage(space: Any, instance: Any, features: Any) -> Fraction:
    """Pr(x_S = v_S) by enumerating feature space."""
    point = space.encode(instance)
    total = match = Fraction(0)
    for x in itertools.product(*(range(s) for s in space.domain_sizes)):
        w = Fraction(space.point_weight(x))
        total += w
        if all(x[f] == point[f] for f in features):
            match += w
    return match / total


@settings(max_examples=80)
@given(st.data(), deltas)
def test_batch_equals_min_idrs(data: Any, delta: Any) -> None:
    """The grouped tree path and the per-row loop give min_idrs's explanations, field for field."""
    tree = data.draw(trees(distributions=("uniform", "exact", "float", "mixture", "float_mixture")))
    rows = [instance_of(tree.space, data.draw(points(tree.space))) for _ in range(data.draw(st.integers(1, 6)))]
    result = Explainer(tree).explain(rows, delta=delta)
    for row, e in zip(rows, result):
        assert e == kcxai.min_idrs(tree, row, delta)
    path = Explainer(tree).explain(rows, delta=delta, start="path")
    for row, e in zip(rows, path):
        assert e == kcxai.min_idrs(tree, row, delta, start="path")
    axp = Explainer(tree).explain(rows, method="axp")
    for row, e in zip(rows, axp):
        ref = kcxai.min_idrs(tree, row, 0)
        assert (e.features, e.error, e.precision, e.method) == (ref.features, ref.error, ref.precision, "axp")


@settings(max_examples=30)
@given(st.data())
def test_coverage_is_exact(data: Any) -> None:
    tree = data.draw(trees(distributions=("uniform", "exact", "mixture")))
    rows = [instance_of(tree.space, data.draw(points(tree.space))) for _ in range(3)]
    result = Explainer(tree).explain(rows, delta=Fraction(1, 10))
    for row, e in zip(rows, result):
        cov = e.coverage
        assert cov == brute_coverage(tree.space, row, e.features)
        assert e.error == cov * (1 - e.precision)  # error = Pr(x_S = v_S) * (1 - precision)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_matches_the_functional_api(method: str) -> None:
    tree = kcxai.datasets.running_example_tree()
    explainer = Explainer(tree, language="obdd")
    bound = {"local_cdrs": 0.9, "min_cdrs": 0.9, "smallest_drs": 0.9}.get(method, None if method in ("axp", "cxp")
                                                                         else Fraction(1, 32))
    funcs = {"axp": kcxai.min_idrs, "cxp": kcxai.min_dual_idrs, "smallest_axp": kcxai.smallest_idrs,
             "smallest_cxp": kcxai.smallest_dual_idrs}
    func = funcs.get(method) or getattr(kcxai, method)
    rows = [V, (0, 1, 1, 0, 1, 0, 1, 1, 0)]
    if method in ("smallest_axp", "smallest_cxp"):
        bound = None
    got = explainer.explain(rows, method=method, **{METHODS[method].bound: bound})
    for row, e in zip(rows, got):
        ref = func(explainer.compiled_, row, 0 if bound is None else bound)
        assert (e.features, e.error, e.precision, e.kind, e.language) == (
            ref.features, ref.error, ref.precision, ref.kind, "obdd")
        assert e.method == method
    frame = got.to_frame()
    assert list(frame["bounds"]) == ["precision" if method in ("local_cdrs", "min_cdrs", "smallest_drs")
                                     else "error"] * 2


def test_explain_one_and_compile_once(monkeypatch: pytest.MonkeyPatch) -> None:
    tree = kcxai.datasets.running_example_tree()
    explainer = Explainer(tree, language="sdd")
    calls = []
    import kcxai.engines.choose as chooser

    real = chooser._compile  # the one place a language compiles
    monkeypatch.setattr(chooser, "_compile", lambda *a, **k: calls.append(a) or real(*a, **k))
    e = explainer.explain_one(V, delta=0.03)
    explainer.explain([V, V], delta=0.03)
    assert calls == []  # compiled once, in the constructor
    assert e == kcxai.min_idrs(explainer.compiled_, V, 0.03)
    with pytest.raises(InvalidInputError, match="one row"):
        explainer.explain_one([V, V])


def test_to_frame_columns_and_values() -> None:
    tree = kcxai.datasets.running_example_tree()
    frame = Explainer(tree).explain(pd.DataFrame([V, V], columns=tree.space.names, index=["a", "b"]),
                                    delta=0.03).to_frame()
    assert list(frame["id"]) == ["a", "b"]
    row = frame.iloc[0]
    e = kcxai.min_idrs(tree, V, 0.03)
    assert row["rule"] == e.rule() and row["features"] == ", ".join(e.names) and row["size"] == len(e)
    assert Fraction(row["error_exact"]) == e.error and Fraction(row["precision_exact"]) == e.precision
    assert row["prediction"] == 1 and row["bounds"] == "error" and row["delta"] == 0.03
    assert Fraction(row["coverage_exact"]) == brute_coverage(tree.space, V, e.features)
    assert row["failure"] is None


def test_class_names_relabel() -> None:
    tree = kcxai.datasets.running_example_tree()
    e = Explainer(tree, class_names={1: "yes", 0: "no"}).explain_one(V)
    assert e.prediction == "yes" and e.rule().endswith("THEN class = yes")
    with pytest.raises(InvalidInputError, match="class_names"):
        Explainer(tree, class_names={7: "x"})


def test_failures_are_reported_per_row() -> None:
    """A start set that is not relevant for some rows fails those rows only (on_error='report')."""
    tree = kcxai.datasets.running_example_tree()
    rows = [V, (0, 0, 0, 0, 0, 0, 0, 0, 0), V]
    explainer = Explainer(tree)
    outcomes = []
    for row in rows:
        try:
            outcomes.append(kcxai.min_idrs(tree, row, 0, start=["x1"]))
        except NotRelevantError:
            outcomes.append(None)
    assert any(o is None for o in outcomes) and any(o is not None for o in outcomes)
    result = explainer.explain(rows, method="min_idrs", start=["x1"], on_error="report")
    assert len(result) == 3 and result.n_failures == sum(o is None for o in outcomes)
    for got, want in zip(result, outcomes):
        if want is None:
            assert isinstance(got, RowFailure) and got.error_type == "NotRelevantError"
        else:
            assert got == want
    frame = result.to_frame()
    assert frame["failure"].notna().sum() == result.n_failures
    with pytest.raises(NotRelevantError, match=f"row {outcomes.index(None)}:"):
        explainer.explain(rows, method="min_idrs", start=["x1"])


def test_bad_rows_in_a_frame() -> None:
    tree = kcxai.datasets.running_example_tree()
    names = tree.space.names
    df = pd.DataFrame([V, (0, 1, 1, 0, 1, 0, 1, 1, 0), V], columns=names, index=[10, 11, 12])
    df.loc[11, "x3"] = 7  # not a value of x3
    explainer = Explainer(tree)
    with pytest.raises(InvalidInputError, match=r"'x3'.*7.*row 11"):
        explainer.explain(df)
    result = explainer.explain(df, on_error="report")
    assert result.ids == (10, 11, 12)
    assert isinstance(result[1], RowFailure) and "'x3'" in result[1].message
    assert result[0] == result[2] == kcxai.local_cdrs(tree, V, 0.95, inflate=True)  # widened by default
    as_rows = explainer.explain(df.to_numpy().tolist(), on_error="report")  # rows without names: by position
    assert as_rows.ids == (0, 1, 2) and as_rows.n_failures == 1 and list(as_rows)[::2] == list(result)[::2]
    with pytest.raises(InvalidInputError, match="empty"):
        explainer.explain(df.iloc[:0])
    with pytest.raises(InvalidInputError, match=r"Missing \['x9'\]"):
        explainer.explain(df.drop(columns="x9"))
    with pytest.raises(InvalidInputError, match=r"unexpected \['extra'\]"):
        explainer.explain(df.assign(extra=1))
    with pytest.raises(InvalidInputError, match="on_error"):
        explainer.explain(df, on_error="ignore")
    with pytest.raises(InvalidInputError, match="Unknown method"):
        explainer.explain(df, method="shap")
    with pytest.raises(InvalidInputError, match="takes 'precision'"):
        explainer.explain(df, method="local_cdrs", delta=0.05)
    with pytest.raises(InvalidTypeError, match="n_jobs"):
        explainer.explain(df, n_jobs=0)


def test_joblib_loky_workers_give_the_same_results() -> None:
    """n_jobs=2 with the loky backend: chunks in worker processes, which compile the model themselves
    (an OBDD cannot be pickled) and keep it for later chunks."""
    tree = kcxai.datasets.running_example_tree()
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 2, size=(40, 9))
    for language in ("dt", "obdd"):
        explainer = Explainer(tree, language=language)
        seq = explainer.explain(rows, delta=0.05)
        with joblib.parallel_config(backend="loky"):
            par = explainer.explain(rows, delta=0.05, n_jobs=2, progress=True)
        assert list(par) == list(seq) and par.ids == seq.ids
        assert {e.language for e in par.explanations} == {language}


def test_sklearn_estimators_and_training_domains() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.integers(0, 3, 200), "b": rng.integers(0, 2, 200)})
    y = (X["a"] + X["b"] > 2).astype(int)
    lin = LogisticRegression().fit(X, y)
    with pytest.raises(InvalidInputError, match="X_train"):
        Explainer(lin)
    explainer = Explainer(lin, X)
    assert explainer.model_.space.features[0].values == (0.0, 1.0, 2.0)
    assert explainer.predict(X) == list(lin.predict(X))
    tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    assert Explainer(tree).predict(X) == list(tree.predict(X))


def test_explanation_set_api() -> None:
    tree = kcxai.datasets.running_example_tree()
    result = Explainer(tree).explain([V, V, V], delta=0.03)
    assert isinstance(result[1:], ExplanationSet) and len(result[1:]) == 2
    assert result.feature_counts() == {n: 3 for n in result[0].names}
    assert "ExplanationSet(3 rows)" in result._repr_html_()


def test_tree_batch_path_is_taken_and_exact_at_ties(monkeypatch: pytest.MonkeyPatch) -> None:
    """min_idrs batches on dt use the grouped path; a delta equal to an error (a tie that floats cannot
    decide) is decided exactly, as min_idrs decides it."""
    from kcxai.engines._tree_batch import TreeBatch

    used = []
    real = TreeBatch.min_idrs_rows
    monkeypatch.setattr(TreeBatch, "min_idrs_rows", lambda self, *a, **k: used.append(1) or real(self, *a, **k))
    tree = kcxai.datasets.running_example_tree()
    tie = kcxai.idrs_error(tree, V, ["x1", "x9"])
    assert tie == Fraction(7, 512)
    for start in (None, "path"):
        got = Explainer(tree).explain([V], delta=tie, **({} if start is None else {"start": start}))[0]
        assert got == kcxai.min_idrs(tree, V, tie, start=start)
    assert used == [1, 1]
    Explainer(tree).explain([V], delta=tie, order=list(range(9)))  # other options: the per-row loop
    assert used == [1, 1]


@settings(max_examples=20, deadline=None)
@given(model=forests())
def test_class_names_rename_every_family_without_a_round_trip(model: Any) -> None:
    names = {c: f"class {c!r}" for c in model.classes}
    renamed = Explainer(model, class_names=names).model_
    assert renamed.classes == tuple(names.values()) and type(renamed) is type(model)
    assert all(t.classes == renamed.classes for t in renamed.trees)
    back = kcxai.models.model_from_dict(renamed.to_dict())
    for x in itertools.product(*(range(s) for s in model.space.domain_sizes)):
        assert renamed.classes[renamed.predict_point(x)] == names[model.classes[model.predict_point(x)]]
        assert back.predict_point(x) == renamed.predict_point(x)
