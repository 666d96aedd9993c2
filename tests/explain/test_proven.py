"""Relevance tests decided from proven bounds (kcxai/explain/_proven.py) against enumeration.

Random forests and boosted models (two and three classes; uniform, product and mixture distributions),
compiled to the ``bounded`` language under replayed budget pressure (one bounded round at a threshold,
so that the diagram leaves mass undecided), are held to brute force: every decision taken from bounds,
from the conditioned compile or from the branch and bound equals the exact decision; every method run
over the bounded form gives the exact method's set, or says it was sampled, or raises NotProvenError;
intervals the results report contain the exact measures. Refinement budgets are shrunk to force each
step in turn.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kcxai
from kcxai import scoring
from kcxai.explain import _proven
from kcxai.explain._door import explain_with
from kcxai.explain._methods import METHODS as METHODS_TABLE
from kcxai.explain._proven import Prover, RefineBudget, Threshold
from kcxai.explain._query import Query
from kcxai.explain.cdrs import local_deletion
from kcxai._deadline import Deadline
from kcxai.engines.choose import ProbeBudget, choose
from tests._support.model_strategies import boosted_models, forests
from tests._support.strategies import EXACT_KINDS, points

#: Budgets forcing each refinement: all of them; the conditioned compile after a branch and bound of one box;
#: no conditioned compile; a pool of boxes for the query that runs out after a few tests; neither (bounds,
#: then sampling).
BUDGETS = {
    "all": RefineBudget(),
    "conditioned": RefineBudget(box_boxes=1),
    "box": RefineBudget(conditioned_nodes=1, count_nodes=1),
    "pool": RefineBudget(box_boxes=3, query_boxes=7, conditioned_nodes=1, count_nodes=1, final_boxes=1),
    "none": RefineBudget(conditioned_nodes=1, count_nodes=1, box_boxes=1, final_boxes=1),
}
#: The budgets under which a test may be left undecided (no conditioned compile).
UNDECIDED = ("box", "pool", "none")
THETAS = [0.5, 0.2, 0.05]
NO_LIMIT = Deadline(None, what="test", advice="")
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _models():
    return st.one_of(forests(distributions=EXACT_KINDS), boosted_models(distributions=EXACT_KINDS))


def _bounded(model, theta):
    return kcxai.compile_model(model, "bounded", schedule=[(theta, None, None)])


def _brute(model):
    return kcxai.compile_model(model, "brute").oracle


def _drawn_prover(data, budget):
    """A drawn model's space, bounded and brute-force oracles, a drawn point, its class, and the prover of
    that point under ``BUDGETS[budget]``."""
    model = data.draw(_models())
    space = model.space
    oracle = _bounded(model, data.draw(st.sampled_from(THETAS))).oracle
    p = data.draw(points(space))
    label = model.predict_point(p)
    prover = Prover(oracle, model, p, label, NO_LIMIT, sample=False, what="test", budget=BUDGETS[budget])
    return space, oracle, _brute(model), p, label, prover


@pytest.mark.parametrize("budget", sorted(BUDGETS))
@SETTINGS
@given(data=st.data())
def test_every_decision_from_bounds_is_the_exact_decision(budget, data):
    space, oracle, brute, p, label, prover = _drawn_prover(data, budget)
    for _ in range(4):
        fixed = frozenset(data.draw(st.sets(st.integers(0, space.n_features - 1))))
        want = brute.disagree_weight(p, label, fixed)
        make = Threshold.error if data.draw(st.booleans()) else Threshold.precision
        test = make(space, p, fixed, data.draw(st.fractions(0, 1, max_denominator=20)))
        before = dict(prover.proof.by)
        try:
            got = prover.decide(test)
        except kcxai.NotProvenError as err:
            assert budget in UNDECIDED
            assert "fit_budget" in str(err)
            lo, hi = oracle.disagree_bounds(p, label, fixed)
            assert lo <= test.limit < hi  # only a straddling interval is left undecided
            continue
        assert got == (want <= test.limit)
        step = next((k for k in prover.proof.by if prover.proof.by[k] != before[k]), None)  # None: asked before
        assert step != "conditioned" or budget in ("all", "conditioned")
        if prover.proof.widest is not None:  # the widest interval used holds the exact measure of its test
            lo, hi = prover.proof.widest
            assert 0 <= lo < hi <= 1


@pytest.mark.parametrize("budget", ["box", "pool"])
@SETTINGS
@given(data=st.data())
def test_a_deletion_chain_decided_with_the_bounds_kept_is_exact(budget, data):
    """Tests on ``S - {i}`` after ``S`` (a deletion loop's order), each set's bounds kept and met with what
    later refinements prove, within one query's pool of boxes: every decision equals the exact one, every
    kept interval holds the exact weight."""
    space, oracle, brute, p, label, prover = _drawn_prover(data, budget)
    fixed = frozenset(range(space.n_features))
    for i in data.draw(st.permutations(range(space.n_features))):
        fixed = fixed - {i}
        want = brute.disagree_weight(p, label, fixed)
        value = data.draw(st.fractions(0, 1, max_denominator=20))
        test = (Threshold.error if data.draw(st.booleans()) else Threshold.precision)(space, p, fixed, value)
        try:
            assert prover.decide(test) == (want <= test.limit)
        except kcxai.NotProvenError:  # only when the query's pool of boxes ran out
            assert budget == "pool"
        lo, hi = prover.bounds(fixed)
        assert lo <= want <= hi


@SETTINGS
@given(data=st.data())
def test_bounds_refined_for_a_result_contain_the_exact_weight(data):
    model = data.draw(_models())
    space = model.space
    oracle = _bounded(model, data.draw(st.sampled_from(THETAS))).oracle
    p = data.draw(points(space))
    label = model.predict_point(p)
    fixed = frozenset(data.draw(st.sets(st.integers(0, space.n_features - 1))))
    want = _brute(model).disagree_weight(p, label, fixed)
    for budget in BUDGETS.values():
        prover = Prover(oracle, model, p, label, NO_LIMIT, sample=False, what="test", budget=budget)
        lo, hi = prover.bounds(fixed)
        assert lo <= want <= hi
        # a prover that decided tests first starts from what they proved: no looser, still holding the count
        again = Prover(oracle, model, p, label, NO_LIMIT, sample=False, what="test", budget=budget)
        for limit in data.draw(st.lists(st.integers(0, space.total_weight), max_size=3)):
            try:
                again.decide(Threshold(fixed, limit, "error", Fraction(limit, space.total_weight), None))
            except kcxai.NotProvenError:
                pass
        lo2, hi2 = again.bounds(fixed)
        assert lo <= lo2 <= want <= hi2 <= hi
    prover = Prover(oracle, model, p, label, NO_LIMIT, sample=False, what="test")
    assert prover.weight(fixed) == want


METHODS = {  # name -> (bound, a value)
    "min_idrs": Fraction(1, 10), "axp": None, "local_cdrs": Fraction(9, 10), "min_dual_idrs": Fraction(1, 10),
    "cxp": None, "smallest_idrs": Fraction(1, 10), "min_cdrs": Fraction(9, 10), "smallest_drs": Fraction(9, 10),
    "smallest_dual_idrs": Fraction(1, 20),
}


def _run(name, obj, p, value):
    return explain_with(METHODS_TABLE[name], obj, p, value, inflate=False)  # the sets, not their widenings


@pytest.mark.parametrize("budget", sorted(BUDGETS))
@pytest.mark.parametrize("name", sorted(METHODS))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_method_over_bounds_gives_the_exact_methods_set(name, budget, data):
    saved = _proven.REFINE
    _proven.REFINE = BUDGETS[budget]
    try:
        _check_method(name, budget, data)
    finally:
        _proven.REFINE = saved


def _check_method(name, budget, data):
    model = data.draw(_models())
    compiled = _bounded(model, data.draw(st.sampled_from(THETAS)))
    p = data.draw(points(model.space))
    value = METHODS[name]
    try:
        want = _run(name, kcxai.compile_model(model, "brute"), p, value)
    except kcxai.KcxaiError as err:  # no set (no dual set exists, say): the bounded run says so too, or cannot tell
        with pytest.raises(kcxai.KcxaiError):
            _run(name, compiled, p, value)
        assert not isinstance(err, kcxai.NotProvenError)
        return
    try:
        got = _run(name, compiled, p, value)
    except kcxai.NotProvenError as err:
        assert budget in UNDECIDED or name.startswith("smallest") or name == "min_cdrs"
        assert "fit_budget" in str(err)
        return
    assert got.language == "bounded"
    if got.decided == "sampled":
        assert name in ("min_idrs", "local_cdrs") and got.sampled > 0 and got.confidence == 0.95
        return
    assert got.decided in ("exact", "proven")
    assert got.features == want.features, (got, want)
    if got.error is not None:
        assert got.error == want.error and got.precision == want.precision
    elif got.error_bounds is not None and want.error is not None:
        assert got.error_bounds[0] <= want.error <= got.error_bounds[1]
        if name == "min_idrs":  # the printed interval is the one that proved the set: all of it within delta
            assert got.error_bounds[1] <= value
        if name == "local_cdrs":  # ... all of its precision at least the bound
            assert 1 - got.error_bounds[1] / got.coverage >= value
    assert (got.interval is None) == (got.decided == "exact")


@functools.cache
def _pressured_forest():
    """A small scikit-learn forest on breast_cancer, through the front door (a fitted product distribution);
    fitted once per process (the tests only read it; the model keeps its branch and bound's tables)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    est = RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0).fit(X, y)
    explainer = kcxai.Explainer(est, X, probe=ProbeBudget(max_seconds=0.05), fit_budget=2, progress=False)
    return explainer, explainer.model_, explainer.instances(X.iloc[:3])


def test_sampled_decisions_are_marked_certified_and_reproducible(monkeypatch):
    monkeypatch.setattr(_proven, "REFINE", BUDGETS["none"])
    _, model, rows = _pressured_forest()
    compiled = _bounded(model, 0.5)
    results = []
    for row in rows:
        e = kcxai.local_cdrs(compiled, row, 0.95)
        again = kcxai.local_cdrs(_bounded(model, 0.5), row, 0.95)  # a fresh form: the same answer
        assert (e.features, e.decided, e.sampled) == (again.features, again.decided, again.sampled)
        d = e.to_dict()
        assert d["decided"] == e.decided and d["sampled"] == e.sampled
        results.append(e)
        with pytest.raises(kcxai.NotProvenError, match="fit_budget"):
            kcxai.smallest_drs(compiled, row, 0.95)
    sampled = [e for e in results if e.decided == "sampled"]
    assert sampled  # no refinement: the straddling tests are sampled
    for e in sampled:
        assert e.sampled > 0 and e.confidence == 0.95 and "sampled" in str(e)
    certified = [e for e in sampled if e.certified is not None]
    assert certified  # a result whose last freed feature was a sampled decision prints what it certified
    for e in certified:
        assert e.certified >= 0.95 and f"precision >= {float(e.certified):.4g}" in str(e)


def test_sampling_prints_the_bound_it_certified_never_an_estimate_below_it():
    _, model, rows = _pressured_forest()
    sampler = kcxai.compile_model(model, "sampling")
    results = [kcxai.local_cdrs(sampler, row, 0.95) for row in rows]
    assert all(e.decided == "sampled" and e.approximate for e in results)
    certified = [e for e in results if e.certified is not None]
    assert certified
    for e in certified:
        assert e.certified >= 0.95
        assert f"precision >= {float(e.certified):.4g} (certified" in str(e)
        assert f"~{float(e.precision):.4g}" not in str(e)


def test_the_chooser_keeps_the_bounded_form_when_the_exact_probe_fails():
    _, model, rows = _pressured_forest()
    probe = ProbeBudget(max_seconds=1e-4, bounded_seconds=2.0)
    c = choose(model, "bounds", probe=probe)
    assert c.language == "bounded" and "fit budget" in c.reason
    e = Query(c.compiled.oracle, model, rows[0], answers=("bounds",))
    assert e.answers == "bounds" and e.prover is not None


def test_bounded_measures_print_how_they_were_decided():
    tree = kcxai.datasets.running_example_tree()
    forest = kcxai.models.RandomForest(tree.space, tree.classes, [tree])
    c = kcxai.compile_model(forest, "bounded")
    e = kcxai.min_idrs(c, (1, 1, 1, 1, 0, 0, 0, 0, 1), Fraction(3, 100))
    want = kcxai.min_idrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), Fraction(3, 100))
    assert (e.decided, e.interval, e.sampled, e.features, e.error) == ("exact", None, 0, want.features, want.error)
    assert "exact" in e.measures() and e.to_dict()["decided"] == "exact"


# -- the front door ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [0, -1, float("inf"), float("nan")])
def test_a_fit_budget_that_is_not_positive_names_the_argument(budget):
    with pytest.raises(kcxai.KcxaiError, match="fit_budget"):
        kcxai.Explainer(kcxai.datasets.running_example_tree(), fit_budget=budget)


def test_the_explainer_keeps_the_bounded_form_and_says_what_changes_it():
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    pipe = make_pipeline(SimpleImputer(), GradientBoostingClassifier(n_estimators=40, max_depth=3, random_state=0))
    pipe.fit(X, y)
    explainer = kcxai.Explainer(pipe, X, probe=ProbeBudget(max_seconds=0.05), fit_budget=2, progress=False)
    assert explainer.language_ == "bounded" and explainer.compiled_ is None
    assert "fit_budget=" in explainer.language_reason_ and "bounded" in explainer.language_reason_
    assert explainer.engine_for("local_cdrs").language == "bounded"
    assert explainer.engine_for("axp").language == "search"  # delta = 0: the decision engine
    result = explainer.explain(X.iloc[:2], method="min_idrs", delta=0.05)
    frame = result.to_frame()
    assert set(frame["decided"]) <= {"exact", "proven", "sampled"} and frame["language"].eq("bounded").all()
    for e in result.explanations:
        assert e.decided in str(e)
        assert (e.sampled > 0) == (e.decided == "sampled")
    import matplotlib
    matplotlib.use("Agg")
    from kcxai.viz import plot_size_and_bound
    _, right = plot_size_and_bound(result)  # marked by how each was decided, none dropped
    plotted = sum(len(c.get_offsets()) for c in right.collections)
    assert plotted == len(result.explanations)
    html = result.explanations[0]._repr_html_()
    assert "decided" in html


# -- scoring a rule on an ensemble with no exact form -------------------------------------------------------


@SETTINGS
@given(data=st.data())
def test_a_rules_proven_precision_interval_contains_the_exact_precision(data):
    saved = scoring.SCORE_BOXES
    scoring.SCORE_BOXES = data.draw(st.sampled_from([1, 3, 100_000]))  # 1 box: the interval of the rule's box
    try:
        _check_rule(data)
    finally:
        scoring.SCORE_BOXES = saved


def _check_rule(data):
    model = data.draw(_models())
    space = model.space
    compiled = _bounded(model, data.draw(st.sampled_from(THETAS)))  # no box counts: scored by branch and bound
    p = data.draw(points(space))
    fixed = data.draw(st.sets(st.integers(0, space.n_features - 1), min_size=1))
    rule = {space.names[f]: space.features[f].values[p[f]] for f in fixed}
    want = kcxai.score_rule(kcxai.compile_model(model, "brute"), rule)
    got = kcxai.score_rule(compiled, want.rule())  # the exact majority class, named by the rule
    assert (got.coverage, got.prediction, got.class_source) == (want.coverage, want.prediction, "rule")
    lo, hi = got.precision_bounds
    assert lo <= want.precision <= hi
    assert (got.decided == "exact") == (lo == hi) and (got.precision is None) == (lo != hi)
    if got.decided == "proven":
        assert "proven" in str(got) and got.to_dict()["precision_low"] == float(lo)
    assert kcxai.score_rule(compiled, rule).class_source == "majority"


def test_a_changed_copy_does_not_keep_the_branch_and_bounds_tables():
    tree = kcxai.datasets.running_example_tree()
    forest = kcxai.models.RandomForest(tree.space, tree.classes, [tree])
    first = _proven.box_bounds_of(forest)
    assert _proven.box_bounds_of(forest) is first  # kept by the model
    copy = forest.with_distribution([[1, 3]] * tree.space.n_features)
    assert _proven.box_bounds_of(copy) is not first  # weighed under the copy's own distribution
    rule = "IF x1 = 1 AND x9 = 1 THEN class = 1"
    want = kcxai.score_rule(kcxai.compile_model(copy, "brute"), rule)
    assert scoring.score_rule_bounds(copy, rule).precision_bounds == (want.precision, want.precision)


@pytest.mark.parametrize("budget, step", [("all", "box"), ("conditioned", "conditioned"), ("box", "box"),
                                          ("pool", "sampled"), ("none", "sampled")])
def test_each_budget_reaches_its_refinement_and_says_why_a_test_was_sampled(budget, step, monkeypatch):
    """The decisions themselves are held to enumeration on small models above; here, on a 30-feature forest,
    that each budget sends the tests where it should, and that every sampled test says why."""
    monkeypatch.setattr(_proven, "REFINE", BUDGETS[budget])
    _, model, rows = _pressured_forest()
    compiled = _bounded(model, 0.5)
    proofs = []
    for row in rows[:2]:
        with Query(compiled.oracle, model, row, method=METHODS_TABLE["local_cdrs"], answers=("bounds",)) as q:
            local_deletion(q, Fraction(95, 100))
            proofs.append(q.proof)
    assert sum(p.by[step] for p in proofs) > 0  # the step this budget forces was taken
    missed = [why for p in proofs for why in p.missed]
    assert sum(p.by["sampled"] for p in proofs) == sum(n for p in proofs for n in p.missed.values())
    if budget == "pool":  # the query's boxes ran out: later tests went straight on
        assert any(why.startswith("box none") for why in missed)
    if budget == "all":
        assert not missed


def test_a_conditioned_compile_stopped_by_the_clock_says_so(monkeypatch):
    """The conditioned compile's safety limit in seconds is the one clock in a decision: a test it sent to
    sampling says "conditioned clock", not the node limit's "conditioned limit"."""
    from kcxai.compilers._limits import LimitHit

    def stopped(*args, **kwargs):
        raise LimitHit("Compiling to 'conditioned ensemble' exceeded max_seconds=60", "max_seconds")

    monkeypatch.setattr(_proven, "REFINE", BUDGETS["conditioned"])
    monkeypatch.setattr(_proven, "conditioned_counts", stopped)
    _, model, rows = _pressured_forest()
    compiled = _bounded(model, 0.5)
    with Query(compiled.oracle, model, rows[0], method=METHODS_TABLE["local_cdrs"], answers=("bounds",)) as q:
        local_deletion(q, Fraction(95, 100))
    assert q.proof.by["conditioned"] == 0 and q.proof.sampled > 0
    assert all(why.endswith("conditioned clock") or why.endswith("conditioned skipped") for why in q.proof.missed)
    assert any(why.endswith("conditioned clock") for why in q.proof.missed)
