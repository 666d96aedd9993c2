"""The conformance suite: one set of checks run against every declared exact language.

As dd runs one test class against each of its backends, every language in the registry
(``kcxai.engines.LANGUAGES``) is held here to the brute-force reference on random models:
multi-valued and numeric features, 2-3 classes, uniform, product, float and mixture
distributions. A new language is picked up with no edit to this file.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from tests._support import reference as ref
from kcxai.compilers import CompileStats
from kcxai.engines import LANGUAGES
from kcxai.oracle import CountingOracle, OracleSession
from tests._support.languages import EXACT, MISSING_OPTIONAL
from tests._support.model_strategies import decision_lists, naive_bayes_models
from tests._support.strategies import DISTRIBUTIONS, points, trees
from tests._support.paths import REPO


@pytest.mark.parametrize("name", list(LANGUAGES))
def test_every_declared_language_is_usable(name):
    lang = LANGUAGES[name]
    assert lang.name == name and lang.summary
    if name in MISSING_OPTIONAL:
        pytest.skip(f"{name}: its optional backend is not installed ({lang.install})")
    assert lang.is_available(), f"{name}: backend {lang.package!r} missing ({lang.install})"
    names = lang.option_names()
    assert isinstance(names, tuple)
    model = kcxai.datasets.running_example_tree()
    if not lang.takes(model):  # the decision engines take tree ensembles
        model = kcxai.models.RandomForest(model.space, model.classes, [model])
    with pytest.raises(kcxai.InvalidInputError, match="no_such_option"):
        kcxai.compile_model(model, name, no_such_option=1)


def _model(data, name):
    if LANGUAGES[name].accepts is None and data.draw(st.booleans()):
        family = data.draw(st.sampled_from([decision_lists, naive_bayes_models]))
        return data.draw(family(distributions=DISTRIBUTIONS))
    return data.draw(trees(distributions=DISTRIBUTIONS))


@pytest.mark.parametrize("name", EXACT)
@settings(max_examples=30)
@given(data=st.data())
def test_oracle_and_session_equal_brute_force(name, data):
    model = _model(data, name)
    compiled = kcxai.compile_model(model, name)
    assert compiled.language == name and isinstance(compiled.stats, CompileStats)
    oracle = compiled.oracle
    assert isinstance(oracle, CountingOracle) and oracle.language == name
    space = model.space
    table = [(x, model.predict_point(x), ref.point_probability(space, x)) for x in ref.all_points(space)]

    def want(point, lab, s):
        """Pr(kappa(x) != lab and x_s = point_s), by enumeration from the raw parameters."""
        return sum(pr for x, c, pr in table if c != lab and all(x[i] == point[i] for i in s))

    def prob(w):
        return space.probability(w)

    p = data.draw(points(space))
    label = data.draw(st.integers(0, len(model.classes) - 1))
    assert oracle.predict_point(p) == model.predict_point(p)
    fixed = frozenset(data.draw(st.sets(st.integers(0, space.n_features - 1))))
    assert ref.close(prob(oracle.disagree_weight(p, label, fixed)), want(p, label, fixed))
    session = oracle.session(p, label, fixed)
    assert isinstance(session, OracleSession) and session.fixed == fixed
    current = set(fixed)
    for i in data.draw(st.permutations(sorted(fixed))):
        assert ref.close(prob(session.weight_if_freed(i)), want(p, label, current - {i}))
        if data.draw(st.booleans()):
            session.free(i)
            current.discard(i)
            assert session.fixed == current
            assert ref.close(prob(session.weight()), want(p, label, current))


def test_docs_language_table_is_generated_from_the_registry():

    from kcxai.engines._registry import languages_markdown

    text = (REPO / "docs" / "languages.md").read_text(encoding="utf-8")
    table = text.split("<!-- languages:begin -->\n", 1)[1].split("<!-- languages:end -->", 1)[0]
    assert table == languages_markdown(), "docs/languages.md is stale: regenerate with `kcxai languages --markdown`"
