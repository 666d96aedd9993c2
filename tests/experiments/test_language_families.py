"""The BDD-encoded families of the languages experiment (naive Bayes, logistic regression): the models are
scikit-learn's on the informative features, and every language that compiles them finds the same sets."""

import numpy as np
import pytest
from sklearn.feature_selection import mutual_info_classif
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import CategoricalNB

import kcxai
from kcxai.experiments import paper_table as pt
from kcxai.experiments._data import prepare_data
from kcxai.experiments._trees import train_tree
from kcxai.experiments.languages import (QUICK_MAX_SECONDS, SCORE_FEATURES, LanguagesConfig, family_model,
                                         informative_features, run_languages)


@pytest.fixture(scope="module")
def allhyper():
    data = prepare_data("allhyper", bins=10, seed=0)
    return data, train_tree(data, seed=0)


def test_informative_features_are_the_top_mutual_information(allhyper):
    data, _ = allhyper
    picked = informative_features(data)
    mi = mutual_info_classif(data.X[data.train], data.y[data.train], discrete_features=True)
    assert len(picked) == SCORE_FEATURES == len(set(picked)) and picked == sorted(picked)
    assert min(mi[picked]) >= max(np.delete(mi, picked))


@pytest.mark.parametrize("family", ["naive_bayes", "logistic"])
def test_score_families_are_sklearns_models_on_the_informative_features(allhyper, family):
    data, trained = allhyper
    model = family_model(family, data, trained, seed=0)
    picked = informative_features(data)
    x_train, y_train = data.X[data.train][:, picked], data.y[data.train]
    if family == "naive_bayes":
        clf = CategoricalNB(min_categories=[data.domain_sizes[i] for i in picked]).fit(x_train, y_train)
        want = clf.predict_joint_log_proba(data.X[data.test][:, picked])
    else:
        clf = LogisticRegression(max_iter=1000, random_state=0).fit(x_train, y_train)
        want = clf.decision_function(data.X[data.test][:, picked])
        if want.ndim == 1:  # two classes: kcxai scores (0, z)
            want = np.stack([np.zeros_like(want), want], axis=1)
    assert model.space.n_features == data.n_features and list(model.classes) == list(clf.classes_)
    rows = data.X[data.test].tolist()
    got = np.array([[float(s) for s in model.scores(x)] for x in rows])
    assert np.allclose(got, want, rtol=1e-9, atol=1e-9)
    assert [model.predict(x) for x in rows] == clf.predict(data.X[data.test][:, picked]).tolist()
    # the other features weigh nothing: changing them leaves every score as it is
    x = rows[0]
    other = [i for i in range(data.n_features) if i not in picked]
    for i in other:
        y = list(x)
        y[i] = (x[i] + 1) % data.domain_sizes[i]
        assert model.scores(y) == model.scores(x)


def test_languages_run_the_score_families_with_the_same_sets(tmp_path):
    langs = ("dt", "obdd", "sdd") + (("ddnnf",) if kcxai.available_languages()["ddnnf"] else ())
    cfg = LanguagesConfig(datasets=("allhyper",), languages=langs, families=("naive_bayes", "logistic"),
                          instances=2, out=str(tmp_path), progress=False, plots=False, max_seconds=120)
    rows = run_languages(cfg)
    assert [(r["family"], r["language"]) for r in rows] == [(f, lang) for f in cfg.families for lang in langs]
    for r in rows:
        if r["language"] == "dt":
            assert r["status"].startswith("not applicable: dt does not take")
            continue
        assert r["status"] == "ok", r["status"]
        assert r["explanations"] == 2 * len(pt.DELTAS) and r["size"] != "" and r["edges"] != ""
        if r["language"] == "obdd":  # the first language that compiled the model: the reference
            assert r["reference"] == "" and r["disagreements"] == ""
        else:
            assert r["reference"] == "obdd" and r["disagreements"] == 0
    md = (tmp_path / "languages.md").read_text()
    assert "| allhyper | naive_bayes |" in md and "| allhyper | logistic |" in md


@pytest.mark.parametrize("quick, asked, used", [(True, 600.0, QUICK_MAX_SECONDS), (True, None, QUICK_MAX_SECONDS),
                                                (True, 5.0, 5.0), (False, 600.0, 600.0)])
def test_a_quick_run_compiles_under_the_quick_limit_and_says_so(tmp_path, monkeypatch, quick, asked, used):
    seen = []
    real_compile = kcxai.compile_model

    def spy(model, lang, **options):
        seen.append(options.get("max_seconds"))
        return real_compile(model, lang, **options)

    monkeypatch.setattr(kcxai, "compile_model", spy)
    run_languages(LanguagesConfig(datasets=("allhyper",), languages=("obdd",), families=("tree",), quick=quick,
                                  instances=1, deltas=(pt.DELTAS[0],), max_seconds=asked, out=str(tmp_path),
                                  progress=False, plots=False))
    assert seen == [used]
    assert f"max_seconds={used}." in (tmp_path / "languages.md").read_text()
