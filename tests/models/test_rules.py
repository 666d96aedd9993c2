"""Decision lists and rule sets: semantics, build, text and JSON round trips, errors, wittgenstein import."""

import itertools

import pytest
from hypothesis import given

import kcxai
from tests._support import reference as ref
from kcxai import Feature, FeatureSpace, Interval
from kcxai.compilers._truth_table import TruthTableBuilder
from kcxai.models import DecisionList, Rule, RuleSet
from tests._support.model_strategies import decision_lists, rule_sets


def _fires(space, rule, point):
    """An independent reading of a rule: the instance's values lie in every condition's value set."""
    values = space.decode(point)
    return all(values[space.feature_index(name)] in vals for name, vals in rule.conditions.items())


@given(decision_lists(distributions=("uniform", "exact", "float")))
def test_decision_list_first_match_wins_and_builds_a_partition(dl):
    b = TruthTableBuilder(dl.space)
    b.check_partition(dl.build(b), dl.predict_point)
    for p in ref.all_points(dl.space):
        expected = next((r.label for r in dl.rules if _fires(dl.space, r, p)), dl.default)
        assert dl.classes[dl.predict_point(p)] == expected


@given(rule_sets())
def test_rule_set_is_a_dnf_and_builds_a_partition(rs):
    b = TruthTableBuilder(rs.space)
    b.check_partition(rs.build(b), rs.predict_point)
    for p in ref.all_points(rs.space):
        fires = any(_fires(rs.space, r, p) for r in rs.rules)
        assert rs.classes[rs.predict_point(p)] == (rs.label if fires else rs.default)


@given(decision_lists(distributions=("uniform", "exact", "float")))
def test_decision_list_text_and_json_round_trips(dl):
    back = DecisionList.from_text(dl.to_text(), dl.space, classes=dl.classes)
    again = kcxai.models.model_from_dict(dl.to_dict())
    assert again.to_dict() == dl.to_dict()
    assert back.to_text() == dl.to_text()
    for p in ref.all_points(dl.space):
        assert back.predict_point(p) == dl.predict_point(p) == again.predict_point(p)


@given(rule_sets())
def test_rule_set_text_and_json_round_trips(rs):
    again = kcxai.models.model_from_dict(rs.to_dict())
    assert again.to_dict() == rs.to_dict()
    if rs.n_rules:
        back = RuleSet.from_text(rs.to_text(), rs.space, classes=rs.classes)
        assert back.to_text() == rs.to_text()
        for p in ref.all_points(rs.space):
            assert back.predict_point(p) == rs.predict_point(p)


@given(decision_lists(distributions=("exact",)))
def test_with_distribution_keeps_predictions(dl):
    uni = dl.with_distribution(None)
    assert uni.space.is_uniform and uni.space.features == dl.space.features
    for p in ref.all_points(dl.space):
        assert uni.predict_point(p) == dl.predict_point(p)


def test_issue_example_on_a_categorical_numeric_domain():
    space = FeatureSpace([Feature.categorical("age", [25, 30, 35, 40, 45]), Feature.categorical("sex", ["F", "M"])])
    dl = DecisionList.from_text("IF age in [30,40) AND sex = F THEN 1\nELSE 0", space)
    got = {(a, s): dl.predict([a, s]) for a, s in itertools.product([25, 30, 35, 40, 45], "FM")}
    assert {k for k, v in got.items() if v == 1} == {(30, "F"), (35, "F")}
    assert dl.classes == (0, 1)
    assert dl.to_text() == "IF age in {30, 35} AND sex = F THEN 1\nELSE 0"


def test_numeric_feature_conditions_follow_the_intervals():
    space = FeatureSpace([Feature.numeric("age", [30, 40, 50]), Feature.categorical("sex", ["F", "M"])])
    text = """
        # ages are (-inf,30], (30,40], (40,50], (50,inf)
        IF age <= 30 THEN young
        ELSE IF age in (30, 50] AND sex != M THEN mid   # two intervals
        ELSE IF age > 50 THEN old
        ELSE other
    """
    dl = DecisionList.from_text(text, space)
    assert dl.classes == ("mid", "old", "other", "young")
    assert [dl.predict([a, "F"]) for a in (20, 35, 45, 60)] == ["young", "mid", "mid", "old"]
    assert [dl.predict([a, "M"]) for a in (20, 35, 45, 60)] == ["young", "other", "other", "old"]
    assert dl.rule_of([45, "M"]) is None and dl.rule_of([45, "F"]) == 1
    assert "age in (30, 50] AND sex = F" in dl.to_text()
    # a union of non-adjacent intervals prints as a set of ranges and reads back
    dl2 = DecisionList(space, ["a", "b"], [Rule({"age": [Interval(-float("inf"), 30), Interval(50, float("inf"))]},
                                                "a")], "b")
    assert "age in {(-inf, 30], (50, inf)}" in dl2.to_text()
    back = DecisionList.from_text(dl2.to_text(), space)
    assert [back.predict([a, "F"]) for a in (20, 35, 45, 60)] == ["a", "b", "b", "a"]


def test_quoted_names_values_and_labels_round_trip():
    space = FeatureSpace([Feature.categorical("marital status", ["never married", "1", 1, "IF"]),
                          Feature.categorical("x", [0.5, 2])])
    dl = DecisionList(space, ["yes", "no way"], [({"marital status": ["1", "IF"]}, "no way"),
                                                 ({"marital status": 1, "x": 0.5}, "yes")], "yes")
    text = dl.to_text()
    assert text.splitlines()[0] == 'IF "marital status" in {"1", "IF"} THEN "no way"'
    back = DecisionList.from_text(text, space, classes=dl.classes)
    for p in ref.all_points(space):
        assert back.predict_point(p) == dl.predict_point(p)


def test_rule_data_forms_and_accessors():
    space = FeatureSpace([Feature.categorical(n, [0, 1, 2]) for n in ("a", "b")])
    rs = RuleSet(space, ["n", "y"], [Rule({"a": 2}, "y"), Rule([("a", [1, 2]), ("b", (1, 2)), ("a", 1)], "y")], "n")
    assert rs.n_rules == 2 and rs.label == "y" and rs.default == "n"
    assert rs.rules[1] == Rule({"a": (1,), "b": (1, 2)}, "y")
    assert [rs.predict([a, b]) for a, b in [(2, 0), (1, 1), (1, 0), (0, 2)]] == ["y", "y", "n", "n"]
    empty = RuleSet(space, ["n", "y"], [], "n", label="y")
    assert empty.predict([2, 2]) == "n"
    const = DecisionList(space, [0, 1], [], 1)
    assert const.to_text() == "DEFAULT 1" and DecisionList.from_text("DEFAULT 1", space).predict([0, 0]) == 1
    assert str(const) == const.to_text() and "DecisionList(0 rules" in repr(const)


@pytest.mark.parametrize("text, match", [
    ("IF a = 1 THEN 1", "needs a default"),
    ("IF a = 1 1\nELSE 0", "expected THEN"),
    ("IF c = 1 THEN 1\nELSE 0", "Unknown feature 'c'"),
    ("IF a = 7 THEN 1\nELSE 0", "feature 'a' has no value 7"),
    ("IF a in [0, 2 THEN 1\nELSE 0", r"expected one of \[']', '\)'\]"),
    ("ELSE 0\nIF a = 1 THEN 1", "nothing may follow"),
    ("IF a = 1 THEN 1 2\nELSE 0", "unexpected '2'"),
    ("WHEN a = 1 THEN 1\nELSE 0", "a rule starts with IF"),
    ("IF a ~ 1 THEN 1\nELSE 0", "expected an operator after 'a', got '~'"),
    ('IF s = "u THEN 1\nELSE 0', "cannot read"),
    ("IF g < 30 THEN 1\nELSE 0", "cuts the interval <= 30 of numeric feature 'g'"),
    ("IF g = 30 THEN 1\nELSE 0", "numeric: use a range"),
    ("IF s < 3 THEN 1\nELSE 0", "compares numbers"),
])
def test_parse_errors_name_the_problem(text, match):
    space = FeatureSpace([Feature.categorical("a", [0, 1, 2]), Feature.numeric("g", [30]),
                          Feature.categorical("s", ["u", "v"])])
    with pytest.raises(kcxai.InvalidInputError, match=match):
        DecisionList.from_text(text, space)


def test_rule_set_input_errors():
    space = FeatureSpace([Feature.categorical("a", [0, 1]), Feature.numeric("g", [30])])
    with pytest.raises(kcxai.InvalidInputError, match="must all conclude one class"):
        RuleSet.from_text("IF a = 1 THEN x\nIF a = 0 THEN y\nELSE z", space)
    with pytest.raises(kcxai.InvalidInputError, match="must all conclude one class"):
        RuleSet(space, ["x", "y"], [({"a": 1}, "x"), ({"a": 0}, "y")], "x")
    with pytest.raises(kcxai.InvalidInputError, match="give 'label'"):
        RuleSet(space, ["x", "y"], [], "x")
    with pytest.raises(kcxai.InvalidInputError, match="give its values as Interval"):
        DecisionList(space, [0, 1], [({"g": 10}, 1)], 0)
    with pytest.raises(kcxai.InvalidInputError, match="cuts the interval"):
        DecisionList(space, [0, 1], [({"g": Interval(0, 100)}, 1)], 0)
    with pytest.raises(kcxai.InvalidInputError, match="Unknown class 3"):
        DecisionList(space, [0, 1], [({"a": 1}, 3)], 0)
    with pytest.raises(kcxai.InvalidTypeError, match="Rule or a \\(conditions, label\\) pair"):
        DecisionList(space, [0, 1], ["IF a = 1 THEN 1"], 0)
    with pytest.raises(kcxai.InvalidInputError, match="Unknown class 2; the classes are"):
        DecisionList.from_text("IF a = 1 THEN 2\nELSE 0", space, classes=[0, 1])
    with pytest.raises(kcxai.ModelFormatError, match="'default' must be a class index"):
        kcxai.models.model_from_dict({**DecisionList(space, [0, 1], [], 0).to_dict(), "default": 5})
    dl = DecisionList(space, [0, 1], [({"a": 1}, 1)], 0).to_dict()
    dl["rules"][0]["class"] = 7
    with pytest.raises(kcxai.ModelFormatError, match=r"rules\[0\]: 'class' must be a class index. Got 7"):
        kcxai.models.model_from_dict(dl)
    rs = RuleSet(space, ["x", "y"], [({"a": 1}, "x")], "y").to_dict()
    for key, bad in (("label", 2), ("default", -1), ("label", "x")):
        with pytest.raises(kcxai.ModelFormatError, match=f"'{key}' must be a class index. Got {bad!r}"):
            kcxai.models.model_from_dict({**rs, key: bad})
    assert kcxai.models.model_from_dict(rs).to_dict() == rs


def test_wittgenstein_ripper_import_matches_its_predictions():
    pd = pytest.importorskip("pandas")
    lw = pytest.importorskip("wittgenstein")
    import numpy as np

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.integers(0, 3, size=(300, 5)), columns=[f"x{i}" for i in range(5)])
    y = (((X.x0 == 1) & (X.x2 != 0)) | (X.x4 == 2)).astype(int)
    data = X.copy()
    data["label"] = y
    clf = lw.RIPPER(random_state=0, n_discretize_bins=None)
    clf.fit(data, class_feat="label", pos_class=1)
    rs = RuleSet.from_wittgenstein(clf, {c: [0, 1, 2] for c in X.columns})
    assert rs.n_rules >= 1
    grid = pd.DataFrame(list(itertools.product(range(3), repeat=5)), columns=X.columns)
    theirs = [int(v) for v in clf.predict(grid)]
    ours = [rs.predict(row) for row in grid.itertuples(index=False)]
    assert ours == theirs
    with pytest.raises(kcxai.InvalidTypeError, match="fitted wittgenstein"):
        RuleSet.from_wittgenstein(object(), {})


@pytest.mark.parametrize("seed", range(4))
def test_imodels_greedy_rule_list_import_matches_its_predictions(seed):
    imodels = pytest.importorskip("imodels")
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(300, 5))
    y = np.where(((X[:, 0] >= 2) & (X[:, 2] < 3)) | (X[:, 4] == 1), "yes", "no")
    clf = imodels.GreedyRuleListClassifier(max_depth=4).fit(X, y)
    dl = DecisionList.from_imodels(clf, domains=[[0, 1, 2, 3]] * 5, feature_names=list("abcde"))
    assert dl.classes == ("no", "yes") and dl.space.names == tuple("abcde")
    grid = np.array(list(itertools.product(range(4), repeat=5)))
    assert dl.predict_many(grid) == list(clf.predict(grid))
    b = TruthTableBuilder(dl.space)
    b.check_partition(dl.build(b), dl.predict_point)
    with pytest.raises(kcxai.InvalidInputError, match="'domains' must give the values of every feature"):
        DecisionList.from_imodels(clf, domains=[[0, 1, 2, 3]] * 4 + [None])
    with pytest.raises(kcxai.InvalidTypeError, match="GreedyRuleListClassifier"):
        DecisionList.from_imodels(object(), domains=[])
