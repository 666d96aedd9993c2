"""One explanation stack: the engine chosen for a model, a method and its bound, through every door.

The choice (exact counts within the probe budget; else, for tree ensembles, delta = 0 decisions or
certified sampling) is checked on random models against brute-force enumeration: decision-engine sets
are sufficient and subset-minimal, sampled sets carry their confidence and, for fixed seeds, hold
exactly; every door (Explainer, functional API, CLI, joblib workers) gives the same answers.
"""

from __future__ import annotations

import itertools
import json
import pickle
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import kcxai
from tests._support.model_strategies import hard_naive_bayes
from kcxai import InvalidInputError
from kcxai.engines.choose import ProbeBudget, choose
from kcxai.explain._methods import METHODS
from tests._support.model_strategies import boosted_models, forests
from tests._support.strategies import instance_of, points

#: A budget no compilation fits in: the probe is abandoned at once, as for a model too large to compile.
NO_TIME = ProbeBudget(max_seconds=1e-12)  # one unit of counted work: only a model of leaves compiles in it

ENSEMBLES = st.one_of(forests(max_trees=4), boosted_models(max_trees=4))


def _table(model: Any) -> list[tuple[tuple[int, ...], int]]:
    return [(p, model.predict_point(p)) for p in itertools.product(*map(range, model.space.domain_sizes))]


def _sufficient(table: list[Any], point: tuple[int, ...], label: int, s: Any) -> bool:
    return all(c == label for p, c in table if all(p[i] == point[i] for i in s))


def _precision(model: Any, table: list[Any], point: tuple[int, ...], label: int, s: Any) -> Fraction:
    space = model.space
    agree = total = 0
    for p, c in table:
        if all(p[i] == point[i] for i in s):
            w = space.consistent_weight(p, range(space.n_features))
            total += w
            agree += w if c == label else 0
    return Fraction(agree, total)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), model=ENSEMBLES)
def test_an_ensemble_that_does_not_compile_gets_proved_sets_at_delta_zero(data: Any, model: Any) -> None:
    explainer = kcxai.Explainer(model, probe=NO_TIME)
    assume(explainer.compiled_ is None)  # a model whose construction counts no work is exact in any budget
    assert "did not compile within the probe budget" in explainer.language_reason_
    point = data.draw(points(model.space))
    x = instance_of(model.space, point)
    table = _table(model)
    label = model.predict_point(point)
    e = explainer.explain_one(x, method="axp")
    s = set(e.features)
    assert e.language in ("sat", "search") and not e.approximate and (e.error, e.precision) == (0, 1)
    assert _sufficient(table, point, label, s) and all(not _sufficient(table, point, label, s - {i}) for i in s)
    if any(c != label for _, c in table):
        d = explainer.explain_one(x, method="cxp")
        t = set(d.features)
        everything = set(range(model.space.n_features))
        assert not _sufficient(table, point, label, everything - t)
        assert all(_sufficient(table, point, label, everything - (t - {i})) for i in t)
        small = explainer.explain_one(x, method="smallest_cxp")
        assert len(small) == min(len(c) for r in range(len(everything) + 1)
                                 for c in itertools.combinations(everything, r)
                                 if not _sufficient(table, point, label, everything - set(c)))
    smallest = explainer.explain_one(x, method="smallest_axp")
    assert len(smallest) == min(len(c) for r in range(model.space.n_features + 1)
                                for c in itertools.combinations(range(model.space.n_features), r)
                                if _sufficient(table, point, label, c))
    # the same proofs through the functional API on the same engine
    engine = explainer.engine_for("axp").compiled
    assert kcxai.min_idrs(engine, x, 0).features == e.features
    assert kcxai.is_min_idrs(engine, x, e.features, 0)


@settings(max_examples=25, deadline=None)
@given(data=st.data(), model=ENSEMBLES, seed=st.integers(0, 3))
def test_sampled_sets_are_marked_and_hold_for_these_seeds(data: Any, model: Any, seed: int) -> None:
    explainer = kcxai.Explainer(model, probe=NO_TIME, language="sampling")
    default = kcxai.Explainer(model, probe=NO_TIME, fit_budget=1, progress=False)  # the bounded form, not sampling
    point = data.draw(points(model.space))
    x = instance_of(model.space, point)
    table = _table(model)
    label = model.predict_point(point)
    sampling = kcxai.compile_model(model, "sampling", seed=seed, max_samples=4096)
    for method, bound in (("local_cdrs", {"precision": Fraction(9, 10)}), ("min_idrs", {"delta": Fraction(1, 20)})):
        e = explainer.explain_one(x, method=method, **bound)
        assert e.language == "sampling" and e.approximate and e.confidence == 0.95
        assert explainer.engine_for(method, **bound).language == "sampling"
        proven = default.explain_one(x, method=method, **bound)
        exact = default.compiled_ is not None  # its construction counts no work: exact within any probe
        assert proven.language == ("obdd" if exact else "bounded")
        assert proven.decided in (("exact",) if exact else ("exact", "proven", "sampled"))
        f = METHODS[method].function(sampling, x, next(iter(bound.values())))
        assert f.approximate and f.confidence == 0.95
        prec = _precision(model, table, point, label, f.features)
        if method == "local_cdrs":  # certified: with these fixed seeds the set holds exactly
            assert prec >= Fraction(9, 10), (f, prec)
        else:
            cov = Fraction(model.space.consistent_weight(point, f.features), model.space.total_weight)
            assert cov * (1 - prec) <= Fraction(1, 20)


def test_the_choice_is_made_once_per_model_and_says_why() -> None:
    model = _forest(3)
    c1 = choose(model, "counts", probe=NO_TIME)
    assert c1.compiled is None and c1.language is None and "probe budget (" in c1.reason
    assert "s of counted work (1 unit), 1 GiB)" in c1.reason and "max_work=1 " in c1.reason
    assert choose(model, "counts", probe=NO_TIME).reason == c1.reason  # the failed probe is remembered
    ok = choose(model, "counts")
    assert ok.language == "obdd"
    assert "within the probe budget (3 s of counted work (30,600,000 units), 1 GiB)" in ok.reason
    assert choose(model, "counts").compiled is ok.compiled  # kept by the model
    copy = model.with_distribution([[1, 2]] * model.space.n_features)
    assert choose(copy, "counts").compiled is not ok.compiled  # a changed copy has its own engines
    assert pickle.loads(pickle.dumps(model)).__dict__.get("_engine_cache") is None


def test_a_method_nothing_answers_is_refused_before_any_long_work() -> None:
    explainer = kcxai.Explainer(_forest(3), probe=NO_TIME, progress=False)
    # a tree ensemble's bounded form answers the searches too (issue 28)
    assert explainer.explain_one([1, 0, 1], method="min_cdrs", precision=0.9).language == "bounded"
    bayes = kcxai.Explainer(hard_naive_bayes(3), probe=NO_TIME, progress=False)  # no bounded form, no decisions
    with pytest.raises(InvalidInputError) as info:
        bayes.explain_one([1, 0, 1], method="min_cdrs", precision=0.9)
    text = str(info.value)
    assert "NaiveBayes: method='min_cdrs' at precision=0.9 needs exact counts" in text
    assert "did not compile within the probe budget" in text and "What would work" in text
    with pytest.raises(InvalidInputError, match="does not take the option"):
        explainer.explain([[1, 0, 1]], method="axp", strat="path")
    with pytest.raises(InvalidInputError, match="takes 'delta'"):
        explainer.explain([[1, 0, 1]], method="min_idrs", precision=0.9)
    with pytest.raises(InvalidInputError, match="max_seconds"):
        explainer.explain([[1, 0, 1]], method="axp", max_seconds=-1)


def test_functional_doors_choose_as_the_explainer(monkeypatch: pytest.MonkeyPatch) -> None:
    from kcxai.engines import choose as native

    monkeypatch.setattr(native, "PROBE", NO_TIME)
    model = _forest(4)
    x = [1, 0, 1, 1]
    e = kcxai.min_idrs(model, x, 0)
    assert e.language == "search" and e.error == 0
    assert kcxai.min_idrs(model, x, 0.1).language == "bounded"  # the bounded form (issue 28), not sampling
    e_cdrs = kcxai.local_cdrs(model, x, 0.9)
    assert e_cdrs.language == "bounded" and e_cdrs.decided in ("exact", "proven", "sampled")
    with pytest.raises(InvalidInputError, match="needs exact counts"):
        kcxai.idrs_error(model, x, [0])
    explainer = kcxai.Explainer(model)
    assert explainer.explain_one(x, method="axp").features == e.features


def test_batches_of_an_ensemble_in_workers_equal_the_sequential_run() -> None:
    model = _forest(4)
    explainer = kcxai.Explainer(model, probe=NO_TIME)
    rows = [list(p) for p in itertools.product([0, 1], repeat=4)]
    seq = explainer.explain(rows, method="axp")
    par = explainer.explain(rows, method="axp", n_jobs=2)
    assert [e.features for e in seq] == [e.features for e in par]
    frame = par.to_frame()
    assert set(frame["language"]) == {"search"} and not frame["approximate"].any()
    bounded = explainer.explain(rows[:4], method="local_cdrs", precision=0.9).to_frame()
    assert set(bounded["language"]) == {"bounded"} and not bounded["approximate"].any()
    assert set(bounded["decided"]) <= {"exact", "proven", "sampled"}
    par_bounded = explainer.explain(rows[:4], method="local_cdrs", precision=0.9, n_jobs=2).to_frame()
    assert list(par_bounded["features"]) == list(bounded["features"])


def test_compiled_forms_travel_to_workers_as_their_recipe() -> None:
    model = _forest(3)
    for language in ("obdd", "sat", "search", "sampling"):
        c = kcxai.compile_model(model, language)
        back = pickle.loads(pickle.dumps(c))
        assert back.language == language and back.options == c.options
        assert pickle.loads(pickle.dumps(c)) is back  # rebuilt once per process


def test_cli_explains_an_ensemble_with_the_chosen_engine(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from kcxai.cli import main

    path = tmp_path / "forest.json"
    _forest(3).save(str(path))
    assert main(["explain", str(path), "--instance", "1,0,1", "--method", "axp", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["language"] in ("obdd", "search") and d["error"] == 0.0
    assert main(["explain", str(path), "--instance", "1,0,1", "--method", "cxp", "--language", "sat", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["language"] == "sat"
    assert main(["explain", str(path), "--instance", "1,0,1", "--method", "min_cdrs", "--language", "sat"]) == 2
    assert "needs exact counts" in capsys.readouterr().err


def _forest(n: int) -> Any:
    """A soft-voting forest of three stumps over ``n`` binary features."""
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(f"f{i}", [0, 1]) for i in range(n)])
    trees, scores = [], []
    for i in range(3):
        f = f"f{i % n}"
        trees.append(kcxai.DecisionTree(space, ["no", "yes"], kcxai.Split(f, {0: kcxai.Leaf("no"),
                                                                             1: kcxai.Leaf("yes")})))
        scores.append({1: [Fraction(3, 4), Fraction(1, 4)], 2: [Fraction(1, 5), Fraction(4, 5)]})
    return kcxai.models.RandomForest(space, ["no", "yes"], trees, voting="soft", leaf_scores=scores)


def test_estimates_are_never_printed_as_exact_fractions() -> None:
    explainer = kcxai.Explainer(_forest(4), probe=NO_TIME, language="sampling")
    e = explainer.explain_one([1, 0, 1, 1], method="local_cdrs", precision=0.9)
    assert e.approximate and e.decided == "sampled"
    d = e.to_dict()
    assert "error_exact" not in d and "precision_exact" not in d and d["precision_bound_exact"] == "9/10"
    row = explainer.explain([[1, 0, 1, 1]], method="local_cdrs", precision=0.9).to_frame().iloc[0]
    assert row["error_exact"] is None and row["precision_exact"] is None and row["approximate"]
    assert ("(estimated)" in str(e) or "(certified" in str(e)) and "confidence 0.95" in str(e)
    if e.certified is not None:  # the bound certified is printed, never an estimate below the bound
        assert e.certified >= 0.9 and f"~{float(e.precision):.4g}" not in str(e)


def _forest_over_wide_feature(split_mask: int, voting: str) -> Any:
    """A forest over one feature of 70 values (past the search engine's 64-bit masks) and a binary one,
    whose tree sends the values of ``split_mask`` one way."""
    from kcxai.models import RandomForest

    space = kcxai.FeatureSpace([kcxai.Feature.categorical("wide", list(range(70))),
                                kcxai.Feature.categorical("b", [0, 1])])
    inside = [v for v in range(70) if split_mask >> v & 1]
    outside = [v for v in range(70) if not split_mask >> v & 1]
    root = kcxai.Split("wide", {tuple(inside): kcxai.Leaf(1), tuple(outside): kcxai.Split(
        "b", {0: kcxai.Leaf(0), 1: kcxai.Leaf(1)})})
    tree = kcxai.DecisionTree(space, [0, 1], root)
    if voting == "hard":
        return RandomForest(space, [0, 1], [tree], voting="hard")
    scores = {leaf: [Fraction(1 - c), Fraction(c)] for leaf, c in zip(tree.leaves, (1, 0, 1))}
    return RandomForest(space, [0, 1], [tree], voting="soft", leaf_scores=[scores])


@pytest.mark.parametrize("voting, split_mask, engine", [
    ("soft", (1 << 10) - 1, "search"),          # the sets are ranges: the branch and bound keeps them exactly
    ("soft", 1 | 1 << 69, "sat"),               # {0, 69} against the rest: hulls only, so SAT
    ("hard", (1 << 10) - 1, "sat"),             # hard voting of a small forest: SAT
])
def test_the_decision_engine_avoids_hull_only_value_sets(voting: str, split_mask: int, engine: str) -> None:
    from kcxai.engines._registry import decision_engine

    model = _forest_over_wide_feature(split_mask, voting)
    assert decision_engine(model) == engine
    point = (5, 0)
    e = kcxai.ensemble_axp(model, instance_of(model.space, point))
    for p in itertools.product(range(70), range(2)):  # the AXp holds on every point that agrees with it
        if all(p[f] == point[f] for f in e.features):
            assert model.predict_point(p) == model.predict_point(point)
