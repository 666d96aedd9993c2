"""The rules experiment: the Anchor driver's tree predicts as scikit-learn's, held-out measures of widened
rules agree with kcxai.evaluate_on_data, and a missing Anchor environment is a clear error."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import kcxai
from kcxai.experiments import prepare_data, train_tree
from kcxai.experiments._anchor import export_tree, run_anchor
from kcxai.experiments._settings import HeldOut
from kcxai.experiments.anchor_driver import tree_predict
from kcxai.explain.inflate import box_of


@pytest.fixture(scope="module")
def allhyper():
    data = prepare_data("allhyper")
    return data, train_tree(data)


def test_the_driver_tree_predicts_as_scikit_learn(allhyper):
    data, trained = allhyper
    X = data.X[: 2000]
    assert tree_predict(export_tree(trained.clf), X).tolist() == trained.clf.predict(X).tolist()


def test_held_out_measures_of_widened_rules_agree_with_evaluate_on_data(allhyper):
    data, trained = allhyper
    test_rows = data.X[data.test][:400]
    held = HeldOut(test_rows, trained.clf.predict(test_rows))
    for r in data.test[:5]:
        x = data.X[r].tolist()
        wide = kcxai.inflate(trained.tree, kcxai.local_cdrs(trained.tree, x, Fraction(95, 100), start="path"))
        m = kcxai.evaluate_on_data(trained.tree, wide, test_rows.tolist())
        pred = trained.clf.predict(np.asarray([x]))[0]
        assert held.measure_box(box_of(trained.tree.space, wide), pred) == (m.matching, m.agreeing)


def test_a_missing_anchor_environment_says_how_to_make_one(allhyper, tmp_path):
    data, trained = allhyper
    with pytest.raises(kcxai.MissingDependencyError, match="venv"):
        run_anchor(str(tmp_path / "no-python"), tmp_path / "job", clf=trained.clf, train=data.X[:10],
                   instances=data.X[:2], rows=[0, 1], feature_names=data.feature_names, labels=data.labels)


def test_run_anchor_exchanges_files_with_a_subprocess(allhyper, tmp_path, monkeypatch):
    """The subprocess round trip, with a stand-in ``alibi`` package on the child's path (the real one lives in
    its own environment): files written, the driver run, its anchors read back and checked."""
    import sys

    fake = tmp_path / "fake" / "alibi"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("__version__ = 'stand-in'\n")
    (fake / "explainers.py").write_text(
        "import types\n"
        "class AnchorTabular:\n"
        "    def __init__(self, predict, names, categorical_names, seed):\n"
        "        self.predict = predict\n"
        "    def fit(self, train):\n"
        "        self.n = train.shape[1]\n"
        "    def explain(self, x, threshold):\n"
        "        return types.SimpleNamespace(raw={'feature': [0, 2]}, precision=[0.97], coverage=0.25)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "fake"))
    data, trained = allhyper
    rows = [3, 5, 8]
    result = run_anchor(sys.executable, tmp_path / "job", clf=trained.clf, train=data.X[:50], instances=data.X[rows],
                        rows=rows, feature_names=data.feature_names, labels=data.labels)
    assert [a["row"] for a in result["anchors"]] == rows and result["info"]["alibi"] == "stand-in"
    assert all(a["features"] == [0, 2] and a["precision"] == 0.97 and a["coverage"] == 0.25
               for a in result["anchors"])
    assert (tmp_path / "job" / "instances.csv").read_text().count("\n") == 3
