"""The fit budget at every door: the Explainer's ``fit_budget``, the command line's ``--fit-budget``, and what a
bounded form refuses.

A bounded form (a tree ensemble that did not compile exactly within the probe) is built within a budget of counted
work, so two fits, and a fit explained serially or in two workers, give identical explanations. Nothing here
asserts a time.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pytest

import kcxai
from kcxai import explainer as explainer_module
from kcxai.cli import main
from kcxai.engines.choose import ProbeBudget

#: A probe nothing compiles within: the Explainer keeps the bounded form.
NO_TIME = ProbeBudget(max_seconds=1e-6)


@pytest.fixture(scope="module")
def breast_cancer_forest():
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    pipe = make_pipeline(SimpleImputer(), RandomForestClassifier(n_estimators=6, max_depth=3, random_state=0))
    pipe.fit(X.iloc[:-6], y.iloc[:-6])
    return pipe, X.iloc[:-6], X.iloc[-2:]


def _fit(pipe, X, budget: float = 0.05) -> kcxai.Explainer:
    return kcxai.Explainer(pipe, X, probe=NO_TIME, fit_budget=budget, progress=False)


def test_a_bounded_explainer_gives_the_same_explanations_across_fits_and_workers(breast_cancer_forest):
    pipe, X, rows = breast_cancer_forest
    first, second = _fit(pipe, X), _fit(pipe, X)
    bounded = first._choices["bounds"].compiled
    assert first.language_ == "bounded" and bounded is not None
    assert bounded.stats["exact"] is False and bounded.stats["reproducible"] is True  # really bounded
    assert second._choices["bounds"].compiled.stats["schedule"] == bounded.stats["schedule"]
    serial = _answers(first.explain(rows, method="local_cdrs", precision=0.95, n_jobs=1))
    assert _answers(second.explain(rows, method="local_cdrs", precision=0.95, n_jobs=1)) == serial
    assert _answers(first.explain(rows, method="local_cdrs", precision=0.95, n_jobs=2)) == serial
    assert {d for _, d, _, _ in serial} <= {"exact", "proven", "sampled"}


def _answers(result) -> list[tuple]:
    """What an explanation says, without its timing."""
    return [(e.features, e.decided, e.error, e.precision) for e in result]


def test_the_reason_says_the_budget_is_work(breast_cancer_forest):
    pipe, X, _ = breast_cancer_forest
    explainer = _fit(pipe, X)
    assert "s of work" in explainer.language_reason_ and "fit_budget=" in explainer.language_reason_


def test_a_form_stopped_by_the_safety_clock_says_it_is_not_reproducible(monkeypatch, breast_cancer_forest):
    from kcxai.compilers import _limits

    pipe, X, _ = breast_cancer_forest
    real = _limits.time.perf_counter
    start = real()
    monkeypatch.setattr(_limits.time, "perf_counter", lambda: start + 1e6 * (real() - start))  # hours per second
    explainer = _fit(pipe, X, budget=0.2)
    assert "not reproducible" in explainer.language_reason_ and "safety limit" in explainer.language_reason_


# -- the command line ---------------------------------------------------------------------------------------


def _forest_file(tmp_path: Path) -> tuple[Path, kcxai.models.RandomForest]:
    rng = random.Random(5)
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(f"x{i}", list(range(4))) for i in range(9)])
    trees, scores = [], []
    for _ in range(40):
        a, b = rng.sample(range(9), 2)
        sub = {v: kcxai.Split(f"x{b}", {w: kcxai.Leaf(rng.randrange(2)) for w in range(4)}) for v in range(4)}
        tree = kcxai.DecisionTree(space, [0, 1], kcxai.Split(f"x{a}", sub))
        trees.append(tree)
        scores.append({leaf: [rng.randint(0, 97) / 97, rng.randint(0, 89) / 89] for leaf in tree.leaves})
    model = kcxai.models.RandomForest(space, [0, 1], trees, voting="soft", leaf_scores=scores)
    path = tmp_path / "forest.json"
    model.save(path)
    return path, model


@pytest.fixture
def spy(monkeypatch):
    """The fit budgets the Explainer is built with, with no exact probe (the bounded form is kept)."""
    seen: list[float] = []
    real = explainer_module.Explainer.__init__

    def init(self, *args, **kwargs):
        seen.append(kwargs.get("fit_budget", explainer_module.DEFAULT_FIT_BUDGET))
        kwargs["probe"] = NO_TIME
        kwargs["progress"] = False
        real(self, *args, **kwargs)

    monkeypatch.setattr(explainer_module.Explainer, "__init__", init)
    return seen


X_ROW = "1,0,2,3,1,0,2,1,1"


def test_fit_budget_reaches_the_explainer_of_every_command(tmp_path, spy, capsys):
    path, model = _forest_file(tmp_path)
    assert main(["explain", str(path), "--instance", X_ROW, "--precision", "0.9", "--fit-budget", "0.1",
                 "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = kcxai.Explainer(model, probe=NO_TIME, fit_budget=0.1, progress=False)
    assert got["language"] == "bounded" and spy[0] == 0.1
    e = want.explain_one([int(v) for v in X_ROW.split(",")], method="local_cdrs", precision=0.9)
    assert tuple(got["features"]) == e.features and got["decided"] == e.decided
    assert main(["score", str(path), "--rule", "IF x0 = 1 THEN class = 1", "--fit-budget", "2"]) == 0
    rows = tmp_path / "rows.csv"
    pd.DataFrame([[int(v) for v in X_ROW.split(",")]], columns=model.space.names).to_csv(rows, index=False)
    assert main(["explain-csv", str(path), str(rows), "--out", str(tmp_path / "o.csv"), "--precision", "0.9",
                 "--fit-budget", "0.25"]) == 0
    assert main(["explain", str(path), "--instance", X_ROW, "--precision", "0.9"]) == 0
    assert spy == [0.1, 0.1, 2.0, 0.25, explainer_module.DEFAULT_FIT_BUDGET]  # the second: `want` above


@pytest.mark.parametrize("bad", ["0", "-1", "inf", "nan", "abc", "1e400"])
@pytest.mark.parametrize("command", [["explain", "MODEL", "--instance", X_ROW],
                                     ["score", "MODEL", "--rule", "IF x0 = 1"],
                                     ["explain-csv", "MODEL", "ROWS", "--out", "OUT"]])
def test_a_bad_fit_budget_is_refused_as_the_explainer_refuses_it(tmp_path, capsys, command, bad):
    path, _ = _forest_file(tmp_path)
    argv = [{"MODEL": str(path), "ROWS": str(tmp_path / "rows.csv"), "OUT": str(tmp_path / "o.csv")}.get(a, a)
            for a in command]
    assert main([*argv, "--fit-budget", bad]) == 2
    err = capsys.readouterr().err
    assert "--fit-budget" in err and ("fit_budget" in err or "positive number of seconds" in err)
    try:
        kcxai.Explainer(kcxai.datasets.running_example_tree(), fit_budget=float(bad))
    except ValueError:
        pass  # not a number at all: only the command line reads text
    except kcxai.KcxaiError as e:
        assert str(e) in err  # the same rule, the same message


# -- refusals on a bounded form -----------------------------------------------------------------------------


@pytest.mark.parametrize("check, bound", [("is_idrs", 0.05), ("is_min_idrs", 0.05), ("is_cdrs", 0.9),
                                          ("is_min_cdrs", 0.9), ("idrs_error", None), ("precision", None)])
def test_exact_measures_on_a_bounded_form_name_the_option_that_makes_it_exact(tmp_path, check, bound):
    _, model = _forest_file(tmp_path)
    compiled = kcxai.compile_model(model, "bounded", max_seconds=0.1)
    assert compiled.stats["exact"] is False
    x = [int(v) for v in X_ROW.split(",")]
    args = (compiled, x, [0, 1]) + (() if bound is None else (bound,))
    with pytest.raises(kcxai.KcxaiError) as err:
        getattr(kcxai, check)(*args)
    assert "fit_budget=" in str(err.value) and "'bounded', max_seconds=" in str(err.value)
