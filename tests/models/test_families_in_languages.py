"""Every model family through the SDD and OBDD compilers, against brute force.

Random models of every family (trees, decision lists, rule sets, BDD classifiers, linear
classifiers, naive Bayes, forests) over random spaces with multi-valued and numeric features,
2-3 classes and non-uniform distributions: the compiled oracle's counts equal brute force, and
``min_idrs`` finds the same set, error and precision in every language for the same order.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai.compilers._threshold import FeatureBlock, class_functions
from tests._support.builders import Constants, HashCons
from tests._support import reference as ref
from tests._support.model_strategies import (bdd_models, decision_lists, forests, linear_models, naive_bayes_models,
    rule_sets)
from tests._support.languages import ANY_MODEL
from tests._support.strategies import deltas, instance_of, points, trees

FAMILIES = {
    "tree": trees, "decision_list": decision_lists, "rule_set": rule_sets, "bdd": bdd_models,
    "linear": linear_models, "naive_bayes": naive_bayes_models, "forest": forests,
}
LANGUAGES = ANY_MODEL


def _need(language):
    """Declared languages must be usable: never skip (see test_conformance)."""
    assert kcxai.engines.LANGUAGES[language].is_available(), language


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("language", LANGUAGES)
@settings(max_examples=25)
@given(data=st.data())
def test_compiled_counts_equal_brute_force(language, family, data):
    _need(language)
    model = data.draw(FAMILIES[family](distributions=("uniform", "exact", "float", "mixture", "float_mixture")))
    compiled = kcxai.compile_model(model, language)
    brute = kcxai.compile_model(model, "brute").oracle
    assert compiled.language == language
    for p in ref.all_points(model.space):
        assert compiled.oracle.predict_point(p) == model.predict_point(p)
    p = data.draw(points(model.space))
    label = data.draw(st.integers(0, len(model.classes) - 1))
    for _ in range(3):
        s = frozenset(data.draw(st.sets(st.integers(0, model.space.n_features - 1))))
        assert ref.close(compiled.oracle.disagree_weight(p, label, s), brute.disagree_weight(p, label, s))


@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(max_examples=25)
@given(delta=deltas, data=st.data())
def test_min_idrs_is_the_same_in_every_language(family, delta, data):
    for language in LANGUAGES:
        _need(language)
    model = data.draw(FAMILIES[family]())
    x = instance_of(model.space, data.draw(points(model.space)))
    order = data.draw(st.permutations(range(model.space.n_features)))
    results = {lang: kcxai.min_idrs(kcxai.compile_model(model, lang), x, delta, order=order)
               for lang in ["brute", *LANGUAGES]}
    seen = {(e.features, e.error, e.precision) for e in results.values()}
    assert len(seen) == 1, results
    e = results["brute"]
    point = model.space.encode(x)
    assert kcxai.is_min_idrs(kcxai.compile_model(model, "brute"), x, e.features, delta)
    assert e.error == ref.error(model, point, set(e.features))


@pytest.mark.parametrize("family", sorted(set(FAMILIES) - {"tree"}))
@settings(max_examples=10)
@given(delta=deltas, data=st.data())
def test_models_explain_directly_through_their_native_oracle(family, delta, data):
    """A model passed to an explainer is compiled to an OBDD (Classifier.native_oracle)."""
    _need("obdd")
    model = data.draw(FAMILIES[family]())
    x = instance_of(model.space, data.draw(points(model.space)))
    direct = kcxai.min_idrs(model, x, delta)
    via = kcxai.min_idrs(kcxai.compile_model(model, "brute"), x, delta)
    assert direct.language == "obdd"
    assert (direct.features, direct.error, direct.precision) == (via.features, via.error, via.precision)


@pytest.mark.parametrize("language", LANGUAGES)
def test_threshold_diagrams_stay_the_size_of_their_sub_functions(language):
    """Branching never mixes sub-functions on invalid encodings (the diagrams leave validity out).

    Disjunctions over one-hot branch literals once made a 16-feature naive Bayes need more than
    2,000,000 OBDD nodes for 2,588 sub-functions; an if-then-else chain needs a few nodes each.
    """
    _need(language)
    if language == "ddnnf":
        pytest.skip("a property of diagrams that leave validity out; ddnnf's circuit has the validity clauses "
                    "and d4 decides its own structure")
    import numpy as np
    from sklearn.naive_bayes import CategoricalNB
    from unittest import mock

    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(2000, 16))
    y = np.argmax(X @ rng.normal(size=(16, 2)) + rng.normal(scale=2.0, size=(2000, 2)), axis=1)
    model = kcxai.from_sklearn(CategoricalNB().fit(X, y))
    h = HashCons()
    with mock.patch.object(FeatureBlock, "assemble", lambda blk, builder, ch: h.assemble(blk, builder, ch)):
        class_functions(model, Constants(model.space))
    compiled = kcxai.compile_model(model, language)
    assert 1000 < len(h.table) and compiled.stats["size"] <= 4 * len(h.table)
