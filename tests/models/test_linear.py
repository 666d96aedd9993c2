"""Linear threshold classifiers and naive Bayes: exact scores, exact compilation, sklearn import."""

import itertools
import math
from unittest import mock
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kcxai
from tests._support.builders import Constants, HashCons
from tests._support import reference as ref
from kcxai import Feature, FeatureSpace
from kcxai.compilers._truth_table import TruthTableBuilder
from kcxai.models import LinearClassifier, NaiveBayes, from_sklearn
from kcxai.compilers._threshold import FeatureBlock, class_functions
from tests._support.model_strategies import linear_models, naive_bayes_models
from tests._support.strategies import feature_spaces


def _independent_argmax(scores):
    best = max(scores)
    return scores.index(best)  # the first class of highest score


@given(feature_spaces(max_features=4, distributions=("uniform", "exact", "float")), st.data())
def test_linear_predicts_the_first_class_of_highest_exact_score(space, data):
    k = data.draw(st.integers(2, 3))
    num = st.one_of(st.integers(-3, 3), st.fractions(-2, 2, max_denominator=5),
                    st.sampled_from([0.1, 0.2, 0.3, -0.3, 1e16, -1e16, 1.0]))
    weights = [[[data.draw(num) for _ in range(f.size)] for _ in range(k)] for f in space.features]
    intercepts = [data.draw(num) for _ in range(k)]
    m = LinearClassifier(space, list(range(k)), weights, intercepts)
    for p in ref.all_points(space):
        scores = [Fraction(intercepts[c]) + sum(Fraction(weights[i][c][p[i]]) for i in range(space.n_features))
                  for c in range(k)]
        assert m.predict_point(p) == _independent_argmax(scores)
        assert list(m.scores_point(p)) == scores
    b = TruthTableBuilder(space)
    b.check_partition(class_functions(m, b), m.predict_point)


@given(feature_spaces(max_features=4), st.data())
def test_naive_bayes_with_probabilities_compares_exact_products(space, data):
    k = data.draw(st.integers(2, 3))
    prob = st.fractions(Fraction(1, 6), 1, max_denominator=6)
    priors = [data.draw(prob) for _ in range(k)]
    like = [[[data.draw(prob) for _ in range(f.size)] for _ in range(k)] for f in space.features]
    nb = NaiveBayes(space, ["a", "b", "c"][:k], priors, like)
    for p in ref.all_points(space):
        joint = [priors[c] * np.prod([like[i][c][p[i]] for i in range(space.n_features)], dtype=object)
                 for c in range(k)]
        assert nb.predict_point(p) == _independent_argmax([Fraction(x) for x in joint])
    b = TruthTableBuilder(space)
    b.check_partition(class_functions(nb, b), nb.predict_point)


@given(st.one_of(linear_models(distributions=("uniform", "exact", "float")), naive_bayes_models()))
def test_build_partitions_and_json_round_trips(model):
    b = TruthTableBuilder(model.space)
    b.check_partition(class_functions(model, b), model.predict_point)
    again = kcxai.models.model_from_dict(model.to_dict())
    assert again.to_dict() == model.to_dict()
    assert again.weights_from_floats == model.weights_from_floats
    uni = model.with_distribution(None)
    for p in ref.all_points(model.space):
        assert again.scores_point(p) == model.scores_point(p)
        assert again.predict_point(p) == uni.predict_point(p) == model.predict_point(p)


def test_float_weights_are_taken_exactly_not_rounded():
    space = FeatureSpace([Feature.categorical("a", [0, 1]), Feature.categorical("b", [0, 1])])
    # z = 1e16 * a + 1.0 * b - 1e16: in float64, 1e16 + 1.0 rounds to 1e16 and z would be 0 (a tie).
    m = LinearClassifier.from_coefficients(space, [1e16, 1.0], -1e16)
    assert m.scores([1, 1]) == (0, 1) and m.predict([1, 1]) == 1
    assert m.predict([1, 0]) == 0  # an exact tie: the first class, as sklearn's z > 0 rule
    assert m.weights_from_floats and "float" in m.exactness
    exact = LinearClassifier.from_coefficients(space, [Fraction(1, 3), 1], Fraction(-4, 3))
    assert not exact.weights_from_floats and exact.exactness.startswith("exact: ")
    assert exact.predict([1, 1]) == 0 and exact.scores([1, 1]) == (0, 0)


def test_multiclass_from_coefficients_and_accessors():
    space = FeatureSpace([Feature.categorical("u", [0, 1, 2]), Feature.categorical("v", [-1, 1])])
    m = LinearClassifier.from_coefficients(space, [[1, 0], [0, 1], [1, 1]], [0, 1, Fraction(1, 2)],
                                           classes=["p", "q", "r"])
    assert m.intercepts == (0, 1, Fraction(1, 2))
    assert m.weight("u", 2) == (2, 0, 2) and m.weight("v", -1) == (0, -1, -1)
    for u, v in itertools.product([0, 1, 2], [-1, 1]):
        s = [u, v + 1, u + v + Fraction(1, 2)]
        assert m.predict([u, v]) == "pqr"[_independent_argmax(s)]
    assert "LinearClassifier(2 features, 3 classes)" == repr(m)


def test_naive_bayes_accessors_and_repr():
    space = FeatureSpace([Feature.categorical("x", ["lo", "hi"])])
    nb = NaiveBayes(space, [0, 1], [Fraction(1, 2), Fraction(1, 2)], [[[Fraction(1, 3), Fraction(2, 3)],
                                                                       [Fraction(2, 3), Fraction(1, 3)]]])
    assert nb.priors == (Fraction(1, 2), Fraction(1, 2)) and nb.likelihood("x", "hi") == (Fraction(2, 3),
                                                                                           Fraction(1, 3))
    assert nb.predict(["hi"]) == 0 and nb.predict(["lo"]) == 1 and not nb.log
    assert "probabilities" in repr(nb)


@pytest.mark.parametrize("make, match", [
    (lambda s: NaiveBayes(s, [0, 1], [0, 1], [[[1, 1], [1, 1]]]), r"'priors\[0\]' must be a positive probability"),
    (lambda s: NaiveBayes(s, [0, 1], [1, 1], [[[1, 1]]]), r"'likelihoods\[0\]' \(feature 'x'\) must have one row"),
    (lambda s: NaiveBayes(s, [0, 1], [1, 1], [[[1, 1], [1]]]), r"must have one entry per value \(2\)"),
    (lambda s: NaiveBayes(s, [0, 1], [1, 1], [[[1, "a"], [1, 1]]]), r"must be a real number"),
    (lambda s: NaiveBayes(s, [0, 1], [1, 1], [[[1, 1], [1, 1]]], log="yes"), r"'log' must be True or False. Got 'yes'"),
    (lambda s: LinearClassifier(s, [0, 1], [[[0, float("nan")], [0, 0]]]), r"must be finite"),
    (lambda s: LinearClassifier(s, [0, 1], [], [0, 0]), r"one table per feature \(1\)"),
    (lambda s: LinearClassifier(s, [0, 1], [[[0, 0], [0, 0]]], [0]), r"'intercepts' must have one entry per class"),
    (lambda s: LinearClassifier.from_coefficients(s, [1, 2], 0), r"one coefficient per feature \(1\)"),
    (lambda s: LinearClassifier.from_coefficients(s, [[1], [2], [3]], 0), r"1 row \(two classes\) or one row"),
    (lambda s: LinearClassifier.from_coefficients(FeatureSpace([Feature.numeric("g", [1])]), [1], 0),
     "is numeric"),
    (lambda s: LinearClassifier.from_coefficients(FeatureSpace([Feature.categorical("c", ["a", "b"])]), [1], 0),
     "must be a real number"),
])
def test_input_errors(make, match):
    space = FeatureSpace([Feature.categorical("x", [0, 1])])
    with pytest.raises(kcxai.KcxaiError, match=match):
        make(space)


# -- scikit-learn --------------------------------------------------------------

def _data(n_features, n_values, n_classes, n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, n_values, size=(n, n_features))
    w = rng.normal(size=(n_features, n_classes))
    y = np.argmax(X @ w + rng.normal(scale=2.0, size=(n, n_classes)), axis=1)
    return X, y


def _points(sizes, limit=10_000, seed=1):
    """The whole space when small, else ``limit`` random points."""
    total = math.prod(sizes)
    if total <= limit:
        return np.array(list(itertools.product(*(range(s) for s in sizes))))
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.integers(0, s, size=limit) for s in sizes])


def _check_agrees(model, est, X, sk_scores):
    """Predictions equal sklearn's, except where sklearn's own float scores are a near-tie."""
    theirs = est.predict(X)
    ours = np.array(model.predict_many(X.tolist()))
    bad = np.flatnonzero(ours != theirs)
    for r in bad:  # only a rounding-level gap between sklearn's top two scores may flip a decision
        s = np.sort(np.atleast_1d(sk_scores[r]))
        gap = abs(s[-1] - s[-2]) if s.size > 1 else abs(s[0])
        assert gap <= 1e-9 * max(1.0, np.abs(s).max()), (X[r], ours[r], theirs[r], sk_scores[r])
    return len(bad)


@pytest.mark.parametrize("n_features, n_values, n_classes", [(5, 3, 2), (4, 4, 3), (32, 3, 2), (30, 2, 4)])
def test_categorical_nb_agrees_with_sklearn(n_features, n_values, n_classes):
    from sklearn.naive_bayes import CategoricalNB

    X, y = _data(n_features, n_values, n_classes)
    est = CategoricalNB().fit(X, y)
    model = from_sklearn(est)
    assert isinstance(model, NaiveBayes) and model.log and model.weights_from_floats
    assert model.space.domain_sizes == (n_values,) * n_features
    pts = _points(model.space.domain_sizes)
    _check_agrees(model, est, pts, est.predict_joint_log_proba(pts))
    if model.space.size <= 4096:
        b = TruthTableBuilder(model.space)
        b.check_partition(class_functions(model, b), model.predict_point)


@pytest.mark.parametrize("binarize, domain", [(0.0, None), (None, [0, 1]), (1.5, [0, 1, 2, 3])])
@pytest.mark.parametrize("n_features, n_classes", [(6, 2), (5, 3), (40, 2)])
def test_bernoulli_nb_agrees_with_sklearn(binarize, domain, n_features, n_classes):
    from sklearn.naive_bayes import BernoulliNB

    X, y = _data(n_features, 4 if binarize == 1.5 else 2, n_classes)
    est = BernoulliNB(binarize=binarize).fit(X, y)
    model = from_sklearn(est, domains=None if domain is None else [domain] * n_features)
    pts = _points(model.space.domain_sizes)
    values = np.array([[model.space.features[i].values[k] for i, k in enumerate(p)] for p in pts])
    _check_agrees(model, est, values, est.predict_joint_log_proba(values))


@pytest.mark.parametrize("estimator", ["lr", "lr-multi", "svc", "ridge"])
@pytest.mark.parametrize("n_features", [5, 30])
def test_linear_models_agree_with_sklearn(estimator, n_features):
    from sklearn.linear_model import LogisticRegression, RidgeClassifier
    from sklearn.svm import LinearSVC

    k = 3 if estimator == "lr-multi" else 2
    X, y = _data(n_features, 3, k)
    X = X - 1.0  # domain {-1, 0, 1}
    est = {"lr": LogisticRegression(max_iter=1000), "lr-multi": LogisticRegression(max_iter=1000),
           "svc": LinearSVC(), "ridge": RidgeClassifier()}[estimator].fit(X, y)
    model = from_sklearn(est, domains=[[-1, 0, 1]] * n_features)
    assert isinstance(model, LinearClassifier) and model.weights_from_floats
    pts = _points(model.space.domain_sizes) - 1
    _check_agrees(model, est, pts, est.decision_function(pts))
    if model.space.size <= 4096:
        b = TruthTableBuilder(model.space)
        b.check_partition(class_functions(model, b), model.predict_point)


def test_linear_import_needs_domains_and_nb_checks_them():
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import CategoricalNB

    X, y = _data(3, 3, 2)
    lr = LogisticRegression().fit(X, y)
    with pytest.raises(kcxai.InvalidInputError, match="'domains' is required for LogisticRegression"):
        from_sklearn(lr)
    with pytest.raises(kcxai.InvalidInputError, match=r"Got None for features \[1\]"):
        from_sklearn(lr, domains=[[0, 1, 2], None, [0, 1, 2]])
    nb = CategoricalNB().fit(X, y)
    with pytest.raises(kcxai.InvalidInputError, match=r"'domains\[0\]': CategoricalNB feature 0 has categories 0..2"):
        from_sklearn(nb, domains=[[0, 1, 5], None, None])
    sub = from_sklearn(nb, domains=[[0, 2], None, None], feature_names=["a", "b", "c"])
    assert sub.space.names == ("a", "b", "c") and sub.space.domain_sizes == (2, 3, 3)
    assert sub.predict([2, 1, 1]) == nb.predict([[2, 1, 1]])[0]


@given(st.integers(2, 24), st.data())
def test_threshold_construction_builds_each_sub_function_once(n, data):
    """Every partial sum is matched to the interval of its sub-function: no node is requested twice.

    With equal weights (a majority-like threshold) the sub-functions after ``i``
    features are at most ``i + 1``, so the work is quadratic, not exponential.
    """
    space = FeatureSpace([Feature.categorical(f"x{i}", [0, 1]) for i in range(n)])
    kind = data.draw(st.sampled_from(["equal", "ints", "floats"]))
    equal = kind == "equal"
    num = st.integers(-3, 3) if kind == "ints" else st.floats(-2, 2, allow_subnormal=False)
    w = [1] * n if equal else data.draw(st.lists(num, min_size=n, max_size=n))
    bias = data.draw(st.integers(-n, n))
    model = LinearClassifier.from_coefficients(space, w, Fraction(bias, 2))
    b = HashCons()
    with mock.patch.object(FeatureBlock, "assemble", lambda blk, builder, ch: b.assemble(blk, builder, ch)):
        f0, f1 = class_functions(model, Constants(space))
    assert f1 == ("not", f0)
    assert len(b.requests) == len(set(b.requests))
    if equal:
        assert len(b.requests) <= (n + 1) * (n + 2) // 2
    if n <= 12:
        tt = TruthTableBuilder(space)
        tt.check_partition(class_functions(model, tt), model.predict_point)


def test_sklearn_float_rounding_is_the_only_source_of_disagreement():
    """A logistic regression whose float64 decision rounds a positive score to a tie."""
    from sklearn.linear_model import LogisticRegression

    X = np.array([[0, 0], [1, 1], [0, 1], [1, 0]])
    lr = LogisticRegression().fit(X, [0, 1, 1, 0])
    lr.coef_ = np.array([[1e16, 1.0]])
    lr.intercept_ = np.array([-1e16])
    model = from_sklearn(lr, domains=[[0, 1], [0, 1]])
    assert lr.decision_function([[1, 1]])[0] == 0.0 and lr.predict([[1, 1]])[0] == 0  # float64: a tie
    assert model.scores([1, 1])[1] == 1 and model.predict([1, 1]) == 1  # exact: 1e16 + 1 - 1e16 = 1
    grid = [[a, b] for a in (0, 1) for b in (0, 1)]
    assert [model.predict(x) for x in grid] == [0, 0, 0, 1] and list(lr.predict(grid)) == [0, 0, 0, 0]


@given(st.one_of(linear_models(distributions=("uniform", "exact", "float")),
                 naive_bayes_models().filter(lambda m: m.log)),
       st.sampled_from([Fraction(1, 2), Fraction(1, 10), 0.05, 1]))
def test_rounded_models_differ_only_within_the_certified_margin(model, step):
    r = model.rounded(step)
    q, margin = r.rounding
    assert q == Fraction(str(step)) and "rounded to multiples of" in r.exactness
    base = r.intercepts if isinstance(r, LinearClassifier) else r.priors
    assert all(x % q == 0 for x in base)
    k = len(model.classes)
    for p in ref.all_points(model.space):
        s, t = model.scores_point(p), r.scores_point(p)
        for c in range(k):
            for d in range(c + 1, k):
                assert abs((t[c] - t[d]) - (s[c] - s[d])) <= margin
        if r.predict_point(p) != model.predict_point(p):
            top = sorted(s)[-2:]
            assert top[1] - top[0] <= margin
    b = TruthTableBuilder(model.space)
    b.check_partition(class_functions(r, b), r.predict_point)
    again = kcxai.models.model_from_dict(r.to_dict())
    assert again.rounding == r.rounding and again.to_dict() == r.to_dict()
    twice = r.rounded(1)
    assert twice.rounding[1] >= margin


def test_rounding_errors():
    space = FeatureSpace([Feature.categorical("x", [0, 1])])
    nb = NaiveBayes(space, [0, 1], [1, 1], [[[1, 2], [2, 1]]])
    with pytest.raises(kcxai.InvalidInputError, match="rounded\\(\\) needs additive scores"):
        nb.rounded(0.1)
    lin = LinearClassifier.from_coefficients(space, [1], 0)
    for bad, err in [(0, kcxai.InvalidInputError), (-1, kcxai.InvalidInputError), ("0.1", kcxai.InvalidTypeError),
                     (float("inf"), kcxai.InvalidInputError)]:
        with pytest.raises(err, match="'step'"):
            lin.rounded(bad)
