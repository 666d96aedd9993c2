"""The one import door, kcxai.models.from_sklearn."""

import itertools

import numpy as np
import pytest

import kcxai
from kcxai.models import DecisionTree, LinearClassifier, NaiveBayes, RandomForest, from_sklearn


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2, size=(300, 4))
    y = (X[:, 0] ^ X[:, 1]) | X[:, 3]
    return X, y


def _estimators():
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression, Perceptron, SGDClassifier
    from sklearn.naive_bayes import BernoulliNB, CategoricalNB
    from sklearn.tree import DecisionTreeClassifier

    return [(DecisionTreeClassifier(random_state=0), DecisionTree),
            (RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0), RandomForest),
            (ExtraTreesClassifier(n_estimators=3, max_depth=3, random_state=0), RandomForest),
            (CategoricalNB(), NaiveBayes), (BernoulliNB(), NaiveBayes),
            (LogisticRegression(), LinearClassifier), (Perceptron(random_state=0), LinearClassifier),
            (SGDClassifier(random_state=0), LinearClassifier)]


@pytest.mark.parametrize("k", range(8))
def test_each_supported_estimator_maps_to_its_family(data, k):
    X, y = data
    est, family = _estimators()[k]
    est.fit(X, y)
    model = from_sklearn(est, domains=[[0, 1]] * 4, feature_names=["a", "b", "c", "d"])
    assert type(model) is family and model.space.names == ("a", "b", "c", "d")
    grid = np.array(list(itertools.product([0, 1], repeat=4)))
    assert model.predict_many(grid) == list(est.predict(grid))
    assert kcxai.from_sklearn is from_sklearn


def test_unsupported_estimators_are_refused_with_the_list(data):
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier

    X, y = data
    for est in (GaussianNB().fit(X, y), KNeighborsClassifier().fit(X, y), "tree"):
        with pytest.raises(kcxai.InvalidTypeError, match="does not support .* Supported estimators: "
                                                         "DecisionTreeClassifier, RandomForestClassifier"):
            from_sklearn(est)


def test_unfitted_and_bad_arguments():
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import CategoricalNB

    with pytest.raises(kcxai.InvalidInputError, match="not fitted"):
        from_sklearn(CategoricalNB())
    with pytest.raises(kcxai.InvalidInputError, match="not fitted"):
        from_sklearn(LogisticRegression(), domains=[[0, 1]])
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])
    nb = CategoricalNB().fit(X, [0, 1, 1, 0])
    with pytest.raises(kcxai.InvalidInputError, match="'feature_names' must have 2 names"):
        from_sklearn(nb, feature_names=["a"])
    with pytest.raises(kcxai.InvalidInputError, match="'domains' must have 2 entries"):
        from_sklearn(nb, domains=[[0, 1]])
